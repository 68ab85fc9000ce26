package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Wait is how WaitPodsReady waits: for how long, how often it looks, and
// how often it says what it sees (through Progress, if set).
type Wait struct {
	Timeout       time.Duration
	Poll          time.Duration
	ProgressEvery time.Duration
	Progress      func(seen string)
	// Since, when set, counts only pods whose Ready condition was
	// reported at or after it (its LastTransitionTime): on a cluster
	// brought up again from kept state, the Ready conditions etcd still
	// holds from before are not readiness. The embedded cluster's node
	// agent stamps every status report; on other clusters leave it zero.
	Since time.Time
	// CrashLoopAfter, when set, gives up as soon as a container of the
	// namespace waits in CrashLoopBackOff after that many restarts: it
	// will not turn Ready by waiting (the error wraps ErrCrashLooping).
	CrashLoopAfter int32
}

// ErrCrashLooping is WaitPodsReady's error when a container crash-loops
// (Wait.CrashLoopAfter).
var ErrCrashLooping = errors.New("kube: a container crash-loops")

// CrashLoop names a crash-looping container.
type CrashLoop struct {
	Pod, Container string
	Restarts       int32
}

// crashLooping returns the containers of namespace that wait in
// CrashLoopBackOff after at least after restarts, the last of which ended
// at or after since: a pod being replaced, or a status kept from before
// the cluster came up again, does not count.
func crashLooping(ctx context.Context, cs kubernetes.Interface, namespace string, after int32, since time.Time) ([]CrashLoop, error) {
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("kube: list pods in %s: %w", namespace, err)
	}
	var out []CrashLoop
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			w, last := c.State.Waiting, c.LastTerminationState.Terminated
			if w == nil || w.Reason != "CrashLoopBackOff" || c.RestartCount < after || last == nil || last.FinishedAt.Time.Before(since.Truncate(time.Second)) {
				continue
			}
			out = append(out, CrashLoop{Pod: string(p.UID) + "/" + p.Name, Container: c.Name, Restarts: c.RestartCount})
		}
	}
	return out, nil
}

// CrashLoopError is the error of a wait that gave up on a crash loop.
type CrashLoopError struct{ CrashLoop }

func (e *CrashLoopError) Error() string {
	return fmt.Sprintf("%v: container %s of pod %s restarted %d times", ErrCrashLooping, e.Container, e.Pod, e.Restarts)
}

func (e *CrashLoopError) Unwrap() error { return ErrCrashLooping }

// ErrNotReady is WaitPodsReady's error when the timeout passed first.
var ErrNotReady = errors.New("kube: pods not Ready in time")

// WaitPodsReady polls until at least want pods of namespace are Ready. On
// timeout it returns an error wrapping ErrNotReady, and if ctx ends first
// one wrapping ctx's error; both say what was seen last (see ReadyPods).
func WaitPodsReady(ctx context.Context, cs kubernetes.Interface, namespace string, want int, w Wait) error {
	said, seen := time.Now(), ""
	var looping []CrashLoop // seen at the last poll: a loop must show twice in a row
	err := wait.PollUntilContextTimeout(ctx, w.Poll, w.Timeout, true, func(ctx context.Context) (bool, error) {
		s, ready, err := readyPods(ctx, cs, namespace, want, w.Since)
		if err == nil && ready >= want {
			return true, nil
		}
		if w.CrashLoopAfter > 0 {
			now, err := crashLooping(ctx, cs, namespace, w.CrashLoopAfter, w.Since)
			for _, cl := range now {
				if slices.ContainsFunc(looping, func(l CrashLoop) bool { return l.Pod == cl.Pod && l.Container == cl.Container }) {
					_, cl.Pod, _ = strings.Cut(cl.Pod, "/")
					return false, &CrashLoopError{cl}
				}
			}
			if err == nil {
				looping = now
			}
		}
		seen = s
		if err != nil {
			seen = err.Error()
		}
		if w.Progress != nil && time.Since(said) >= w.ProgressEvery {
			w.Progress(seen)
			said = time.Now()
		}
		return false, nil
	})
	var cl *CrashLoopError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &cl):
		return err
	case ctx.Err() != nil:
		return fmt.Errorf("kube: stopped waiting for the pods of namespace %s: %w; last seen: %s", namespace, ctx.Err(), seen)
	default:
		return fmt.Errorf("%w: namespace %s after %s; last seen: %s", ErrNotReady, namespace, w.Timeout, seen)
	}
}
