package suites

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// Partition specs: a broker alive and registered, but cut off from some
// peers by a NetworkPolicy (which the cluster's CNI, or the local cluster's
// nftables rules, must enforce; the probe fails the spec when it does not).
// Kafka's timing predicts what happens:
//   - isolate: the victim's controller session lapses, so it is fenced
//     after broker.session.timeout.ms (9 s) and its leaderships move; the
//     partitions it follows stall for about that long, until it leaves
//     their ISR.
//   - peers-only: the victim still heartbeats to the quorum, so it is never
//     fenced. The partitions it follows stall acks=all writes until their
//     leaders drop it from the ISR, after replica.lag.time.max.ms (30 s).
//     The partitions it leads lose their followers' fetches: their ISR
//     shrinks to the leader alone, below min.insync.replicas 2, and they
//     stay unwritable for the whole partition.
//   - controller: the active controller loses the quorum's majority; the
//     other voters elect a new leader after controller.quorum.fetch.timeout.ms
//     (2 s) plus an election timeout (1 s).
var _ = Describe("The leader of partition 0 is partitioned", Label("partition"), Serial, func() {
	storySpec("from every other Kafka node (isolate), for 45s: is fenced, its partitions move, no acknowledged record is lost", Label(),
		func(SpecContext, *env) story {
			return partitionStory("partition-isolate-45s", leaderOf(0), chaos.PartitionIsolate, 45*time.Second)
		})
	// Shorter than replica.lag.time.max.ms: every partition stalls (the
	// victim is in every ISR) for the cut and the TCP retransmission
	// back-off after it, well inside the 30 s bound. `make test` runs it.
	storySpec("from the other brokers' replication only (peers-only), for 10s: no acknowledged record is lost", Label("peers-only"),
		func(SpecContext, *env) story {
			return partitionStory("partition-peers-only-10s", leaderOf(0), chaos.PartitionPeersOnly, 10*time.Second)
		})
	// A finding (docs/findings/peers-only-partition.md): the partitions the victim leads stay unwritable
	// for the whole cut, and the rest stall past the 30 s bound.
	storySpec("from the other brokers' replication only (peers-only), for 45s: no acknowledged record is lost", Label(),
		func(SpecContext, *env) story {
			return partitionStory("partition-peers-only-45s", leaderOf(0), chaos.PartitionPeersOnly, 45*time.Second)
		})
	// The clients are the in-cluster agents: the host's own traffic is
	// never cut (on the local cluster as on most CNIs).
	storySpec("from its clients only (clients), for 45s, under load from 3 in-cluster agents: no acknowledged record is lost", Label(),
		func(SpecContext, *env) story {
			st := partitionStory("partition-clients-45s", leaderOf(0), chaos.PartitionClients, 45*time.Second)
			st.Agents = 3
			return st
		})
})

var _ = Describe("The active KRaft controller is partitioned from the other Kafka nodes' controller listener", Label("partition"), Serial, func() {
	storySpec("for 20s: the quorum elects another leader, no acknowledged record is lost", Label(),
		func(_ SpecContext, e *env) story {
			if e.ZooKeeperConnect != "" {
				Skip("ZooKeeper mode has no controller listener to cut: the controller broker talks to the others on the broker port")
			}
			return partitionStory("partition-controller-20s", activeController, chaos.PartitionController, 20*time.Second)
		})
})

// partitionKind is what a partition of mode is to Kafka: a victim cut
// off from the quorum (isolate, controller) is fenced as a killed broker
// is, a hard fault.
func partitionKind(mode chaos.PartitionMode) scenario.Kind {
	if mode == chaos.PartitionIsolate || mode == chaos.PartitionController {
		return scenario.Hard
	}
	return scenario.Unknown
}

// How long the partition probe may wait for the policy to be enforced.
const (
	probeHoldTimeout = 15 * time.Second
	probeRetry       = time.Second
)

// partitionStory cuts the first victim off as mode says for d. The fault
// holds as planned when, from inside the pods, every connection the mode
// cuts fails and every one it allows succeeds.
func partitionStory(label string, pick func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error), mode chaos.PartitionMode, d time.Duration) story {
	var kafkaPods []string // every Kafka pod when the victim was picked
	return story{
		Label: label,
		// Cut off from the quorum, the victim is fenced as a killed broker
		// is; peers-only and clients never are (Kafka's prediction for
		// peers-only is replica.lag.time.max.ms; for clients, nothing: the
		// default bound).
		Kind: partitionKind(mode),
		Pick: func(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
			kafkaPods = kafkaPods[:0]
			for _, b := range snap {
				kafkaPods = append(kafkaPods, b.Pod)
			}
			return pick(ctx, e, topic, snap)
		},
		Fault: func(e *env, v []brokers.Server) chaos.Fault {
			return &chaos.Partition{Scope: e.FaultScope(), Exec: e.Exec, Mode: mode, Pod: v[0].Pod, KafkaPods: kafkaPods}
		},
		During: func(ctx context.Context, e *env, v []brokers.Server) error {
			start := time.Now()
			By(fmt.Sprintf("holding the %s partition of %s for %s, watching the leaders of %s", mode, v[0].Pod, d, "kafkachaos-"+label))
			watch := make(chan leadershipSeen, 1)
			go func() {
				defer GinkgoRecover()
				watch <- watchLeadership(ctx, e, "kafkachaos-"+label, v[0].ID, start, d)
			}()
			By("probing from inside the pods that the cut connections fail and the allowed ones work")
			f := &chaos.Partition{Scope: e.FaultScope(), Exec: e.Exec, Mode: mode, Pod: v[0].Pod, KafkaPods: kafkaPods}
			if mode == chaos.PartitionClients {
				agents, err := e.Kube.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=kafkachaos-agent"})
				if err != nil {
					return err
				}
				for _, p := range agents.Items {
					f.Clients = append(f.Clients, p.Name)
				}
			}
			err := probeCut(ctx, f)
			By(fmt.Sprintf("node %d, partitioned (%s): %s", v[0].ID, mode, <-watch))
			return err
		},
	}
}

// probeCut probes from inside the pods, until it holds or for
// probeHoldTimeout, that f cuts what it should and allows the rest: the
// policy is enforced asynchronously (the CNI's, or the local cluster's,
// controller). It returns the last probe's verdict.
func probeCut(ctx context.Context, f *chaos.Partition) error {
	var reach []chaos.Reach
	var err error // the last probe's verdict
	_ = wait.PollUntilContextTimeout(ctx, probeRetry, probeHoldTimeout, true, func(ctx context.Context) (bool, error) {
		if reach, err = f.Probe(ctx); err == nil {
			err = chaos.Held(reach)
		}
		return err == nil, nil
	})
	for _, r := range reach {
		GinkgoWriter.Println("  probe:", r)
	}
	return err
}
