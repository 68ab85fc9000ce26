package suites

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// Pause specs: a broker alive but frozen (SIGSTOP), its sockets open, its
// pod Ready (a TCP readiness probe still connects), its session with the
// controller lapsing. Kafka's timing predicts what happens: a pause
// shorter than broker.session.timeout.ms (9 s here) stalls the partitions
// the broker is in for about the pause; a longer one until the controller
// fences the broker (about 9 s), which moves its leaderships and drops it
// from every ISR.
var _ = Describe("A follower broker is paused", Label("pause"), Serial, func() {
	for _, d := range []time.Duration{5 * time.Second, 20 * time.Second} {
		labels := Label()
		if d < 9*time.Second { // shorter than the session timeout: `make test` runs it
			labels = Label("pause-short")
		}
		storySpec(fmt.Sprintf("for %s: loses no acknowledged record, and rejoins every ISR", d), labels,
			func(SpecContext, *env) story {
				return pauseStory(fmt.Sprintf("pause-follower-%s", d), followerOf(0), d)
			})
	}
})

var _ = Describe("The leader of partition 0 is paused", Label("pause"), Serial, func() {
	storySpec("for 20s: is fenced, its partitions move, no acknowledged record is lost", Label(),
		func(SpecContext, *env) story { return pauseStory("pause-leader-20s", leaderOf(0), 20*time.Second) })
	storySpec("for 45s: is fenced, its partitions move, no acknowledged record is lost", gameday(),
		func(SpecContext, *env) story { return pauseStory("pause-leader-45s", leaderOf(0), 45*time.Second) })
})

var _ = Describe("The active KRaft controller is paused", Label("pause"), Serial, func() {
	storySpec("for 20s: the quorum elects another leader, no acknowledged record is lost", Label(),
		func(SpecContext, *env) story {
			return pauseStory("pause-controller-20s", activeController, 20*time.Second)
		})
})

// pauseStory freezes the first victim's JVM for d. The fault holds as
// planned when the paused broker answers no request while another does.
func pauseStory(label string, pick func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error), d time.Duration) story {
	return story{
		Label: label,
		Kind:  scenario.Hard,
		Pick:  pick,
		Fault: func(e *env, v []brokers.Server) chaos.Fault {
			return &chaos.Pause{Scope: e.FaultScope(), Exec: e.Exec, Pod: v[0].Pod}
		},
		During: func(ctx context.Context, e *env, v []brokers.Server) error {
			start := time.Now()
			By(fmt.Sprintf("holding the pause for %s, watching the leaders of %s", d, "kafkachaos-"+label))
			watch := make(chan leadershipSeen, 1)
			go func() {
				defer GinkgoRecover()
				watch <- watchLeadership(ctx, e, "kafkachaos-"+label, v[0].ID, start, d)
			}()
			var err error
			if v[0].Broker {
				By(fmt.Sprintf("checking that broker %d answers nothing while paused", v[0].ID))
				err = pauseHeld(ctx, e, v[0].ID)
			} else { // a controller-only node is not in the clients' metadata
				By(fmt.Sprintf("checking that controller %d's JVM is stopped", v[0].ID))
				err = jvmStopped(ctx, &chaos.Pause{Scope: e.FaultScope(), Exec: e.Exec, Pod: v[0].Pod})
			}
			By(fmt.Sprintf("broker %d, paused: %s", v[0].ID, <-watch))
			return err
		},
	}
}

// Polls of the leadership watch.
const (
	leaderPoll    = 500 * time.Millisecond
	leaderTimeout = 2 * time.Second // one metadata request (it may hit the paused broker)
)

// leadershipSeen is what watchLeadership saw: the last time after the
// pause began that the paused node still led a partition (or the quorum),
// the first time it led none (-1: never seen), and what it saw then.
type leadershipSeen struct {
	partitions, quorum moved
}

// moved is one kind of leadership: when the paused node was last seen
// holding it, when first seen without it (-1: never), and the leaders seen.
type moved struct {
	held, lost time.Duration
	seen       string
}

func (m moved) String() string {
	if m.held == 0 && m.lost >= 0 {
		return "not held: " + m.seen
	}
	if m.lost < 0 {
		return fmt.Sprintf("still held when the fault ended (last seen %s in: %s)", m.held.Round(100*time.Millisecond), m.seen)
	}
	return fmt.Sprintf("held at %s, lost at %s: %s", m.held.Round(100*time.Millisecond), m.lost.Round(100*time.Millisecond), m.seen)
}

// observe records one look at the leadership.
func (m *moved) observe(since time.Time, holds bool, seen string) {
	m.seen = seen
	if holds {
		m.held = time.Since(since)
	} else {
		m.lost = time.Since(since)
	}
}

func (l leadershipSeen) String() string {
	return fmt.Sprintf("partition leaderships %s; quorum leadership %s", l.partitions, l.quorum)
}

// watchLeadership holds until start+d, polling the leaders of topic's
// partitions and of the KRaft quorum, and returns when node id was last
// seen leading and first seen leading nothing, for each.
func watchLeadership(ctx context.Context, e *env, topic string, id int32, start time.Time, d time.Duration) leadershipSeen {
	seen := leadershipSeen{partitions: moved{lost: -1, seen: "no metadata yet"}, quorum: moved{lost: -1, seen: "no quorum description yet"}}
	for end := start.Add(d); time.Now().Before(end) && ctx.Err() == nil; scenario.Hold(ctx, min(leaderPoll, time.Until(end))) {
		_ = e.WithKafka(func(cl *kafkaadmin.Client) error {
			rctx, cancel := context.WithTimeout(ctx, leaderTimeout)
			defer cancel()
			if seen.partitions.lost < 0 {
				if leaders, err := cl.Leaders(rctx, topic); err == nil {
					seen.partitions.observe(start, slices.Contains(slices.Collect(maps.Values(leaders)), id), fmt.Sprint("leaders ", leaders))
				}
			}
			if seen.quorum.lost < 0 {
				if leader, err := cl.ActiveController(rctx); err == nil {
					seen.quorum.observe(start, leader == id, fmt.Sprint("active controller ", leader))
				}
			}
			return nil
		})
	}
	return seen
}

// probeTimeout bounds each request of the pause probe, and is how long a
// paused broker must stay silent: short, so that on a paused seed the
// probe's metadata request moves on to the next seed, and the probe ends
// well inside even a 5 s pause.
const probeTimeout = 2 * time.Second

// pauseHeld returns nil when broker id does not answer ApiVersions within
// probeTimeout while another broker answers it.
func pauseHeld(ctx context.Context, e *env, id int32) error {
	cl, err := e.KafkaClient(kgo.RequestTimeoutOverhead(probeTimeout))
	if err != nil {
		return err
	}
	defer cl.Close()
	snap, err := e.Snapshot(ctx)
	if err != nil {
		return err
	}
	var answered error = errors.New("no other broker to ask")
	for _, b := range scenario.BrokerIDs(snap) {
		if b == id {
			continue
		}
		if _, answered = cl.Broker(int(b)).Request(ctx, kmsg.NewPtrApiVersionsRequest()); answered == nil {
			break
		}
	}
	if answered != nil {
		return fmt.Errorf("the probe reached no running broker: %w", answered)
	}
	_, err = cl.Broker(int(id)).Request(ctx, kmsg.NewPtrApiVersionsRequest())
	var netErr net.Error
	switch {
	case err == nil:
		return fmt.Errorf("paused broker %d answered ApiVersions: the pause did not hold", id)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return nil
	default:
		return fmt.Errorf("paused broker %d: want no answer within %s, got an error instead (is it paused, or gone?): %w", id, probeTimeout, err)
	}
}

// jvmStopped returns nil when every Kafka JVM of the paused pod is in
// state T (stopped), as /proc inside its container says.
func jvmStopped(ctx context.Context, f *chaos.Pause) error {
	state, err := f.State(ctx)
	if err != nil {
		return err
	}
	for _, pidState := range strings.Fields(state) {
		if !strings.HasSuffix(pidState, ":T") {
			return fmt.Errorf("%s: the JVM is not stopped (PID:state %s)", f.Pod, state)
		}
	}
	return nil
}

// followerOf picks a broker that replicates partition p of the workload
// topic without leading it.
func followerOf(p int32) func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error) {
	return func(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
		leader, err := leaderOf(p)(ctx, e, topic, snap)
		if err != nil {
			return nil, err
		}
		for _, id := range scenario.BrokerIDs(snap) {
			if id != leader[0].ID {
				By(fmt.Sprintf("broker %d follows %s/%d", id, topic, p))
				return broker(id)(ctx, e, topic, snap)
			}
		}
		return nil, fmt.Errorf("no broker other than the leader %d among %v", leader[0].ID, scenario.BrokerIDs(snap))
	}
}
