package suites

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// Brokers kept down (chaos.Stop): the broker's pod keeps its identity and
// its volume, its container runs a pause image, and nothing brings the
// broker back until the fault ends, as a stopped service on a machine of
// Kafka's own system tests (replication_test.py stops partition 0's
// leader, or the controller, cleanly or with SIGKILL, while a producer
// writes). A
// StatefulSet would recreate a deleted pod at once; this is the down time
// a long maintenance or a crash loop gives instead. Kafka predicts: a
// clean stop moves the broker's leaderships and takes it out of every ISR
// at once (controlled shutdown); a hard one within the broker session
// (broker.session.timeout.ms, 9 s here); with three replicas and
// min.insync.replicas=2 the producers go on, and nothing acknowledged is
// lost.
var _ = Describe("A broker is stopped and kept down", Label("broker-stop", "kafkatest"), Serial, func() {
	storySpec(fmt.Sprintf("the leader of partition 0, cleanly, for %s: its leaderships move, nothing acknowledged is lost, and restarted in its own pod it rejoins every ISR", stopHold),
		Label("broker-stop-clean"),
		func(SpecContext, *env) story { return stopStory("stop-leader-clean", leaderOf(0), false) })
	storySpec(fmt.Sprintf("the leader of partition 0, killed, for %s: its leaderships move, nothing acknowledged is lost, and restarted it rejoins every ISR", stopHold),
		Label("broker-stop-hard"),
		func(SpecContext, *env) story { return stopStory("stop-leader-hard", leaderOf(0), true) })
})

// stopHold is how long a stopped broker is kept down, from the stop:
// more than three broker sessions (9 s here), so that a hard stop's
// fencing, the moved leaderships and the shrunk ISRs hold for a while
// before it returns (a clean stop leaves at once).
const stopHold = 30 * time.Second

// stopLeftTimeout bounds the time from the stop to the broker being out
// of every ISR, fenced or gone, its pod not Ready on the pause image: the
// pod's grace period (a clean shutdown) or the broker session (a hard
// stop), and margin for a loaded node.
const stopLeftTimeout = 90 * time.Second

// stopStory stops the picked broker (hard: SIGKILL first) and keeps it
// down for stopHold; the fault holds as planned when its pod is down on
// the pause image and Kafka has it in no ISR of the workload topic, and
// not registered unfenced.
func stopStory(label string, pick func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error), hard bool) story {
	kind := scenario.Graceful
	if hard {
		kind = scenario.Hard
	}
	var f *chaos.Stop
	var left time.Duration
	topic := scenario.Topic(label)
	return story{
		Label: label, Kind: kind, Pick: pick,
		Fault: func(e *env, v []brokers.Server) chaos.Fault {
			f = &chaos.Stop{Scope: e.FaultScope(), Exec: e.Exec, Pods: []string{v[0].Pod}, Hard: hard, PauseImage: e.cfg.Target.PauseImage}
			return f
		},
		During: func(ctx context.Context, e *env, v []brokers.Server) error {
			start := time.Now()
			id := v[0].ID
			By(fmt.Sprintf("waiting until pod %s is down on the pause image and broker %d is out of every ISR of %s (within %s)", v[0].Pod, id, topic, stopLeftTimeout))
			err := scenario.Poll(ctx, time.Second, stopLeftTimeout, fmt.Sprintf("broker %d down and out of every ISR", id), func(ctx context.Context) error {
				return stoppedOut(ctx, e, f, v[0], topic)
			})
			if err != nil {
				return err
			}
			left = time.Since(start)
			By(fmt.Sprintf("broker %d left %s later: keeping it down until %s after the stop", id, left.Round(100*time.Millisecond), stopHold))
			scenario.Hold(ctx, stopHold-time.Since(start))
			By(fmt.Sprintf("checking that broker %d is still down after %s", id, stopHold))
			return stoppedOut(ctx, e, f, v[0], topic)
		},
		Finally: func(_ context.Context, _ *env, v []brokers.Server, o *scenario.Outcome) {
			if left > 0 {
				o.Observations = append(o.Observations, fmt.Sprintf("broker %d was down and out of every ISR %s after the stop; kept down for %s",
					v[0].ID, left.Round(100*time.Millisecond), stopHold))
			}
		},
	}
}

// stoppedOut returns nil when the victim's pod is held down by f and
// Kafka has the broker in no ISR and no leadership of topic, and does not
// have it registered unfenced.
func stoppedOut(ctx context.Context, e *env, f *chaos.Stop, victim brokers.Server, topic string) error {
	down, err := f.Down(ctx)
	if err != nil {
		return err
	}
	if !down[victim.Pod] {
		return fmt.Errorf("pod %s is not down on the pause image yet", victim.Pod)
	}
	return e.WithKafka(func(c *kafkaadmin.Client) error {
		regs, err := c.Registrations(ctx)
		if err != nil {
			return err
		}
		if fenced, registered := regs[victim.ID]; registered && !fenced {
			return fmt.Errorf("broker %d is registered and not fenced", victim.ID)
		}
		s, err := c.State(ctx, topic)
		if err != nil {
			return err
		}
		if s.Partitions == nil {
			return errors.New("the topic's partitions are unknown")
		}
		for p, view := range s.Partitions {
			if view.Leader == victim.ID || slices.Contains(view.ISR, victim.ID) {
				return fmt.Errorf("broker %d still leads or is in the ISR of %s/%d (leader %d, ISR %v)", victim.ID, topic, p, view.Leader, view.ISR)
			}
		}
		return nil
	})
}
