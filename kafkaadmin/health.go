package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

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

// Expectations are what a healthy cluster must show beyond Kafka's own view
// of itself. Set them with the With* options of CheckHealth.
type Expectations struct {
	Brokers          []int32       // broker IDs that must be registered; empty: at least one broker
	Voters           []int32       // the quorum's voter IDs; empty: not compared
	ClusterID        string        // empty: not compared
	MaxQuorumLag     int64         // records a voter may trail the leader's log end offset by
	MaxQuorumLagTime time.Duration // how long since a voter was last caught up with the leader
	// ZooKeeperMode: the cluster keeps its metadata in ZooKeeper, so there
	// is no KRaft quorum to describe; a registered controller broker is
	// required instead.
	ZooKeeperMode bool
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

// WithZooKeeperMode checks a cluster in ZooKeeper mode: no DescribeQuorum
// (there is no KRaft quorum), and the controller broker that the metadata
// names must be registered. The ZooKeeper ensemble's own health is not
// Kafka's to tell: see package zookeeper.
func WithZooKeeperMode() HealthOption {
	return func(e *Expectations) { e.ZooKeeperMode = true }
}

// Health is what one CheckHealth observed, with what was expected. Problems
// says what is wrong with it, if anything.
type Health struct {
	Expected Expectations

	// From a metadata request, sent to any broker.
	MetadataErr error  // the metadata request failed; the fields below are then empty
	ClusterID   string // the cluster ID that the answering broker reported
	// Controller is the controller the answering broker named: in
	// ZooKeeper mode the controller broker, in KRaft mode any broker
	// (KRaft names a random one); -1 if none.
	Controller int32
	Brokers    []int32
	Partitions int              // how many partitions were described
	NotFullISR []PartitionState // ISR smaller than the replica set: under-replicated
	Offline    []PartitionState // no leader
	Errored    []PartitionState // the topic or partition came with an error

	// From a metadata request sent to each registered broker alone (only
	// the expected ones, with WithBrokers): those that did not answer, or
	// did not list themselves as registered. Until a restarted broker
	// serves requests, Kafka's metadata can still show its previous
	// incarnation as registered and in every ISR.
	Unanswered []BrokerError

	// From a DescribeQuorum request for the metadata log; empty in
	// ZooKeeper mode.
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

// CheckHealth asks the cluster for fresh metadata of every topic,
// asks each broker alone whether it serves requests, and asks for the state
// of the KRaft metadata quorum (not in ZooKeeper mode); it returns what it
// saw. It uses no client
// metadata cache: a broker that went away is seen as soon as it stops
// answering.
//
// Failed requests and error codes in the answers are recorded in the
// returned Health (MetadataErr, Quorum.Err, PartitionState.Err) and show up
// in its Problems; the error is only for a cancelled ctx.
func (c *Client) CheckHealth(ctx context.Context, opts ...HealthOption) (Health, error) {
	h := Health{Controller: -1, Expected: Expectations{
		MaxQuorumLag:     DefaultMaxQuorumLag,
		MaxQuorumLagTime: DefaultMaxQuorumLagTime,
	}}
	for _, o := range opts {
		o(&h.Expected)
	}
	h.observeMetadata(ctx, c)
	if h.MetadataErr == nil {
		// Unregistered brokers are a problem already.
		ids := h.Brokers
		if len(h.Expected.Brokers) > 0 {
			ids = intersect(h.Expected.Brokers, h.Brokers)
		}
		h.Unanswered = probeBrokers(ctx, c.raw, ids)
	}
	if !h.Expected.ZooKeeperMode {
		h.Quorum = c.DescribeQuorum(ctx)
	}
	if err := ctx.Err(); err != nil {
		return h, fmt.Errorf("kafkaadmin: checking health: %w", err)
	}
	return h, nil
}

func (h *Health) observeMetadata(ctx context.Context, c *Client) {
	m, err := c.metadata(ctx) // all topics
	if err != nil {
		h.MetadataErr = err
		return
	}
	h.ClusterID = m.Cluster
	h.Controller = m.Controller
	for _, b := range m.Brokers {
		h.Brokers = append(h.Brokers, b.NodeID)
	}
	slices.Sort(h.Brokers)
	for _, t := range m.Topics.Sorted() {
		if t.Err != nil {
			h.Errored = append(h.Errored, PartitionState{Topic: t.Topic, Partition: -1, Leader: -1, Err: t.Err})
			continue
		}
		for _, p := range t.Partitions.Sorted() {
			h.Partitions++
			ps := PartitionState{
				Topic:           t.Topic,
				Partition:       p.Partition,
				Leader:          p.Leader,
				Replicas:        sortedCopy(p.Replicas),
				ISR:             sortedCopy(p.ISR),
				OfflineReplicas: sortedCopy(p.OfflineReplicas),
				Err:             p.Err,
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
// themselves, by ID. kadm has no call that asks one broker alone.
func probeBrokers(ctx context.Context, cl requester, ids []int32) []BrokerError {
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
