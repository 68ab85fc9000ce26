package suites

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/scenario"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
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
			return withJava(st, protocol)
		})
})

// The users' most common pain, with Java applications: the brokers roll
// (a StatefulSet restart, as an upgrade does) under the Java producer and
// group.
var _ = Describe("Kafka's own Java clients through a rolling restart", Label("java", "consumer-group"), Serial, func() {
	groupSpecs("java-rolling-restart", "the Java producer's acknowledged records are all read by a group of %d Java consumers on the %s protocol while the brokers roll",
		func(e *env, protocol string) story {
			st := rollingRestart(e)
			st.Label = "java-rolling-restart-" + protocol
			return withJava(st, protocol)
		})
})

// A broker's node drained under the Java clients: the drain evicts every
// pod of the namespace on the node, the Java clients' too where they run
// there, and those are replaced as a Deployment would replace them (their
// pods are bare: the workload replaces them, scenario.JavaClientsOf).
var _ = Describe("Kafka's own Java clients through a node drain", Label("java", "consumer-group"), Serial, func() {
	groupSpecs("java-node-drain", "the Java producer's acknowledged records are all read by a group of %d Java consumers on the %s protocol while a broker's node is drained",
		func(e *env, protocol string) story {
			st := nodeDrain()
			st.Label = "java-node-drain-" + protocol
			return withJava(st, protocol)
		})
})

// A frozen leader under the Java producer: the frozen-leader finding
// (docs/findings/frozen-leader-request-timeout.md) measured franz-go's
// producers stalled for their request timeout (10 s + 10 s) or longer;
// these specs measure the Java producer's (request.timeout.ms, 30 s by
// default). Its longest wait between acknowledgements, per partition, is
// the spec's observation.
var _ = Describe("Kafka's own Java clients through a frozen leader", Label("java", "java-pause"), Serial, func() {
	for _, d := range []time.Duration{20 * time.Second, 45 * time.Second} {
		label := fmt.Sprintf("java-pause-leader-%s", d)
		storySpec(fmt.Sprintf("the leader of partition 0 paused for %s: the Java clients lose nothing, and the Java producer's stall is reported", d), Label(label),
			func(SpecContext, *env) story {
				return withJava(pauseStory(label, leaderOf(0), d), steadystate.GroupProtocolClassic)
			})
	}
})

// A client fault to a Java application: its producer's process is killed
// (SIGKILL, no flush), and a new one takes over, as a restarted pod does.
// What the dead producer had acknowledged must all be read; what it had
// sent without an acknowledgement may be read once or not at all. The
// brokers are untouched: the steady state must not notice.
var _ = Describe("The Java producer is killed", Label("java", "java-producer-kill"), Serial, func() {
	storySpec("every record it had acknowledged is read by the Java group, and a new producer takes over", Label(),
		func(_ SpecContext, e *env) story {
			control := &scenario.JavaControl{}
			kill := &scenario.JavaKill{Control: control, Client: scenario.JavaProducer, DryRun: e.DryRun, Out: GinkgoWriter}
			st := javaClientFaultStory(e, "java-producer-kill", steadystate.GroupProtocolClassic, control, kill)
			st.Finally = func(_ context.Context, _ *env, _ []brokers.Server, o *scenario.Outcome) {
				o.Add(report.CheckFault, producerKillProblems(kill, o.Java)...)
				if o.Java != nil {
					o.Observations = append(o.Observations, fmt.Sprintf("%s was killed after %d acknowledgements; the producers had %d in all",
						kill.Killed, kill.Done, o.Java.Group.Acked))
				}
			}
			return st
		})
})

// producerKillProblems says whether the kill did what the spec needs: a
// producer killed while its sends were acknowledged, and a new one whose
// sends were acknowledged after it.
func producerKillProblems(kill *scenario.JavaKill, java *javaclients.Result) []string {
	switch {
	case kill.Killed == "":
		return []string{"no Java producer was killed"}
	case kill.Done == 0:
		return []string{kill.Killed + " had nothing acknowledged when it was killed: the kill tested nothing"}
	case java == nil || java.Group.Acked <= uint64(kill.Done):
		return []string{"the new producer had nothing acknowledged: nobody took over"}
	}
	return nil
}

// A member of a Java application's group crashes (its pod killed: no
// commit, no LeaveGroup), as Kafka's consumer_test.py
// (test_consumer_failure) kills a VerifiableConsumer. The coordinator
// learns of it only when its session expires (session.timeout.ms, 45 s:
// the Java client's default on classic, which the tool keeps, and
// group.consumer.session.timeout.ms's on KIP-848); then the others take
// its partitions from its last commit, and on recovery a new member joins
// in its place. The brokers are untouched: the steady state must not
// notice.
var _ = Describe("A member of the Java group is killed", Label("java", "consumer-group"), Serial, func() {
	groupSpecs("java-member-kill", "the other members of a group of %d Java consumers on the %s protocol take its partitions within the session timeout; nothing lost, skipped or miscommitted",
		javaMemberKillStory)
})

// javaMemberKillStory kills member 1 of the Java group and holds until the
// others own every partition, which must come after the session timeout
// less a heartbeat interval and within it and the margin (the bounds of
// group-member-crash); its figure is the time from the kill to that.
func javaMemberKillStory(e *env, protocol string) story {
	const victim = 1
	control := &scenario.JavaControl{}
	kill := &scenario.JavaKill{Control: control, Client: victim, DryRun: e.DryRun, Out: GinkgoWriter}
	var takenOver time.Duration
	st := javaClientFaultStory(e, "java-member-kill-"+protocol, protocol, control, kill)
	st.During = func(ctx context.Context, e *env, _ []brokers.Server) error {
		if e.DryRun {
			return nil
		}
		By(fmt.Sprintf("%s killed after reading %d records", kill.Killed, kill.Done))
		var err error
		takenOver, err = awaitJavaTakeover(ctx, control, victim, kill.Killed, kill.KilledAt, "kill")
		return err
	}
	st.Finally = func(_ context.Context, _ *env, _ []brokers.Server, o *scenario.Outcome) {
		read, _ := control.Read(victim) // 0 without the clients
		o.Add(report.CheckFault, memberKillProblems(kill, read)...)
		o.Add(report.CheckLag, memberFaultLagProblems(javaLag(o))...)
		if takenOver > 0 {
			o.Observations = append(o.Observations, fmt.Sprintf("%s was killed after reading %d records; the others owned every partition %s after the kill (session timeout %s); its replacement read %d records",
				kill.Killed, kill.Done, takenOver.Round(100*time.Millisecond), memberSessionTimeout, read))
		}
	}
	return st
}

// A member of a Java application's group freezes (its JVM stopped with
// SIGSTOP, as a long GC pause or a frozen VM does) for longer than its
// session: its heartbeats stop, so the coordinator evicts it and the
// others take its partitions from its last commit. Resumed, it must find
// it was fenced, give up what it held without processing it, and rejoin.
var _ = Describe("A member of the Java group is paused past its session", Label("java", "consumer-group"), Serial, func() {
	groupSpecs("java-member-pause", "the other members of a group of %d Java consumers on the %s protocol take its partitions; resumed, it rejoins; nothing lost, skipped or miscommitted",
		javaMemberPauseStory)
})

// javaMemberPauseStory pauses member 1 of the Java group for cutHold (past
// its session and the margin), waits until the others own every partition
// (the bounds of java-member-kill, from the pause), resumes it, and waits
// until it owns partitions again.
func javaMemberPauseStory(e *env, protocol string) story {
	const victim = 1
	control := &scenario.JavaControl{}
	pause := &scenario.JavaPause{Control: control, Client: victim, Scope: e.FaultScope(), Exec: e.Exec}
	var takenOver, rejoined time.Duration
	st := javaClientFaultStory(e, "java-member-pause-"+protocol, protocol, control, pause)
	st.During = func(ctx context.Context, e *env, _ []brokers.Server) error {
		if e.DryRun {
			return nil
		}
		var err error
		if takenOver, err = awaitJavaTakeover(ctx, control, victim, pause.Paused, pause.PausedAt, "pause"); err != nil {
			return err
		}
		scenario.Hold(ctx, cutHold-time.Since(pause.PausedAt))
		By(fmt.Sprintf("resuming %s after %s, then waiting until it owns partitions again", pause.Paused, cutHold))
		if err := pause.Recover(ctx); err != nil {
			return err
		}
		start := time.Now()
		err = scenario.Poll(ctx, time.Second, memberSessionTimeout+reassignMargin, pause.Paused+" assigned partitions again", func(context.Context) error {
			again, err := control.AssignedSince(victim, start)
			if err == nil && !again {
				err = errors.New("no assignment since it was resumed")
			}
			return err
		})
		rejoined = time.Since(start)
		return err
	}
	st.Finally = func(_ context.Context, e *env, _ []brokers.Server, o *scenario.Outcome) {
		if !e.DryRun {
			o.Add(report.CheckLag, memberFaultLagProblems(javaLag(o))...)
		}
		if takenOver > 0 {
			o.Observations = append(o.Observations, fmt.Sprintf("%s was paused for %s: the others owned every partition %s after the pause (session timeout %s); resumed, it was assigned partitions again %s later",
				pause.Paused, cutHold, takenOver.Round(100*time.Millisecond), memberSessionTimeout, rejoined.Round(100*time.Millisecond)))
		}
	}
	return st
}

// awaitJavaTakeover waits until the Java members other than victim (pod)
// own every partition, within the session timeout and the margin of
// since, the fault (what), and checks that it came no sooner than the
// session less a heartbeat interval and takeoverSlack: the bounds of
// group-member-crash. It returns the time from since.
func awaitJavaTakeover(ctx context.Context, control *scenario.JavaControl, victim int, pod string, since time.Time, what string) (time.Duration, error) {
	earliest, limit := memberSessionTimeout-heartbeatInterval-takeoverSlack, memberSessionTimeout+reassignMargin
	By(fmt.Sprintf("waiting until the Java members other than %s own every partition (after %s, within %s of the %s)", pod, earliest, limit, what))
	err := scenario.Poll(ctx, time.Second, limit-time.Since(since), "every partition owned by the other Java members", func(context.Context) error {
		owned, partitions, err := control.OwnedByOthers(victim)
		if err == nil && owned < partitions {
			err = fmt.Errorf("the others own %d of %d partitions", owned, partitions)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	took := time.Since(since)
	if took < earliest {
		return took, fmt.Errorf("the others took %s's partitions over %s after the %s, before its %s session could expire: did it leave the group?",
			pod, took.Round(100*time.Millisecond), what, memberSessionTimeout)
	}
	return took, nil
}

// javaClientFaultStory is a client fault to the Java clients beside the
// steady state: no broker picked or touched, so the steady state is held
// to the graceful bound.
func javaClientFaultStory(e *env, label, protocol string, control *scenario.JavaControl, fault chaos.Fault) story {
	skipWithoutCluster(e, label)
	st := story{Label: label, Kind: scenario.Unknown,
		MaxUnavailable: scenario.GracefulMaxUnavailable, MaxUnavailableWhy: "a client fault: no broker is touched, so the steady state's producers must not notice",
		Pick:  func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error) { return nil, nil },
		Fault: func(*env, []brokers.Server) chaos.Fault { return fault },
	}
	st.Workloads = []scenario.StartWorkload{
		scenario.SteadyStateOf(scenario.Shape{}),
		scenario.JavaClientsOf(scenario.JavaSettings{Members: groupMembers, Protocol: protocol, Control: control}),
	}
	return st
}

// javaLag is the Java group's lag around the fault, if it was sampled.
func javaLag(o *scenario.Outcome) *groupcheck.Lag {
	if o.Java == nil {
		return nil
	}
	return o.Java.Group.Lag
}

// memberKillProblems says whether the kill did what the spec needs: a
// member killed after it had read records, and a replacement that the
// group gave partitions to and that read records (replacementRead).
func memberKillProblems(kill *scenario.JavaKill, replacementRead int64) []string {
	switch {
	case kill.Killed == "":
		return []string{"no Java member was killed"}
	case kill.Done == 0:
		return []string{kill.Killed + " had read nothing when it was killed: the kill tested nothing"}
	case replacementRead == 0:
		return []string{"the member that replaced " + kill.Killed + " read nothing: the group never took it in"}
	}
	return nil
}

// withJava runs Kafka's own Java clients beside st's steady state, their
// group on protocol.
func withJava(st story, protocol string) story {
	st.Workloads = []scenario.StartWorkload{
		scenario.SteadyStateOf(scenario.Shape{}),
		scenario.JavaClientsOf(scenario.JavaSettings{Members: groupMembers, Protocol: protocol}),
	}
	return st
}
