package suites

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
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

// Eligible leader replicas (KIP-966), as Kafka's own
// eligible_leader_replicas_test.py tests them: every replica of every
// partition goes down, two cleanly and the last in-sync one hard, and the
// clean ones come back while the last stays down. Kafka's documentation
// (Operations, "Eligible Leader Replicas") predicts: the controllers keep
// as eligible the replicas that left an ISR below min.insync.replicas,
// since the high watermark cannot advance without them, and when the ISR
// is empty they elect "one [ELR member] that is not fenced"; ELR "is
// enabled by default on new clusters starting 4.1". So the broker stopped
// second leads again while the killed one is still down, and nothing
// acknowledged is lost. Without ELR the partitions would stay leaderless
// until the killed broker came back (unclean election is off).
//
// It stops every broker, so it runs on a Kafka of its own with separate
// controllers (the quorum must survive), and skips elsewhere.
var _ = Describe("Eligible leader replicas (KIP-966)", Label("elr", "broker-stop", "kafkatest"), Serial, func() {
	It("every replica down, the last in-sync one killed and kept down: the replica stopped last while min.insync.replicas held leads again, nothing acknowledged is lost", func(ctx SpecContext) {
		e := layoutKafka(ctx, "separate-controllers", "kafka-elr",
			"the ELR spec stops every broker at once: it runs on a Kafka of its own, with separate controllers, on the local cluster",
			"every broker is stopped: layout separate-controllers, for this spec alone", nil)
		Expect(elrOn(ctx, e)).To(Succeed())
		expectPassed(tell(ctx, e, elrStory("elr-last-replica")))
	}, SpecTimeout(storyTimeout))
})

// elrTimeout bounds the election of an eligible replica once it is back,
// Ready and registered: the controllers elect at its unfencing, so this
// is margin for a loaded node.
const elrTimeout = 2 * time.Minute

// elrOn makes sure the cluster runs with eligible leader replicas: it
// skips the spec where the brokers do not support them (before 4.0), and
// raises eligible.leader.replicas.version to 1 where it is 0 (4.0, or a
// cluster upgraded from before 4.1), as Kafka's test does.
func elrOn(ctx context.Context, e *env) error {
	var feats map[int32]kafkaadmin.Features
	if err := e.WithKafka(func(cl *kafkaadmin.Client) (err error) { feats, err = cl.Features(ctx); return err }); err != nil {
		return err
	}
	var level, supported int16 = 1, 1
	for _, f := range feats {
		level, supported = min(level, f.ELRVersion), min(supported, f.MaxELRVersion)
	}
	switch {
	case len(feats) == 0:
		return errors.New("no broker said which features it supports")
	case supported < 1:
		Skip(fmt.Sprintf("a broker does not support %s (Kafka 4.0 and later do)", kafkaadmin.ELRVersionFeature))
	case level >= 1:
		By(fmt.Sprintf("%s is at level %d on every broker: eligible leader replicas are on", kafkaadmin.ELRVersionFeature, level))
		return nil
	}
	said, err := raiseFeature(ctx, e, kafkaadmin.ELRVersionFeature, 0, 1, func(f kafkaadmin.Features) int16 { return f.ELRVersion })
	if err == nil {
		By(said + ", for eligible_leader_replicas_test.py's scenario")
	}
	return err
}

// elrStory stops the other two brokers cleanly one after the other, so
// that the ISR of every partition shrinks to partition 0's leader and the
// second is eligible; then kills that leader and keeps it down, and
// restarts the clean ones in the order they were stopped. With every
// broker down nothing can be asked of Kafka (the controllers describe no
// partitions), so the first one back, which is not eligible, is asked
// whether every partition went leaderless and whom it left eligible; it
// must not be elected itself. The fault holds
// as planned when every partition is led by a broker that was eligible
// when the last one died, while that one is still down.
func elrStory(label string) story {
	r := &elrRun{topic: scenario.Topic(label), stops: map[int32]*chaos.Stop{}}
	return story{
		Label: label, Kind: scenario.Hard,
		Unbounded: "every replica of every partition is down on purpose until an eligible one is back: the producers cannot write for that long; the spec is about which replica leads, and what it holds",
		Pick:      elrPick, Fault: r.fault, During: r.during, Finally: r.finally,
	}
}

// elrPick picks the two brokers that do not lead partition 0, by ID, then
// the leader: stopped first, second (the eligible one), and killed.
func elrPick(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
	l, err := leaderOf(0)(ctx, e, topic, snap)
	if err != nil {
		return nil, err
	}
	var others []brokers.Server
	for _, b := range snap {
		if b.Broker && b.ID != l[0].ID {
			others = append(others, b)
		}
	}
	if len(others) != 2 {
		return nil, fmt.Errorf("the ELR story needs 3 brokers, has %v", scenario.BrokerIDs(snap))
	}
	slices.SortFunc(others, func(a, b brokers.Server) int { return cmp.Compare(a.ID, b.ID) })
	By(fmt.Sprintf("broker %d is stopped first, broker %d second (eligible), broker %d, partition 0's leader, is killed last", others[0].ID, others[1].ID, l[0].ID))
	return append(others, l[0]), nil
}

// elrRun is one telling of the ELR story: its brokers, their stops, and
// what it saw.
type elrRun struct {
	topic   string
	x, y, z brokers.Server // stopped first, second (eligible), last (killed)
	stops   map[int32]*chaos.Stop
	atKill  map[int32]kafkaadmin.Eligibility // with z fenced and x back
	back    time.Time                        // y registered again
	led     time.Duration                    // from back to every partition led from the ELR
}

// fault is the story's sequence: the clean stops and the shrink, then the
// kill and the restarts.
func (r *elrRun) fault(e *env, v []brokers.Server) chaos.Fault {
	r.x, r.y, r.z = v[0], v[1], v[2]
	x, y, z := r.x, r.y, r.z
	return &chaos.Sequence{Scope: e.FaultScope(), Say: func(m string) { By(m) },
		What:  fmt.Sprintf("brokers %d and %d stopped cleanly, broker %d killed and kept down, %d and %d restarted", x.ID, y.ID, z.ID, x.ID, y.ID),
		Steps: append(r.shrinkSteps(e), r.killSteps(e)...)}
}

// stop is the step's fault that stops b (hard: SIGKILL first), restarted
// once it is registered again.
func (r *elrRun) stop(e *env, b brokers.Server, hard bool) func(context.Context) (chaos.Fault, error) {
	return func(context.Context) (chaos.Fault, error) {
		f := &chaos.Stop{Scope: e.FaultScope(), Exec: e.Exec, Pods: []string{b.Pod}, Hard: hard, PauseImage: e.cfg.Target.PauseImage,
			Restarted: func(ctx context.Context, _ string) error { return registeredAgain(ctx, e, b.ID) }}
		r.stops[b.ID] = f
		return f, nil
	}
}

// waitOut waits until b is down and out of every ISR.
func (r *elrRun) waitOut(e *env, b brokers.Server) func(context.Context) error {
	return func(ctx context.Context) error {
		return waitStoppedOut(ctx, e, r.stops[b.ID], b, r.topic)
	}
}

// shrinkSteps stop x and y cleanly in turn, until every ISR is z alone
// and y is eligible.
func (r *elrRun) shrinkSteps(e *env) []chaos.Step {
	x, y, z := r.x, r.y, r.z
	return []chaos.Step{
		{What: fmt.Sprintf("stopping broker %d cleanly (pod %s)", x.ID, x.Pod), Fault: r.stop(e, x, false)},
		{What: fmt.Sprintf("waiting until broker %d is down and out of every ISR (within %s)", x.ID, stopLeftTimeout), Do: r.waitOut(e, x)},
		{What: fmt.Sprintf("stopping broker %d cleanly (pod %s)", y.ID, y.Pod), Fault: r.stop(e, y, false)},
		{What: fmt.Sprintf("waiting until broker %d is down, every ISR of %s is {%d} alone and %d is eligible (within %s)", y.ID, r.topic, z.ID, y.ID, stopLeftTimeout), Do: func(ctx context.Context) error {
			if err := r.waitOut(e, y)(ctx); err != nil {
				return err
			}
			return scenario.Poll(ctx, time.Second, stopLeftTimeout, "the ISRs shrunk to one replica", func(ctx context.Context) error {
				view, err := eligibilities(ctx, e, r.topic)
				if err != nil {
					return err
				}
				return elrShape(view, z.ID, y.ID)
			})
		}},
	}
}

// killSteps kill z and keep it down, restart x, see every partition
// leaderless through it, and restart y. No broker answers while all are
// down, and the controllers do not describe partitions: what they did is
// asked of x, which is not eligible.
func (r *elrRun) killSteps(e *env) []chaos.Step {
	x, y, z := r.x, r.y, r.z
	return []chaos.Step{
		{What: fmt.Sprintf("killing broker %d (pod %s) and keeping it down", z.ID, z.Pod), Fault: r.stop(e, z, true)},
		{What: fmt.Sprintf("waiting until pod %s is down on the pause image (within %s)", z.Pod, stopLeftTimeout), Do: func(ctx context.Context) error {
			return scenario.Poll(ctx, time.Second, stopLeftTimeout, fmt.Sprintf("pod %s down", z.Pod), func(ctx context.Context) error {
				down, err := r.stops[z.ID].Down(ctx)
				if err == nil && !down[z.Pod] {
					err = fmt.Errorf("pod %s is not down on the pause image yet", z.Pod)
				}
				return err
			})
		}},
		{What: fmt.Sprintf("restarting broker %d, which is not eligible, and awaiting it registered", x.ID), Do: func(ctx context.Context) error { return r.stops[x.ID].Recover(ctx) }},
		{What: fmt.Sprintf("asking broker %d until broker %d is fenced and no partition of %s has a leader (within %s): broker %d must not be elected", x.ID, z.ID, r.topic, stopLeftTimeout, x.ID), Do: func(ctx context.Context) error {
			return scenario.Poll(ctx, time.Second, stopLeftTimeout, "every partition leaderless", func(ctx context.Context) error {
				switch registered, err := registeredUnfenced(ctx, e, z.ID); {
				case err != nil:
					return err
				case registered:
					return fmt.Errorf("broker %d is not fenced yet", z.ID)
				}
				view, err := eligibilities(ctx, e, r.topic)
				if err == nil {
					err = leaderless(view)
				}
				if err == nil {
					r.atKill = view
				}
				return err
			})
		}},
		{What: fmt.Sprintf("restarting broker %d, the eligible one, and awaiting it registered, while %d stays down", y.ID, z.ID), Do: func(ctx context.Context) error {
			err := r.stops[y.ID].Recover(ctx)
			r.back = time.Now()
			return err
		}},
	}
}

// during waits until every partition is led by a replica that was
// eligible when z died, while z is still down.
func (r *elrRun) during(ctx context.Context, e *env, _ []brokers.Server) error {
	z := r.z
	By(fmt.Sprintf("waiting until every partition of %s is led by a replica eligible when broker %d died, while it is still down (within %s)", r.topic, z.ID, elrTimeout))
	return scenario.Poll(ctx, time.Second, elrTimeout, "every partition led by an eligible replica", func(ctx context.Context) error {
		now, err := eligibilities(ctx, e, r.topic)
		if err != nil {
			return err
		}
		if err := ledFromELR(r.atKill, now, z.ID); err != nil {
			return err
		}
		switch registered, err := registeredUnfenced(ctx, e, z.ID); {
		case err != nil:
			return err
		case registered:
			return fmt.Errorf("broker %d is registered again: what leads now cannot be told from its return", z.ID)
		}
		r.led = time.Since(r.back)
		return nil
	})
}

// finally adds what the story saw.
func (r *elrRun) finally(_ context.Context, _ *env, _ []brokers.Server, o *outcome) {
	if r.atKill != nil {
		o.Observations = append(o.Observations, fmt.Sprintf("with broker %d fenced and broker %d back, no partition had a leader; eligible then: %s",
			r.z.ID, r.x.ID, elrSummary(r.atKill)))
	}
	if r.led > 0 {
		o.Observations = append(o.Observations, fmt.Sprintf("every partition was led by an eligible replica %s after broker %d was registered again, with broker %d still down",
			r.led.Round(100*time.Millisecond), r.y.ID, r.z.ID))
	}
}

// eligibilities is topic's partitions as a broker knows them from the
// controllers' records.
func eligibilities(ctx context.Context, e *env, topic string) (view map[int32]kafkaadmin.Eligibility, err error) {
	err = e.WithKafka(func(cl *kafkaadmin.Client) error {
		view, err = cl.Eligibilities(ctx, topic)
		return err
	})
	return view, err
}

// registeredAgain waits until broker id is registered and not fenced: a
// restarted broker is up as far as the controllers are concerned, which
// is all an eligible replica needs to be elected.
func registeredAgain(ctx context.Context, e *env, id int32) error {
	return scenario.Poll(ctx, time.Second, podBackTimeout, fmt.Sprintf("broker %d registered and unfenced", id), func(ctx context.Context) error {
		ok, err := registeredUnfenced(ctx, e, id)
		if err == nil && !ok {
			err = fmt.Errorf("broker %d is not registered unfenced", id)
		}
		return err
	})
}

// elrShape returns nil when every partition's ISR is last alone and
// eligible is among its eligible leader replicas: the shape Kafka's test
// reaches before it kills the last in-sync replica.
func elrShape(view map[int32]kafkaadmin.Eligibility, last, eligible int32) error {
	if len(view) == 0 {
		return errors.New("no partitions")
	}
	for _, p := range slices.Sorted(maps.Keys(view)) {
		v := view[p]
		if !slices.Equal(v.ISR, []int32{last}) {
			return fmt.Errorf("partition %d: ISR %v, not {%d} alone yet", p, v.ISR, last)
		}
		if !slices.Contains(v.ELR, eligible) {
			return fmt.Errorf("partition %d: broker %d is not eligible (ELR %v, last known %v): are eligible leader replicas off?", p, eligible, v.ELR, v.LastKnownELR)
		}
	}
	return nil
}

// leaderless returns nil when no partition of view has a leader.
func leaderless(view map[int32]kafkaadmin.Eligibility) error {
	if len(view) == 0 {
		return errors.New("no partitions")
	}
	for _, p := range slices.Sorted(maps.Keys(view)) {
		if l := view[p].Leader; l >= 0 {
			return fmt.Errorf("partition %d is still led by broker %d", p, l)
		}
	}
	return nil
}

// ledFromELR returns nil when every partition of now is led by a broker
// that was an eligible leader replica of it in atKill, and not by down.
func ledFromELR(atKill, now map[int32]kafkaadmin.Eligibility, down int32) error {
	if len(atKill) == 0 || len(now) != len(atKill) {
		return fmt.Errorf("partitions at the kill %d, now %d", len(atKill), len(now))
	}
	for _, p := range slices.Sorted(maps.Keys(now)) {
		l := now[p].Leader
		switch {
		case l < 0:
			return fmt.Errorf("partition %d has no leader (ISR %v, ELR %v, last known %v)", p, now[p].ISR, now[p].ELR, now[p].LastKnownELR)
		case l == down:
			return fmt.Errorf("partition %d is led by broker %d, which should be down", p, l)
		case !slices.Contains(atKill[p].ELR, l):
			return fmt.Errorf("partition %d is led by broker %d, which was not eligible when broker %d died (ELR %v): an unclean election", p, l, down, atKill[p].ELR)
		}
	}
	return nil
}

// elrSummary says each partition's eligible replicas, partition by
// partition.
func elrSummary(view map[int32]kafkaadmin.Eligibility) string {
	s := ""
	for _, p := range slices.Sorted(maps.Keys(view)) {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("p%d %v", p, view[p].ELR)
	}
	return s
}

func TestELRChecks(t *testing.T) {
	type el = kafkaadmin.Eligibility
	// Brokers 0 and 1 stopped cleanly in turn, 2 killed last: what Kafka
	// with eligible leader replicas shows, and what it shows without.
	shrunk := map[int32]el{0: {Leader: 2, ISR: []int32{2}, ELR: []int32{1}}, 1: {Leader: 2, ISR: []int32{2}, ELR: []int32{1}}}
	atKill := map[int32]el{0: {Leader: -1, ELR: []int32{1, 2}}, 1: {Leader: -1, ELR: []int32{1, 2}}}
	for _, tc := range []struct {
		name       string
		check      func() error
		wantFailed bool
	}{
		{"shape: ISR {2}, 1 eligible", func() error { return elrShape(shrunk, 2, 1) }, false},
		{"shape: an ISR not shrunk yet", func() error {
			return elrShape(map[int32]el{0: shrunk[0], 1: {Leader: 2, ISR: []int32{1, 2}}}, 2, 1)
		}, true},
		{"shape: ELR off, nobody eligible", func() error {
			return elrShape(map[int32]el{0: {Leader: 2, ISR: []int32{2}}}, 2, 1)
		}, true},
		{"shape: no partitions", func() error { return elrShape(nil, 2, 1) }, true},
		{"leaderless", func() error { return leaderless(atKill) }, false},
		{"leaderless: one still led", func() error { return leaderless(map[int32]el{0: atKill[0], 1: {Leader: 2}}) }, true},
		{"led from the ELR", func() error {
			return ledFromELR(atKill, map[int32]el{0: {Leader: 1, ISR: []int32{1}}, 1: {Leader: 1, ISR: []int32{0, 1}}}, 2)
		}, false},
		{"ELR off: no leader until the killed broker returns", func() error {
			return ledFromELR(atKill, map[int32]el{0: {Leader: -1, ISR: []int32{2}}, 1: {Leader: 1}}, 2)
		}, true},
		{"led by the broker stopped first: an unclean election", func() error {
			return ledFromELR(atKill, map[int32]el{0: {Leader: 0}, 1: {Leader: 1}}, 2)
		}, true},
		{"led by the killed broker", func() error {
			return ledFromELR(map[int32]el{0: {Leader: -1, ELR: []int32{1, 2}}}, map[int32]el{0: {Leader: 2}}, 2)
		}, true},
		{"a partition missing now", func() error { return ledFromELR(atKill, map[int32]el{0: {Leader: 1}}, 2) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.check(); (err != nil) != tc.wantFailed {
				t.Fatalf("err = %v, want failed %v", err, tc.wantFailed)
			}
		})
	}
}
