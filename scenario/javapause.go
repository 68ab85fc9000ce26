package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// JavaPause is a client fault: a Java client's JVM is frozen (SIGSTOP
// through pods/exec, chaos.Pause with the tool's main class), as a
// process stuck in a long GC or a frozen VM is; Recover sends SIGCONT. A
// frozen member sends no heartbeat (its heartbeat thread is frozen too),
// so past its session timeout the coordinator evicts it and the others
// take its partitions; on resume it finds itself fenced and rejoins. The
// pause's ledger entry is on the pod, so `kafkachaos recover` resumes a
// client that a killed run left frozen. The JVM must not be PID 1 of its
// container (the kernel ignores SIGSTOP sent to it from inside): the Java
// clients' pods share their process namespace (javaload).
type JavaPause struct {
	Control *JavaControl
	Client  int // JavaProducer, or a member's slot
	Scope   chaos.Scope
	Exec    chaos.Exec
	// Paused is the frozen pod, once injected, and PausedAt when its JVM
	// was stopped.
	Paused   string
	PausedAt time.Time
	pause    *chaos.Pause
}

var _ chaos.Fault = (*JavaPause)(nil)

// Name says what is frozen.
func (f *JavaPause) Name() string {
	return fmt.Sprintf("pause the Java %s (SIGSTOP its JVM)", javaClientName(f.Client))
}

// Plan says what Inject does.
func (f *JavaPause) Plan() string {
	return fmt.Sprintf("write a %s ledger entry on the pod of the Java %s, then SIGSTOP its JVM (the tool's main class) through pods/exec; recovery sends SIGCONT",
		chaos.KindPause, javaClientName(f.Client))
}

// mainClass is the client's main class: the producer's, or a member's of
// protocol (a share group's members run their own tool).
func (f *JavaPause) mainClass(protocol string) string {
	if f.Client == JavaProducer {
		return javaclients.ProducerClass
	}
	return javaclients.ConsumerClassOf(protocol)
}

// Inject freezes the client's JVM (a dry run prints the plan).
func (f *JavaPause) Inject(ctx context.Context) error {
	if f.Scope.DryRun {
		if f.Scope.Out != nil {
			fmt.Fprintf(f.Scope.Out, "dry-run: %s\n", f.Plan())
		}
		return nil
	}
	if f.Control == nil {
		return ErrNoJava
	}
	j, err := f.Control.clients()
	if err != nil {
		return err
	}
	pod, err := j.client(f.Client)
	if err != nil {
		return err
	}
	f.pause = &chaos.Pause{Scope: f.Scope, Exec: f.Exec, Pod: pod, MainClass: f.mainClass(j.spec.Protocol)}
	f.Paused, f.PausedAt = pod, time.Now()
	return f.pause.Inject(ctx)
}

// Recover resumes the frozen JVM, if Inject got that far.
func (f *JavaPause) Recover(ctx context.Context) error {
	if f.pause == nil {
		return nil
	}
	return f.pause.Recover(ctx)
}
