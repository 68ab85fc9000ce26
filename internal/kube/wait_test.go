package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestWaitPodsReady(t *testing.T) {
	pod := func(i int, ready bool) runtime.Object {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kafka-%d", i), Namespace: "kafka"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}}
	}
	crashing := func(restarts int32) *corev1.Pod {
		p := pod(1, false).(*corev1.Pod)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kafka", RestartCount: restarts,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.Now()}}}}
		return p
	}
	terminating := crashing(5)
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	tests := []struct {
		name      string
		pods      []runtime.Object
		crashLoop int32
		cancel    bool
		wantErr   error  // errors.Is; nil: no error
		wantSeen  string // in the error and the progress lines
		wantCalls bool   // Progress was called
	}{
		{name: "all Ready", pods: []runtime.Object{pod(0, true), pod(1, true), pod(2, true)}},
		{name: "one not Ready", pods: []runtime.Object{pod(0, true), pod(1, false), pod(2, true)},
			wantErr: ErrNotReady, wantSeen: "kafka-1:Running/ready=false", wantCalls: true},
		{name: "a crash loop gives up at once", pods: []runtime.Object{pod(0, true), crashing(3), pod(2, true)}, crashLoop: 3,
			wantErr: ErrCrashLooping, wantSeen: "container kafka of pod kafka-1 restarted 3 times"},
		{name: "a pod being replaced is waited on", pods: []runtime.Object{pod(0, true), terminating, pod(2, true)}, crashLoop: 3,
			wantErr: ErrNotReady, wantSeen: "kafka-1:Running/ready=false", wantCalls: true},
		{name: "fewer restarts than the limit wait on", pods: []runtime.Object{pod(0, true), crashing(2), pod(2, true)}, crashLoop: 3,
			wantErr: ErrNotReady, wantSeen: "kafka-1:Running/ready=false", wantCalls: true},
		{name: "stopped", pods: []runtime.Object{pod(0, false)}, cancel: true, wantErr: context.Canceled, wantSeen: "(0 of 3 Ready)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			var progress []string
			err := WaitPodsReady(ctx, fake.NewClientset(tt.pods...), "kafka", 3, Wait{Timeout: 200 * time.Millisecond, Poll: 20 * time.Millisecond,
				ProgressEvery: 0, Progress: func(seen string) { progress = append(progress, seen) }, CrashLoopAfter: tt.crashLoop})
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantSeen) {
				t.Fatalf("err %v; want %v saying %q", err, tt.wantErr, tt.wantSeen)
			}
			if tt.wantCalls && (len(progress) == 0 || !strings.Contains(progress[0], tt.wantSeen)) {
				t.Errorf("progress %q; want lines saying %q", progress, tt.wantSeen)
			}
		})
	}
}

// On a cluster brought up again, Ready conditions from before the restart
// are stale: only those reported since count.
func TestWaitPodsReadySince(t *testing.T) {
	up := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	pod := func(i int, readyAt time.Time) runtime.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kafka-%d", i), Namespace: "kafka"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(readyAt)}}}}
	}
	w := Wait{Timeout: 200 * time.Millisecond, Poll: 20 * time.Millisecond, Since: up.Add(300 * time.Millisecond)}
	fresh := fake.NewClientset(pod(0, up.Add(time.Second)), pod(1, up), pod(2, up.Add(time.Minute))) // up: the same second as Since
	if err := WaitPodsReady(t.Context(), fresh, "kafka", 3, w); err != nil {
		t.Errorf("Ready conditions reported since: %v", err)
	}
	stale := fake.NewClientset(pod(0, up.Add(time.Second)), pod(1, up.Add(-time.Hour)), pod(2, up.Add(time.Minute)))
	err := WaitPodsReady(t.Context(), stale, "kafka", 3, w)
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "kafka-1:Running/ready=stale") || !strings.Contains(err.Error(), "(2 of 3 Ready)") {
		t.Errorf("a Ready condition from before Since: %v; want not Ready, kafka-1 stale", err)
	}
	w.Since = time.Time{}
	if err := WaitPodsReady(t.Context(), stale, "kafka", 3, w); err != nil {
		t.Errorf("without Since every Ready counts: %v", err)
	}
}
