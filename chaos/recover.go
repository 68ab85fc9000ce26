package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Access is what recovery needs beyond the Kubernetes API: pods/exec to
// resume a paused JVM (a broker's, or a Java client's), and Kafka to move partitions back that a
// scale-out spread onto its brokers. Either may be nil: recovering what
// needs it then fails, and its ledger entry stays.
type Access struct {
	Exec  Exec
	Kafka Mover
}

// RecoverAll restores what faults left behind, from their ledger entries
// alone: it is how `kafkachaos recover` cleans up after a run that was
// killed. It scans Nodes (cluster-wide), and the Pods, kafkachaos'
// NetworkPolicies and StatefulSets of namespaces (all namespaces when
// empty), for entries of run runID ("" = any run), and undoes each through
// the registry of ledger kinds (ledgerKinds), in its order: it uncordons a
// node we cordoned, resumes a paused JVM (a broker's or a Java client's) through access.Exec,
// deletes a partition's NetworkPolicy, moves partitions a scale-out spread
// onto its brokers back (through access.Kafka), drops a restart entry,
// restores the env var of a config change, rolls an uncommitted upgrade
// back to the previous image (a binary downgrade, safe only while
// metadata.version was not raised, and the upgrade specs commit before they
// raise it), reports a disk loss as not undoable, and scales a scaled-out
// StatefulSet back and deletes the claims its added pods got. It removes
// the entries and returns one line per object and stage it recovered. With
// dryRun it only lists them. Entries of kinds it does not know are kept. It
// goes on past an object it cannot recover and returns the errors together;
// a paused broker without an exec is such an error.
func RecoverAll(ctx context.Context, cs kubernetes.Interface, access Access, namespaces []string, runID string, dryRun bool) ([]string, error) {
	if cs == nil {
		return nil, errors.New("chaos: recover: no Kubernetes client")
	}
	r := recovery{cs: cs, access: access, dryRun: dryRun,
		match: func(e Entry) bool { return runID == "" || e.RunID == runID }}
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var lines []string
	var errs []error
	for _, o := range objectKinds() {
		scopes := namespaces
		if !o.namespaced() {
			scopes = []string{""}
		}
		for _, ns := range scopes {
			objs, err := o.listMarked(ctx, cs, ns)
			if err != nil {
				where := ""
				if o.namespaced() {
					where = fmt.Sprintf(" in %q", ns)
				}
				errs = append(errs, fmt.Errorf("list %s%s: %w", o.resource(), where, err))
				continue
			}
			for _, obj := range objs {
				ls, err := r.recoverObject(ctx, o, obj.GetNamespace(), obj.GetName())
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", o.describe(obj.GetNamespace(), obj.GetName()), err))
				}
				lines = append(lines, ls...)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return lines, fmt.Errorf("chaos: recover: %w", err)
	}
	return lines, nil
}

// recoverOn is the Recover of every fault with a ledger: it undoes the
// entries that match on object name of kind o (in t's namespace, unless
// cluster-scoped) and narrates what it did. fault names the fault in errors.
func (t Scope) recoverOn(ctx context.Context, fault string, access Access, o objectKind, name string, match func(Entry) bool) error {
	if t.Client == nil {
		return fmt.Errorf("chaos: recover from %s: no Kubernetes client", fault)
	}
	ns := t.Namespace
	if !o.namespaced() {
		ns = ""
	}
	r := recovery{cs: t.Client, access: access, match: match, dryRun: t.DryRun}
	lines, err := r.recoverObject(ctx, o, ns, name)
	for _, l := range lines {
		t.say("%s", l)
	}
	if err != nil {
		return fmt.Errorf("chaos: recover from %s: %w", fault, err)
	}
	return nil
}

// recovery is what recovering objects needs: which entries to undo
// (match), and what with.
type recovery struct {
	cs     kubernetes.Interface
	access Access
	match  func(Entry) bool
	dryRun bool
}

// recoverObject recovers object ns/name of kind o one stage (order) after
// the other, and goes on past a stage that fails, as a later one may still
// recover other entries (a scale entry stays while its partitions are not
// back, a config change is restored anyway). It returns a line per stage
// that recovered something.
func (r recovery) recoverObject(ctx context.Context, o objectKind, ns, name string) ([]string, error) {
	var lines []string
	var errs []error
	stages := stagesOf(o)
	for i, order := range stages {
		line, err := r.recoverStage(ctx, o, ns, name, order, i == len(stages)-1)
		if line != "" {
			lines = append(lines, line)
		}
		// The same error again (a ledger that is not JSON) says nothing new.
		if err != nil && (len(errs) == 0 || errs[len(errs)-1].Error() != err.Error()) {
			errs = append(errs, err)
		}
	}
	return lines, errors.Join(errs...)
}

// recoverStage undoes, on object ns/name of kind o, the matching entries of
// the kinds of order, in one change, and says what it did ("" when nothing
// matched). last is o's last stage, which also names the entries of kinds
// the registry does not have (they are kept). An object that no longer
// exists has nothing to recover. The change is made on the object's
// resourceVersion, and made again on a fresh read after a conflict; an
// action of an undo (u.act) is not repeated then.
func (r recovery) recoverStage(ctx context.Context, o objectKind, ns, name string, order int, last bool) (string, error) {
	var line string
	acted := map[string]bool{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		line = ""
		obj, err := o.get(ctx, r.cs, ns, name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		es, err := LedgerOf(obj)
		if err != nil {
			return err
		}
		u := &undo{recovery: r, kind: o, obj: obj, entries: es, acted: acted, spec: map[string]any{}}
		var kept []Entry
		var did []string
		for _, e := range es {
			k, known := ledgerKindOf(e.Fault)
			switch {
			case !r.match(e):
				kept = append(kept, e)
			case !known || k.object != o:
				kept = append(kept, e)
				if last {
					did = append(did, fmt.Sprintf("keep entry of unknown kind (%s)", e))
				}
			case k.order != order:
				kept = append(kept, e) // another stage's
			default:
				what, keep, err := k.undo(ctx, u, e)
				if err != nil {
					return err
				}
				did = append(did, what)
				if keep {
					kept = append(kept, e)
				}
			}
		}
		if len(kept) == len(es) {
			return nil
		}
		line = summary(o.describe(ns, name), did, r.dryRun)
		if r.dryRun {
			return nil
		}
		return u.apply(ctx, kept)
	})
	return line, err
}

// undo is one stage of one object's recovery: the object read, its
// entries, and the change that undoes those of the stage, which the undo
// functions fill in.
type undo struct {
	recovery
	kind    objectKind
	obj     metav1.Object
	entries []Entry         // every entry on obj
	acted   map[string]bool // the entries whose action ran, across attempts

	spec       map[string]any                 // spec fields to patch
	containers map[string]map[string]any      // container -> its fields to patch
	claims     []corev1.PersistentVolumeClaim // to delete before the patch
	remove     bool                           // delete the object instead
}

// object returns the object as T (*corev1.Node, *appsv1.StatefulSet, ...).
func object[T metav1.Object](u *undo) (T, error) {
	obj, ok := u.obj.(T)
	if !ok {
		return obj, fmt.Errorf("a ledger entry of this kind belongs on a %T, not on %s", obj, u.kind.describe(u.obj.GetNamespace(), u.obj.GetName()))
	}
	return obj, nil
}

// container returns the fields to patch of container name, to fill in.
func (u *undo) container(name string) map[string]any {
	if u.containers == nil {
		u.containers = map[string]map[string]any{}
	}
	if u.containers[name] == nil {
		u.containers[name] = map[string]any{}
	}
	return u.containers[name]
}

// act runs do, the action that undoes e, unless in a dry run or if it ran
// already in this recovery (before a conflict made it read the object
// again).
func (u *undo) act(ctx context.Context, e Entry, do func(ctx context.Context) error) error {
	key := e.Fault + " " + e.RunID + " " + e.At.String()
	if u.dryRun || u.acted[key] {
		return nil
	}
	if err := do(ctx); err != nil {
		return err
	}
	u.acted[key] = true
	return nil
}

// apply makes the change: it deletes the object, or deletes the claims and
// then patches the object's ledger to kept, with the spec fields, in one
// patch. An object gone meanwhile has nothing left to recover.
func (u *undo) apply(ctx context.Context, kept []Entry) error {
	if u.remove {
		return u.kind.remove(ctx, u.cs, u.obj)
	}
	md, err := metaPatch(u.obj, kept)
	if err != nil {
		return err
	}
	if err := deleteClaims(ctx, u.cs, u.obj.GetNamespace(), u.claims); err != nil {
		return err
	}
	switch {
	case len(u.containers) == 0:
	case u.kind == onPod:
		maps.Copy(u.spec, podContainersPatch(u.containers))
	default:
		maps.Copy(u.spec, containersPatch(u.containers))
	}
	p := map[string]any{"metadata": md}
	if len(u.spec) > 0 {
		p["spec"] = u.spec
	}
	err = patch(ctx, u.cs, u.obj.GetNamespace(), u.obj.GetName(), u.kind.resource(), p)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
