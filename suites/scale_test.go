package suites

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// The scale story adds one broker, spreads the workload topic's partitions
// onto it (a throttled reassignment under load, as an operator does after
// adding a broker), then moves them back and removes the broker again. It
// checks what scaling must get right: the next ID, a volume of its own,
// registration, replicas and leaders on the new broker, and no impact on
// the load while partitions move both ways.
var _ = Describe("A broker is added, then removed", Label("scale"), Serial, func() {
	It("gives the new broker the next ID and a volume of its own, moves partitions onto it and back, and loses no acknowledged record", func(ctx SpecContext) {
		skipWithoutCluster(suite, "scale")
		brokersApartFromControllers(ctx, suite)
		const topic = "kafkachaos-scale"
		var added string
		var sc *chaos.Scale
		addedID := int32(-1)
		expectPassed(tell(ctx, suite, story{
			Label: "scale",
			Pick:  statefulSetPods,
			// Adding a broker, moving partitions and back, and removing it
			// are all graceful: bounded as a roll is, and paced.
			Kind: scenario.Graceful,
			Fault: func(e *env, v []brokers.Server) chaos.Fault {
				added = fmt.Sprintf("%s-%d", e.cfg.Target.StatefulSet, len(v))
				sc = &chaos.Scale{Scope: e.FaultScope(), StatefulSet: e.cfg.Target.StatefulSet, Replicas: int32(len(v) + 1),
					Kafka: e.Mover(), Topics: []string{topic}, Throttle: reassignThrottle}
				return sc
			},
			During: func(ctx context.Context, e *env, v []brokers.Server) error {
				By("waiting until the new broker " + added + " is Ready, registered, and the cluster healthy")
				nb, err := waitAdded(ctx, e, added)
				if err != nil {
					return err
				}
				addedID = nb.ID
				ids := append(scenario.BrokerIDs(v), nb.ID)
				if err := e.WaitHealthy(ctx, ids); err != nil {
					return err
				}
				if err := addedProblems(v, nb); err != nil {
					return err
				}
				By(fmt.Sprintf("spreading %s's partitions over brokers %v (reassignment throttled to %d MiB/s, under load)", topic, ids, reassignThrottle>>20))
				rctx, cancel := context.WithTimeout(ctx, reassignTimeout)
				defer cancel()
				moved, err := sc.Spread(rctx, ids)
				if err != nil {
					return err
				}
				return movedProblems(moved, nb.ID)
			},
			Settle: func(ctx context.Context, e *env, _ []brokers.Server) error {
				By("waiting until " + added + " is gone, then unregistering its broker ID")
				return removeAdded(ctx, e, added, addedID)
			},
		}))
	}, SpecTimeout(storyTimeout+reassignTimeout))
})

// The reassignment of the scale story: its replication throttle per
// broker, and how long the move may take under load on a loaded machine.
const (
	reassignThrottle = 10 << 20 // bytes/s
	reassignTimeout  = 3 * time.Minute
)

// movedProblems checks that the spread gave broker id replicas, and the
// preferred leadership of at least one partition.
func movedProblems(moved kafkaadmin.Assignments, id int32) error {
	var onto, leads int
	moved.Each(func(_ string, _ int32, rs []int32) {
		if slices.Contains(rs, id) {
			onto++
		}
		if rs[0] == id {
			leads++
		}
	})
	if onto == 0 || leads == 0 {
		return fmt.Errorf("the spread gave broker %d %d replicas and %d leaders, want some of each: moved %s", id, onto, leads, moved)
	}
	return nil
}

// brokersApartFromControllers returns the pods of the brokers' StatefulSet,
// and skips the spec when one of them runs a KRaft controller: a broker
// added to it would be a controller outside the static voter set.
func brokersApartFromControllers(ctx context.Context, e *env) []brokers.Server {
	GinkgoHelper()
	snap, err := e.Snapshot(ctx)
	Expect(err).NotTo(HaveOccurred())
	pods, err := statefulSetPods(ctx, e, "", snap)
	Expect(err).NotTo(HaveOccurred())
	for _, p := range pods {
		if p.Controller {
			Skip(fmt.Sprintf("%s runs a KRaft controller: adding one outside the static voter set fails; scaling needs brokers apart from the controllers (layout separate-controllers)", p.Pod))
		}
	}
	return pods
}

// waitAdded waits until pod is Ready and returns it as a broker.
func waitAdded(ctx context.Context, e *env, pod string) (brokers.Server, error) {
	var b brokers.Server
	err := InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			p, err := e.Kube.CoreV1().Pods(e.Namespace).Get(ctx, pod, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !kube.PodReady(p) {
				return fmt.Errorf("%s is %s, not Ready", pod, p.Status.Phase)
			}
			snap, err := e.Snapshot(ctx)
			if err != nil {
				return err
			}
			for _, s := range snap {
				if s.Pod == pod {
					b = s
					return nil
				}
			}
			return fmt.Errorf("%s is not among the brokers", pod)
		}).WithTimeout(podBackTimeout).WithPolling(podBackPoll).Should(Succeed(), "the added broker")
	})
	return b, err
}

// addedProblems checks that nb took the next broker ID and a persistent
// volume no other broker has.
func addedProblems(before []brokers.Server, nb brokers.Server) error {
	var p []string
	ids := scenario.BrokerIDs(before)
	if next := slices.Max(ids) + 1; nb.ID != next {
		p = append(p, fmt.Sprintf("broker ID of %s: want %d, the next after %v; got %d", nb.Pod, next, ids, nb.ID))
	}
	if len(nb.Volumes) == 0 || nb.Volumes[0].PV == "" {
		p = append(p, fmt.Sprintf("%s has no bound persistent volume: %+v", nb.Pod, nb.Volumes))
	}
	for _, b := range before {
		for _, v := range b.Volumes {
			for _, w := range nb.Volumes {
				if v.PV != "" && v.PV == w.PV {
					p = append(p, fmt.Sprintf("%s got %s's volume %s", nb.Pod, b.Pod, v.PV))
				}
			}
		}
	}
	if len(p) > 0 {
		return errors.New(strings.Join(p, "; "))
	}
	return nil
}

// removeAdded waits until the scale-in removed pod, then unregisters its
// broker ID (if it got as far as having one) from the KRaft controller.
func removeAdded(ctx context.Context, e *env, pod string, id int32) error {
	err := InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			_, err := e.Kube.CoreV1().Pods(e.Namespace).Get(ctx, pod, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("%s still there (%v)", pod, err)
		}).WithTimeout(podBackTimeout).WithPolling(podBackPoll).Should(Succeed(), "the scale-in")
	})
	if err != nil || id < 0 {
		return err
	}
	return e.WithKafka(func(cl *kafkaadmin.Client) error {
		return InterceptGomegaFailure(func() {
			// The controller refuses while the broker is still unfenced.
			Eventually(ctx, func(ctx context.Context) error { return cl.Unregister(ctx, id) }).
				WithTimeout(healthTimeout).WithPolling(healthPoll).Should(Succeed(), "unregistering broker %d", id)
		})
	})
}
