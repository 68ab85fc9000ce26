package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// State is one look at what Kafka says about a topic and its cluster: the
// raw material of the event timeline. A part whose request failed is
// marked unknown, so that a missed look is never read as a change.
type State struct {
	// At is when the answers about the topic and its brokers arrived, and
	// ControllerAt when the quorum's did (zero when it is unknown). They
	// differ by seconds when a controller dies: a broker forwards
	// DescribeQuorum to the active controller and holds it until there is
	// one, so the start of the look would date the new controller by the
	// election's length too early.
	At, ControllerAt time.Time
	// Brokers maps every registered broker to whether it is fenced
	// (DescribeCluster with fenced brokers, Kafka 4.0+; before that, the
	// brokers of the metadata answer, none fenced). Nil: unknown.
	Brokers map[int32]bool
	// Controller is the KRaft quorum's leader and its epoch, or in
	// ZooKeeper mode (brokers without DescribeQuorum) the controller
	// broker that metadata names, epoch 0; -1: no leader; ControllerKnown
	// false: the request failed.
	Controller, ControllerEpoch int32
	ControllerKnown             bool
	// Partitions of the topic by ID. Nil: unknown.
	Partitions map[int32]PartitionView
	// Voters are the KRaft quorum's voters as its leader described them,
	// with their lag. Nil: unknown, or ZooKeeper mode.
	Voters []Replica
}

// PartitionView is one partition in a metadata answer.
type PartitionView struct {
	Leader      int32 // -1: none
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32 // sorted
}

// ISRFull reports whether every partition's ISR holds all its replicas.
// Unknown partitions are not full.
func (s State) ISRFull() bool {
	if s.Partitions == nil {
		return false
	}
	for _, p := range s.Partitions {
		if len(p.ISR) < len(p.Replicas) {
			return false
		}
	}
	return true
}

// PreferredLeaders reports whether every partition is led by its first
// replica, as the preferred leader election would have it.
func (s State) PreferredLeaders() bool {
	if s.Partitions == nil {
		return false
	}
	for _, p := range s.Partitions {
		if len(p.Replicas) == 0 || p.Leader != p.Replicas[0] {
			return false
		}
	}
	return true
}

// LaggingVoters lists the quorum's voters, other than its leader, that are
// not caught up as CheckHealth's defaults judge it (more than
// DefaultMaxQuorumLag records behind, or last caught up more than
// DefaultMaxQuorumLagTime before the leader, or never): "voter 1 (120
// records behind leader 0)"; "no quorum leader" when there is none. Nil
// when the voters are unknown or all caught up.
func (s State) LaggingVoters() []string {
	if len(s.Voters) > 0 && s.Controller < 0 {
		return []string{"no quorum leader"}
	}
	var out []string
	for _, v := range s.Voters {
		if v.ID == s.Controller {
			continue
		}
		switch byRecords, byTime := v.lagging(DefaultMaxQuorumLag, DefaultMaxQuorumLagTime); {
		case byRecords:
			out = append(out, fmt.Sprintf("voter %d (%d records behind leader %d)", v.ID, v.Lag, s.Controller))
		case byTime:
			out = append(out, fmt.Sprintf("voter %d (last caught up with leader %d %v before it)", v.ID, s.Controller, lagTime(v.LagTime)))
		}
	}
	return out
}

// Registered reports whether every broker of ids is registered and not
// fenced.
func (s State) Registered(ids ...int32) bool {
	if s.Brokers == nil {
		return false
	}
	for _, id := range ids {
		if fenced, ok := s.Brokers[id]; !ok || fenced {
			return false
		}
	}
	return true
}

// State looks at topic and the cluster once: metadata (forced fresh),
// DescribeCluster and DescribeQuorum (in ZooKeeper mode the metadata's
// controller instead). It fails only when every part failed.
func (c *Client) State(ctx context.Context, topic string) (State, error) {
	s := State{Controller: -1}
	var errs []error
	m, err := c.metadata(ctx, topic)
	if err != nil {
		errs = append(errs, err)
	} else if t, err := topicIn(m, topic); err != nil {
		errs = append(errs, err)
	} else {
		s.Partitions = make(map[int32]PartitionView, len(t.Partitions))
		for id, p := range t.Partitions {
			isr := slices.Clone(p.ISR)
			slices.Sort(isr)
			s.Partitions[id] = PartitionView{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, Replicas: slices.Clone(p.Replicas), ISR: isr}
		}
		switch brokers, err := c.describeCluster(ctx); {
		case err == nil:
			s.Brokers = brokers
		case tooOld(err):
			s.Brokers = unfenced(m)
		default:
			// Unknown: a failed look must not read as the fenced brokers
			// leaving and coming back.
		}
	}
	s.At = time.Now()
	switch q := c.DescribeQuorum(ctx); {
	case q.Err == nil:
		s.Controller, s.ControllerEpoch, s.ControllerKnown = q.LeaderID, q.LeaderEpoch, true
		s.Voters = q.Voters
		s.ControllerAt = time.Now()
	case tooOld(q.Err) && err == nil:
		// Brokers that do not know DescribeQuorum keep their metadata in
		// ZooKeeper: the controller is the broker the metadata names.
		s.Controller, s.ControllerKnown = m.Controller, true
		s.ControllerAt = s.At
	default:
		errs = append(errs, q.Err)
	}
	if s.Partitions == nil && !s.ControllerKnown {
		return s, fmt.Errorf("kafkaadmin: state of %s: %v", topic, errs)
	}
	return s, nil
}

// Registrations returns every registered broker and whether it is fenced:
// DescribeCluster v2, or before Kafka 4.0 the brokers of a metadata answer
// (the unfenced ones).
func (c *Client) Registrations(ctx context.Context) (map[int32]bool, error) {
	brokers, err := c.describeCluster(ctx)
	if err == nil || !tooOld(err) {
		return brokers, err
	}
	m, err := c.brokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: registrations: %w", err)
	}
	return unfenced(m), nil
}

// unfenced maps a metadata answer's brokers to not fenced: before Kafka
// 4.0 they are the unfenced ones.
func unfenced(m kadm.Metadata) map[int32]bool {
	out := make(map[int32]bool, len(m.Brokers))
	for _, b := range m.Brokers {
		out[b.NodeID] = false
	}
	return out
}

// tooOld says that the broker cannot answer DescribeCluster v2 (franz-go
// says so in words only).
func tooOld(err error) bool {
	return errors.Is(err, kerr.UnsupportedVersion) || strings.Contains(err.Error(), "too old")
}

// describeCluster returns every registered broker and whether it is
// fenced, from DescribeCluster v2 (KIP-1073).
func (c *Client) describeCluster(ctx context.Context) (map[int32]bool, error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version = 2
	req.IncludeFencedBrokers = true
	resp, err := c.raw.Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("describe cluster: %w", err)
	}
	r := resp.(*kmsg.DescribeClusterResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return nil, fmt.Errorf("describe cluster: %w", err)
	}
	out := make(map[int32]bool, len(r.Brokers))
	for _, b := range r.Brokers {
		out[b.NodeID] = b.IsFenced
	}
	return out, nil
}
