package suites

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// Labels select what runs: the fault's name, gate for the quick subset
// before an upgrade, gameday for long holds and repeated faults.
func gate() Labels    { return Label("gate") }
func gameday() Labels { return Label("gameday") }

// The victims of the specs that aim at a named broker.
const (
	namedBroker   int32 = 1
	drainedBroker int32 = 2
)

// Config change rolled by the config-change spec, as in the Kafka on
// Kubernetes write-ups: auto.leader.rebalance.enable flipped to the value
// the brokers do not run with (Kafka's default is true, so usually false),
// so the check that it arrived can fail.
const (
	configEnv = "KAFKA_AUTO_LEADER_REBALANCE_ENABLE"
	configKey = "auto.leader.rebalance.enable"
)

var _ = Describe("A broker pod is force-deleted", Label("pod-kill"), gate(), Serial, func() {
	It("loses no acknowledged record, and the leader of partition 0 comes back with its ID and its volume", func(ctx SpecContext) {
		o := tell(ctx, suite, podKill())
		expectPassed(o)
		By("checking that the timeline saw it: the victim fenced and its leaderships moved, between the kill and the after phase")
		Expect(killSeen(o)).To(BeEmpty())
	}, SpecTimeout(storyTimeout))
})

// podKill force-deletes the pod of partition 0's leader.
func podKill() story {
	return story{Label: "pod-kill", Kind: scenario.Hard, Pick: leaderOf(0), Fault: forceDelete, NewPods: true, Finally: observeFencing}
}

var _ = Describe("A broker pod is force-deleted under load from in-cluster agents", Label("agents"), Serial, func() {
	It("loses no acknowledged record of any agent, with the agents' measurements merged into one report", func(ctx SpecContext) {
		const n = 3
		o := tell(ctx, suite, story{
			Label:   "agents-pod-kill",
			Kind:    scenario.Hard,
			Pick:    leaderOf(0),
			Fault:   forceDelete,
			NewPods: true,
			Agents:  n,
		})
		expectPassed(o)
		By(fmt.Sprintf("checking that the report merges %d agents", n))
		Expect(o.SteadyState.Producers).To(Equal(n*max(suite.cfg.SteadyState.Producers, 1)), "producers in the merged report")
	}, SpecTimeout(storyTimeout))
})

var _ = Describe("A broker pod is deleted gracefully", Label("pod-delete"), Serial, func() {
	storySpec("loses no acknowledged record, and the broker comes back with its ID and its volume", Label(),
		func(SpecContext, *env) story { return podDelete() })
})

// podDelete deletes namedBroker's pod with its grace period.
func podDelete() story {
	return story{
		Label: "pod-delete",
		Kind:  scenario.Graceful,
		Pick:  broker(namedBroker),
		Fault: func(e *env, v []brokers.Server) chaos.Fault {
			return &chaos.PodDelete{Scope: e.FaultScope(), Pod: v[0].Pod}
		},
		NewPods: true,
	}
}

var _ = Describe("The active controller's pod is force-deleted", Label("controller-kill"), Serial, func() {
	storySpec("elects a new controller (the KRaft quorum's leader, or in ZooKeeper mode the controller broker), loses no acknowledged record, and the controller rejoins", Label(),
		func(SpecContext, *env) story {
			return story{
				Label:   "controller-kill",
				Kind:    scenario.Hard,
				Pick:    activeController,
				Fault:   forceDelete,
				NewPods: true,
				Finally: observeFencing,
			}
		})
})

var _ = Describe("The node of a broker is cordoned and drained", Label("node-drain"), gate(), Serial, func() {
	storySpec("respects the PodDisruptionBudget, keeps the broker off the node, and the broker returns with its volume after uncordon", Label(),
		func(SpecContext, *env) story { return nodeDrain() })
})

// nodeDrain cordons and drains the node of drainedBroker, and checks that
// no broker pod runs there while the drain holds.
func nodeDrain() story {
	var drained string
	return story{
		Label: "node-drain",
		Kind:  scenario.Graceful,
		Pick:  broker(drainedBroker),
		Fault: func(e *env, v []brokers.Server) chaos.Fault {
			drained = v[0].Node
			return &chaos.NodeDrain{Scope: e.FaultScope(), Node: drained}
		},
		During: func(ctx context.Context, e *env, _ []brokers.Server) error {
			By(fmt.Sprintf("holding the drain for %s: no broker pod may run on %s", e.cfg.Timing.Hold.Duration, drained))
			looks, missed, err := podsKeptOff(ctx, e, drained, e.cfg.Timing.Hold.Duration)
			if missed > 0 {
				By(fmt.Sprintf("the Kubernetes API could not serve %d of %d looks at %s's pods (while it was down, nothing could be scheduled there either)", missed, looks, drained))
			}
			return err
		},
		NewPods: true,
	}
}

var _ = Describe("The brokers' StatefulSet is restarted", Label("rolling-restart"), gate(), Serial, func() {
	storySpec("rolls the brokers one by one with no acknowledged record lost, each back with its ID and volume", Label(),
		func(_ SpecContext, e *env) story { return rollingRestart(e) })
})

// rollingRestart rolls the brokers' StatefulSet, or on Strimzi asks the
// operator to roll every broker pod.
func rollingRestart(e *env) story {
	st := story{
		Label: "rolling-restart",
		Kind:  scenario.Graceful,
		Pick:  statefulSetPods,
		Fault: func(e *env, _ []brokers.Server) chaos.Fault {
			return &chaos.RollingRestart{Scope: e.FaultScope(), StatefulSet: e.cfg.Target.StatefulSet}
		},
		During:  waitRollout,
		NewPods: true,
	}
	if e.Flavor == brokers.FlavorStrimzi {
		// The operator owns the pods: ask it to roll them.
		st.Pick = brokerPods
		st.Fault = func(e *env, v []brokers.Server) chaos.Fault {
			var pods []string
			for _, b := range v {
				pods = append(pods, b.Pod)
			}
			return &chaos.ManualRollingUpdate{Scope: e.FaultScope(), Pods: pods}
		}
		st.During = func(ctx context.Context, e *env, v []brokers.Server) error {
			By("waiting until the Strimzi operator has rolled every broker")
			return e.WaitPodsBack(ctx, v, true)
		}
	}
	return st
}

var _ = Describe("A broker config change is rolled out", Label("rolling-restart", "config-change"), Serial, func() {
	It("rolls a flipped "+configKey+" through the brokers, then rolls it back, with no acknowledged record lost", func(ctx SpecContext) {
		skipWithoutCluster(suite, "config-change")
		snap, err := suite.Snapshot(ctx)
		Expect(err).NotTo(HaveOccurred())
		pods, err := statefulSetPods(ctx, suite, "", snap)
		Expect(err).NotTo(HaveOccurred())
		By("checking that the brokers take their config from env, which the fault changes")
		why, err := configByStartScript(ctx, suite, suite.cfg.Target.StatefulSet)
		Expect(err).NotTo(HaveOccurred())
		if why != "" {
			Skip(why)
		}
		By("reading " + configKey + " as the brokers run with it")
		was, err := configOf(ctx, suite, pods[0].ID, configKey)
		Expect(err).NotTo(HaveOccurred())
		flipped := map[string]string{"true": "false", "false": "true"}[was]
		Expect(flipped).NotTo(BeEmpty(), "%s=%q is not a boolean", configKey, was)
		expectPassed(tell(ctx, suite, story{
			Label: "config-change",
			Kind:  scenario.Graceful,
			Pick:  statefulSetPods,
			Fault: func(e *env, _ []brokers.Server) chaos.Fault {
				return &chaos.ConfigChange{Scope: e.FaultScope(), StatefulSet: e.cfg.Target.StatefulSet, Env: configEnv, Value: flipped}
			},
			During: func(ctx context.Context, e *env, v []brokers.Server) error {
				if err := waitRollout(ctx, e, v); err != nil {
					return err
				}
				By("checking that every rolled broker runs with " + configKey + "=" + flipped)
				return brokerConfigIs(ctx, e, v, configKey, flipped)
			},
			Settle: func(ctx context.Context, e *env, v []brokers.Server) error {
				if err := waitRollout(ctx, e, v); err != nil {
					return err
				}
				By("checking that every broker runs with " + configKey + "=" + was + " again")
				return brokerConfigIs(ctx, e, v, configKey, was)
			},
			NewPods: true,
		}))
	}, SpecTimeout(2*storyTimeout))
})

var _ = Describe("Game day: every broker is force-deleted in turn", gameday(), Label("pod-kill"), Serial, func() {
	It("survives each broker's loss with nothing lost and every broker back with its ID and its volume", func(ctx SpecContext) {
		skipWithoutCluster(suite, "gameday")
		snap, err := suite.Snapshot(ctx)
		Expect(err).NotTo(HaveOccurred())
		ids := scenario.BrokerIDs(snap)
		Expect(ids).NotTo(BeEmpty(), "no brokers in %s", suite.Namespace)
		for round, id := range ids {
			By(fmt.Sprintf("round %d of %d: broker %d", round+1, len(ids), id))
			expectPassed(tell(ctx, suite, story{
				Label:   fmt.Sprintf("gameday-%d", round+1),
				Kind:    scenario.Hard,
				Round:   fmt.Sprintf("round %d: broker %d", round+1, id),
				Pick:    broker(id),
				Fault:   forceDelete,
				NewPods: true,
			}))
		}
	}, SpecTimeout(3*storyTimeout))
})

// forceDelete deletes the first victim's pod with grace period 0.
func forceDelete(e *env, v []brokers.Server) chaos.Fault {
	return &chaos.PodDelete{Scope: e.FaultScope(), Pod: v[0].Pod, Force: true}
}

// broker picks the broker with ID id.
func broker(id int32) func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error) {
	return func(_ context.Context, _ *env, _ string, snap []brokers.Server) ([]brokers.Server, error) {
		b, ok := brokers.ByID(snap, id)
		if !ok {
			return nil, fmt.Errorf("no broker %d among %v", id, scenario.BrokerIDs(snap))
		}
		return []brokers.Server{b}, nil
	}
}

// leaderOf picks the leader of the workload topic's partition p.
func leaderOf(p int32) func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error) {
	return func(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
		var id int32
		err := e.WithKafka(func(cl *kafkaadmin.Client) (err error) {
			id, err = cl.PartitionLeader(ctx, topic, p)
			return err
		})
		if err != nil {
			return nil, err
		}
		By(fmt.Sprintf("broker %d leads %s/%d", id, topic, p))
		return broker(id)(ctx, e, topic, snap)
	}
}

// activeController picks the KRaft quorum's leader, or in ZooKeeper mode
// the controller broker.
func activeController(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
	id, what, err := e.Controller(ctx)
	if err != nil {
		return nil, err
	}
	By(fmt.Sprintf("node %d is %s", id, what))
	return broker(id)(ctx, e, topic, snap)
}

// statefulSetPods picks every pod of the rolled StatefulSet.
func statefulSetPods(_ context.Context, e *env, _ string, snap []brokers.Server) ([]brokers.Server, error) {
	var v []brokers.Server
	for _, b := range snap {
		if strings.HasPrefix(b.Pod, e.cfg.Target.StatefulSet+"-") {
			v = append(v, b)
		}
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("no pods of StatefulSet %s among the brokers", e.cfg.Target.StatefulSet)
	}
	return v, nil
}

// brokerPods picks every pod with the broker role.
func brokerPods(_ context.Context, _ *env, _ string, snap []brokers.Server) ([]brokers.Server, error) {
	var v []brokers.Server
	for _, b := range snap {
		if b.Broker {
			v = append(v, b)
		}
	}
	return v, nil
}

// waitRollout waits until the StatefulSet has rolled every pod.
func waitRollout(ctx context.Context, e *env, _ []brokers.Server) error {
	return waitRolledOut(ctx, e, e.cfg.Target.StatefulSet)
}

// waitRolledOut waits until StatefulSet name has rolled every pod.
func waitRolledOut(ctx context.Context, e *env, name string) error {
	By("waiting until StatefulSet " + name + " has rolled every pod, one by one")
	return InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			seen, done, err := chaos.RolloutDone(ctx, e.Kube, e.Namespace, name)
			if err != nil || done {
				return err
			}
			return fmt.Errorf("rolling: %s", seen)
		}).WithTimeout(rolloutTimeout).WithPolling(rolloutPoll).Should(Succeed(), "rollout")
	})
}

// podsKeptOff looks every second for d that no pod of the namespace, other
// than one being deleted, runs on node. A look the API could not serve
// (chaos.Transient, or a 401 or 403 while it warms up after that:
// chaos.APIWatch) is missed, not failed: with the API down, nothing can
// be scheduled on the node either. But a hold in which no look succeeded
// proves nothing, and fails. It returns the looks made and missed, and the
// error of the first look that saw pods there.
func podsKeptOff(ctx context.Context, e *env, node string, d time.Duration) (looks, missed int, err error) {
	hold, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	api := chaos.NewAPIWatch(chaos.AuthWarmUp)
	err = wait.PollUntilContextCancel(hold, time.Second, true, func(context.Context) (bool, error) {
		looks++
		// The look runs on ctx, not on the hold: one begun near the
		// hold's end is not cut short (nor refused by the client's rate
		// limiter, which fails a wait that would pass a deadline).
		switch retry, err := api.Retry(podsOnNode(ctx, e, node)); {
		case err == nil:
			return false, nil
		case retry:
			missed++
			return false, nil
		default:
			return true, err
		}
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		err = nil // held for d
	}
	if err == nil && missed == looks {
		err = fmt.Errorf("none of %d looks at %s's pods succeeded: the Kubernetes API could not serve them", looks, node)
	}
	return looks, missed, err
}

// podsOnNode fails when a broker pod that is not terminating is bound to
// node, naming the pods; nil when there are none.

func podsOnNode(ctx context.Context, e *env, node string) error {
	pods, err := e.Kube.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return err
	}
	var on []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			on = append(on, p.Name)
		}
	}
	if len(on) > 0 {
		return fmt.Errorf("pods %v run on cordoned node %s", on, node)
	}
	return nil
}

// configOf reads one broker config of broker id.
func configOf(ctx context.Context, e *env, id int32, key string) (string, error) {
	var v string
	err := e.WithKafka(func(cl *kafkaadmin.Client) (err error) {
		v, err = cl.BrokerConfig(ctx, id, key)
		return err
	})
	return v, err
}

// brokerConfigIs checks a broker config's value on each victim.
func brokerConfigIs(ctx context.Context, e *env, victims []brokers.Server, key, want string) error {
	var wrong []string
	err := e.WithKafka(func(cl *kafkaadmin.Client) error {
		for _, v := range victims {
			got, err := cl.BrokerConfig(ctx, v.ID, key)
			if err != nil {
				return err
			}
			if got != want {
				wrong = append(wrong, fmt.Sprintf("broker %d: %s=%s", v.ID, key, got))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(wrong) > 0 {
		return fmt.Errorf("want %s=%s; %s", key, want, strings.Join(wrong, ", "))
	}
	return nil
}
