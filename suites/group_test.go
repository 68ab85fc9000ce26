package suites

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkachaos/kafkachaos/scenario"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// groupMembers is how many members the application's consumer group has.
const groupMembers = 3

// What applications see: a consumer group of several members, which
// polls, processes and commits after processing, reads the workload topic
// through the rolling restart that users' upgrades do, on each group
// protocol. Its history is checked event by event (steadystate/groupcheck).
var _ = Describe("An application's consumer group reads through a rolling restart", Label("consumer-group"), Serial, func() {
	for _, protocol := range []string{steadystate.GroupProtocolConsumer, steadystate.GroupProtocolClassic} {
		storySpec(fmt.Sprintf("a group of %d on the %s protocol loses, skips and miscommits nothing while the brokers roll", groupMembers, protocol),
			Label("group-protocol-"+protocol), func(ctx SpecContext, e *env) story {
				skipWithoutCluster(e, "consumer-group")
				if protocol == steadystate.GroupProtocolConsumer {
					skipWithoutConsumerProtocol(ctx, e)
				}
				st := rollingRestart(e)
				st.Label = "consumer-group-" + protocol
				st.Workloads = []scenario.StartWorkload{scenario.SteadyStateOf(scenario.Shape{
					Group: steadystate.GroupConfig{Members: groupMembers, Protocol: protocol},
				})}
				return st
			})
	}
})

// skipWithoutConsumerProtocol skips a spec of KIP-848's group protocol on
// brokers that do not serve it (before Kafka 4.0, and ZooKeeper mode):
// ConsumerGroupHeartbeat is its request.
func skipWithoutConsumerProtocol(ctx context.Context, e *env) {
	GinkgoHelper()
	cl, err := e.KafkaClient()
	Expect(err).NotTo(HaveOccurred())
	defer cl.Close()
	versions, err := kadm.NewClient(cl).ApiVersions(ctx)
	Expect(err).NotTo(HaveOccurred(), "asking the brokers which requests they serve")
	serves := false
	for _, v := range versions.Sorted() {
		_, max, ok := v.KeyVersions(int16(kmsg.ConsumerGroupHeartbeat))
		serves = serves || (v.Err == nil && ok && max >= 0)
	}
	if !serves {
		Skip("the brokers do not serve KIP-848's consumer group protocol (ConsumerGroupHeartbeat): Kafka 4.0 or later, in KRaft mode")
	}
}
