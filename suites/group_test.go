package suites

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/scenario"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// groupMembers is how many members the application's consumer group has.
const groupMembers = 3

// What applications see: a consumer group of several members, which
// polls, processes and commits after processing, reads the workload topic
// through the rolling restart that users' upgrades do, on each group
// protocol. Its history is checked event by event (steadystate/groupcheck).
var _ = Describe("An application's consumer group reads through a rolling restart", Label("consumer-group"), Serial, func() {
	groupSpecs("group-rolling-restart", "a group of %d on the %s protocol loses, skips and miscommits nothing while the brokers roll",
		func(e *env, protocol string) story {
			st := rollingRestart(e)
			st.Label = "consumer-group-" + protocol
			st.Workloads = []scenario.StartWorkload{scenario.SteadyStateOf(scenario.Shape{
				Group: steadystate.GroupConfig{Members: groupMembers, Protocol: protocol},
			})}
			return st
		})
})

// groupSpecs is a spec on each group protocol, labelled label and
// group-protocol-<protocol>, its text made of format with the group's
// size and the protocol; it is skipped without a cluster, and on KIP-848's
// protocol with brokers that do not serve it.
func groupSpecs(label, format string, build func(e *env, protocol string) story) {
	for _, protocol := range []string{steadystate.GroupProtocolConsumer, steadystate.GroupProtocolClassic} {
		storySpec(fmt.Sprintf(format, groupMembers, protocol), Label(label, "group-protocol-"+protocol), func(ctx SpecContext, e *env) story {
			skipWithoutCluster(e, "consumer-group")
			if protocol == steadystate.GroupProtocolConsumer {
				skipWithoutConsumerProtocol(ctx, e)
			}
			return build(e, protocol)
		})
	}
}

// The group's coordinator fails: the broker that leads the group's
// __consumer_offsets partition, which holds its commits and, on either
// protocol, its membership. Its members must find the new coordinator,
// and the group must lose, skip and miscommit nothing. Kafka's own
// consumer_test.py bounces brokers under a group for this reason.
var _ = Describe("An application's consumer group loses its coordinator", Label("consumer-group"), Serial, func() {
	groupSpecs("group-coordinator-kill", "the coordinator's pod force-deleted: a group of %d on the %s protocol loses, skips and miscommits nothing",
		func(e *env, protocol string) story {
			st := story{Label: "group-coordinator-kill-" + protocol, Kind: scenario.Hard, Pick: groupCoordinator, Fault: forceDelete, NewPods: true}
			st.Workloads = []scenario.StartWorkload{scenario.SteadyStateOf(scenario.Shape{
				Group: steadystate.GroupConfig{Members: groupMembers, Protocol: protocol, Name: appGroupName(e, scenario.Topic(st.Label))},
			})}
			return st
		})
})

// A member of the group crashes, as an application's process does: no
// LeaveGroup, its connections closed. Kafka's consumer_test.py
// (test_consumer_failure) kills a consumer the same way. The coordinator
// learns of it only when its session expires (session.timeout.ms, 45 s by
// default on both protocols), and then the others must take its
// partitions from the last commit; on recovery a new member joins in its
// place. The brokers are untouched: the producers must not notice.
var _ = Describe("A member of an application's consumer group crashes", Label("consumer-group"), Serial, func() {
	groupSpecs("group-member-crash", "the others of a group of %d on the %s protocol take its partitions within the session timeout; nothing lost, skipped or miscommitted",
		memberCrashStory)
})

// memberSessionTimeout is a member's session timeout on both protocols:
// franz-go's SessionTimeout default (classic) and Kafka's
// group.consumer.session.timeout.ms default (KIP-848), 45 s each. The
// session runs from the member's last heartbeat, up to a heartbeat
// interval before the crash (franz-go's classic 3 s, KIP-848's 5 s by
// default), so the takeover comes no sooner than the session less
// heartbeatInterval and takeoverSlack (measured: 40.5 s and 41 s on
// KIP-848, 45.7 s on classic; a member that left instead would be taken
// over in about a second), and no later than the session and
// reassignMargin (the rebalance and the members' joins).
const (
	memberSessionTimeout = 45 * time.Second
	heartbeatInterval    = 5 * time.Second
	takeoverSlack        = 5 * time.Second
	reassignMargin       = 15 * time.Second
)

// memberCrashStory crashes member 1 of the group and holds until every
// partition has an owner again, which must come after the session timeout
// less a heartbeat interval, and within it and the margin; its figure is
// the time to that.
func memberCrashStory(e *env, protocol string) story {
	st, member := memberFaultStory(e, "group-member-crash", protocol)
	control := member.Control
	crash := &scenario.MemberCrash{Member: member}
	var reassigned time.Duration
	st.Fault = func(*env, []brokers.Server) chaos.Fault { return crash }
	st.During = func(ctx context.Context, _ *env, _ []brokers.Server) error {
		if len(crash.Owned) == 0 {
			return fmt.Errorf("%s owned no partition when it crashed: nothing for the others to take over", crash.Crashed)
		}
		earliest, limit := memberSessionTimeout-heartbeatInterval-takeoverSlack, memberSessionTimeout+reassignMargin
		By(fmt.Sprintf("%s crashed owning partitions %v: waiting until the others own every partition (after %s, within %s)", crash.Crashed, crash.Owned, earliest, limit))
		start := time.Now()
		err := scenario.Poll(ctx, time.Second, limit, "every partition owned again", func(context.Context) error {
			un, err := control.Unowned()
			if err == nil && len(un) > 0 {
				err = fmt.Errorf("partitions %v have no owner", un)
			}
			return err
		})
		if err != nil {
			return withGroupView(ctx, control, err)
		}
		reassigned = time.Since(start)
		if reassigned < earliest {
			return fmt.Errorf("the others took %s's partitions over %s after the crash, before its %s session could expire: did it leave the group?",
				crash.Crashed, reassigned.Round(100*time.Millisecond), memberSessionTimeout)
		}
		return nil
	}
	st.Finally = func(_ context.Context, e *env, _ []brokers.Server, o *scenario.Outcome) {
		if reassigned > 0 {
			o.Observations = append(o.Observations, fmt.Sprintf("%s crashed owning partitions %v; every partition had an owner again %s later (session timeout %s)",
				crash.Crashed, crash.Owned, reassigned.Round(100*time.Millisecond), memberSessionTimeout))
		}
		if !e.DryRun {
			var lag *groupcheck.Lag
			if o.SteadyState != nil && o.SteadyState.Group != nil {
				lag = o.SteadyState.Group.Lag
			}
			o.Add(report.CheckLag, memberFaultLagProblems(lag)...)
		}
	}
	return st
}

// withGroupView adds to a member fault's failure how the coordinator sees
// the group now: whether it still holds the faulty member, or gave the
// others an assignment they never took.
func withGroupView(ctx context.Context, control *steadystate.GroupControl, err error) error {
	v, derr := control.Describe(ctx)
	if derr != nil {
		return fmt.Errorf("%w (the coordinator's view: %v)", err, derr)
	}
	return fmt.Errorf("%w; the coordinator's view: %s", err, v)
}

// A group's lag through a member fault is back within twice its baseline
// within the member's session timeout, the takeover margin, and
// lagDrainMargin to drain the backlog that built up on its partitions
// (measured 2026-12-07: 40.7-50.9 s on both protocols, franz-go and Java).
const (
	lagDrainMargin = 10 * time.Second
	memberLagBound = memberSessionTimeout + reassignMargin + lagDrainMargin
	memberLagWhy   = "a member's session timeout (45 s), the takeover margin (15 s) and 10 s to drain the backlog on its partitions"
)

// memberFaultLagProblems bounds a group's lag through a member fault at
// memberLagBound; a lag never sampled is a problem.
func memberFaultLagProblems(lag *groupcheck.Lag) []string {
	if lag == nil {
		return []string{"the group's lag was not sampled around the fault"}
	}
	return lag.Problems(memberLagBound, memberLagWhy)
}

// memberFaultStory is the frame of a story whose fault is to member 1 of
// the application's group (groupMembers on protocol), labelled
// <label>-<protocol>: no broker is a victim, so the producers are held to
// the graceful bound; the members dial through the control of the Member
// it returns, which the story's fault aims at. Skipped over TLS: the
// control dials plain TCP.
func memberFaultStory(e *env, label, protocol string) (story, scenario.Member) {
	if sec, err := e.cfg.Target.Security.Resolve(); err == nil && sec.TLS != nil {
		Skip("a member fault dials and closes the members' plain TCP connections itself: not yet over TLS")
	}
	control := steadystate.NewGroupControl(e.Dial)
	st := story{Label: label + "-" + protocol, Kind: scenario.Unknown,
		MaxUnavailable: scenario.GracefulMaxUnavailable, MaxUnavailableWhy: "a client fault: no broker is touched, so the producers must not notice",
		Pick: func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error) { return nil, nil },
	}
	st.Workloads = []scenario.StartWorkload{scenario.SteadyStateOf(scenario.Shape{
		Group: steadystate.GroupConfig{Members: groupMembers, Protocol: protocol, Control: control},
	})}
	return st, scenario.Member{Control: control, Slot: 1, DryRun: e.DryRun, Out: GinkgoWriter}
}

// A member of the group is cut off from every broker for longer than its
// session, while the application behind it goes on: a zombie. The
// coordinator must evict it and hand its partitions on; healed, it must
// find it was fenced (its partitions lost), rejoin with a new epoch, and
// own partitions again (KAFKA-19233 was a fenced member that could not).
var _ = Describe("A member of an application's consumer group is cut off from the brokers", Label("consumer-group"), Serial, func() {
	groupSpecs("group-member-cut", "for longer than its session: a group of %d on the %s protocol hands its partitions on, takes it back when healed, and loses, skips and miscommits nothing",
		memberCutStory)
})

// cutHold is how long the member-cut spec holds its member off: past the
// session timeout and the margin, so the coordinator surely evicted it.
const cutHold = memberSessionTimeout + reassignMargin

// memberCutStory cuts member 1 off for cutHold, heals it, and waits until it
// owns partitions again (within reassignMargin + a session timeout); its
// figure is the time to that.
func memberCutStory(e *env, protocol string) story {
	st, member := memberFaultStory(e, "group-member-cut", protocol)
	control := member.Control
	cut := &scenario.MemberCut{Member: member}
	var rejoined time.Duration
	st.Fault = func(*env, []brokers.Server) chaos.Fault { return cut }
	st.During = func(ctx context.Context, _ *env, _ []brokers.Server) error {
		By(fmt.Sprintf("holding member 1 off the brokers for %s, past its %s session", cutHold, memberSessionTimeout))
		scenario.Hold(ctx, cutHold)
		By("healing member 1, then waiting until it owns partitions again")
		if err := cut.Recover(ctx); err != nil {
			return err
		}
		start := time.Now()
		err := scenario.Poll(ctx, time.Second, memberSessionTimeout+reassignMargin, "member 1 owns partitions again", func(context.Context) error {
			owned, err := control.Owned(member.Slot)
			if err == nil && len(owned) == 0 {
				err = errors.New("member 1 owns no partition")
			}
			return err
		})
		if err != nil {
			return withGroupView(ctx, control, err)
		}
		rejoined = time.Since(start)
		return nil
	}
	st.Finally = func(_ context.Context, _ *env, _ []brokers.Server, o *scenario.Outcome) {
		if rejoined > 0 {
			o.Observations = append(o.Observations, fmt.Sprintf("member 1, cut off for %s and healed, owned partitions again %s later", cutHold, rejoined.Round(100*time.Millisecond)))
		}
	}
	return st
}

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
	serves, node := false, int32(-1)
	for _, v := range versions.Sorted() {
		_, max, ok := v.KeyVersions(int16(kmsg.ConsumerGroupHeartbeat))
		if v.Err == nil && ok && max >= 0 {
			serves, node = true, v.NodeID
		}
	}
	if !serves {
		Skip("the brokers do not serve KIP-848's consumer group protocol (ConsumerGroupHeartbeat): Kafka 4.0 or later, in KRaft mode")
	}
	// Kafka 3.7 to 3.9 list the request, but their coordinators refuse it
	// (UnsupportedVersionException) unless the protocol is turned on.
	protocols, err := configOf(ctx, e, node, rebalanceProtocols)
	Expect(err).NotTo(HaveOccurred(), "reading broker %d's %s", node, rebalanceProtocols)
	if !consumerProtocolOn(protocols) {
		Skip(fmt.Sprintf("broker %d's %s is %q: KIP-848's consumer group protocol is off (on by default from Kafka 4.0)", node, rebalanceProtocols, protocols))
	}
}

// rebalanceProtocols is the brokers' list of the group protocols their
// coordinators accept.
const rebalanceProtocols = "group.coordinator.rebalance.protocols"

// consumerProtocolOn says whether a group.coordinator.rebalance.protocols
// value turns KIP-848's protocol on.
func consumerProtocolOn(protocols string) bool {
	for _, p := range strings.Split(protocols, ",") {
		if strings.TrimSpace(p) == "consumer" {
			return true
		}
	}
	return false
}
