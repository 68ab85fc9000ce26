package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

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
}

// ErrNotReady is WaitPodsReady's error when the timeout passed first.
var ErrNotReady = errors.New("kube: pods not Ready in time")

// WaitPodsReady polls until at least want pods of namespace are Ready. On
// timeout it returns an error wrapping ErrNotReady, and if ctx ends first
// one wrapping ctx's error; both say what was seen last (see ReadyPods).
func WaitPodsReady(ctx context.Context, cs kubernetes.Interface, namespace string, want int, w Wait) error {
	said, seen := time.Now(), ""
	err := wait.PollUntilContextTimeout(ctx, w.Poll, w.Timeout, true, func(ctx context.Context) (bool, error) {
		s, ready, err := readyPods(ctx, cs, namespace, want, w.Since)
		if err == nil && ready >= want {
			return true, nil
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
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("kube: stopped waiting for the pods of namespace %s: %w; last seen: %s", namespace, ctx.Err(), seen)
	default:
		return fmt.Errorf("%w: namespace %s after %s; last seen: %s", ErrNotReady, namespace, w.Timeout, seen)
	}
}
