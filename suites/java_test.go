package suites

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/kafkachaos/kafkachaos/scenario"
)

// What Java applications see: Kafka's own Java clients (VerifiableProducer,
// VerifiableConsumer, as Kafka's system tests run them) as pods of the
// apache/kafka image beside the steady state, through the gate's broker
// kill, on each group protocol. The Java client's settings are its
// defaults (request.timeout.ms 30 s, delivery.timeout.ms 120 s), but for
// the producer's idempotence and retries, as applications run it.
var _ = Describe("Kafka's own Java clients through a broker kill", Label("java", "consumer-group"), Serial, func() {
	groupSpecs("java-pod-kill", "the Java producer's acknowledged records are all read by a group of %d Java consumers on the %s protocol, each at its offset",
		func(e *env, protocol string) story {
			st := podKill()
			st.Label = "java-pod-kill-" + protocol
			st.Workloads = []scenario.StartWorkload{
				scenario.SteadyStateOf(scenario.Shape{}),
				scenario.JavaClientsOf(scenario.JavaSettings{Members: groupMembers, Protocol: protocol}),
			}
			return st
		})
})
