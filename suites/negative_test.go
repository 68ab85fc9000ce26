package suites

import (
	"context"
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/report"
)

// unsafeKafka is testdata/unsafe-kafka.yaml: manifests/kafka's combined
// layout with emptyDir data dirs, no PodDisruptionBudget, and
// one-replica defaults.
func unsafeKafka() manifests.Layout {
	return manifests.Layout{Name: "unsafe", File: "testdata/unsafe-kafka.yaml", Namespace: "kafka-unsafe",
		StatefulSet: "kafka", Brokers: 3, Service: "kafka-headless", Pods: 3}
}

const namespaceGoneTimeout = 3 * time.Minute

var _ = Describe("The suite against an unsafe Kafka", Label("negative"), Serial, func() {
	It("fails a broker pod kill, naming the broker without a persistent volume, the missing PDB and the low replication", func(ctx SpecContext) {
		l := unsafeKafka()
		raw, err := os.ReadFile(l.File)
		Expect(err).NotTo(HaveOccurred())
		objs, err := kube.Decode(raw)
		Expect(err).NotTo(HaveOccurred())
		unsafe := ownKafka(ctx, l, objs, "the negative spec deploys an unsafe Kafka on the embedded local cluster: emptyDir data dirs, no PodDisruptionBudget, replication factor 1 by default")

		o := runStory(ctx, unsafe, story{label: "negative-pod-kill", pick: broker(namedBroker), fault: forceDelete, newPods: true, expectFailures: true})

		By("checking that the story failed, and said why")
		Expect(o.Problems(report.CheckIdentity)).To(ContainElement(And(ContainSubstring(fmt.Sprintf("broker %d", namedBroker)), ContainSubstring("persistent volume"), ContainSubstring("emptyDir"))),
			"the identity check must name broker 1 and its missing persistent volume")
		Expect(o.Problems(report.CheckAudit)).To(ContainElement(And(ContainSubstring("kafka-1"), ContainSubstring("PersistentVolumeClaim"))), "the audit must flag the emptyDir data dir")
		Expect(o.Problems(report.CheckAudit)).To(ContainElement(ContainSubstring("PodDisruptionBudget")), "the audit must flag the missing PDB")
		Expect(o.Problems(report.CheckAudit)).To(ContainElement(ContainSubstring("default.replication.factor=1")), "the audit must flag replication factor 1")
	}, SpecTimeout(storyTimeout))
})

// deleteNamespace deletes ns and waits until it is gone, so its pods'
// processes are stopped before the next spec.
func deleteNamespace(ctx SpecContext, e *env, ns string) {
	By("deleting namespace " + ns)
	err := e.admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if !apierrors.IsNotFound(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	Eventually(ctx, func(ctx context.Context) error {
		_, err := e.admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("namespace %s still there (%v)", ns, err)
	}).WithTimeout(namespaceGoneTimeout).WithPolling(healthPoll).Should(Succeed())
}
