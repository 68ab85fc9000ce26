package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestReadyPods(t *testing.T) {
	pod := func(name string, conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kafka"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: conds}}
	}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	notReady := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse}
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	tests := []struct {
		name      string
		pods      []*corev1.Pod
		wantReady int
		wantSeen  string
	}{
		{name: "none", wantSeen: "(0 of 2 Ready)"},
		{name: "ready and not", pods: []*corev1.Pod{pod("kafka-0", scheduled, ready), pod("kafka-1", notReady)}, wantReady: 1,
			wantSeen: "kafka-0:Running/ready=true kafka-1:Running/ready=false (1 of 2 Ready)"},
		{name: "no Ready condition", pods: []*corev1.Pod{pod("kafka-0", scheduled)}, wantSeen: "kafka-0:Running/ready=false (0 of 2 Ready)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, p := range tt.pods {
				if _, err := cs.CoreV1().Pods("kafka").Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			seen, n, err := ReadyPods(t.Context(), cs, "kafka", 2)
			if err != nil || n != tt.wantReady || seen != tt.wantSeen {
				t.Errorf("ReadyPods = %q, %d, %v; want %q, %d", seen, n, err, tt.wantSeen, tt.wantReady)
			}
		})
	}
}
