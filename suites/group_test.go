package suites

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkachaos/kafkachaos/brokers"
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

// The group's coordinator fails: the broker that leads the group's
// __consumer_offsets partition, which holds its commits and, on either
// protocol, its membership. Its members must find the new coordinator,
// and the group must lose, skip and miscommit nothing. Kafka's own
// consumer_test.py bounces brokers under a group for this reason.
var _ = Describe("An application's consumer group loses its coordinator", Label("consumer-group"), Serial, func() {
	for _, protocol := range []string{steadystate.GroupProtocolConsumer, steadystate.GroupProtocolClassic} {
		storySpec(fmt.Sprintf("the coordinator's pod force-deleted: a group of %d on the %s protocol loses, skips and miscommits nothing", groupMembers, protocol),
			Label("group-coordinator-kill", "group-protocol-"+protocol), func(ctx SpecContext, e *env) story {
				skipWithoutCluster(e, "consumer-group")
				if protocol == steadystate.GroupProtocolConsumer {
					skipWithoutConsumerProtocol(ctx, e)
				}
				st := story{Label: "group-coordinator-kill-" + protocol, Kind: scenario.Hard, Pick: groupCoordinator, Fault: forceDelete, NewPods: true}
				st.Workloads = []scenario.StartWorkload{scenario.SteadyStateOf(scenario.Shape{
					Group: steadystate.GroupConfig{Members: groupMembers, Protocol: protocol, Name: appGroupName(e, "kafkachaos-"+st.Label)},
				})}
				return st
			})
	}
})

// appGroupName is the application group's ID on topic in e's run: known
// before the group starts, so a picker can ask for its coordinator.
func appGroupName(e *env, topic string) string { return topic + "-app-" + e.RunID }

// groupCoordinator picks the coordinator of the application group on the
// workload topic (appGroupName), as FindCoordinator names it.
var groupCoordinator = coordinatorOf("the consumer group", appGroupName, (*kadm.Client).FindGroupCoordinators)

// coordinatorOf picks the coordinator of the group or transactional ID
// that keyOf names for the workload topic, as find (FindCoordinator of
// its key type) names it. what says whose coordinator it is.
func coordinatorOf(what string, keyOf func(e *env, topic string) string,
	find func(*kadm.Client, context.Context, ...string) kadm.FindCoordinatorResponses,
) func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error) {
	return func(ctx context.Context, e *env, topic string, snap []brokers.Server) ([]brokers.Server, error) {
		key := keyOf(e, topic)
		cl, err := e.KafkaClient()
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		c, ok := find(kadm.NewClient(cl), ctx, key)[key]
		switch {
		case !ok:
			return nil, fmt.Errorf("FindCoordinator named no coordinator for %s %s", what, key)
		case c.Err != nil:
			return nil, fmt.Errorf("finding the coordinator of %s %s: %w", what, key, c.Err)
		}
		By(fmt.Sprintf("broker %d coordinates %s %s", c.NodeID, what, key))
		return broker(c.NodeID)(ctx, e, topic, snap)
	}
}

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
