package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A pod's phase and Initialized condition follow its init containers as a
// kubelet's do: Pending until every one has succeeded, Failed when one
// failed under restartPolicy Never, retried (still Pending) otherwise.
func TestSnapshotWithInitContainers(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
	exited := func(code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}
	}
	tests := []struct {
		name        string
		policy      corev1.RestartPolicy
		init, app   corev1.ContainerState
		wantPhase   corev1.PodPhase
		initialized bool
		initReady   bool
	}{
		{"init running", corev1.RestartPolicyAlways, running, waiting("PodInitializing"), corev1.PodPending, false, false},
		{"init retried after a failure", corev1.RestartPolicyAlways, waiting("CrashLoopBackOff"), waiting("PodInitializing"), corev1.PodPending, false, false},
		{"init failed, restartPolicy Never", corev1.RestartPolicyNever, exited(1), waiting("PodInitializing"), corev1.PodFailed, false, false},
		{"init done, app starting", corev1.RestartPolicyAlways, exited(0), waiting("ContainerCreating"), corev1.PodPending, true, true},
		{"init done, app running", corev1.RestartPolicyAlways, exited(0), running, corev1.PodRunning, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &podRun{
				pod:   &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: tt.policy}},
				inits: []*ctrRun{{spec: corev1.Container{Name: "format"}, state: tt.init}},
				ctrs:  []*ctrRun{{spec: corev1.Container{Name: "kafka"}, state: tt.app, ready: true}},
			}
			st := p.snapshotLocked().Status
			if st.Phase != tt.wantPhase {
				t.Errorf("phase %s, want %s", st.Phase, tt.wantPhase)
			}
			var initialized bool
			for _, c := range st.Conditions {
				if c.Type == corev1.PodInitialized {
					initialized = c.Status == corev1.ConditionTrue
				}
			}
			if initialized != tt.initialized {
				t.Errorf("Initialized %t, want %t", initialized, tt.initialized)
			}
			if len(st.InitContainerStatuses) != 1 || st.InitContainerStatuses[0].Name != "format" || st.InitContainerStatuses[0].Ready != tt.initReady {
				t.Errorf("init container statuses %+v, want format, ready %t", st.InitContainerStatuses, tt.initReady)
			}
		})
	}
}
