package suites

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// A follower cut off from the other brokers' replication, as Kafka's own
// replication_replica_failure_test.py does: the cut holds until the
// leaders drop it from their ISRs, then heals, and it must be taken back.
// Kafka's documentation of replica.lag.time.max.ms predicts the shrink: a
// follower that "hasn't sent any fetch requests ... for at least this
// time" is removed from the ISR; the leader looks every half of it, so
// within 1.5 times. Until then acks=all writes wait for it; after, the
// other two replicas meet min.insync.replicas 2 and writes go on. The
// victim keeps its controller heartbeats, so it is never fenced.
//
// Kafka's test has one partition; the workload topic has six, and a
// broker cut off from its peers while leading keeps its leaderships
// unwritable (docs/findings/peers-only-partition.md). So the victim is
// made to lead nothing first: its replicas are put last, and the
// preferred leaders elected.
var _ = Describe("A follower is cut off from the other brokers", Label("partition", "kafkatest"), Serial, func() {
	storySpec("(peers-only) until every leader drops it from the ISR, then healed: writes go on once it is out, it rejoins every ISR, no acknowledged record is lost", Label("peers-only-follower"),
		func(ctx SpecContext, e *env) story {
			lag, err := replicaLagTime(ctx, e)
			Expect(err).NotTo(HaveOccurred())
			return followerCutStory("partition-follower-isr", lag)
		})
})

// isrShrinkTimeout bounds the wait for the ISRs to drop the cut follower,
// as Kafka's test does (120 s); Kafka predicts 1.5 ×
// replica.lag.time.max.ms, 45 s at the default.
const isrShrinkTimeout = 2 * time.Minute

// leadersMovedTimeout bounds the preferred leaders' election before the
// cut: a leadership moves in well under a second here.
const leadersMovedTimeout = 30 * time.Second

// replicaLagTime reads replica.lag.time.max.ms from a broker.
func replicaLagTime(ctx context.Context, e *env) (time.Duration, error) {
	snap, err := e.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	ids := scenario.BrokerIDs(snap)
	if len(ids) == 0 {
		return 0, errors.New("no brokers")
	}
	lag, ok := scenario.BrokerConfigDuration(ctx, e.Env, ids[0], "replica.lag.time.max.ms")
	if !ok {
		return 0, fmt.Errorf("broker %d's replica.lag.time.max.ms could not be read", ids[0])
	}
	return lag, nil
}

// followerCutStory moves every leadership of the workload topic off a
// follower of partition 0, cuts it off from the other Kafka pods but the
// controller listener (peers-only), and holds the cut until no ISR has it;
// the recovery heals it, and the health check waits for every ISR full.
// Its unavailability is bounded by Kafka's prediction: 1.5 × lag, and
// HardMargin.
func followerCutStory(label string, lag time.Duration) story {
	var kafkaPods []string
	var shrunk time.Duration
	topic := scenario.Topic(label)
	return story{
		Label: label,
		Pick: func(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
			kafkaPods = kafkaPods[:0]
			for _, b := range snap {
				kafkaPods = append(kafkaPods, b.Pod)
			}
			return followerOf(0)(ctx, e, topic, snap)
		},
		MaxUnavailable:    lag*3/2 + scenario.HardMargin,
		MaxUnavailableWhy: fmt.Sprintf("a follower cut off: its leaders drop it from the ISR within 1.5 × replica.lag.time.max.ms %s, + %s", lag, scenario.HardMargin),
		Fault: func(e *env, v []brokers.Server) chaos.Fault {
			cut := &chaos.Partition{Scope: e.FaultScope(), Exec: e.Exec, Mode: chaos.PartitionPeersOnly, Pod: v[0].Pod, KafkaPods: kafkaPods}
			return &chaos.Sequence{Scope: e.FaultScope(), Say: func(m string) { By(m) },
				What: fmt.Sprintf("broker %d made to lead nothing, then cut off from the other brokers (peers-only)", v[0].ID),
				Steps: []chaos.Step{
					{What: fmt.Sprintf("putting broker %d last among the replicas of every partition of %s and electing the preferred leaders", v[0].ID, topic), Do: func(ctx context.Context) error {
						return e.WithKafka(func(cl *kafkaadmin.Client) error {
							now, err := cl.Assignments(ctx, topic)
							if err != nil {
								return err
							}
							if err := cl.Reassign(ctx, lastReplica(now, v[0].ID), 0); err != nil {
								return err
							}
							// Reassign elects only where the replicas moved.
							return cl.ElectPreferred(ctx, topic)
						})
					}},
					{What: fmt.Sprintf("waiting until broker %d leads no partition of %s (within %s)", v[0].ID, topic, leadersMovedTimeout), Do: func(ctx context.Context) error {
						return scenario.Poll(ctx, time.Second, leadersMovedTimeout, fmt.Sprintf("broker %d leading nothing", v[0].ID), func(ctx context.Context) error {
							return e.WithKafka(func(cl *kafkaadmin.Client) error {
								leaders, err := cl.Leaders(ctx, topic)
								if err != nil {
									return err
								}
								for p, l := range leaders {
									if l == v[0].ID {
										return fmt.Errorf("broker %d still leads %s/%d", v[0].ID, topic, p)
									}
								}
								return nil
							})
						})
					}},
					{What: fmt.Sprintf("cutting broker %d off from the other Kafka pods but the controller listener", v[0].ID), Fault: func(context.Context) (chaos.Fault, error) { return cut, nil }},
				}}
		},
		During: func(ctx context.Context, e *env, v []brokers.Server) error {
			start := time.Now()
			By("probing from inside the pods that the cut connections fail and the allowed ones work")
			f := &chaos.Partition{Scope: e.FaultScope(), Exec: e.Exec, Mode: chaos.PartitionPeersOnly, Pod: v[0].Pod, KafkaPods: kafkaPods}
			if err := probeCut(ctx, f); err != nil {
				return err
			}
			By(fmt.Sprintf("waiting until no ISR of %s holds broker %d, which stays registered and unfenced (within %s)", topic, v[0].ID, isrShrinkTimeout))
			err := scenario.Poll(ctx, time.Second, isrShrinkTimeout, fmt.Sprintf("broker %d out of every ISR", v[0].ID), func(ctx context.Context) error {
				return e.WithKafka(func(cl *kafkaadmin.Client) error {
					s, err := cl.State(ctx, topic)
					if err != nil {
						return err
					}
					if !s.Registered(v[0].ID) {
						return fmt.Errorf("broker %d is not registered unfenced: a peers-only cut must not fence it", v[0].ID)
					}
					return shrunkWithout(s.Partitions, v[0].ID)
				})
			})
			shrunk = time.Since(start)
			return err
		},
		Finally: func(_ context.Context, _ *env, v []brokers.Server, o *outcome) {
			if shrunk > 0 {
				o.Observations = append(o.Observations, fmt.Sprintf("every ISR dropped broker %d %s after the cut (replica.lag.time.max.ms %s); healed then", v[0].ID, shrunk.Round(100*time.Millisecond), lag))
			}
		},
	}
}

// lastReplica is to with victim moved to the end of each partition's
// replicas, so that it is no partition's preferred leader.
func lastReplica(to kafkaadmin.Assignments, victim int32) kafkaadmin.Assignments {
	out := kafkaadmin.Assignments{}
	for t, ps := range to {
		out[t] = map[int32][]int32{}
		for p, rs := range ps {
			moved := slices.DeleteFunc(slices.Clone(rs), func(id int32) bool { return id == victim })
			if len(moved) < len(rs) {
				moved = append(moved, victim)
			}
			out[t][p] = moved
		}
	}
	return out
}

// shrunkWithout returns nil when victim leads no partition of view and is
// in no ISR, and every ISR still holds two replicas (min.insync.replicas
// here): the shape Kafka's test waits for.
func shrunkWithout(view map[int32]kafkaadmin.PartitionView, victim int32) error {
	if len(view) == 0 {
		return errors.New("no partitions")
	}
	for _, p := range slices.Sorted(maps.Keys(view)) {
		v := view[p]
		switch {
		case v.Leader == victim:
			return fmt.Errorf("partition %d is led by broker %d", p, victim)
		case slices.Contains(v.ISR, victim):
			return fmt.Errorf("partition %d: ISR %v still holds broker %d", p, v.ISR, victim)
		case len(v.ISR) < 2:
			return fmt.Errorf("partition %d: ISR %v, below two replicas", p, v.ISR)
		}
	}
	return nil
}

func TestFollowerCutChecks(t *testing.T) {
	if got, want := lastReplica(kafkaadmin.Assignments{"t": {0: {1, 2, 0}, 1: {2, 1, 0}, 2: {0, 1}}}, 1),
		(kafkaadmin.Assignments{"t": {0: {2, 0, 1}, 1: {2, 0, 1}, 2: {0, 1}}}); !reflect.DeepEqual(got, want) {
		t.Errorf("lastReplica = %v, want %v", got, want)
	}
	type pv = kafkaadmin.PartitionView
	for _, tc := range []struct {
		name       string
		view       map[int32]pv
		wantFailed bool
	}{
		{"out of every ISR, two left", map[int32]pv{0: {Leader: 0, ISR: []int32{0, 2}}, 1: {Leader: 2, ISR: []int32{0, 2}}}, false},
		{"still in one ISR", map[int32]pv{0: {Leader: 0, ISR: []int32{0, 2}}, 1: {Leader: 2, ISR: []int32{0, 1, 2}}}, true},
		{"leads a partition, its ISR shrunk to itself", map[int32]pv{0: {Leader: 1, ISR: []int32{1}}}, true},
		{"an ISR below two", map[int32]pv{0: {Leader: 0, ISR: []int32{0}}}, true},
		{"no partitions", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := shrunkWithout(tc.view, 1); (err != nil) != tc.wantFailed {
				t.Fatalf("err = %v, want failed %v", err, tc.wantFailed)
			}
		})
	}
}
