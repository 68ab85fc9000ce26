package chaos

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// KindUpgrade marks a StatefulSet whose container image we changed.
const KindUpgrade = "upgrade"

// Keys of an upgrade entry's Data (dataContainer too).
const (
	dataImage         = "image"         // the image we set
	dataPreviousImage = "previousImage" // the image before
)

// Upgrade sets the image of one container of a StatefulSet's pod template
// (apache/kafka:4.3.2 to apache/kafka:4.4.0), which rolls its pods one by
// one: a rolling upgrade of Kafka's binaries. The ledger entry keeps the
// previous image. Recover rolls back to it, a binary downgrade, which Kafka
// allows only while the finalized feature levels (metadata.version) are
// still ones the old version knows; so once the upgrade is to stay, Commit
// removes the entry without rolling back, and only then may the caller
// raise the feature levels, which cannot be undone. Recover leaves the
// image alone if someone changed it since. A StatefulSet carries one
// upgrade entry at a time.
type Upgrade struct {
	Scope
	StatefulSet string
	// Container defaults to the first container of the pod template.
	Container string
	Image     string
}

var _ Fault = (*Upgrade)(nil)

// Name implements Fault.
func (f *Upgrade) Name() string {
	return fmt.Sprintf("upgrade of statefulset %s/%s to %s", f.Namespace, f.StatefulSet, f.Image)
}

// Plan says what Inject does.
func (f *Upgrade) Plan() string {
	c := "the first container"
	if f.Container != "" {
		c = "container " + f.Container
	}
	return fmt.Sprintf("set the image of %s of statefulset %s/%s's pod template to %s, which rolls its pods one by one; the ledger entry keeps the previous image",
		c, f.Namespace, f.StatefulSet, f.Image)
}

// Inject implements Fault.
func (f *Upgrade) Inject(ctx context.Context) error { return f.inject(ctx, f.validate(), f.look) }

// validate checks the fault's own fields; it makes no call.
func (f *Upgrade) validate() error {
	if f.Image == "" {
		return fmt.Errorf("chaos: %s: no image", f.Name())
	}
	return nil
}

func (f *Upgrade) look(ctx context.Context) (string, func(context.Context) error, error) {
	c, err := templateContainer(ctx, f.Client, f.Namespace, f.StatefulSet, f.Container)
	if err != nil {
		return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return fmt.Sprintf("%s; container %s runs %s now", f.Plan(), c.Name, c.Image), f.set, nil
}

// set sets the image and writes the ledger entry, in one patch.
func (f *Upgrade) set(ctx context.Context) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := f.Client.AppsV1().StatefulSets(f.Namespace).Get(ctx, f.StatefulSet, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c, err := container(s, f.Container)
		if err != nil {
			return err
		}
		es, err := LedgerOf(s)
		if err != nil {
			return err
		}
		e, ok := entryOf(es, KindUpgrade)
		switch {
		case ok && e.Data[dataContainer] != c.Name:
			return fmt.Errorf("statefulset already carries an upgrade entry for container %s (%s); recover it first (kafkachaos recover)", e.Data[dataContainer], e)
		case c.Image == f.Image && !ok:
			f.say("%s: container %s runs %s already; nothing to change", f.Name(), c.Name, f.Image)
			return nil
		case c.Image == f.Image:
			return nil // injected before; the entry keeps the original image
		case ok:
			e.Data[dataImage] = f.Image // upgraded again: keep the original previous image
		default:
			e = Entry{Fault: KindUpgrade, RunID: f.RunID, At: time.Now().UTC(), Data: map[string]string{
				dataContainer: c.Name, dataImage: f.Image, dataPreviousImage: c.Image,
			}}
			e.Undo = fmt.Sprintf("roll container %s back to image %s (only while the feature levels are the old version's)", c.Name, c.Image)
		}
		md, err := metaPatch(s, withEntry(es, e))
		if err != nil {
			return err
		}
		return patch(ctx, f.Client, f.Namespace, f.StatefulSet, "statefulsets", map[string]any{
			"metadata": md,
			"spec":     containersPatch(map[string]map[string]any{c.Name: {"image": f.Image}}),
		})
	})
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return nil
}

// Recover implements Fault: it rolls the container back to the image the
// ledger entry recorded and removes the entry.
func (f *Upgrade) Recover(ctx context.Context) error {
	return f.recoverOn(ctx, f.Name(), Access{}, onStatefulSet, f.StatefulSet, f.matches)
}

func (f *Upgrade) matches(e Entry) bool {
	return e.Fault == KindUpgrade && (f.Container == "" || e.Data[dataContainer] == f.Container)
}

// Commit ends the fault without undoing it: the new image becomes the
// StatefulSet's desired state and the ledger entry goes, so that neither
// Recover nor kafkachaos recover rolls it back any more. Call it before a
// change that makes a rollback unsafe (raising metadata.version).
func (f *Upgrade) Commit(ctx context.Context) error {
	if f.DryRun {
		f.say("dry-run: commit %s: drop its ledger entry, keep the image", f.Name())
		return nil
	}
	committed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		committed = false
		s, es, err := statefulSetLedger(ctx, f.Client, f.Namespace, f.StatefulSet)
		if err != nil {
			return err
		}
		var kept []Entry
		for _, e := range es {
			if !f.matches(e) {
				kept = append(kept, e)
			}
		}
		if len(kept) == len(es) {
			return nil
		}
		md, err := metaPatch(s, kept)
		if err != nil {
			return err
		}
		committed = true
		return patch(ctx, f.Client, f.Namespace, f.StatefulSet, "statefulsets", map[string]any{"metadata": md})
	})
	switch {
	case err != nil:
		return fmt.Errorf("chaos: commit %s: %w", f.Name(), err)
	case committed:
		f.say("%s: committed; the ledger no longer rolls it back", f.Name())
	default:
		f.say("%s: no ledger entry to commit", f.Name())
	}
	return nil
}

// upgradeLedger is KindUpgrade's row of the registry: on a StatefulSet,
// undone in its one patch.
func upgradeLedger() ledgerKind {
	return ledgerKind{kind: KindUpgrade, object: onStatefulSet, order: orderStatefulSets, undo: undoUpgrade}
}

// undoUpgrade rolls the container back to the image e recorded. An image
// changed since, or a container gone, is left alone.
func undoUpgrade(_ context.Context, u *undo, e Entry) (string, bool, error) {
	s, err := object[*appsv1.StatefulSet](u)
	if err != nil {
		return "", false, err
	}
	name := e.Data[dataContainer]
	c, err := container(s, name)
	if err != nil {
		return fmt.Sprintf("drop entry, container %s is gone (%s)", name, e), false, nil
	}
	if c.Image != e.Data[dataImage] {
		return fmt.Sprintf("drop entry, leave container %s at image %s: it was changed since (%s)", name, c.Image, e), false, nil
	}
	u.container(name)["image"] = e.Data[dataPreviousImage]
	return fmt.Sprintf("roll container %s back to image %s (%s)", name, e.Data[dataPreviousImage], e), false, nil
}

// containersPatch is the spec part of a strategic merge patch that merges
// each field map into the container of its name (containers merge by name).
func containersPatch(fields map[string]map[string]any) map[string]any {
	return map[string]any{"template": map[string]any{"spec": map[string]any{"containers": containerList(fields)}}}
}

// containerList is the containers part of a strategic merge patch: each
// container by name, with its fields.
func containerList(fields map[string]map[string]any) []any {
	var cs []any
	for name, f := range fields {
		el := map[string]any{"name": name}
		for k, v := range f {
			el[k] = v
		}
		cs = append(cs, el)
	}
	return cs
}
