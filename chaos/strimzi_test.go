package chaos

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestManualRollingUpdate(t *testing.T) {
	cs := newClient(cluster(allowedNS("kafka"))...)
	f := &ManualRollingUpdate{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, Pods: []string{"kafka-0", "kafka-1"}}
	annotated := func() map[string]bool {
		got := map[string]bool{}
		for _, p := range f.Pods {
			pod, err := cs.CoreV1().Pods("kafka").Get(t.Context(), p, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got[p] = pod.Annotations[ManualRollingUpdateAnnotation] == "true"
		}
		return got
	}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := annotated(); !got["kafka-0"] || !got["kafka-1"] {
		t.Fatalf("after Inject, annotated %v, want both", got)
	}
	// The operator rolled kafka-0: its new pod has no annotation.
	if err := cs.CoreV1().Pods("kafka").Delete(t.Context(), "kafka-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Tracker().Add(testPod("kafka", "kafka-0", "node-1")); err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if err := f.Recover(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if got := annotated(); got["kafka-0"] || got["kafka-1"] {
		t.Errorf("after Recover, annotated %v, want none", got)
	}
}

func TestManualRollingUpdateMissingPod(t *testing.T) {
	cs := newClient(cluster(allowedNS("kafka"))...)
	f := &ManualRollingUpdate{Scope: Scope{Client: cs, Namespace: "kafka"}, Pods: []string{"kafka-0", "kafka-9"}}
	if err := f.Inject(t.Context()); err == nil {
		t.Fatal("Inject with a missing pod: want an error")
	}
	if m := mutations(cs); len(m) > 0 {
		t.Errorf("a refused Inject made mutating calls %v", m)
	}
}
