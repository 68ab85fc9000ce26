package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// KindDiskLoss is the ledger kind of a disk loss, on the victim's
// StatefulSet. It records what was lost; nothing can be undone.
const KindDiskLoss = "disk-loss"

// ErrDataLossNotAllowed is wrapped by the refusal of a fault that destroys
// data when the run has not opted in to data loss.
var ErrDataLossNotAllowed = errors.New("chaos: data loss not allowed")

// DiskLossMode is how a disk is lost.
type DiskLossMode string

// The ways a disk is lost.
const (
	// DiskLossClaim deletes the claim and the pod together: the
	// StatefulSet recreates both, and the pod comes back on a new, empty
	// volume (a PVC deleted by mistake, a node's local disk gone).
	DiskLossClaim DiskLossMode = "claim"
	// DiskLossWipe empties the volume in place and restarts the container:
	// the same pod, claim and volume, with nothing on it (a replaced disk).
	DiskLossWipe DiskLossMode = "wipe"
)

// Data keys of a disk-loss entry.
const (
	dataClaim  = "claim"
	dataPV     = "pv"
	dataPodUID = "podUID"
)

// DiskLoss takes a broker's persistent volume away: the broker comes back
// with the same ID and an empty data dir. It cannot be undone, so it runs
// only when the namespace opts in to disruption and AllowDataLoss is set;
// otherwise Inject refuses before it touches anything. Its ledger entry,
// on the pod's StatefulSet, says what was lost; Recover removes it and
// restores nothing, except that a claim left terminating by an interrupted
// Inject has its pod deleted, so that the StatefulSet recreates both.
type DiskLoss struct {
	Scope
	// Exec reaches the container (NewExec); the wipe mode needs it.
	Exec Exec
	Pod  string
	// Volume is the pod's PVC-backed volume to lose; empty means its only
	// one.
	Volume string
	// Container is the container whose mount of the volume a wipe empties;
	// empty means the first that mounts it whole.
	Container string
	Mode      DiskLossMode
	// AllowDataLoss is the run's opt-in to destructive faults.
	AllowDataLoss bool

	statefulSet string // the pod's owner, once Inject found it
}

var _ Fault = (*DiskLoss)(nil)

// Name implements Fault.
func (f *DiskLoss) Name() string {
	what := "delete the claim and pod"
	if f.Mode == DiskLossWipe {
		what = "wipe the volume in place and restart the container"
	}
	return fmt.Sprintf("disk loss of pod %s/%s (%s)", f.Namespace, f.Pod, what)
}

// victim is what a disk loss hits: the pod's StatefulSet, claim, volume,
// and (for a wipe) the container and the path it mounts the volume at.
type victim struct {
	statefulSet, claim, pv string
	podUID                 types.UID
	container, mountPath   string
}

// Plan says what Inject does.
func (f *DiskLoss) Plan() string {
	return f.plan(victim{statefulSet: "its StatefulSet", claim: "its claim", container: "its container", mountPath: "the mount path"})
}

func (f *DiskLoss) plan(v victim) string {
	entry := fmt.Sprintf("write a %s ledger entry on statefulset %s/%s", KindDiskLoss, f.Namespace, v.statefulSet)
	if f.Mode == DiskLossWipe {
		return fmt.Sprintf("%s, then in container %s of pod %s: SIGSTOP the Kafka JVM, delete everything under %s (claim %s), SIGKILL the JVM; the container restarts on the emptied volume. Not undoable",
			entry, v.container, f.Pod, v.mountPath, v.claim)
	}
	return fmt.Sprintf("%s, then delete claim %s and force-delete pod %s (grace period 0: on a real node the old process may outlive its pod object for a moment); the StatefulSet recreates both, on a new empty volume. Not undoable",
		entry, v.claim, f.Pod)
}

// Inject implements Fault.
func (f *DiskLoss) Inject(ctx context.Context) error { return f.inject(ctx, nil, f.look) }

func (f *DiskLoss) look(ctx context.Context) (string, func(context.Context) error, error) {
	if !f.AllowDataLoss {
		return "", nil, fmt.Errorf("%w: %s destroys a persistent volume's data and cannot be undone; opt in with target.allowDataLoss: true in the config, or -kafkachaos.allow-data-loss",
			ErrDataLossNotAllowed, f.Name())
	}
	if f.Mode != DiskLossClaim && f.Mode != DiskLossWipe {
		return "", nil, fmt.Errorf("chaos: %s: mode %q: want %q or %q", f.Name(), f.Mode, DiskLossClaim, DiskLossWipe)
	}
	if f.Mode == DiskLossWipe && f.Exec == nil {
		return "", nil, fmt.Errorf("chaos: %s: wiping in place needs pods/exec, and no exec was given", f.Name())
	}
	v, err := f.find(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return f.plan(v), func(ctx context.Context) error { return f.lose(ctx, v) }, nil
}

// lose writes the ledger entry on v's StatefulSet, then destroys the data.
func (f *DiskLoss) lose(ctx context.Context, v victim) error {
	e := Entry{Fault: KindDiskLoss, RunID: f.RunID, At: time.Now().UTC(),
		Undo: "none: the data of claim " + v.claim + " is gone; Kafka must re-replicate it from the other replicas",
		Data: map[string]string{dataPod: f.Pod, dataPodUID: string(v.podUID), dataClaim: v.claim, dataPV: v.pv, dataMode: string(f.Mode)}}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, es, err := statefulSetLedger(ctx, f.Client, f.Namespace, v.statefulSet)
		if err != nil {
			return err
		}
		if old, ok := entryOf(es, KindDiskLoss); ok {
			return fmt.Errorf("statefulset %s already carries a disk-loss entry (%s); recover it first (kafkachaos recover)", v.statefulSet, old)
		}
		md, err := metaPatch(s, withEntry(es, e))
		if err != nil {
			return err
		}
		return patch(ctx, f.Client, f.Namespace, v.statefulSet, "statefulsets", map[string]any{"metadata": md})
	})
	if err != nil {
		return fmt.Errorf("chaos: %s: ledger: %w", f.Name(), err)
	}
	f.statefulSet = v.statefulSet
	if f.Mode == DiskLossWipe {
		pids, err := f.Exec(ctx, f.Namespace, f.Pod, v.container, []string{"sh", "-c", wipeVolume, "disk-loss", v.mountPath})
		if err != nil {
			return fmt.Errorf("chaos: %s: %w", f.Name(), err)
		}
		f.say("%s: emptied %s (claim %s, volume %s) and killed JVM %s", f.Name(), v.mountPath, v.claim, v.pv, strings.TrimSpace(pids))
		return nil
	}
	if err := deleteClaimAndPod(ctx, f.Client, f.Namespace, v.claim, f.Pod, v.podUID); err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	f.say("%s: deleted claim %s (volume %s) and pod %s", f.Name(), v.claim, v.pv, f.Pod)
	return nil
}

// deleteClaimAndPod deletes the claim, which stays Terminating while the
// pod uses it, then the pod with grace period 0 (only the pod of uid, when
// given); once the pod is gone the claim goes, and the StatefulSet
// controller creates neither again until it has.
func deleteClaimAndPod(ctx context.Context, cs kubernetes.Interface, ns, claim, pod string, uid types.UID) error {
	err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete claim %s: %w", claim, err)
	}
	zero := int64(0)
	opts := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err = cs.CoreV1().Pods(ns).Delete(ctx, pod, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s: %w", pod, err)
	}
	return nil
}

// find reads the pod: its owning StatefulSet, the claim of the volume to
// lose and its PV, and the container that mounts it, and where.
func (f *DiskLoss) find(ctx context.Context) (victim, error) {
	pod, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, f.Pod, metav1.GetOptions{})
	if err != nil {
		return victim{}, err
	}
	v := victim{podUID: pod.UID}
	for _, o := range pod.OwnerReferences {
		if o.Kind == "StatefulSet" {
			v.statefulSet = o.Name
		}
	}
	if v.statefulSet == "" {
		return victim{}, errors.New("no StatefulSet owns the pod: nothing would recreate it with the same identity")
	}
	var names []string
	var vol *corev1.Volume
	for i, pv := range pod.Spec.Volumes {
		if pv.PersistentVolumeClaim == nil {
			continue
		}
		names = append(names, pv.Name)
		if f.Volume == "" || pv.Name == f.Volume {
			vol = &pod.Spec.Volumes[i]
		}
	}
	switch {
	case len(names) == 0:
		return victim{}, errors.New("the pod has no PersistentVolumeClaim volume")
	case f.Volume == "" && len(names) > 1:
		return victim{}, fmt.Errorf("the pod has several PVC volumes %v: name the one to lose", names)
	case vol == nil:
		return victim{}, fmt.Errorf("the pod has no PVC volume %q (it has %v)", f.Volume, names)
	}
	v.claim = vol.PersistentVolumeClaim.ClaimName
	c, err := f.Client.CoreV1().PersistentVolumeClaims(f.Namespace).Get(ctx, v.claim, metav1.GetOptions{})
	if err != nil {
		return victim{}, fmt.Errorf("claim %s: %w", v.claim, err)
	}
	v.pv = c.Spec.VolumeName
	if f.Mode == DiskLossClaim {
		// Only a claim of the StatefulSet's templates comes back.
		s, err := f.Client.AppsV1().StatefulSets(f.Namespace).Get(ctx, v.statefulSet, metav1.GetOptions{})
		if err != nil {
			return victim{}, fmt.Errorf("statefulset %s: %w", v.statefulSet, err)
		}
		if !slices.ContainsFunc(s.Spec.VolumeClaimTemplates, func(t corev1.PersistentVolumeClaim) bool { return t.Name+"-"+f.Pod == v.claim }) {
			return victim{}, fmt.Errorf("claim %s is not one of statefulset %s's volumeClaimTemplates: deleted, it would not come back", v.claim, v.statefulSet)
		}
	}
	for _, ct := range pod.Spec.Containers {
		i := slices.IndexFunc(ct.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == vol.Name && m.SubPath == "" })
		if i >= 0 && (f.Container == "" || f.Container == ct.Name) {
			v.container, v.mountPath = ct.Name, ct.VolumeMounts[i].MountPath
			break
		}
	}
	if f.Mode == DiskLossWipe && v.container == "" {
		return victim{}, fmt.Errorf("no container %s mounts volume %s whole: nothing to wipe it from", cmp.Or(f.Container, "of the pod"), vol.Name)
	}
	return v, nil
}

// Recover implements Fault: it removes the entry and restores nothing.
func (f *DiskLoss) Recover(ctx context.Context) error {
	if f.statefulSet == "" {
		return nil // never injected
	}
	return f.recoverOn(ctx, f.Name(), Access{}, onStatefulSet, f.statefulSet, func(e Entry) bool {
		return e.Fault == KindDiskLoss && e.Data[dataPod] == f.Pod
	})
}

// diskLossLedger is KindDiskLoss's row of the registry: on the victim's
// StatefulSet, undone in its one patch.
func diskLossLedger() ledgerKind {
	return ledgerKind{kind: KindDiskLoss, object: onStatefulSet, order: orderStatefulSets, undo: undoDiskLoss}
}

// undoDiskLoss is the recovery of a disk-loss entry: nothing to undo,
// except a claim that an interrupted Inject left terminating under a live
// pod; that pod is deleted (not in a dry run), so both are recreated.
func undoDiskLoss(ctx context.Context, u *undo, e Entry) (string, bool, error) {
	what := fmt.Sprintf("drop the disk-loss entry of pod %s (%s): not undoable, the data of claim %s (volume %s) is gone",
		e.Data[dataPod], e.Data[dataMode], e.Data[dataClaim], e.Data[dataPV])
	if e.Data[dataMode] != string(DiskLossClaim) {
		return what, false, nil
	}
	ns := u.obj.GetNamespace()
	c, err := u.cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, e.Data[dataClaim], metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return what, false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("claim %s: %w", e.Data[dataClaim], err)
	}
	if c.DeletionTimestamp == nil || c.Spec.VolumeName != e.Data[dataPV] {
		return what, false, nil // a new claim, or the old one in use again
	}
	what += "; delete pod " + e.Data[dataPod] + ", which holds the terminating claim, to finish the loss"
	err = u.act(ctx, e, func(ctx context.Context) error {
		// Only the pod the fault hit: its replacement may already run.
		err := deleteClaimAndPod(ctx, u.cs, ns, e.Data[dataClaim], e.Data[dataPod], types.UID(e.Data[dataPodUID]))
		if apierrors.IsConflict(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return "", false, err
	}
	return what, false, nil
}
