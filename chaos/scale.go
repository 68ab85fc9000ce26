package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// KindScale is the fault kind of a scale-out, written in Entry.Fault on the
// StatefulSet.
const KindScale = "scale"

// Keys of a scale entry's Data.
const (
	dataPreviousReplicas = "previousReplicas" // spec.replicas before the scale-out
	dataReplicas         = "replicas"         // spec.replicas we set
)

// Scale scales StatefulSet StatefulSet out to Replicas pods (more than it
// has), as an operator adding brokers does. The ledger entry (kind
// KindScale) on the StatefulSet records the previous replica count. Recover
// scales back to that count, then deletes the PersistentVolumeClaims of the
// pods that the scale-out added (claims named
// <volumeClaimTemplate>-<statefulset>-<ordinal> for ordinals
// previous..Replicas-1, counted from spec.ordinals.start) but only those
// created at or after the entry's time (so a claim that existed before is
// never touched), and removes the entry. Idempotent: no entry -> nothing to
// do.
//
// Recover does not wait for the pods to terminate: a claim whose pod still
// runs is held by Kubernetes' pvc-protection finalizer until the pod is gone.
// If spec.replicas was changed since the scale-out, Recover leaves it alone
// and deletes only the added claims of pods the StatefulSet no longer wants.
// A StatefulSet carries one scale entry at a time: Inject refuses while one
// is there.
type Scale struct {
	Scope
	StatefulSet string
	Replicas    int32

	// Kafka, Topics and Throttle are for Spread, which moves partitions of
	// Topics onto the added brokers through Kafka, replication throttled to
	// Throttle bytes/s per broker (0: not throttled). Recover needs Kafka
	// when partitions were moved, to move them back before it scales in.
	Kafka    Mover
	Topics   []string
	Throttle int64
}

var _ Fault = (*Scale)(nil)

// Name implements Fault.
func (f *Scale) Name() string {
	return fmt.Sprintf("scale out statefulset %s/%s to %d", f.Namespace, f.StatefulSet, f.Replicas)
}

// Plan says what Inject does.
func (f *Scale) Plan() string {
	return fmt.Sprintf("set spec.replicas of statefulset %s/%s to %d, which adds pods and their claims; the ledger entry keeps the previous count, and Recover scales back and deletes the claims the added pods got",
		f.Namespace, f.StatefulSet, f.Replicas)
}

// Inject implements Fault. It refuses when Replicas is not more than the
// StatefulSet has, and when the StatefulSet already carries a scale entry.
func (f *Scale) Inject(ctx context.Context) error { return f.inject(ctx, nil, f.look) }

func (f *Scale) look(ctx context.Context) (string, func(context.Context) error, error) {
	s, es, err := statefulSetLedger(ctx, f.Client, f.Namespace, f.StatefulSet)
	if err != nil {
		return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	from, err := f.from(s, es)
	if err != nil {
		return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return fmt.Sprintf("%s; it has %d replicas now", f.Plan(), from), f.scaleOut, nil
}

// from returns the replicas s has, after checking that it carries no scale
// entry and has fewer than f.Replicas.
func (f *Scale) from(s *appsv1.StatefulSet, es []Entry) (int32, error) {
	if e, ok := entryOf(es, KindScale); ok {
		return 0, fmt.Errorf("statefulset already carries a scale entry (%s, from %s to %s replicas); recover it first (kafkachaos recover)",
			e, e.Data[dataPreviousReplicas], e.Data[dataReplicas])
	}
	from := replicasOf(s)
	if f.Replicas <= from {
		return 0, fmt.Errorf("statefulset has %d replicas; a scale-out needs more than that, not %d", from, f.Replicas)
	}
	return from, nil
}

// scaleOut sets the replicas and writes the ledger entry, in one patch.
func (f *Scale) scaleOut(ctx context.Context) error {
	var from int32
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, es, err := statefulSetLedger(ctx, f.Client, f.Namespace, f.StatefulSet)
		if err != nil {
			return err
		}
		if from, err = f.from(s, es); err != nil {
			return err
		}
		md, err := metaPatch(s, withEntry(es, Entry{
			Fault: KindScale, RunID: f.RunID, At: time.Now().UTC(),
			Undo: fmt.Sprintf("scale back to %d replicas and delete the claims created since for ordinals %d..%d",
				from, ordinalStart(s)+from, ordinalStart(s)+f.Replicas-1),
			Data: map[string]string{
				dataPreviousReplicas: strconv.Itoa(int(from)),
				dataReplicas:         strconv.Itoa(int(f.Replicas)),
			},
		}))
		if err != nil {
			return err
		}
		return patch(ctx, f.Client, f.Namespace, f.StatefulSet, "statefulsets", map[string]any{
			"metadata": md,
			"spec":     map[string]any{"replicas": f.Replicas},
		})
	})
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	f.say("%s: scaled out from %d", f.Name(), from)
	return nil
}

// Recover implements Fault: it moves partitions that Spread moved back
// (through f.Kafka), then scales the StatefulSet back, deletes the claims
// the scale-out added and removes the ledger entries. It does not scale in
// while moved partitions could not be moved back.
func (f *Scale) Recover(ctx context.Context) error {
	return f.recoverOn(ctx, f.Name(), Access{Kafka: f.Kafka}, onStatefulSet, f.StatefulSet, func(e Entry) bool {
		return e.Fault == KindScale || e.Fault == KindReassign
	})
}

// scaleLedger is KindScale's row of the registry: on a StatefulSet,
// undone in its one patch, after the partitions moved onto the added
// brokers are back (KindReassign's order is lower).
func scaleLedger() ledgerKind {
	return ledgerKind{kind: KindScale, object: onStatefulSet, order: orderStatefulSets, undo: undoScale}
}

// undoScale scales the StatefulSet back and deletes the claims the added
// pods got (see scaleBack). It keeps the scale-out while a reassign entry
// is there: its brokers hold partitions moved onto them. A dry run that
// would move them back shows the scale-in that follows.
func undoScale(ctx context.Context, u *undo, e Entry) (string, bool, error) {
	if r, ok := entryOf(u.entries, KindReassign); ok && !(u.dryRun && u.match(r)) {
		return fmt.Sprintf("keep the scale-out (%s): its brokers hold partitions moved onto them (%s)", e, r), true, nil
	}
	s, err := object[*appsv1.StatefulSet](u)
	if err != nil {
		return "", false, err
	}
	what, replicas, claims, err := scaleBack(ctx, u.cs, s, e)
	if err != nil {
		return "", false, err
	}
	if replicas != nil {
		u.spec["replicas"] = *replicas
	}
	u.claims = append(u.claims, claims...)
	return what, false, nil
}

// scaleBack returns what recovering scale entry e on s does, the replica
// count to restore (nil to leave spec.replicas alone) and the claims to
// delete (some may already be being deleted, by an earlier attempt). It
// reads the claims and changes nothing.
//
// spec.replicas is restored only if it is still the count the scale-out
// set. The claims deleted are those of the added ordinals the StatefulSet no
// longer wants, and of those only the claims created at or after the
// entry's time. A claim's creationTimestamp has whole seconds, so the
// entry's time is rounded down to the second. An entry without a time
// deletes no claim.
func scaleBack(ctx context.Context, cs kubernetes.Interface, s *appsv1.StatefulSet, e Entry) (string, *int32, []corev1.PersistentVolumeClaim, error) {
	prev, err := strconv.ParseInt(e.Data[dataPreviousReplicas], 10, 32)
	if err != nil {
		return "", nil, nil, fmt.Errorf("ledger entry %s: previous replicas: %w", e, err)
	}
	to, err := strconv.ParseInt(e.Data[dataReplicas], 10, 32)
	if err != nil {
		return "", nil, nil, fmt.Errorf("ledger entry %s: replicas: %w", e, err)
	}
	from, cur := int32(prev), replicasOf(s)
	var did []string
	var restore *int32
	wanted := cur // pods the StatefulSet keeps
	switch cur {
	case int32(to):
		restore, wanted = &from, from
		did = append(did, fmt.Sprintf("scale back from %d to %d replicas", cur, from))
	case from:
		did = append(did, fmt.Sprintf("replicas already back at %d", from))
	default:
		did = append(did, fmt.Sprintf("leave replicas at %d: changed since the scale-out from %d to %d", cur, from, to))
	}

	since := e.At.Truncate(time.Second)
	var del []corev1.PersistentVolumeClaim
	var older []string
	start := ordinalStart(s)
	for ord := max(from, wanted); ord < int32(to); ord++ {
		for _, t := range s.Spec.VolumeClaimTemplates {
			name := fmt.Sprintf("%s-%s-%d", t.Name, s.Name, start+ord)
			c, err := cs.CoreV1().PersistentVolumeClaims(s.Namespace).Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				continue
			case err != nil:
				return "", nil, nil, fmt.Errorf("claim %s: %w", name, err)
			case e.At.IsZero() || c.CreationTimestamp.Time.Before(since):
				older = append(older, fmt.Sprintf("%s (created %s)", name, c.CreationTimestamp.UTC().Format(time.RFC3339)))
			default:
				del = append(del, *c)
			}
		}
	}
	if len(del) > 0 {
		names := make([]string, len(del))
		for i, c := range del {
			names[i] = c.Name
		}
		did = append(did, "delete claims "+strings.Join(names, ", "))
	}
	if len(older) > 0 {
		did = append(did, "keep claims older than the scale-out "+strings.Join(older, ", "))
	}
	return fmt.Sprintf("%s (%s)", strings.Join(did, ", "), e), restore, del, nil
}

// deleteClaims deletes the claims in namespace ns, each only if it is still
// the object that was read (a UID precondition). A claim already gone or
// being deleted is fine.
func deleteClaims(ctx context.Context, cs kubernetes.Interface, ns string, claims []corev1.PersistentVolumeClaim) error {
	for _, c := range claims {
		if c.DeletionTimestamp != nil {
			continue
		}
		uid := c.UID
		err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, c.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid},
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete claim %s: %w", c.Name, err)
		}
	}
	return nil
}

// replicasOf is s's spec.replicas, which defaults to 1.
func replicasOf(s *appsv1.StatefulSet) int32 {
	if s.Spec.Replicas == nil {
		return 1
	}
	return *s.Spec.Replicas
}

// ordinalStart is the ordinal of s's first pod (spec.ordinals.start).
func ordinalStart(s *appsv1.StatefulSet) int32 {
	if s.Spec.Ordinals == nil {
		return 0
	}
	return s.Spec.Ordinals.Start
}
