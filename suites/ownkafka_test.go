package suites

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// ownKafka deploys objs, a Kafka of layout l, on the local cluster for the
// spec alone, in l.Namespace, and returns an env aimed at it: the negative
// spec's unsafe Kafka, and the disk-loss specs' clusters, whose damage must
// not reach the suite's own Kafka. The suite's ServiceAccount is granted
// the namespace for the spec. When the spec ends the namespace is dumped
// (if the spec failed) and deleted, its pods' processes stopped.
func ownKafka(ctx SpecContext, l manifests.Layout, objs []*unstructured.Unstructured, why string) *env {
	GinkgoHelper()
	if suite.cfg.DryRun || !suite.cfg.Local() {
		Skip(why)
	}
	By("deploying a Kafka of the spec's own in " + l.Namespace + ": " + why)
	_, err := kube.ApplyObjects(ctx, suite.rest, objs)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(deleteNamespace, suite, l.Namespace, NodeTimeout(namespaceGoneTimeout))
	if suite.admin != suite.cs {
		By("granting the suite's ServiceAccount " + l.Namespace + " too")
		Expect(grantRBAC(ctx, suite, suite.namespace, l.Namespace)).To(Succeed())
		DeferCleanup(grantRBAC, suite, suite.namespace, NodeTimeout(time.Minute)) // back to the suite's own namespace
	}
	DeferCleanup(func(ctx SpecContext) { // runs before the namespace goes
		if CurrentSpecReport().Failed() {
			AddReportEntry("namespace dump", dumpNamespace(ctx, suite.admin, l.Namespace), ReportEntryVisibilityFailureOrVerbose)
		}
	}, NodeTimeout(time.Minute))
	Expect(l.WaitReady(ctx, suite.admin, kube.Wait{Timeout: kafkaReadyTimeout, Poll: healthPoll})).To(Succeed(), "Ready pods of "+l.Name+" in "+l.Namespace)
	own := *suite
	own.namespace, own.bootstrap = l.Namespace, l.Bootstrap()
	own.cfg.Target.StatefulSet = l.StatefulSet
	own.own = true
	snap, err := own.snapshot(ctx)
	Expect(err).NotTo(HaveOccurred())
	own.zkConnect, _ = zooKeeperMode(snap)
	Expect(waitHealthy(ctx, &own, brokerIDs(snap))).To(Succeed(), "Kafka of "+l.Name+" in "+l.Namespace+" healthy")
	return &own
}
