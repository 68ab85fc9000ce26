package kube

import (
	"bytes"
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// PodReady reports the pod's Ready condition.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ReadyPods counts the Ready pods of namespace, of which want are
// expected. It returns a description of what it saw (name, phase,
// readiness of each pod, and "(2 of 3 Ready)") for wait messages.
func ReadyPods(ctx context.Context, cs kubernetes.Interface, namespace string, want int) (string, int, error) {
	return readyPods(ctx, cs, namespace, want, time.Time{})
}

// readyPods is ReadyPods counting only Ready conditions reported at or
// after since (a zero since counts every one); older ones show as stale.
func readyPods(ctx context.Context, cs kubernetes.Interface, namespace string, want int, since time.Time) (string, int, error) {
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", 0, fmt.Errorf("kube: list pods in %s: %w", namespace, err)
	}
	var b bytes.Buffer
	ready := 0
	for _, p := range pods.Items {
		r := PodReady(&p)
		state := fmt.Sprint(r)
		if r && !since.IsZero() && readySince(&p).Before(since.Truncate(time.Second)) {
			r, state = false, "stale"
		}
		if r {
			ready++
		}
		fmt.Fprintf(&b, "%s:%s/ready=%s ", p.Name, p.Status.Phase, state)
	}
	fmt.Fprintf(&b, "(%d of %d Ready)", ready, want)
	return b.String(), ready, nil
}

// readySince is the LastTransitionTime of the pod's Ready condition.
func readySince(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
