package suites

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// Disk-loss specs: a broker, and a KRaft voter, come back with an empty
// volume and the same node ID. The fault cannot be undone, so each runs on
// a Kafka of its own, deployed on the local cluster for the spec and
// deleted after it: nobody's data is lost there, and that is its opt-in to
// data loss (chaos.DiskLoss wants target.allowDataLoss for any other
// Kafka). They skip on an existing cluster.
//
// What Kafka's design predicts:
//   - a broker-only node on a new volume registers again with a new
//     directory ID, fetches every replica it hosts from the leaders, and
//     rejoins each ISR only once caught up (KIP-903); nothing acknowledged
//     is lost, since every record was on at least min.insync.replicas
//     brokers;
//   - a voter of a static quorum (controller.quorum.voters) that comes back
//     empty is still a voter: nothing checks its directory ID. It votes for
//     any candidate, since every log is at least as long as its empty one.
//     When the leader then dies, the third voter is elected with its vote,
//     which is safe only if that voter holds every committed record; if it
//     lagged, committed metadata is lost (KAFKA-14077; Kafka's operations
//     guide says to wait before formatting a replaced controller disk).
var _ = Describe("Disk loss", Label("disk-loss"), Serial, func() {
	// `make test` runs this one (about 4 minutes with its own Kafka).
	It("of a broker-only node (separate controllers): it fetches its replicas back, rejoins every ISR, no acknowledged record is lost", Label("disk-loss-broker"), func(ctx SpecContext) {
		e := diskLossKafka(ctx, "separate-controllers")
		By(fmt.Sprintf("writing %d MiB of ballast into %s (6 partitions, RF 3): what the new volume must fetch back", ballastMiB, ballastTopic))
		start := time.Now()
		Expect(writeBallast(ctx, e, ballastTopic, ballastMiB<<20)).To(Succeed())
		By(fmt.Sprintf("ballast written in %s", time.Since(start).Round(100*time.Millisecond)))
		expectPassed(tell(ctx, e, brokerDiskLossStory("disk-loss-broker")))
	}, SpecTimeout(storyTimeout))

	It("of a combined voter under a static quorum, then the quorum leader force-deleted as it comes back: committed metadata survives", func(ctx SpecContext) {
		e := diskLossKafka(ctx, "combined")
		s := sentinel{topic: "kafkachaos-sentinel", partitions: 3, records: 100}
		By(fmt.Sprintf("committing metadata and records before the faults: topic %s, %d partitions, %s=%s, %d records with acks=all", s.topic, s.partitions, sentinelConfig, sentinelValue, s.records))
		Expect(s.plant(ctx, e, -1)).To(Succeed())
		expectPassed(tell(ctx, e, voterDiskLossStory("disk-loss-voter", s)))
	}, SpecTimeout(storyTimeout))

	// A finding (docs/findings/static-quorum-disk-loss.md) when committed metadata is lost: the KAFKA-14077
	// shape, forced. The third voter is frozen while a topic is created,
	// so the topic is committed on the leader and the victim alone; then
	// the victim's disk goes and the leader freezes before the victim has
	// fetched it back. The leader is frozen rather than force-deleted: a
	// deleted leader's pod comes back in seconds with its full log and
	// wins the election, a hung one stays out, as a hung node would.
	It("of a combined voter under a static quorum, while the third voter lags and the leader hangs: committed metadata survives", func(ctx SpecContext) {
		e := diskLossKafka(ctx, "combined")
		expectPassed(tell(ctx, e, laggingVoterDiskLossStory("disk-loss-voter-lagging", chaos.DiskLossWipe, false)))
	}, SpecTimeout(storyTimeout))

	// The KAFKA-14077 shape again, on a dynamic quorum (KIP-853), whose
	// voters carry directory IDs so that a voter on a new disk is not taken
	// for the old one. The layout formats in an init container with the
	// operations guide's --initial-controllers list and --ignore-formatted,
	// which is what a StatefulSet on the apache/kafka image can do without
	// a shell: so a new, empty volume is formatted with the node's old
	// directory ID. The victim's claim and pod are deleted together, as a
	// replaced disk, so that the init container runs again.
	It("of a combined voter under a dynamic quorum (KIP-853) formatted by an init container, while the third voter lags and the leader hangs: committed metadata survives", Label("disk-loss-dynamic"), func(ctx SpecContext) {
		e := diskLossKafka(ctx, "dynamic-quorum")
		expectPassed(tell(ctx, e, laggingVoterDiskLossStory("disk-loss-voter-dynamic", chaos.DiskLossClaim, false)))
	}, SpecTimeout(storyTimeout))

	// What KIP-853 is for: the same layout once its pods format new volumes
	// with --no-initial-controllers, so that a replaced disk gets a
	// directory ID of its own. The replacement is an observer, the quorum
	// runs on two voters until an operator removes the old voter and adds
	// the new one, and the health check must see that.
	It("of a combined voter under a dynamic quorum (KIP-853), formatted anew without initial controllers: degraded until the old voter is removed and the new one added, nothing lost", Label("disk-loss-replace"), func(ctx SpecContext) {
		e := diskLossKafka(ctx, "dynamic-quorum")
		By("switching the StatefulSet's format to --no-initial-controllers, as a manifest should once the quorum is bootstrapped")
		Expect(formatWithoutInitialControllers(ctx, e)).To(Succeed())
		s := sentinel{topic: "kafkachaos-sentinel", partitions: 3, records: 100}
		By(fmt.Sprintf("committing metadata and records before the fault: topic %s, %d partitions, %s=%s, %d records with acks=all", s.topic, s.partitions, sentinelConfig, sentinelValue, s.records))
		Expect(s.plant(ctx, e, -1)).To(Succeed())
		expectPassed(tell(ctx, e, replacedVoterStory("disk-loss-voter-replaced", s)))
	}, SpecTimeout(storyTimeout))

	// The same, with what Kafka's operations guide asks of a replaced
	// controller disk: the leader hangs only once the victim has fetched
	// the metadata log back.
	It("of a combined voter under a static quorum, fetched back before the leader hangs while the third voter lags: committed metadata survives", func(ctx SpecContext) {
		e := diskLossKafka(ctx, "combined")
		expectPassed(tell(ctx, e, laggingVoterDiskLossStory("disk-loss-voter-caught-up", chaos.DiskLossWipe, true)))
	}, SpecTimeout(storyTimeout))
})

// Ballast of the broker disk-loss spec.
const (
	ballastTopic = "kafkachaos-ballast"
	ballastMiB   = 256
)

// diskLossKafka is the Kafka a disk-loss spec destroys: on the local
// cluster, manifests/kafka's layout in a namespace of the spec's own.
func diskLossKafka(ctx SpecContext, layout string) *env {
	GinkgoHelper()
	return layoutKafka(ctx, layout, "kafka-disk-loss",
		"disk loss runs on a Kafka of the spec's own on the local cluster; against an existing cluster it would destroy data that is not the suite's",
		"a disk loss cannot be undone: layout "+layout+", for this spec alone", nil)
}

// diskLoss is the fault aimed at pod: allowed by the config's opt-in, or on
// a Kafka the spec deployed for itself.
func diskLoss(e *env, pod string, mode chaos.DiskLossMode) *chaos.DiskLoss {
	return &chaos.DiskLoss{Scope: e.FaultScope(), Exec: e.Exec, Pod: pod, Mode: mode, AllowDataLoss: e.cfg.Target.AllowDataLoss || e.own}
}

// brokerDiskLossStory deletes a broker-only follower's claim and pod
// together. The fault holds until the victim is in every ISR again; the
// observations are the time that took against the bytes it fetched back,
// and its log dir's identity before and after.
func brokerDiskLossStory(label string) story {
	topic := "kafkachaos-" + label
	var metaBefore map[string]string
	var c catchUp
	var podBack time.Duration
	return story{
		Label: label, Kind: scenario.Hard, NewPods: true, NewVolume: "data", DataLost: true,
		Pick: func(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
			v, err := brokerOnlyFollower(ctx, e, topic, snap)
			if err != nil {
				return nil, err
			}
			By("refusing first without the opt-in to data loss: nothing may be touched")
			refused := diskLoss(e, v[0].Pod, chaos.DiskLossClaim)
			refused.AllowDataLoss = false
			if err := refused.Inject(ctx); !errors.Is(err, chaos.ErrDataLossNotAllowed) {
				return nil, fmt.Errorf("a disk loss without the opt-in: want a refusal, got %v", err)
			}
			metaBefore, err = metaProperties(ctx, e, v[0].Pod)
			return v, err
		},
		Fault: func(e *env, v []brokers.Server) chaos.Fault { return diskLoss(e, v[0].Pod, chaos.DiskLossClaim) },
		During: func(ctx context.Context, e *env, v []brokers.Server) error {
			injected := time.Now()
			By(fmt.Sprintf("waiting until broker %d is back as a new Ready pod", v[0].ID))
			if err := e.WaitPodsBack(ctx, v, true); err != nil {
				return err
			}
			podBack = time.Since(injected)
			ref, err := otherBroker(ctx, e, v[0].ID)
			if err != nil {
				return err
			}
			By(fmt.Sprintf("waiting until broker %d holds all of %s (as broker %d does) and is in every ISR of it and of %s", v[0].ID, ballastTopic, ref, topic))
			c, err = watchCatchUp(ctx, e, v[0].ID, ref, injected, ballastTopic, topic)
			if err == nil && len(c.early) > 0 {
				err = fmt.Errorf("broker %d rejoined ISRs before it had caught up (KIP-903 forbids it): %s", v[0].ID, strings.Join(c.early, "; "))
			}
			return err
		},
		Finally: func(ctx context.Context, e *env, v []brokers.Server, o *outcome) {
			if c.took == 0 {
				o.Observations = append(o.Observations, fmt.Sprintf("broker %d: not seen caught up (see the fault check)", v[0].ID), volumeIdentity(ctx, e, v[0], metaBefore, o))
				return
			}
			o.Observations = append(o.Observations, fmt.Sprintf("broker %d back as a Ready pod on a new volume %s after its claim and pod were deleted; caught up and in every ISR %s after them, with %d MiB of ballast fetched back (%.1f MiB/s from the pod's return); predicted: fenced after broker.session.timeout.ms, back in each ISR only once caught up (KIP-903)",
				v[0].ID, podBack.Round(100*time.Millisecond), c.took.Round(100*time.Millisecond), c.bytes>>20, float64(c.bytes>>20)/max(c.took-podBack, time.Millisecond).Seconds()))
			o.Observations = append(o.Observations, volumeIdentity(ctx, e, v[0], metaBefore, o))
		},
	}
}

// otherBroker is a broker other than id, to compare its replicas with.
func otherBroker(ctx context.Context, e *env, id int32) (int32, error) {
	snap, err := e.Snapshot(ctx)
	if err != nil {
		return -1, err
	}
	for _, b := range scenario.BrokerIDs(snap) {
		if b != id {
			return b, nil
		}
	}
	return -1, fmt.Errorf("no broker other than %d to compare its replicas with", id)
}

// volumeIdentity reads the victim's meta.properties again: Kafka formatted
// the empty volume, so node.id and cluster.id must be the same and
// directory.id new; otherwise it is an identity problem.
func volumeIdentity(ctx context.Context, e *env, v brokers.Server, before map[string]string, o *outcome) string {
	after, err := metaProperties(ctx, e, v.Pod)
	if err != nil {
		o.Add(report.CheckIdentity, fmt.Sprintf("broker %d: meta.properties after the disk loss: %v", v.ID, err))
		return "meta.properties after: " + err.Error()
	}
	for _, k := range []string{"node.id", "cluster.id"} {
		if after[k] != before[k] {
			o.Add(report.CheckIdentity, fmt.Sprintf("broker %d: %s in meta.properties: want %s, got %s", v.ID, k, before[k], after[k]))
		}
	}
	if d := after["directory.id"]; d == "" || d == before["directory.id"] {
		o.Add(report.CheckIdentity, fmt.Sprintf("broker %d: directory.id in meta.properties: want a new one (the volume was emptied and formatted), got %q, was %q", v.ID, d, before["directory.id"]))
	}
	return fmt.Sprintf("broker %d's log dir was formatted anew: directory.id %s -> %s (node.id %s, cluster.id %s)",
		v.ID, before["directory.id"], after["directory.id"], after["node.id"], after["cluster.id"])
}

// brokerOnlyFollower picks a broker that runs no controller and does not
// lead the workload topic's partition 0.
func brokerOnlyFollower(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
	leader, err := leaderOf(0)(ctx, e, topic, snap)
	if err != nil {
		return nil, err
	}
	for _, b := range snap {
		if b.Broker && !b.Controller && b.ID != leader[0].ID {
			By(fmt.Sprintf("broker %d (%s) runs no controller and follows %s/0", b.ID, b.Pod, topic))
			return []brokers.Server{b}, nil
		}
	}
	return nil, fmt.Errorf("no broker-only node other than the leader %d: the layout has none", leader[0].ID)
}
