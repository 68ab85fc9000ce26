package suites

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// featuresTimeout bounds the wait for every broker to learn a raised
// metadata.version from the metadata log.
const (
	featuresTimeout = 2 * time.Minute
	featuresPoll    = time.Second
)

var _ = Describe("Kafka is upgraded under load", Label("upgrade"), Serial, func() {
	It("rolls every node to the new version one by one, then raises metadata.version, with no acknowledged record lost", func(ctx SpecContext) {
		expectPassed(tell(ctx, upgradeKafka(ctx), upgradeStory(true)))
	}, Label("kafkatest"), SpecTimeout(storyTimeout)) // kraft_upgrade_test.py's roll

	It("rolls every node to the new version and back again before metadata.version is raised, with no acknowledged record lost", Label("upgrade-rollback"), func(ctx SpecContext) {
		expectPassed(tell(ctx, upgradeKafka(ctx), upgradeStory(false)))
	}, SpecTimeout(storyTimeout))
})

// upgradeKafka deploys the Kafka an upgrade spec upgrades: the target
// layout at upgrade.from, in a namespace of its own.
func upgradeKafka(ctx SpecContext) *env {
	GinkgoHelper()
	if suite.cfg.DryRun || !suite.cfg.Local() {
		Skip("the upgrade runs on a Kafka of the spec's own, deployed at upgrade.from on the local cluster")
	}
	from, to := suite.cfg.Upgrade.From, suite.cfg.Upgrade.To
	if kafkadist.CompareVersions(from, to) >= 0 {
		Skip(fmt.Sprintf("upgrade.from %s is not older than upgrade.to %s: set -kafkachaos.upgrade-from (UPGRADE_FROM)", from, to))
	}
	By("checking that the jars of Kafka " + from + " and " + to + " are fetched")
	expectKafkaJars(from)
	expectKafkaJars(to)
	l, err := suite.cfg.SpecLayout()
	Expect(err).NotTo(HaveOccurred())
	l = l.In("kafka-upgrade").WithKafkaVersion(from)
	objs, err := l.Objects()
	Expect(err).NotTo(HaveOccurred())
	return ownKafka(ctx, l, objs, "an upgrade starts from Kafka "+from+", on a Kafka of the spec's own")
}

// upgradeStory rolls every Kafka node from upgrade.from to upgrade.to
// under load and checks each runs the new version in a new pod. keep: the
// upgrade is committed and metadata.version raised while the load runs;
// else the nodes are rolled back to upgrade.from (the fault's Recover), as
// an operator does when an upgrade goes wrong, and each must run the old
// version again at the old metadata.version.
func upgradeStory(keep bool) story {
	from, to := suite.cfg.Upgrade.From, suite.cfg.Upgrade.To
	image := manifests.KafkaImage + ":" + to
	var before, upgraded map[int32]nodeVersion
	var ups []*chaos.Upgrade
	var observed []string
	st := story{
		Label: "upgrade",
		Kind:  scenario.Graceful,
		Pick: func(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
			By("reading what every node runs before the upgrade: the version its log names, the feature levels it answers with")
			var err error
			if before, err = nodeVersions(ctx, e); err != nil {
				return nil, err
			}
			if p := versionProblems(before, from, nil); len(p) > 0 {
				return nil, fmt.Errorf("before the upgrade: %s", strings.Join(p, "; "))
			}
			return statefulSetPods(ctx, e, topic, snap)
		},
		Fault: func(e *env, _ []brokers.Server) chaos.Fault {
			ups = []*chaos.Upgrade{{Scope: e.FaultScope(), StatefulSet: e.cfg.Target.StatefulSet, Image: image}}
			return ups[0]
		},
		During: func(ctx context.Context, e *env, v []brokers.Server) error {
			if err := waitRollout(ctx, e, v); err != nil {
				return err
			}
			if err := upgradeOthers(ctx, e, image, &ups); err != nil {
				return err
			}
			By("checking that every node now runs Kafka " + to + ", in a new pod")
			after, err := nodeVersions(ctx, e)
			if err != nil {
				return err
			}
			if p := versionProblems(after, to, before); len(p) > 0 {
				return fmt.Errorf("after the roll: %s", strings.Join(p, "; "))
			}
			upgraded = after
			if !keep {
				return nil
			}
			By("committing the upgrade: the new images stay, and recovery no longer rolls them back")
			for _, up := range ups {
				if err := up.Commit(ctx); err != nil {
					return err
				}
			}
			ob, err := raiseMetadataVersion(ctx, e, after)
			observed = append(observed, ob)
			return err
		},
		NewPods: true,
		Finally: func(_ context.Context, _ *env, _ []brokers.Server, o *outcome) {
			what := "every node rolled to " + image + " one by one, under load"
			if !keep {
				what += ", then back to " + from + " before metadata.version was raised"
			}
			o.Observations = append(o.Observations, fmt.Sprintf("Kafka %s to %s: %s", from, to, what))
			o.Observations = append(o.Observations, observed...)
		},
	}
	if !keep {
		st.Label = "upgrade-rollback"
		st.Settle = func(ctx context.Context, e *env, v []brokers.Server) error {
			// Recover began the brokers' roll back: one StatefulSet at a
			// time, so the controllers go back once it is done.
			if err := waitRollout(ctx, e, v); err != nil {
				return err
			}
			for _, up := range ups[1:] {
				if err := up.Recover(ctx); err != nil {
					return err
				}
				if err := waitRolledOut(ctx, e, up.StatefulSet); err != nil {
					return err
				}
			}
			By("checking that every node runs Kafka " + from + " again, in a new pod, at the metadata.version of before")
			back, err := nodeVersions(ctx, e)
			if err != nil {
				return err
			}
			p := versionProblems(back, from, nil)
			for id, n := range back {
				if u, ok := upgraded[id]; ok && n.uid == u.uid {
					p = append(p, fmt.Sprintf("node %d: pod %s was not replaced by the rollback", id, n.pod))
				}
				if b, ok := before[id]; ok && b.features != nil && n.features != nil && n.features.MetadataVersion != b.features.MetadataVersion {
					p = append(p, fmt.Sprintf("broker %d knows metadata.version level %d, not the %d of before", id, n.features.MetadataVersion, b.features.MetadataVersion))
				}
			}
			if len(p) > 0 {
				return fmt.Errorf("after the rollback: %s", strings.Join(p, "; "))
			}
			observed = append(observed, fmt.Sprintf("rolled back to %s at metadata.version level %d", from, metadataVersionOf(back)))
			return nil
		}
	}
	return st
}

// metadataVersionOf returns the finalized metadata.version a broker of
// nodes knows (the highest, if they differ).
func metadataVersionOf(nodes map[int32]nodeVersion) int16 {
	var v int16
	for _, n := range nodes {
		if n.features != nil {
			v = max(v, n.features.MetadataVersion)
		}
	}
	return v
}

// nodeVersion is what one Kafka node runs.
type nodeVersion struct {
	pod, uid string
	// running is the version its log names (brokers.RunningVersion).
	running string
	// features is what it answers with, for brokers (controllers answer
	// no client); nil for a controller-only node.
	features *kafkaadmin.Features
}

// nodeVersions reads what every node of e's Kafka runs, by node ID.
func nodeVersions(ctx context.Context, e *env) (map[int32]nodeVersion, error) {
	snap, err := e.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var fs map[int32]kafkaadmin.Features
	if err := e.WithKafka(func(cl *kafkaadmin.Client) (err error) {
		fs, err = cl.Features(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	out := map[int32]nodeVersion{}
	for _, b := range snap {
		pod, err := e.Kube.CoreV1().Pods(e.Namespace).Get(ctx, b.Pod, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		v, err := brokers.RunningVersion(ctx, e.Kube, e.Namespace, b.Pod, "")
		if err != nil {
			return nil, err
		}
		n := nodeVersion{pod: b.Pod, uid: string(pod.UID), running: v}
		if f, ok := fs[b.ID]; ok {
			n.features = &f
		} else if b.Broker {
			return nil, fmt.Errorf("broker %d (%s) did not answer ApiVersions", b.ID, b.Pod)
		}
		out[b.ID] = n
	}
	return out, nil
}

// versionProblems checks that every node runs version; with before, also
// that each is a new pod, and that no broker's software supports a lower
// metadata.version than it did.
func versionProblems(nodes map[int32]nodeVersion, version string, before map[int32]nodeVersion) []string {
	var p []string
	for id, n := range nodes {
		if n.running != version {
			p = append(p, fmt.Sprintf("node %d (%s) runs Kafka %s, not %s", id, n.pod, n.running, version))
		}
		b, ok := before[id]
		if before == nil {
			continue
		}
		switch {
		case !ok:
			p = append(p, fmt.Sprintf("node %d (%s) was not there before", id, n.pod))
		case b.uid == n.uid:
			p = append(p, fmt.Sprintf("node %d: pod %s was not replaced (UID %s)", id, n.pod, n.uid))
		case b.features != nil && n.features != nil && n.features.MaxMetadataVersion < b.features.MaxMetadataVersion:
			p = append(p, fmt.Sprintf("broker %d supports metadata.version up to level %d, below the %d of before", id, n.features.MaxMetadataVersion, b.features.MaxMetadataVersion))
		}
	}
	slices.Sort(p)
	return p
}

// raiseMetadataVersion raises metadata.version to the highest level every
// broker supports, as kafka-features upgrade does, and waits until every
// broker knows it; it says what it did.
func raiseMetadataVersion(ctx context.Context, e *env, nodes map[int32]nodeVersion) (string, error) {
	var level, was int16 = -1, -1
	for _, n := range nodes {
		if n.features == nil {
			continue
		}
		if level < 0 || n.features.MaxMetadataVersion < level {
			level = n.features.MaxMetadataVersion
		}
		was = max(was, n.features.MetadataVersion)
	}
	if level <= 0 {
		return "", fmt.Errorf("no broker said which metadata.version it supports: %+v", nodes)
	}
	return raiseFeature(ctx, e, kafkaadmin.MetadataVersionFeature, was, level, func(f kafkaadmin.Features) int16 { return f.MetadataVersion })
}

// raiseTransactionVersion raises transaction.version to the highest level
// every broker supports (2 on Kafka 4.x: KIP-890's second part), which
// raising metadata.version does not do; clients take it up at their next
// EndTxn.
func raiseTransactionVersion(ctx context.Context, e *env) (string, error) {
	var feats map[int32]kafkaadmin.Features
	if err := e.WithKafka(func(cl *kafkaadmin.Client) (err error) { feats, err = cl.Features(ctx); return err }); err != nil {
		return "", err
	}
	var level, was int16 = -1, 0
	for _, f := range feats {
		if level < 0 || f.MaxTransactionVersion < level {
			level = f.MaxTransactionVersion
		}
		was = max(was, f.TransactionVersion)
	}
	if level <= 0 {
		return "transaction.version not raised: a broker supports none", nil
	}
	return raiseFeature(ctx, e, kafkaadmin.TransactionVersionFeature, was, level, func(f kafkaadmin.Features) int16 { return f.TransactionVersion })
}

// raiseFeature raises feature from level was to level, under load, and
// waits until every broker knows it (known reads a broker's finalized
// level). It says what it did.
func raiseFeature(ctx context.Context, e *env, feature string, was, level int16, known func(kafkaadmin.Features) int16) (string, error) {
	if level <= was {
		return fmt.Sprintf("%s stays at level %d: the new version supports nothing higher", feature, was), nil
	}
	By(fmt.Sprintf("raising %s from level %d to %d, the highest every broker supports", feature, was, level))
	start := time.Now()
	if err := e.WithKafka(func(cl *kafkaadmin.Client) error { return cl.UpgradeFeature(ctx, feature, level) }); err != nil {
		return "", err
	}
	var seen map[int32]kafkaadmin.Features
	err := InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			return e.WithKafka(func(cl *kafkaadmin.Client) (err error) {
				if seen, err = cl.Features(ctx); err != nil {
					return err
				}
				for id, f := range seen {
					if got := known(f); got != level {
						return fmt.Errorf("broker %d knows %s level %d", id, feature, got)
					}
				}
				return nil
			})
		}).WithTimeout(featuresTimeout).WithPolling(featuresPoll).Should(Succeed(), "every broker at the raised "+feature)
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s raised from level %d to %d under load; every broker knew it %s after the request",
		feature, was, level, time.Since(start).Round(100*time.Millisecond)), nil
}

// upgradeOthers upgrades the layout's other StatefulSets that run Kafka
// (the controllers of separate-controllers) to image, one after the other,
// each rolled out before the next, and appends their faults to ups; each
// is recovered at the end of the spec unless committed.
func upgradeOthers(ctx context.Context, e *env, image string, ups *[]*chaos.Upgrade) error {
	list, err := e.Kube.AppsV1().StatefulSets(e.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, s := range list.Items {
		if s.Name == e.cfg.Target.StatefulSet || !runsKafka(s.Spec.Template.Spec.Containers) {
			continue
		}
		up := &chaos.Upgrade{Scope: e.FaultScope(), StatefulSet: s.Name, Image: image}
		By("upgrading StatefulSet " + s.Name + " too: " + up.Name())
		err := up.Inject(ctx)
		DeferCleanup(up.Recover, NodeTimeout(faultRecoverTime))
		if err != nil {
			return err
		}
		*ups = append(*ups, up)
		if err := waitRolledOut(ctx, e, s.Name); err != nil {
			return err
		}
	}
	return nil
}

// runsKafka reports whether a container of cs runs the Kafka image.
func runsKafka(cs []corev1.Container) bool {
	for _, c := range cs {
		if _, ok := manifests.KafkaTag(c.Image); ok {
			return true
		}
	}
	return false
}
