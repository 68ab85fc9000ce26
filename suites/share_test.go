package suites

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/javaload"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// Share groups (KIP-932, production-ready in Kafka 4.2): a member is
// handed records under an acquisition lock (group.share.record.lock.
// duration.ms, 30 s by default) and acknowledges each. One frozen past
// the lock and its session (group.share.session.timeout.ms, 45 s) holds
// records it cannot process: the brokers must hand them to the others
// again, refuse its acknowledgements once it resumes, and never let a
// record be accepted twice or delivered past the delivery limit. Kafka's
// own share_consumer_test.py kills and bounces share consumers, and counts
// only that as many distinct records were consumed as were produced.
//
// A finding (docs/findings/share-late-ack-accepted.md): the resumed
// member's late acknowledgement of records another member has since
// accepted is reported successful once the share-partition start offset
// has passed them (accepted-twice); 3 runs of 6 on Kafka 4.4.0.
var _ = Describe("A member of a Java share group is paused past its acquisition lock", Label("java", "share-group"), Serial, func() {
	storySpec("java-share-member-pause: every acknowledged record is delivered to the share group and accepted once, within the delivery limit; the frozen member's records go to the others",
		Label("java-share-member-pause"), func(_ SpecContext, e *env) story {
			return javaShareMemberPauseStory(e)
		})
})

// A member of a Java share group is killed (SIGKILL, nothing acknowledged
// or closed), as Kafka's share_consumer_test.py (test_share_consumer_failure,
// clean_shutdown=False) does: the records it held come back once their
// locks expire or its session does, and go to the others; a replacement
// joins on recovery. `make test` runs it.
var _ = Describe("A member of a Java share group is killed", Label("java", "share-group"), Serial, func() {
	storySpec("java-share-member-kill: every acknowledged record is delivered to the share group and accepted once, within the delivery limit; the killed member's records go to the others",
		Label("java-share-member-kill"), func(_ SpecContext, e *env) story {
			return javaShareMemberKillStory(e)
		})
})

// javaShareMemberKillStory kills member 1 of a Java share group of
// groupMembers; a new member takes its slot at once. The records the
// killed member held come back when their locks expire or its session
// does (30 s and 45 s by default), and the drain waits for them: until the
// brokers count every record done.
func javaShareMemberKillStory(e *env) story {
	const victim = 1
	control := &scenario.JavaControl{}
	kill := &scenario.JavaKill{Control: control, Client: victim, DryRun: e.DryRun, Out: GinkgoWriter}
	st := javaClientFaultStory(e, "java-share-member-kill", javaload.Share, control, kill)
	st.Finally = func(_ context.Context, e *env, _ []brokers.Server, o *scenario.Outcome) {
		read, _ := control.Read(victim) // 0 without the clients
		o.Add(report.CheckFault, memberKillProblems(kill, read)...)
		shareVerdictPresent(e, o)
		if kill.Killed != "" {
			o.Observations = append(o.Observations, fmt.Sprintf("%s was killed after it was delivered %d records; its replacement was delivered %d", kill.Killed, kill.Done, read))
		}
	}
	return st
}

// shareVerdictPresent fails the Java check of a run whose share group was
// not judged.
func shareVerdictPresent(e *env, o *scenario.Outcome) {
	if !e.DryRun && (o.Java == nil || o.Java.Share == nil) {
		o.Add(report.CheckJava, "the share group's verdict is missing")
	}
}

// javaShareMemberPauseStory freezes member 1 of a Java share group of
// groupMembers for cutHold (past the lock and the session, and the
// margin), resumes it, and waits until it is delivered records again.
func javaShareMemberPauseStory(e *env) story {
	const victim = 1
	control := &scenario.JavaControl{}
	pause := &scenario.JavaPause{Control: control, Client: victim, Scope: e.FaultScope(), Exec: e.Exec}
	var rejoined time.Duration
	st := javaClientFaultStory(e, "java-share-member-pause", javaload.Share, control, pause)
	st.During = func(ctx context.Context, e *env, _ []brokers.Server) error {
		if e.DryRun {
			return nil
		}
		scenario.Hold(ctx, cutHold-time.Since(pause.PausedAt))
		By(fmt.Sprintf("resuming %s after %s, then waiting until it is delivered records again", pause.Paused, cutHold))
		before, err := control.Read(victim)
		if err != nil {
			return err
		}
		if err := pause.Recover(ctx); err != nil {
			return err
		}
		start := time.Now()
		err = scenario.Poll(ctx, time.Second, memberSessionTimeout+reassignMargin, pause.Paused+" delivered records again", func(context.Context) error {
			now, err := control.Read(victim)
			if err == nil && now <= before {
				err = errors.New("nothing delivered since it was resumed")
			}
			return err
		})
		rejoined = time.Since(start)
		return err
	}
	st.Finally = func(_ context.Context, e *env, _ []brokers.Server, o *scenario.Outcome) {
		shareVerdictPresent(e, o)
		if rejoined > 0 {
			o.Observations = append(o.Observations, fmt.Sprintf("%s was paused for %s; resumed, it was delivered records again %s later",
				pause.Paused, cutHold, rejoined.Round(100*time.Millisecond)))
		}
	}
	return st
}
