package chaos

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// refuseExec is the Exec of faults that must not exec (a refused or dry run).
func refuseExec(_ context.Context, ns, pod, _ string, argv []string) (string, error) {
	return "", errors.New("exec called in " + ns + "/" + pod + ": " + strings.Join(argv, " "))
}

// execCall is one call of a recordingExec.
type execCall struct {
	pod, container, signal string
	mainClass              string // the JVM's main class the script looks for
	ledger                 string // the pod's ledger annotation when exec ran
}

// recordingExec records each call with the pod's ledger at that moment,
// and answers like the script: the JVM's PID, or err.
func recordingExec(cs kubernetes.Interface, calls *[]execCall, err error) Exec {
	return func(ctx context.Context, ns, pod, container string, argv []string) (string, error) {
		p, gerr := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if gerr != nil {
			return "", gerr
		}
		// argv is sh -c <script> <name> <signal> <main class>.
		*calls = append(*calls, execCall{pod: pod, container: container, signal: argv[4], mainClass: argv[5], ledger: p.Annotations[LedgerAnnotation]})
		return "4242\n", err
	}
}

func brokerPod(name string) *corev1.Pod {
	p := testPod("kafka", name, "node-1")
	p.Spec.Containers = []corev1.Container{{Name: "kafka"}, {Name: "sidecar"}}
	return p
}

func TestPause(t *testing.T) {
	cs := newClient(allowedNS("kafka"), brokerPod("kafka-0"), brokerPod("kafka-1"))
	var calls []execCall
	f := &Pause{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, Exec: recordingExec(cs, &calls, nil), Pod: "kafka-1"}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0].pod != "kafka-1" || calls[0].container != "kafka" || calls[0].signal != "STOP" {
		t.Fatalf("exec calls %+v; want one SIGSTOP in kafka-1's first container", calls)
	}
	if !strings.Contains(calls[0].ledger, `"fault":"pause"`) {
		t.Errorf("the ledger when SIGSTOP was sent: %q; the entry must be written first, so a crash leaves a trace", calls[0].ledger)
	}
	if got := mutations(cs); !slices.Equal(got, []string{"patch pods kafka/kafka-1"}) {
		t.Errorf("mutations %q, want only the ledger patch of the victim", got)
	}
	for range 2 { // idempotent
		if err := f.Recover(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if len(calls) != 2 || calls[1].signal != "CONT" || calls[1].container != "kafka" {
		t.Errorf("exec calls %+v; want one SIGCONT after the SIGSTOP, and none for the second Recover", calls)
	}
	p, _ := cs.CoreV1().Pods("kafka").Get(t.Context(), "kafka-1", metav1.GetOptions{})
	if es := ledger(t, p); len(es) != 0 {
		t.Errorf("ledger after Recover: %+v", es)
	}
}

// A failed SIGSTOP keeps its ledger entry: the JVM may be stopped, so
// recover must still send SIGCONT.
func TestPauseExecFails(t *testing.T) {
	cs := newClient(allowedNS("kafka"), brokerPod("kafka-0"))
	var calls []execCall
	f := &Pause{Scope: Scope{Client: cs, Namespace: "kafka"}, Exec: recordingExec(cs, &calls, errors.New("exit 3")), Pod: "kafka-0", Container: "sidecar"}
	if err := f.Inject(t.Context()); err == nil || !strings.Contains(err.Error(), "exit 3") {
		t.Fatalf("Inject = %v, want the exec's error", err)
	}
	if calls[0].container != "sidecar" {
		t.Errorf("exec in container %q, want the one named", calls[0].container)
	}
	lines, err := RecoverAll(t.Context(), cs, Access{Exec: recordingExec(cs, &calls, nil)}, []string{"kafka"}, "", false)
	if err != nil || !slices.Equal(lines, []string{"recovered pod kafka/kafka-0: SIGCONT the JVM of kafka.Kafka in container sidecar"}) {
		t.Errorf("RecoverAll = %q, %v", lines, err)
	}
}

// A paused Java client's JVM is found by its own main class, at the pause
// and at a recovery from the ledger alone, as `kafkachaos recover` does.
func TestPauseMainClass(t *testing.T) {
	const tool = "org.apache.kafka.tools.VerifiableConsumer"
	cs := newClient(allowedNS("kafka"), brokerPod("client-0"))
	var calls []execCall
	f := &Pause{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, Exec: recordingExec(cs, &calls, nil), Pod: "client-0", MainClass: tool}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	lines, err := RecoverAll(t.Context(), cs, Access{Exec: recordingExec(cs, &calls, nil)}, []string{"kafka"}, "", false)
	if err != nil || !slices.Equal(lines, []string{"recovered pod kafka/client-0: SIGCONT the JVM of " + tool + " in container kafka"}) {
		t.Errorf("RecoverAll = %q, %v", lines, err)
	}
	if len(calls) != 2 || calls[0].mainClass != tool || calls[1].mainClass != tool || calls[1].signal != "CONT" {
		t.Errorf("exec calls %+v; want SIGSTOP then SIGCONT, each for %s", calls, tool)
	}
}

func TestRecoverAllPaused(t *testing.T) {
	paused := func() kubernetes.Interface {
		e := entry(KindPause, "r1")
		e.Data = map[string]string{"container": "kafka"}
		return newClient(allowedNS("kafka"), withLedger(t, brokerPod("kafka-0"), e), brokerPod("kafka-1"))
	}
	tests := []struct {
		name      string
		runID     string
		dryRun    bool
		noExec    bool
		wantLines []string
		wantErr   string
		wantCONT  bool
	}{
		{name: "resumes", wantLines: []string{"recovered pod kafka/kafka-0: SIGCONT the JVM of kafka.Kafka in container kafka"}, wantCONT: true},
		{name: "dry run", dryRun: true, wantLines: []string{"would recover pod kafka/kafka-0: SIGCONT the JVM of kafka.Kafka in container kafka"}},
		{name: "another run", runID: "r2"},
		{name: "no exec", noExec: true, wantErr: "needs pods/exec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := paused()
			var calls []execCall
			exec := recordingExec(cs, &calls, nil)
			if tt.noExec {
				exec = nil
			}
			lines, err := RecoverAll(t.Context(), cs, Access{Exec: exec}, nil, tt.runID, tt.dryRun)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("RecoverAll error %v, want %q", err, tt.wantErr)
			}
			if !slices.Equal(lines, tt.wantLines) {
				t.Errorf("lines %q, want %q", lines, tt.wantLines)
			}
			if got := len(calls) == 1 && calls[0].signal == "CONT"; got != tt.wantCONT {
				t.Errorf("exec calls %+v, want SIGCONT: %t", calls, tt.wantCONT)
			}
			p, _ := cs.CoreV1().Pods("kafka").Get(t.Context(), "kafka-0", metav1.GetOptions{})
			if left := len(ledger(t, p)) > 0; left == tt.wantCONT {
				t.Errorf("ledger left %t after RecoverAll (resumed %t)", left, tt.wantCONT)
			}
		})
	}
}

// A paused pod that was deleted took its JVM along: nothing to resume.
func TestPauseRecoverPodGone(t *testing.T) {
	cs := newClient(allowedNS("kafka"))
	f := &Pause{Scope: Scope{Client: cs, Namespace: "kafka"}, Exec: refuseExec, Pod: "kafka-0"}
	if err := f.Recover(t.Context()); err != nil {
		t.Errorf("Recover of a pod that is gone: %v", err)
	}
}

func TestPauseState(t *testing.T) {
	cs := newClient(allowedNS("kafka"), brokerPod("kafka-0"))
	var calls []execCall
	f := &Pause{Scope: Scope{Client: cs, Namespace: "kafka"}, Exec: recordingExec(cs, &calls, nil), Pod: "kafka-0"}
	got, err := f.State(t.Context())
	if err != nil || got != "4242" {
		t.Errorf("State = %q, %v; want the script's output", got, err)
	}
	if len(calls) != 1 || calls[0].signal != "state" || calls[0].container != "kafka" {
		t.Errorf("exec calls %+v; want one state query in container kafka", calls)
	}
	if m := mutations(cs); len(m) != 0 {
		t.Errorf("State changed something: %q", m)
	}
}
