package suites

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// replication_test.py's clean_bounce and hard_bounce: five rounds, each
	// on the leader of partition 0 of then.
	storySpec(fmt.Sprintf("the leader of partition 0 of the moment, cleanly, %d times: each time its leaderships move, it restarts and rejoins every ISR before the next, nothing acknowledged is lost", bounceRounds),
		Label("broker-bounce-clean"),
		func(SpecContext, *env) story { return bounceStory("bounce-leader-clean", false, bounceRounds) })
	storySpec(fmt.Sprintf("the leader of partition 0 of the moment, killed, %d times: each time it is fenced, restarts and rejoins every ISR before the next, nothing acknowledged is lost", bounceRounds),
		Label("broker-bounce-hard"),
		func(SpecContext, *env) story { return bounceStory("bounce-leader-hard", true, bounceRounds) })
})

// bounceRounds is how many times the bounce specs stop a leader, as
// replication_test.py does.
const bounceRounds = 5

// bounceStory stops the leader of partition 0 of the moment rounds times
// (hard: SIGKILL first), as replication_test.py's bounces do: each round
// waits until the broker is down and out of every ISR (fenced, for a hard
// stop: Kafka's test sleeps past the session timeout), restarts it in its
// own pod, and waits until it is back in every ISR before the next round
// picks the leader again. Kafka's test does not wait for the ISR; the
// suite does, so that each round's unavailability is one broker's. A
// round whose broker is not seen down and out fails the fault check, and
// the rounds go on.
func bounceStory(label string, hard bool, rounds int) story {
	kind := scenario.Graceful
	if hard {
		kind = scenario.Hard
	}
	topic := scenario.Topic(label)
	var seen []string // per round: the broker and how long it took to leave
	var held []error  // per round whose broker was not seen down and out
	return story{
		Label: label, Kind: kind, Pick: leaderOf(0),
		Fault: func(e *env, v []brokers.Server) chaos.Fault {
			var steps []chaos.Step
			for r := 1; r <= rounds; r++ {
				var f *chaos.Stop
				var victim brokers.Server
				var stopped time.Time
				steps = append(steps,
					chaos.Step{What: fmt.Sprintf("round %d of %d: stopping the leader of %s/0", r, rounds, topic), Fault: func(ctx context.Context) (chaos.Fault, error) {
						snap, err := e.Snapshot(ctx)
						if err != nil {
							return nil, err
						}
						l, err := leaderOf(0)(ctx, e, topic, snap)
						if err != nil {
							return nil, err
						}
						victim, stopped = l[0], time.Now()
						f = &chaos.Stop{Scope: e.FaultScope(), Exec: e.Exec, Pods: []string{victim.Pod}, Hard: hard, PauseImage: e.cfg.Target.PauseImage,
							Restarted: func(ctx context.Context, _ string) error { return backInEveryISR(ctx, e, victim.ID, topic) }}
						return f, nil
					}},
					chaos.Step{What: fmt.Sprintf("round %d: waiting until the stopped broker is down and out of every ISR (within %s)", r, stopLeftTimeout), Do: func(ctx context.Context) error {
						if err := waitStoppedOut(ctx, e, f, victim, topic); err != nil { // the fault check's; the round goes on
							held = append(held, fmt.Errorf("round %d: %w", r, err))
							return nil
						}
						seen = append(seen, fmt.Sprintf("%d (out in %s)", victim.ID, time.Since(stopped).Round(100*time.Millisecond)))
						return nil
					}},
					chaos.Step{What: fmt.Sprintf("round %d: restarting it and waiting until it is back in every ISR (within %s)", r, podBackTimeout), Do: func(ctx context.Context) error {
						return f.Recover(ctx)
					}},
				)
			}
			how := "stopped cleanly"
			if hard {
				how = "killed"
			}
			return &chaos.Sequence{Scope: e.FaultScope(), Say: func(m string) { By(m) }, Steps: steps,
				What: fmt.Sprintf("the leader of partition 0 %s and restarted, %d times", how, rounds)}
		},
		During: func(context.Context, *env, []brokers.Server) error { return errors.Join(held...) },
		Finally: func(_ context.Context, _ *env, _ []brokers.Server, o *scenario.Outcome) {
			if len(seen) > 0 {
				o.Observations = append(o.Observations, "brokers stopped in turn, each down and out of every ISR after: "+strings.Join(seen, ", "))
			}
		},
	}
}

// backInEveryISR waits until broker id is in every ISR of topic.
func backInEveryISR(ctx context.Context, e *env, id int32, topic string) error {
	return scenario.Poll(ctx, time.Second, podBackTimeout, fmt.Sprintf("broker %d back in every ISR of %s", id, topic), func(ctx context.Context) error {
		return e.WithKafka(func(c *kafkaadmin.Client) error {
			ps, err := partitionsOf(ctx, c, topic)
			if err != nil {
				return err
			}
			for p, view := range ps {
				if !slices.Contains(view.ISR, id) {
					return fmt.Errorf("broker %d is not in the ISR of %s/%d (%v)", id, topic, p, view.ISR)
				}
			}
			return nil
		})
	})
}

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
			if err := waitStoppedOut(ctx, e, f, v[0], topic); err != nil {
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

// waitStoppedOut waits, within stopLeftTimeout, until stoppedOut holds.
func waitStoppedOut(ctx context.Context, e *env, f *chaos.Stop, victim brokers.Server, topic string) error {
	return scenario.Poll(ctx, time.Second, stopLeftTimeout, fmt.Sprintf("broker %d down and out of every ISR", victim.ID), func(ctx context.Context) error {
		return stoppedOut(ctx, e, f, victim, topic)
	})
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
	switch registered, err := registeredUnfenced(ctx, e, victim.ID); {
	case err != nil:
		return err
	case registered:
		return fmt.Errorf("broker %d is registered and not fenced", victim.ID)
	}
	return e.WithKafka(func(c *kafkaadmin.Client) error {
		ps, err := partitionsOf(ctx, c, topic)
		if err != nil {
			return err
		}
		for p, view := range ps {
			if view.Leader == victim.ID || slices.Contains(view.ISR, victim.ID) {
				return fmt.Errorf("broker %d still leads or is in the ISR of %s/%d (leader %d, ISR %v)", victim.ID, topic, p, view.Leader, view.ISR)
			}
		}
		return nil
	})
}

// partitionsOf is topic's partitions as Kafka's metadata has them now; an
// error when they are unknown.
func partitionsOf(ctx context.Context, c *kafkaadmin.Client, topic string) (map[int32]kafkaadmin.PartitionView, error) {
	s, err := c.State(ctx, topic)
	if err != nil {
		return nil, err
	}
	if s.Partitions == nil {
		return nil, errors.New("the topic's partitions are unknown")
	}
	return s.Partitions, nil
}

// registeredUnfenced reports whether broker id is registered and not
// fenced.
func registeredUnfenced(ctx context.Context, e *env, id int32) (ok bool, err error) {
	err = e.WithKafka(func(cl *kafkaadmin.Client) error {
		regs, err := cl.Registrations(ctx)
		fenced, registered := regs[id]
		ok = registered && !fenced
		return err
	})
	return ok, err
}
