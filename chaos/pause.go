package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// KindPause is the ledger kind of a pause, on the Pod whose JVM was stopped.
const KindPause = "pause"

// BrokerMainClass is the main class of a Kafka broker's (or controller's)
// JVM: what Pause stops unless told another.
const BrokerMainClass = "kafka.Kafka"

// kafkaJVMs defines the shell function kafka_jvms, which prints the PIDs of
// the Kafka JVMs of the container it runs in: processes whose executable is
// java and whose command line runs the main class $jvm_main (kafka.Kafka,
// the broker, unless the script sets another). Only processes in the
// container's own UTS namespace count, so on a node whose pods share the
// host's PID namespace (the embedded local cluster) it finds this broker
// and no other. (The executable check keeps the script's own shell, whose
// command line holds these words, out.) It sets $pids, and defines helpers:
// refuse_init exits 4 when a JVM is the container's PID 1, whom the kernel
// spares SIGSTOP and SIGKILL sent from inside its PID namespace (the signal
// would be lost and kill would still succeed); state_of prints a PID's
// state letter; wait_state waits up to 10 s for a PID to reach a state,
// wait_gone for it to die (a loaded node takes seconds to run a signalled
// process: `make test`'s CI once saw a killed one still there after 2 s).
const kafkaJVMs = `kafka_jvms() {
self=$(readlink /proc/self/ns/uts)
for d in /proc/[0-9]*; do
	[ "$(readlink "$d/ns/uts" 2>/dev/null)" = "$self" ] || continue
	case "$(readlink "$d/exe" 2>/dev/null)" in */java) ;; *) continue ;; esac
	case " $(tr '\0' ' ' <"$d/cmdline" 2>/dev/null) " in *" $jvm_main "*) echo "${d#/proc/}" ;; esac
done
}
refuse_init() {
	for p in $pids; do
		[ "$p" != 1 ] || { echo "the JVM running $jvm_main is PID 1 of its container: the kernel ignores SIGSTOP and SIGKILL sent to it from inside the container; give the pod shareProcessNamespace: true" >&2; exit 4; }
	done
}
state_of() { cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null; }
wait_state() {
	i=0
	while [ "$(state_of "$1")" != "$2" ] && [ $i -lt 100 ]; do sleep 0.1 2>/dev/null || sleep 1; i=$((i+1)); done
	[ "$(state_of "$1")" = "$2" ]
}
wait_gone() {
	i=0
	while [ -e "/proc/$1" ] && [ "$(state_of "$1")" != Z ] && [ $i -lt 100 ]; do sleep 0.1 2>/dev/null || sleep 1; i=$((i+1)); done
	[ ! -e "/proc/$1" ] || [ "$(state_of "$1")" = Z ]
}
pids=$(kafka_jvms)
[ -n "$pids" ] || { echo "no JVM running $jvm_main (java ... $jvm_main) in this container" >&2; exit 3; }
`

// signalJVM is the shell script Pause runs in the broker's container
// through pods/exec: it sends signal $1 to the container's JVMs of main
// class $2 (kafkaJVMs; kafka.Kafka when $2 is empty) and prints their PIDs; with $1 "state" it sends nothing and
// prints each PID with its state letter from /proc (T: stopped). A SIGSTOP
// that leaves a JVM running is an error (exit 5).
const signalJVM = "jvm_main=${2:-" + BrokerMainClass + "}\n" + kafkaJVMs + `sig=$1
[ "$sig" = state ] || refuse_init
found=
for p in $pids; do
	if [ "$sig" = state ]; then
		found="$found $p:$(state_of "$p")"
		continue
	fi
	kill -s "$sig" "$p" && found="$found $p"
	[ "$sig" != STOP ] || wait_state "$p" T || { echo "JVM $p is $(state_of "$p") after SIGSTOP, not stopped (T)" >&2; exit 5; }
done
echo $found`

// wipeVolume is the shell script DiskLoss runs in the broker's container
// to empty the volume mounted at $1: it stops the Kafka JVMs (kafkaJVMs),
// so that they write nothing more, deletes everything under $1, then kills
// them, so that the container restarts on the empty volume, and prints
// their PIDs. A JVM that does not stop is resumed and nothing is deleted
// (exit 5); a failed delete still kills the JVMs (exit 6). Once begun it
// ignores hang-ups and interrupts: a broken exec stream must not leave the
// JVM stopped.
const wipeVolume = `trap '' HUP INT TERM PIPE
jvm_main=` + BrokerMainClass + "\n" + kafkaJVMs + `dir=$1
[ -d "$dir" ] || { echo "no directory $dir in this container" >&2; exit 3; }
refuse_init
kill -s STOP $pids
for p in $pids; do
	wait_state "$p" T || { kill -s CONT $pids; echo "JVM $p is $(state_of "$p") after SIGSTOP, not stopped (T): nothing deleted" >&2; exit 5; }
done
rm -rf -- "$dir"/* "$dir"/.[!.]* "$dir"/..?*
rc=$?
kill -s KILL $pids
for p in $pids; do
	wait_gone "$p" || echo "JVM $p is still there 10 s after SIGKILL (state $(state_of "$p"))" >&2
done
[ $rc -eq 0 ] || { echo "deleting everything under $dir failed (exit $rc); the JVM was killed" >&2; exit 6; }
echo $pids`

// Pause freezes a broker: SIGSTOP to its JVM, found inside its container
// through pods/exec. The broker stays registered, its sockets open, and
// answers nothing until Recover sends SIGCONT. The ledger entry is written
// on the Pod before the signal, so `kafkachaos recover` resumes a broker
// that a killed run left frozen. A pod that is gone needs no resume. With
// MainClass it freezes another JVM the same way: a Java client's.
type Pause struct {
	Scope
	// Exec reaches the container (NewExec).
	Exec Exec
	Pod  string
	// Container is the broker's container; empty means the pod's first.
	Container string
	// MainClass is the JVM's main class; empty means BrokerMainClass.
	MainClass string
}

// mainClass is the JVM's main class.
func (f *Pause) mainClass() string { return cmp.Or(f.MainClass, BrokerMainClass) }

var _ Fault = (*Pause)(nil)

// Name implements Fault.
func (f *Pause) Name() string {
	if f.mainClass() != BrokerMainClass {
		return fmt.Sprintf("pause pod %s/%s (SIGSTOP its JVM of %s)", f.Namespace, f.Pod, f.mainClass())
	}
	return fmt.Sprintf("pause pod %s/%s (SIGSTOP its Kafka JVM)", f.Namespace, f.Pod)
}

// Plan says what Inject does.
func (f *Pause) Plan() string {
	return fmt.Sprintf("write a %s ledger entry on pod %s/%s, then SIGSTOP the JVM of %s in its container through pods/exec; recovery sends SIGCONT",
		KindPause, f.Namespace, f.Pod, f.mainClass())
}

// Inject implements Fault.
func (f *Pause) Inject(ctx context.Context) error { return f.inject(ctx, nil, f.look) }

func (f *Pause) look(ctx context.Context) (string, func(context.Context) error, error) {
	if f.Exec == nil {
		return "", nil, errors.New("chaos: pause: no exec")
	}
	container, err := f.container(ctx)
	if err != nil {
		return "", nil, err
	}
	return f.Plan(), func(ctx context.Context) error { return f.stop(ctx, container) }, nil
}

// stop writes the ledger entry, then sends SIGSTOP.
func (f *Pause) stop(ctx context.Context, container string) error {
	e := Entry{Fault: KindPause, RunID: f.RunID, At: time.Now(), Undo: "SIGCONT the JVM of " + f.mainClass() + " in container " + container,
		Data: map[string]string{"container": container, "mainClass": f.mainClass()}}
	if err := editPodLedger(ctx, f.Client, f.Namespace, f.Pod, func(es []Entry) []Entry { return withEntry(es, e) }); err != nil {
		return fmt.Errorf("chaos: %s: ledger: %w", f.Name(), err)
	}
	pids, err := f.Exec(ctx, f.Namespace, f.Pod, container, []string{"sh", "-c", signalJVM, "pause", "STOP", f.mainClass()})
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	f.say("%s: stopped PID %s", f.Name(), strings.TrimSpace(pids))
	return nil
}

// Recover implements Fault: SIGCONT to the JVM, then the entry removed.
func (f *Pause) Recover(ctx context.Context) error {
	if f.Client == nil || f.Exec == nil {
		return errors.New("chaos: pause: scope has no client or exec")
	}
	return f.recoverOn(ctx, f.Name(), Access{Exec: f.Exec}, onPod, f.Pod, func(Entry) bool { return true })
}

// pauseLedger is KindPause's row of the registry: on a Pod, recovered
// before the network and the StatefulSets.
func pauseLedger() ledgerKind {
	return ledgerKind{kind: KindPause, object: onPod, order: orderPods, undo: undoPause}
}

// undoPause sends SIGCONT to the JVM of the container and main class the
// entry names (an entry written before main classes were kept names a
// broker's), through u.access.Exec. A pod that is gone took its JVM
// along: recovery does not get this far.
func undoPause(ctx context.Context, u *undo, e Entry) (string, bool, error) {
	c, main := e.Data["container"], cmp.Or(e.Data["mainClass"], BrokerMainClass)
	err := u.act(ctx, e, func(ctx context.Context) error {
		if u.access.Exec == nil {
			return errors.New("a paused JVM needs pods/exec to resume, and no exec was given")
		}
		_, err := u.access.Exec(ctx, u.obj.GetNamespace(), u.obj.GetName(), c, []string{"sh", "-c", signalJVM, "resume", "CONT", main})
		return err
	})
	if err != nil {
		return "", false, err
	}
	return "SIGCONT the JVM of " + main + " in container " + c, false, nil
}

// container returns the container the fault aims at, f.Container, else
// the pod's first, once the pod is found.
func (f *Pause) container(ctx context.Context) (string, error) {
	pod, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, f.Pod, metav1.GetOptions{})
	switch {
	case err != nil:
		return "", fmt.Errorf("chaos: %s: %w", f.Name(), err)
	case f.Container != "":
		return f.Container, nil
	case len(pod.Spec.Containers) == 0:
		return "", fmt.Errorf("chaos: %s: the pod has no containers", f.Name())
	}
	return pod.Spec.Containers[0].Name, nil
}

// State returns the Kafka JVM's PIDs with their /proc state letters, as
// "1234:T" (T: stopped), read inside the container; it changes nothing.
func (f *Pause) State(ctx context.Context) (string, error) {
	if f.Client == nil || f.Exec == nil {
		return "", errors.New("chaos: pause: scope has no client or exec")
	}
	container, err := f.container(ctx)
	if err != nil {
		return "", err
	}
	out, err := f.Exec(ctx, f.Namespace, f.Pod, container, []string{"sh", "-c", signalJVM, "state", "state", f.mainClass()})
	if err != nil {
		return "", fmt.Errorf("chaos: %s: state: %w", f.Name(), err)
	}
	return strings.TrimSpace(out), nil
}

// editPodLedger rewrites a pod's ledger with edit, retried on conflicts.
func editPodLedger(ctx context.Context, cs kubernetes.Interface, ns, name string, edit func([]Entry) []Entry) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		es, err := LedgerOf(pod)
		if err != nil {
			return err
		}
		meta, err := metaPatch(pod, edit(es))
		if err != nil {
			return err
		}
		return patch(ctx, cs, ns, name, "pods", map[string]any{"metadata": meta})
	})
}
