package suites

import (
	"fmt"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/report"
)

// unsafeKafka is testdata/unsafe-kafka.yaml: manifests/kafka's combined
// layout with its data dirs on the container filesystem, no
// PodDisruptionBudget, and one-replica defaults.
func unsafeKafka() manifests.Layout {
	return manifests.Layout{Name: "unsafe", File: "testdata/unsafe-kafka.yaml", Namespace: "kafka-unsafe",
		StatefulSet: "kafka", Brokers: 3, Service: "kafka-headless", Pods: 3}
}

var _ = Describe("The suite against an unsafe Kafka", Label("negative"), Serial, func() {
	It("fails a broker pod kill, naming the broker without a persistent volume and the data it lost, the missing PDB and the low replication", func(ctx SpecContext) {
		l := unsafeKafka()
		raw, err := os.ReadFile(l.File)
		Expect(err).NotTo(HaveOccurred())
		objs, err := kube.Decode(raw)
		Expect(err).NotTo(HaveOccurred())
		unsafe := ownKafka(ctx, l, objs, "the negative spec deploys an unsafe Kafka on the embedded local cluster: data dirs on the container filesystem, no PodDisruptionBudget, replication factor 1 by default")

		o := tell(ctx, unsafe, story{Label: "negative-pod-kill", Pick: broker(namedBroker), Fault: forceDelete, NewPods: true, ExpectFailures: true})

		By("checking that the story failed, and said why")
		Expect(o.Problems(report.CheckIdentity)).To(ContainElement(And(ContainSubstring(fmt.Sprintf("broker %d", namedBroker)), ContainSubstring("persistent volume"), ContainSubstring(brokers.ContainerFilesystem))),
			"the identity check must name broker 1 and its missing persistent volume")
		Expect(o.Problems(report.CheckIdentity)).To(ContainElement(And(HavePrefix(fmt.Sprintf("broker %d: same data in log dir /var/lib/kafka/data: want directory.id ", namedBroker)), ContainSubstring("did not survive"))),
			"the data survival check must find that broker 1 came back without its data: the container filesystem is the pod's own")
		Expect(o.Problems(report.CheckAudit)).To(ContainElement(And(ContainSubstring("kafka-1"), ContainSubstring("PersistentVolumeClaim"))), "the audit must flag the data dir on the container filesystem")
		Expect(o.Problems(report.CheckAudit)).To(ContainElement(ContainSubstring("PodDisruptionBudget")), "the audit must flag the missing PDB")
		Expect(o.Problems(report.CheckAudit)).To(ContainElement(ContainSubstring("default.replication.factor=1")), "the audit must flag replication factor 1")
	}, SpecTimeout(storyTimeout))
})
