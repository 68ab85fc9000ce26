package suites

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// namespaceGoneTimeout bounds the deletion of a spec's own namespace.
const namespaceGoneTimeout = 3 * time.Minute

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
	for _, v := range manifests.KafkaVersions(objs) {
		expectKafkaJars(v) // and that versionsByLabel gives it to this spec
	}
	By("deploying a Kafka of the spec's own in " + l.Namespace + ": " + why)
	_, err := kube.ApplyObjects(ctx, suite.rest, objs)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(deleteNamespace, suite, l.Namespace, NodeTimeout(namespaceGoneTimeout))
	if suite.Admin != suite.Kube {
		By("granting the suite's ServiceAccount " + l.Namespace + " too")
		Expect(grantRBAC(ctx, suite, suite.Namespace, l.Namespace)).To(Succeed())
		DeferCleanup(grantRBAC, suite, suite.Namespace, NodeTimeout(time.Minute)) // back to the suite's own namespace
	}
	DeferCleanup(func(ctx SpecContext) { // runs before the namespace goes
		if CurrentSpecReport().Failed() {
			AddReportEntry("namespace dump", dumpNamespace(ctx, suite.Admin, l.Namespace), ReportEntryVisibilityFailureOrVerbose)
		}
	}, NodeTimeout(time.Minute))
	Expect(l.WaitReady(ctx, suite.Admin, kube.Wait{Timeout: kafkaReadyTimeout, Poll: healthPoll})).To(Succeed(), "Ready pods of "+l.Name+" in "+l.Namespace)
	own := suite.clone()
	own.Namespace, own.Bootstrap = l.Namespace, l.Bootstrap()
	own.cfg.Target.StatefulSet = l.StatefulSet
	own.own = true
	snap, err := own.Snapshot(ctx)
	Expect(err).NotTo(HaveOccurred())
	own.ZooKeeperConnect, _ = zooKeeperMode(snap)
	Expect(own.WaitHealthy(ctx, scenario.BrokerIDs(snap))).To(Succeed(), "Kafka of "+l.Name+" in "+l.Namespace+" healthy")
	return own
}

// layoutKafka deploys manifests/kafka's layout in namespace ns, at the
// suite's Kafka version, with settings added to its Kafka containers'
// environment (manifests.SetKafkaEnv), for the spec alone (ownKafka). It
// skips the spec, saying notLocal, away from the local cluster, and when
// the layout cannot run that version.
func layoutKafka(ctx SpecContext, layout, ns, notLocal, why string, settings map[string]string) *env {
	GinkgoHelper()
	if !suite.cfg.Local() {
		Skip(notLocal)
	}
	l, err := manifests.LayoutNamed(layout)
	Expect(err).NotTo(HaveOccurred())
	if err := l.CheckKafkaVersion(suite.cfg.Target.KafkaVersion); err != nil {
		Skip(err.Error())
	}
	l = l.In(ns).WithKafkaVersion(suite.cfg.Target.KafkaVersion)
	objs, err := l.Objects()
	Expect(err).NotTo(HaveOccurred())
	Expect(manifests.SetKafkaEnv(objs, settings)).To(Succeed())
	return ownKafka(ctx, l, objs, why)
}

// deleteNamespace deletes ns, stops its pods almost at once, and waits
// until the namespace is gone, so its processes are stopped before the
// next spec. The pods are deleted with a grace period of 1 s after the
// namespace, whose deletion keeps the StatefulSets from recreating them:
// the spec's Kafka is thrown away, and stopped gracefully all at once its
// brokers wait for controllers that are already gone, until their 60 s
// grace period ends. (Not 0: a pod deleted with 0 is gone from the API at
// once, before its node has stopped its processes.) Measured (2026-12-06,
// separate-controllers layout, 6 pods): 46.9 s to delete the namespace
// gracefully, 10.7 s with a grace period of 0.
func deleteNamespace(ctx SpecContext, e *env, ns string) {
	By("deleting namespace " + ns + " and stopping its pods within 1 s")
	err := e.Admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if !apierrors.IsNotFound(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	pods, err := e.Admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	for _, p := range pods.Items {
		err := e.Admin.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)})
		if !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred(), "deleting pod %s/%s", ns, p.Name)
		}
	}
	Eventually(ctx, func(ctx context.Context) error {
		_, err := e.Admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("namespace %s still there (%v)", ns, err)
	}).WithTimeout(namespaceGoneTimeout).WithPolling(healthPoll).Should(Succeed())
}
