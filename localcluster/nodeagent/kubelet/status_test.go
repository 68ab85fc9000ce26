package kubelet

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A status written from a copy of the pod made at its creation keeps what
// was written on the pod since: its annotations (a fault's ledger) and
// labels.
func TestStatusUpdateKeepsMetadata(t *testing.T) {
	created := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "kafka-0", UID: "u1", Labels: map[string]string{"app": "kafka"}}}
	now := created.DeepCopy()
	now.Annotations = map[string]string{"kafkachaos.io/ledger": `[{"fault":"stop"}]`}
	now.Labels["added"] = "later"
	cs := fake.NewClientset(now)
	stale := created.DeepCopy()
	stale.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "kafka", RestartCount: 1}}}
	got, err := statusOnly{cs}.CoreV1().Pods("kafka").UpdateStatus(t.Context(), stale, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations["kafkachaos.io/ledger"] == "" || got.Labels["added"] != "later" {
		t.Errorf("after the status update: annotations %v, labels %v; want the ledger and the later label kept", got.Annotations, got.Labels)
	}
	if got.Status.Phase != corev1.PodRunning || len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].RestartCount != 1 {
		t.Errorf("status not written: %+v", got.Status)
	}
}

// The patch is guarded by the pod's UID and the resourceVersion read, and
// clears the scalar fields the status leaves empty (a merge patch would
// keep them).
func TestStatusPatchPreconditions(t *testing.T) {
	b, err := statusPatch(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "42"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Metadata map[string]string `json:"metadata"`
		Status   map[string]any    `json:"status"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Metadata["uid"] != "u1" || p.Metadata["resourceVersion"] != "42" {
		t.Errorf("patch %s, %v; want metadata.uid u1 and resourceVersion 42", b, err)
	}
	for _, k := range []string{"reason", "message", "nominatedNodeName"} {
		if v, ok := p.Status[k]; !ok || v != nil {
			t.Errorf("patch %s: status.%s is %v (present %t), want null", b, k, v, ok)
		}
	}
	if p.Status["phase"] != "Running" {
		t.Errorf("patch %s: want the phase", b)
	}
}

// The agent's copy of a pod follows its image and metadata changes: the
// node library compares the API's pod with it (GetPod) to decide whether
// to call UpdatePod at all, so a copy that kept the old image hid the
// image given back after a stop.
func TestUpdatePodKeepsTheCopyCurrent(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "kafka-0", UID: "u1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kafka", Image: "apache/kafka:4.4.0"}}}}
	run := &podRun{pod: pod.DeepCopy(), stop: make(chan struct{}),
		ctrs: []*ctrRun{newCtrRun(pod.Spec.Containers[0], corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}})}}
	p := &provider{pods: map[string]*podRun{key("kafka", "kafka-0"): run}}
	for _, tt := range []struct{ image, ledger string }{
		{"registry.k8s.io/pause:3.10", `[{"fault":"stop"}]`},
		{"apache/kafka:4.4.0", ""},
	} {
		next := pod.DeepCopy()
		next.Spec.Containers[0].Image = tt.image
		if tt.ledger != "" {
			next.Annotations = map[string]string{"kafkachaos.io/ledger": tt.ledger}
		}
		if err := p.UpdatePod(t.Context(), next); err != nil {
			t.Fatal(err)
		}
		got, err := p.GetPod(t.Context(), "kafka", "kafka-0")
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Containers[0].Image != tt.image || got.Annotations["kafkachaos.io/ledger"] != tt.ledger || got.Status.ContainerStatuses[0].Image != tt.image {
			t.Errorf("after UpdatePod to %s: the copy has image %s (status %s), ledger %q", tt.image, got.Spec.Containers[0].Image, got.Status.ContainerStatuses[0].Image, got.Annotations["kafkachaos.io/ledger"])
		}
	}
}

// A change of image is taken once: its wake-up does not end a later wait
// (a back-off, or a container that ended for good waiting for an image).
func TestImageChangeTakenOnce(t *testing.T) {
	run := &podRun{pod: &corev1.Pod{}, stop: make(chan struct{})}
	c := newCtrRun(corev1.Container{Name: "kafka", Image: "a"}, corev1.ContainerState{})
	run.ctrs = []*ctrRun{c}
	run.setImage("kafka", "b", 0)
	if !run.takeReplaced(c) || len(c.wake) != 0 {
		t.Fatalf("after the change was taken: %d wake-ups left", len(c.wake))
	}
	c.wakeUp() // a stray wake-up, with no change behind it
	done := make(chan bool)
	go func() { done <- run.waitImage(c) }()
	for len(c.wake) > 0 { // until the waiter has seen the stray wake-up
		time.Sleep(time.Millisecond)
	}
	select {
	case <-done:
		t.Fatal("waitImage ended on a wake-up with no new image")
	case <-time.After(100 * time.Millisecond):
	}
	close(run.stop)
	if <-done {
		t.Error("waitImage reported a new image when the pod was deleted")
	}
}
