package chaos

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// RestartedAtAnnotation is the pod-template annotation kubectl rollout
// restart sets.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// RollingRestart restarts the pods of a StatefulSet one by one, like
// kubectl rollout restart: it sets RestartedAtAnnotation on the pod
// template. A ledger entry on the StatefulSet marks the roll as ours while it
// is in progress; a restart has nothing to revert, so Recover only removes
// the entry. Wait for the roll with RolloutDone.
type RollingRestart struct {
	Scope
	StatefulSet string
}

var _ Fault = (*RollingRestart)(nil)

// Name implements Fault.
func (f *RollingRestart) Name() string {
	return fmt.Sprintf("rolling restart of statefulset %s/%s", f.Namespace, f.StatefulSet)
}

// Plan says what Inject does.
func (f *RollingRestart) Plan() string {
	return fmt.Sprintf("set spec.template.metadata.annotations[%s] on statefulset %s/%s, which restarts its pods one by one",
		RestartedAtAnnotation, f.Namespace, f.StatefulSet)
}

// Inject implements Fault.
func (f *RollingRestart) Inject(ctx context.Context) error { return f.inject(ctx, nil, f.look) }

func (f *RollingRestart) look(ctx context.Context) (string, func(context.Context) error, error) {
	if _, err := f.Client.AppsV1().StatefulSets(f.Namespace).Get(ctx, f.StatefulSet, metav1.GetOptions{}); err != nil {
		return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return f.Plan(), f.restart, nil
}

func (f *RollingRestart) restart(ctx context.Context) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, es, err := statefulSetLedger(ctx, f.Client, f.Namespace, f.StatefulSet)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		md, err := metaPatch(s, withEntry(es, Entry{
			Fault: KindRollingRestart, RunID: f.RunID, At: now,
			Undo: "nothing to revert; remove this entry once the roll is done",
		}))
		if err != nil {
			return err
		}
		return patch(ctx, f.Client, f.Namespace, f.StatefulSet, "statefulsets", map[string]any{
			"metadata": md,
			"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
				"annotations": map[string]any{RestartedAtAnnotation: now.Format(time.RFC3339)},
			}}},
		})
	})
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	f.say("%s: started", f.Name())
	return nil
}

// Recover implements Fault: it removes the ledger entry.
func (f *RollingRestart) Recover(ctx context.Context) error {
	return f.recoverOn(ctx, f.Name(), Access{}, onStatefulSet, f.StatefulSet, func(e Entry) bool { return e.Fault == KindRollingRestart })
}

// rollingRestartLedger is KindRollingRestart's row of the registry: on a
// StatefulSet, with nothing to revert.
func rollingRestartLedger() ledgerKind {
	return ledgerKind{kind: KindRollingRestart, object: onStatefulSet, order: orderStatefulSets, undo: undoRollingRestart}
}

// undoRollingRestart only drops the entry: a restart has nothing to revert.
func undoRollingRestart(_ context.Context, _ *undo, e Entry) (string, bool, error) {
	return fmt.Sprintf("drop restart entry, nothing to revert (%s)", e), false, nil
}

// RolloutDone reports whether StatefulSet ns/name has rolled out: the
// controller observed the latest generation, every replica is updated and
// ready, and the current revision is the update revision. The string
// describes what it saw, for Eventually messages.
func RolloutDone(ctx context.Context, cs kubernetes.Interface, ns, name string) (string, bool, error) {
	s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", false, fmt.Errorf("chaos: rollout of statefulset %s/%s: %w", ns, name, err)
	}
	want := int32(1)
	if s.Spec.Replicas != nil {
		want = *s.Spec.Replicas
	}
	st := s.Status
	desc := fmt.Sprintf("statefulset %s/%s: generation %d (observed %d), replicas %d wanted, %d present, %d updated, %d ready, revision %s (update revision %s)",
		ns, name, s.Generation, st.ObservedGeneration, want, st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.CurrentRevision, st.UpdateRevision)
	done := st.ObservedGeneration >= s.Generation &&
		st.Replicas == want && st.UpdatedReplicas == want && st.ReadyReplicas == want &&
		st.CurrentRevision == st.UpdateRevision
	return desc, done, nil
}
