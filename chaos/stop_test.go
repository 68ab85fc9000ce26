package chaos

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// stopPod is a broker's pod running apache/kafka, with a sidecar.
func stopPod(name, image string) *corev1.Pod {
	p := brokerPod(name)
	p.Spec.Containers[0].Image, p.Spec.Containers[1].Image = image, "busybox"
	return p
}

// images reads each pod's containers' images, "kafka-0=img,busybox".
func images(t *testing.T, cs fakeClient, pods ...string) []string {
	t.Helper()
	var out []string
	for _, name := range pods {
		p, err := cs.CoreV1().Pods("kafka").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var is []string
		for _, c := range p.Spec.Containers {
			is = append(is, c.Image)
		}
		out = append(out, name+"="+strings.Join(is, ","))
	}
	return out
}

func TestStopKeepsDownAndRestartsInOrder(t *testing.T) {
	for _, hard := range []bool{false, true} {
		t.Run(map[bool]string{false: "clean", true: "hard"}[hard], func(t *testing.T) {
			cs := newClient(allowedNS("kafka"), stopPod("kafka-0", "apache/kafka:4.4.0"), stopPod("kafka-1", "apache/kafka:4.4.0"), stopPod("kafka-2", "apache/kafka:4.4.0"))
			var calls []execCall
			var restarted []string
			f := &Stop{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, Exec: recordingExec(cs, &calls, nil),
				Pods: []string{"kafka-0", "kafka-1"}, RestartOrder: []string{"kafka-1", "kafka-0"}, Hard: hard,
				Restarted: func(_ context.Context, pod string) error {
					restarted = append(restarted, pod+":"+images(t, cs, pod)[0])
					return nil
				}}
			if err := f.Inject(t.Context()); err != nil {
				t.Fatal(err)
			}
			want := []string{"kafka-0=" + DefaultPauseImage + ",busybox", "kafka-1=" + DefaultPauseImage + ",busybox", "kafka-2=apache/kafka:4.4.0,busybox"}
			if got := images(t, cs, "kafka-0", "kafka-1", "kafka-2"); !slices.Equal(got, want) {
				t.Errorf("images after the stop: %v, want %v", got, want)
			}
			// One patch per pod: the image and the entry together.
			if got := mutations(cs); !slices.Equal(got, []string{"patch pods kafka/kafka-0", "patch pods kafka/kafka-1"}) {
				t.Errorf("mutations %v", got)
			}
			for _, name := range []string{"kafka-0", "kafka-1"} {
				p, _ := cs.CoreV1().Pods("kafka").Get(t.Context(), name, metav1.GetOptions{})
				es, _ := LedgerOf(p)
				e, ok := entryOf(es, KindStop)
				if !ok || e.RunID != "r1" || e.Data["container"] != "kafka" || e.Data["image"] != "apache/kafka:4.4.0" {
					t.Errorf("%s's ledger %+v; want a stop entry of run r1 keeping container kafka's image", name, es)
				}
			}
			// A hard stop kills each JVM before its image changes, so no
			// entry is needed for the kill: nothing is left to undo.
			if hard {
				if len(calls) != 2 || calls[0].pod != "kafka-0" || calls[1].pod != "kafka-1" || calls[0].signal != "KILL" || calls[0].ledger != "" || calls[1].ledger != "" {
					t.Errorf("exec calls %+v; want SIGKILL to kafka-0 then kafka-1, each before its patch", calls)
				}
			} else if len(calls) != 0 {
				t.Errorf("a clean stop exec'd: %+v", calls)
			}
			cs.ClearActions()
			for range 2 { // idempotent
				if err := f.Recover(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if want := []string{"kafka-1:kafka-1=apache/kafka:4.4.0,busybox", "kafka-0:kafka-0=apache/kafka:4.4.0,busybox"}; !slices.Equal(restarted, want) {
				t.Errorf("restarted %v, want %v: in the restart order, each seen with its image back, once", restarted, want)
			}
			if got := mutations(cs); !slices.Equal(got, []string{"patch pods kafka/kafka-1", "patch pods kafka/kafka-0"}) {
				t.Errorf("recovery's mutations %v", got)
			}
			for _, name := range []string{"kafka-0", "kafka-1"} {
				if p, _ := cs.CoreV1().Pods("kafka").Get(t.Context(), name, metav1.GetOptions{}); p.Annotations[LedgerAnnotation] != "" {
					t.Errorf("%s keeps a ledger after Recover: %s", name, p.Annotations[LedgerAnnotation])
				}
			}
		})
	}
}

func TestStopRefusesBeforeAnyChange(t *testing.T) {
	stopped := withLedger(t, stopPod("kafka-1", DefaultPauseImage), Entry{Fault: KindStop, Data: map[string]string{"container": "kafka", "image": "apache/kafka:4.4.0"}})
	for _, tt := range []struct {
		name string
		f    Stop
		want string
	}{
		{"no pods", Stop{}, "no pods"},
		{"a pod twice", Stop{Pods: []string{"kafka-0", "kafka-0"}}, "name one twice"},
		{"a restart order of other pods", Stop{Pods: []string{"kafka-0"}, RestartOrder: []string{"kafka-2"}}, "must name each"},
		{"hard without exec", Stop{Pods: []string{"kafka-0"}, Hard: true}, "no exec"},
		{"stopped already", Stop{Pods: []string{"kafka-0", "kafka-1"}}, "stopped already"},
		{"no such pod", Stop{Pods: []string{"kafka-0", "kafka-9"}}, "not found"},
		{"no such container", Stop{Pods: []string{"kafka-0"}, Container: "broker"}, `no container "broker"`},
		{"on the pause image already", Stop{Pods: []string{"kafka-0"}, PauseImage: "apache/kafka:4.4.0"}, "someone else stopped it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(allowedNS("kafka"), stopPod("kafka-0", "apache/kafka:4.4.0"), stopped.DeepCopy())
			f := tt.f
			f.Scope = Scope{Client: cs, Namespace: "kafka"}
			err := f.Inject(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Inject: %v; want an error saying %q", err, tt.want)
			}
			if got := mutations(cs); len(got) != 0 {
				t.Errorf("a refused stop changed %v", got)
			}
		})
	}
}

func TestStopDryRunChangesNothing(t *testing.T) {
	cs := newClient(allowedNS("kafka"), stopPod("kafka-0", "apache/kafka:4.4.0"))
	var out strings.Builder
	f := &Stop{Scope: Scope{Client: cs, Namespace: "kafka", DryRun: true, Out: &out}, Exec: refuseExec, Pods: []string{"kafka-0"}, Hard: true}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := f.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := mutations(cs); len(got) != 0 || !strings.Contains(out.String(), "dry-run: for pod kafka-0") {
		t.Errorf("dry run: mutations %v, said %q", got, out.String())
	}
}

// `kafkachaos recover` gives a stopped broker its image back from the
// entry alone, and leaves a container someone changed since.
func TestRecoverAllRestartsStoppedPods(t *testing.T) {
	entryOn := func(p *corev1.Pod) *corev1.Pod {
		return withLedger(t, p, Entry{Fault: KindStop, RunID: "r1", Data: map[string]string{"container": "kafka", "image": "apache/kafka:4.4.0", "pauseImage": DefaultPauseImage}})
	}
	cs := newClient(allowedNS("kafka"), entryOn(stopPod("kafka-0", DefaultPauseImage)), entryOn(stopPod("kafka-1", "apache/kafka:4.5.0")))
	lines, err := RecoverAll(t.Context(), cs, Access{}, []string{"kafka"}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kafka-0=apache/kafka:4.4.0,busybox", "kafka-1=apache/kafka:4.5.0,busybox"}; !slices.Equal(images(t, cs, "kafka-0", "kafka-1"), want) {
		t.Errorf("images after recover: %v, want %v", images(t, cs, "kafka-0", "kafka-1"), want)
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "give container kafka its image apache/kafka:4.4.0 back") || !strings.Contains(lines[1], "someone changed it since") {
		t.Errorf("recover said %q", lines)
	}
}

// A Restarted that fails stops Recover; called again, Recover waits for
// that pod first, then restarts the next: the order holds.
func TestStopRecoverAwaitsAgainAfterAFailedWait(t *testing.T) {
	cs := newClient(allowedNS("kafka"), stopPod("kafka-0", "apache/kafka:4.4.0"), stopPod("kafka-1", "apache/kafka:4.4.0"))
	var waited []string
	fail := true
	f := &Stop{Scope: Scope{Client: cs, Namespace: "kafka"}, Pods: []string{"kafka-0", "kafka-1"}, RestartOrder: []string{"kafka-1", "kafka-0"},
		Restarted: func(_ context.Context, pod string) error {
			waited = append(waited, pod)
			if pod == "kafka-1" && fail {
				fail = false
				return errors.New("not back yet")
			}
			return nil
		}}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := f.Recover(t.Context()); err == nil {
		t.Fatal("Recover passed over a failed wait")
	}
	if got := images(t, cs, "kafka-0"); got[0] != "kafka-0="+DefaultPauseImage+",busybox" {
		t.Errorf("kafka-0 was given its image back before kafka-1 was awaited: %v", got)
	}
	for range 2 {
		if err := f.Recover(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"kafka-1", "kafka-1", "kafka-0"}; !slices.Equal(waited, want) {
		t.Errorf("awaited %v, want %v", waited, want)
	}
}

// Down holds once the pause image runs in place of the container the stop
// replaced: the spec's image alone, or a Ready condition, says nothing.
func TestStopDownWhenThePauseImageRuns(t *testing.T) {
	pod := stopPod("kafka-0", "apache/kafka:4.4.0")
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kafka", Image: "apache/kafka:4.4.0", ContainerID: "containerd://a"}}
	cs := newClient(allowedNS("kafka"), pod)
	f := &Stop{Scope: Scope{Client: cs, Namespace: "kafka"}, Pods: []string{"kafka-0"}}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		status corev1.ContainerStatus
		down   bool
	}{
		{corev1.ContainerStatus{Name: "kafka", Image: "apache/kafka:4.4.0", ContainerID: "containerd://a"}, false}, // not stopped yet
		{corev1.ContainerStatus{Name: "kafka", Image: "apache/kafka:4.4.0", ContainerID: "containerd://b"}, false}, // Kafka restarted, not the pause image
		{corev1.ContainerStatus{Name: "kafka", Image: "mirror.example/pause:3.10", ContainerID: "containerd://c", Ready: true}, true},
	} {
		p, _ := cs.CoreV1().Pods("kafka").Get(t.Context(), "kafka-0", metav1.GetOptions{})
		p.Status.ContainerStatuses = []corev1.ContainerStatus{tt.status}
		if _, err := cs.CoreV1().Pods("kafka").UpdateStatus(t.Context(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		down, err := f.Down(t.Context())
		if err != nil || down["kafka-0"] != tt.down {
			t.Errorf("status %+v: down %v, %v; want %t", tt.status, down, err, tt.down)
		}
	}
}
