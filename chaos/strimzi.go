package chaos

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ManualRollingUpdateAnnotation asks the Strimzi cluster operator to roll
// the pod that carries it, in its own safe order; the operator removes it
// with the pod.
const ManualRollingUpdateAnnotation = "strimzi.io/manual-rolling-update"

// ManualRollingUpdate is the rolling restart of the Strimzi flavor: it
// annotates the broker pods with ManualRollingUpdateAnnotation, and the
// operator rolls them (on its next reconciliation, by default within two
// minutes). The rolled pods are new pods, without the annotation, so there
// is no ledger entry: Recover removes the annotation from the pods that
// still carry it, that is, the ones the operator has not rolled yet.
type ManualRollingUpdate struct {
	Scope
	Pods []string
}

var _ Fault = (*ManualRollingUpdate)(nil)

// Name implements Fault.
func (f *ManualRollingUpdate) Name() string {
	return fmt.Sprintf("Strimzi manual rolling update of %d pods in %s", len(f.Pods), f.Namespace)
}

// Plan says what Inject does.
func (f *ManualRollingUpdate) Plan() string {
	return fmt.Sprintf("annotate pods %v in %s with %s=true; the Strimzi operator rolls them", f.Pods, f.Namespace, ManualRollingUpdateAnnotation)
}

// Inject implements Fault.
func (f *ManualRollingUpdate) Inject(ctx context.Context) error { return f.inject(ctx, nil, f.look) }

func (f *ManualRollingUpdate) look(ctx context.Context) (string, func(context.Context) error, error) {
	for _, p := range f.Pods {
		if _, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, p, metav1.GetOptions{}); err != nil {
			return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
		}
	}
	return f.Plan(), f.annotateAll, nil
}

func (f *ManualRollingUpdate) annotateAll(ctx context.Context) error {
	for _, p := range f.Pods {
		if err := f.annotate(ctx, p, "true"); err != nil {
			return err
		}
	}
	f.say("%s: annotated", f.Name())
	return nil
}

// Recover implements Fault: it removes the annotation from the pods that
// still carry it. Pods already rolled, or gone, are fine.
func (f *ManualRollingUpdate) Recover(ctx context.Context) error {
	for _, p := range f.Pods {
		pod, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, p, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("chaos: recover from %s: %w", f.Name(), err)
		}
		if _, ok := pod.Annotations[ManualRollingUpdateAnnotation]; !ok {
			continue
		}
		if f.DryRun {
			f.say("dry-run: would remove %s from pod %s/%s", ManualRollingUpdateAnnotation, f.Namespace, p)
			continue
		}
		if err := f.annotate(ctx, p, nil); err != nil {
			return err
		}
		f.say("recovered pod %s/%s: removed %s", f.Namespace, p, ManualRollingUpdateAnnotation)
	}
	return nil
}

// annotate sets (or, with nil, removes) the annotation on pod p.
func (f *ManualRollingUpdate) annotate(ctx context.Context, p string, value any) error {
	b, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{ManualRollingUpdateAnnotation: value}}})
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	_, err = f.Client.CoreV1().Pods(f.Namespace).Patch(ctx, p, types.MergePatchType, b, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("chaos: %s: pod %s: %w", f.Name(), p, err)
	}
	return nil
}
