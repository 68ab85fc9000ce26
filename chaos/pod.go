package chaos

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodDelete deletes one pod. There is nothing to undo (its StatefulSet
// recreates it), so it writes no ledger entry and Recover does nothing.
type PodDelete struct {
	Scope
	Pod string
	// Force deletes with grace period 0, like kubectl delete pod
	// --grace-period=0 --force; otherwise the pod's own grace period applies.
	Force bool
}

var _ Fault = (*PodDelete)(nil)

// Name implements Fault.
func (f *PodDelete) Name() string {
	verb := "delete"
	if f.Force {
		verb = "force-delete"
	}
	return fmt.Sprintf("%s pod %s/%s", verb, f.Namespace, f.Pod)
}

// Plan says what Inject does.
func (f *PodDelete) Plan() string {
	if f.Force {
		return fmt.Sprintf("delete pod %s/%s with grace period 0 (forced); its controller recreates it", f.Namespace, f.Pod)
	}
	return fmt.Sprintf("delete pod %s/%s with its own grace period; its controller recreates it", f.Namespace, f.Pod)
}

// Inject implements Fault. The pod is read first: a pod that is not there
// is an error, in a dry run too.
func (f *PodDelete) Inject(ctx context.Context) error { return f.inject(ctx, nil, f.look) }

func (f *PodDelete) look(ctx context.Context) (string, func(context.Context) error, error) {
	if _, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, f.Pod, metav1.GetOptions{}); err != nil {
		return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return f.Plan(), f.delete, nil
}

func (f *PodDelete) delete(ctx context.Context) error {
	var opts metav1.DeleteOptions
	if f.Force {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	if err := f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, f.Pod, opts); err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	f.say("%s: deleted", f.Name())
	return nil
}

// Recover implements Fault: the pod's controller recreates it, so there is
// nothing to do.
func (f *PodDelete) Recover(context.Context) error { return nil }
