package brokers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client sends requests to a Kafka cluster: FromKgo adapts a *kgo.Client.
type Client interface {
	// Request sends req where the client routes it (any broker, or the
	// controller for admin requests).
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	// RequestBroker sends req to broker id alone.
	RequestBroker(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error)
}

// FromKgo returns cl as a Client.
func FromKgo(cl *kgo.Client) Client { return kgoClient{cl} }

type kgoClient struct{ cl *kgo.Client }

func (k kgoClient) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return k.cl.Request(ctx, req)
}

func (k kgoClient) RequestBroker(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	return k.cl.Broker(int(id)).Request(ctx, req)
}

// MetadataTopic is the KRaft metadata log's topic, whose quorum CheckHealth
// describes.
const MetadataTopic = "__cluster_metadata"

// Defaults for how far a quorum voter may trail the leader and still count
// as caught up.
const (
	// DefaultMaxQuorumLag is the default of WithMaxQuorumLag, in records.
	// The leader appends a no-op record every 500 ms when idle
	// (metadata.max.idle.interval.ms), so a voter that stopped fetching
	// trails by more than this within about 5 s.
	DefaultMaxQuorumLag = 10
	// DefaultMaxQuorumLagTime is the default of WithMaxQuorumLagTime: the
	// default controller.quorum.fetch.timeout.ms, after which a follower
	// that heard nothing from the leader starts an election.
	DefaultMaxQuorumLagTime = 2 * time.Second
)

// maxListed caps the partitions that Problems names one by one per kind.
const maxListed = 10

// Expectations are what a healthy cluster must show beyond Kafka's own view
// of itself. Set them with the With* options of CheckHealth.
type Expectations struct {
	Brokers          []int32       // broker IDs that must be registered; empty: at least one broker
	Voters           []int32       // the quorum's voter IDs; empty: not compared
	ClusterID        string        // empty: not compared
	MaxQuorumLag     int64         // records a voter may trail the leader's log end offset by
	MaxQuorumLagTime time.Duration // how long since a voter was last caught up with the leader
}

// HealthOption sets an expectation of CheckHealth.
type HealthOption func(*Expectations)

// WithBrokers makes every broker in ids required to be registered (and
// unfenced). By default any non-empty set of brokers will do.
func WithBrokers(ids ...int32) HealthOption {
	return func(e *Expectations) { e.Brokers = sortedCopy(ids) }
}

// WithVoters requires the quorum's voters to be exactly ids. By default the
// voter set is not compared, only checked to be caught up.
func WithVoters(ids ...int32) HealthOption {
	return func(e *Expectations) { e.Voters = sortedCopy(ids) }
}

// WithClusterID requires the cluster ID to be id. By default it is not
// compared.
func WithClusterID(id string) HealthOption {
	return func(e *Expectations) { e.ClusterID = id }
}

// WithMaxQuorumLag sets how many records a voter may trail the leader's log
// end offset by, overriding the default DefaultMaxQuorumLag (10).
func WithMaxQuorumLag(records int64) HealthOption {
	return func(e *Expectations) { e.MaxQuorumLag = records }
}

// WithMaxQuorumLagTime sets how long ago, by the leader's clock, a voter may
// have last been caught up, overriding the default DefaultMaxQuorumLagTime
// (2s).
func WithMaxQuorumLagTime(d time.Duration) HealthOption {
	return func(e *Expectations) { e.MaxQuorumLagTime = d }
}

// Health is what one CheckHealth observed, with what was expected. Problems
// says what is wrong with it, if anything.
type Health struct {
	Expected Expectations

	// From a metadata request, sent to any broker.
	MetadataErr error  // the metadata request failed; the fields below are then empty
	ClusterID   string // the cluster ID that the answering broker reported
	Brokers     []int32
	Partitions  int              // how many partitions were described
	NotFullISR  []PartitionState // ISR smaller than the replica set: under-replicated
	Offline     []PartitionState // no leader
	Errored     []PartitionState // the topic or partition came with an error

	// From a metadata request sent to each registered broker alone (only
	// the expected ones, with WithBrokers): those that did not answer, or
	// did not list themselves as registered. Until a restarted broker
	// serves requests, Kafka's metadata can still show its previous
	// incarnation as registered and in every ISR.
	Unanswered []BrokerError

	// From a DescribeQuorum request for the metadata log.
	Quorum Quorum
}

// BrokerError is why a broker failed the request sent to it alone.
type BrokerError struct {
	ID  int32
	Err error
}

// PartitionState is one partition as the metadata response described it.
type PartitionState struct {
	Topic           string
	Partition       int32
	Leader          int32 // -1 if none
	Replicas        []int32
	ISR             []int32
	OfflineReplicas []int32
	Err             error
}

// Quorum is the KRaft metadata quorum as its leader described it.
type Quorum struct {
	Err           error // the DescribeQuorum request or its answer failed; the fields below are then empty
	LeaderID      int32 // -1 if none
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []Replica
	Observers     []Replica
}

// Replica is one member of the quorum, as the leader sees it.
type Replica struct {
	ID           int32
	LogEndOffset int64
	// Lag is how many records the replica trails the leader's log end offset by.
	Lag int64
	// LagTime is how long before the leader's last caught-up time the replica
	// was last caught up; -1 if either time is unknown.
	LagTime time.Duration
}

// VoterIDs returns the voters' IDs, sorted.
func (q Quorum) VoterIDs() []int32 {
	ids := make([]int32, 0, len(q.Voters))
	for _, v := range q.Voters {
		ids = append(ids, v.ID)
	}
	slices.Sort(ids)
	return ids
}

// CheckHealth asks the cluster behind cl for fresh metadata of every topic,
// asks each broker alone whether it serves requests, and asks for the state
// of the KRaft metadata quorum; it returns what it saw. It uses no client
// metadata cache: a broker that went away is seen as soon as it stops
// answering.
//
// Failed requests and error codes in the answers are recorded in the
// returned Health (MetadataErr, Quorum.Err, PartitionState.Err) and show up
// in its Problems; the error is only for a cancelled ctx.
func CheckHealth(ctx context.Context, cl Client, opts ...HealthOption) (Health, error) {
	h := Health{Expected: Expectations{
		MaxQuorumLag:     DefaultMaxQuorumLag,
		MaxQuorumLagTime: DefaultMaxQuorumLagTime,
	}}
	for _, o := range opts {
		o(&h.Expected)
	}
	h.observeMetadata(ctx, cl)
	if h.MetadataErr == nil {
		// Unregistered brokers are a problem already.
		ids := h.Brokers
		if len(h.Expected.Brokers) > 0 {
			ids = intersect(h.Expected.Brokers, h.Brokers)
		}
		h.Unanswered = probeBrokers(ctx, cl, ids)
	}
	h.Quorum = describeQuorum(ctx, cl)
	if err := ctx.Err(); err != nil {
		return h, fmt.Errorf("brokers: checking health: %w", err)
	}
	return h, nil
}

func (h *Health) observeMetadata(ctx context.Context, cl Client) {
	req := kmsg.NewPtrMetadataRequest() // nil Topics: all topics
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		h.MetadataErr = fmt.Errorf("metadata request: %w", err)
		return
	}
	if resp.ClusterID != nil {
		h.ClusterID = *resp.ClusterID
	}
	for _, b := range resp.Brokers {
		h.Brokers = append(h.Brokers, b.NodeID)
	}
	slices.Sort(h.Brokers)
	for _, t := range resp.Topics {
		topic := ""
		if t.Topic != nil {
			topic = *t.Topic
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			h.Errored = append(h.Errored, PartitionState{Topic: topic, Partition: -1, Leader: -1, Err: err})
			continue
		}
		for _, p := range t.Partitions {
			h.Partitions++
			ps := PartitionState{
				Topic:           topic,
				Partition:       p.Partition,
				Leader:          p.Leader,
				Replicas:        sortedCopy(p.Replicas),
				ISR:             sortedCopy(p.ISR),
				OfflineReplicas: sortedCopy(p.OfflineReplicas),
				Err:             kerr.ErrorForCode(p.ErrorCode),
			}
			// LEADER_NOT_AVAILABLE comes with no leader: count it as offline.
			switch {
			case ps.Leader < 0:
				h.Offline = append(h.Offline, ps)
			case ps.Err != nil:
				h.Errored = append(h.Errored, ps)
			}
			if len(ps.ISR) < len(ps.Replicas) {
				h.NotFullISR = append(h.NotFullISR, ps)
			}
		}
	}
	for _, list := range [][]PartitionState{h.NotFullISR, h.Offline, h.Errored} {
		slices.SortFunc(list, func(a, b PartitionState) int {
			if c := strings.Compare(a.Topic, b.Topic); c != 0 {
				return c
			}
			return int(a.Partition - b.Partition)
		})
	}
}

// probeBrokers sends a metadata request for no topics to each broker in ids
// alone, at once, and returns those that did not answer or did not list
// themselves, by ID.
func probeBrokers(ctx context.Context, cl Client, ids []int32) []BrokerError {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			req := kmsg.NewPtrMetadataRequest()
			req.Topics = []kmsg.MetadataRequestTopic{} // none
			kresp, err := cl.RequestBroker(ctx, id, req)
			if err != nil {
				errs[i] = err
				return
			}
			resp, ok := kresp.(*kmsg.MetadataResponse)
			if !ok {
				errs[i] = fmt.Errorf("answered a metadata request with %T", kresp)
				return
			}
			for _, b := range resp.Brokers {
				if b.NodeID == id {
					return
				}
			}
			errs[i] = errors.New("answers, but does not list itself as registered")
		})
	}
	wg.Wait()
	var out []BrokerError
	for i, err := range errs {
		if err != nil {
			out = append(out, BrokerError{ID: ids[i], Err: err})
		}
	}
	return out
}

func describeQuorum(ctx context.Context, cl Client) Quorum {
	q := Quorum{LeaderID: -1}
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = MetadataTopic
	rp := kmsg.NewDescribeQuorumRequestTopicPartition()
	rp.Partition = 0
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		q.Err = fmt.Errorf("describe quorum request: %w", err)
		return q
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		q.Err = fmt.Errorf("describe quorum: %w%s", err, message(resp.ErrorMessage))
		return q
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		q.Err = fmt.Errorf("describe quorum: answer has %d topics, want %s partition 0 alone", len(resp.Topics), MetadataTopic)
		return q
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		q.Err = fmt.Errorf("describe quorum: %s partition 0: %w%s", MetadataTopic, err, message(p.ErrorMessage))
		return q
	}
	q.LeaderID, q.LeaderEpoch, q.HighWatermark = p.LeaderID, p.LeaderEpoch, p.HighWatermark

	var leaderLEO, leaderCaughtUp int64 = -1, -1
	for _, v := range p.CurrentVoters {
		if v.ReplicaID == p.LeaderID {
			leaderLEO, leaderCaughtUp = v.LogEndOffset, v.LastCaughtUpTimestamp
		}
	}
	replica := func(s kmsg.DescribeQuorumResponseTopicPartitionReplicaState) Replica {
		r := Replica{ID: s.ReplicaID, LogEndOffset: s.LogEndOffset, LagTime: -1}
		if leaderLEO >= 0 {
			r.Lag = max(leaderLEO-s.LogEndOffset, 0)
		}
		if leaderCaughtUp >= 0 && s.LastCaughtUpTimestamp >= 0 {
			r.LagTime = time.Duration(max(leaderCaughtUp-s.LastCaughtUpTimestamp, 0)) * time.Millisecond
		}
		return r
	}
	for _, v := range p.CurrentVoters {
		q.Voters = append(q.Voters, replica(v))
	}
	for _, o := range p.Observers {
		q.Observers = append(q.Observers, replica(o))
	}
	byID := func(a, b Replica) int { return int(a.ID - b.ID) }
	slices.SortFunc(q.Voters, byID)
	slices.SortFunc(q.Observers, byID)
	return q
}

// Healthy reports whether Problems is empty.
func (h Health) Healthy() bool { return len(h.Problems()) == 0 }

// Problems names, one line each, everything that keeps h from being healthy:
// unreachable metadata, a wrong cluster ID, missing brokers, brokers that do
// not answer requests sent to them alone, partitions with
// no leader, with an error or with an ISR smaller than their replica set,
// and a quorum with no leader, other voters than expected, or voters that
// are not caught up. At most 10 partitions of each kind are named one by one.
func (h Health) Problems() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if h.MetadataErr != nil {
		add("metadata: %v", h.MetadataErr)
	} else {
		if h.Expected.ClusterID != "" && h.ClusterID != h.Expected.ClusterID {
			add("cluster ID is %q, want %q", h.ClusterID, h.Expected.ClusterID)
		}
		if missing := subtract(h.Expected.Brokers, h.Brokers); len(missing) > 0 {
			add("brokers %v not registered (registered: %v)", missing, h.Brokers)
		} else if len(h.Brokers) == 0 {
			add("no broker registered")
		}
		for _, b := range h.Unanswered {
			add("broker %d: %v", b.ID, b.Err)
		}
		listPartitions(add, "offline", h.Offline, func(p PartitionState) string {
			return fmt.Sprintf("no leader; replicas %v, ISR %v, offline replicas %v", p.Replicas, p.ISR, p.OfflineReplicas)
		})
		listPartitions(add, "errored", h.Errored, func(p PartitionState) string { return p.Err.Error() })
		listPartitions(add, "under-replicated", h.NotFullISR, func(p PartitionState) string {
			return fmt.Sprintf("ISR %v of replicas %v, missing %v", p.ISR, p.Replicas, subtract(p.Replicas, p.ISR))
		})
	}

	q := h.Quorum
	switch {
	case q.Err != nil:
		add("quorum: %v", q.Err)
	case q.LeaderID < 0:
		add("quorum: no leader (epoch %d)", q.LeaderEpoch)
	default:
		if ids := q.VoterIDs(); len(h.Expected.Voters) > 0 && !slices.Equal(ids, h.Expected.Voters) {
			add("quorum: voters are %v, want %v", ids, h.Expected.Voters)
		}
		for _, v := range q.Voters {
			if v.ID == q.LeaderID {
				continue
			}
			if v.Lag > h.Expected.MaxQuorumLag {
				add("quorum: voter %d is %d records behind leader %d (max %d)", v.ID, v.Lag, q.LeaderID, h.Expected.MaxQuorumLag)
			} else if v.LagTime < 0 || v.LagTime > h.Expected.MaxQuorumLagTime {
				add("quorum: voter %d was last caught up with leader %d %v before it (max %v)", v.ID, q.LeaderID, lagTime(v.LagTime), h.Expected.MaxQuorumLagTime)
			}
		}
	}
	return out
}

// String summarizes h on one line: healthy, or its problems.
func (h Health) String() string {
	if p := h.Problems(); len(p) > 0 {
		return fmt.Sprintf("unhealthy (%d problems): %s", len(p), strings.Join(p, "; "))
	}
	return fmt.Sprintf("healthy: cluster %s, brokers %v, %d partitions with full ISRs, quorum leader %d (epoch %d), voters %v caught up",
		h.ClusterID, h.Brokers, h.Partitions, h.Quorum.LeaderID, h.Quorum.LeaderEpoch, h.Quorum.VoterIDs())
}

func listPartitions(add func(string, ...any), kind string, list []PartitionState, detail func(PartitionState) string) {
	for i, p := range list {
		if i == maxListed {
			add("... and %d more %s partitions", len(list)-maxListed, kind)
			return
		}
		if p.Partition < 0 {
			add("%s: topic %q: %s", kind, p.Topic, detail(p))
			continue
		}
		add("%s: %s-%d: %s", kind, p.Topic, p.Partition, detail(p))
	}
}

func lagTime(d time.Duration) string {
	if d < 0 {
		return "an unknown time"
	}
	return d.String()
}

func message(s *string) string {
	if s == nil || *s == "" {
		return ""
	}
	return ": " + *s
}

// subtract returns the IDs of want that are not in have, in want's order.
func subtract(want, have []int32) []int32 {
	var out []int32
	for _, id := range want {
		if !slices.Contains(have, id) {
			out = append(out, id)
		}
	}
	return out
}

// intersect returns the IDs of a that are also in b, in a's order.
func intersect(a, b []int32) []int32 {
	var out []int32
	for _, id := range a {
		if slices.Contains(b, id) {
			out = append(out, id)
		}
	}
	return out
}

func sortedCopy(ids []int32) []int32 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}
