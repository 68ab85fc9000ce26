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
// resume a paused broker, and Kafka to move partitions back that a
// scale-out spread onto its brokers. Either may be nil: recovering what
// needs it then fails, and its ledger entry stays.
type Access struct {
	Exec  Exec
	Kafka Mover
}

// RecoverAll restores what faults left behind, from their ledger entries
// alone: it is how `kafkachaos recover` cleans up after a run that was
// killed. It scans Nodes (cluster-wide), and the StatefulSets, Pods and
// partitions' NetworkPolicies of namespaces (all namespaces when empty),
// for entries of run runID ("" = any run), undoes each (uncordons a node we
// cordoned, restores the env var of a config change, drops a restart entry,
// moves partitions a scale-out spread onto its brokers back (through
// access.Kafka), scales a scaled-out StatefulSet back and deletes the
// claims its added pods got, rolls an uncommitted upgrade back to the previous image, which
// is a binary downgrade, safe only while metadata.version was not raised,
// and the upgrade specs commit before they raise it; resumes a paused
// broker's JVM through access.Exec, deletes a partition's NetworkPolicy; reports
// a disk loss as not undoable), removes the entries, and returns one line per
// object it recovered. With dryRun it only lists them. Entries of
// kinds it does not know are kept. It goes on past an object it cannot
// recover and returns the errors together; a paused broker without an exec
// is such an error.
func RecoverAll(ctx context.Context, cs kubernetes.Interface, access Access, namespaces []string, runID string, dryRun bool) ([]string, error) {
	if cs == nil {
		return nil, errors.New("chaos: recover: no Kubernetes client")
	}
	match := func(e Entry) bool { return runID == "" || e.RunID == runID }
	var lines []string
	var errs []error

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		errs = append(errs, fmt.Errorf("list nodes: %w", err))
	} else {
		for _, n := range nodes.Items {
			if _, ok := n.Annotations[LedgerAnnotation]; !ok {
				continue
			}
			line, err := recoverNode(ctx, cs, n.Name, match, dryRun)
			if err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
			}
			if line != "" {
				lines = append(lines, line)
			}
		}
	}

	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("list pods in %q: %w", ns, err))
			continue
		}
		for _, p := range pods.Items {
			if _, ok := p.Annotations[LedgerAnnotation]; !ok {
				continue
			}
			line, err := resumePod(ctx, cs, access.Exec, p.Namespace, p.Name, match, dryRun)
			if err != nil {
				errs = append(errs, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err))
			}
			if line != "" {
				lines = append(lines, line)
			}
		}
	}
	for _, ns := range namespaces {
		list, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{LabelSelector: partitionSelector})
		if err != nil {
			errs = append(errs, fmt.Errorf("list networkpolicies in %q: %w", ns, err))
			continue
		}
		for _, np := range list.Items {
			line, err := deletePartition(ctx, cs, np.Namespace, np.Name, match, dryRun)
			if err != nil {
				errs = append(errs, fmt.Errorf("networkpolicy %s/%s: %w", np.Namespace, np.Name, err))
			}
			if line != "" {
				lines = append(lines, line)
			}
		}
	}
	// StatefulSets last: moving partitions back needs the brokers resumed
	// and reachable.
	for _, ns := range namespaces {
		list, err := cs.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("list statefulsets in %q: %w", ns, err))
			continue
		}
		for _, s := range list.Items {
			if _, ok := s.Annotations[LedgerAnnotation]; !ok {
				continue
			}
			line, err := moveBack(ctx, cs, access.Kafka, s.Namespace, s.Name, match, dryRun)
			if err != nil {
				errs = append(errs, fmt.Errorf("statefulset %s/%s: %w", s.Namespace, s.Name, err))
			}
			if line != "" {
				lines = append(lines, line)
			}
			line, err = recoverStatefulSet(ctx, cs, s.Namespace, s.Name, match, dryRun)
			if err != nil {
				errs = append(errs, fmt.Errorf("statefulset %s/%s: %w", s.Namespace, s.Name, err))
			}
			if line != "" {
				lines = append(lines, line)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return lines, fmt.Errorf("chaos: recover: %w", err)
	}
	return lines, nil
}

// recoverEntries is the Recover of every StatefulSet fault: it undoes the
// matching ledger entries on StatefulSet sts in t's namespace and narrates
// what it did. fault names the fault in errors.
func (t Target) recoverEntries(ctx context.Context, fault, sts string, match func(Entry) bool) error {
	if t.Client == nil {
		return fmt.Errorf("chaos: recover from %s: no Kubernetes client", fault)
	}
	line, err := recoverStatefulSet(ctx, t.Client, t.Namespace, sts, match, t.DryRun)
	if err != nil {
		return fmt.Errorf("chaos: recover from %s: %w", fault, err)
	}
	if line != "" {
		t.say("%s", line)
	}
	return nil
}

// recoverStatefulSet undoes the entries on StatefulSet ns/name that match,
// in one patch, and says what it did ("" when nothing matched). A
// StatefulSet that no longer exists has nothing to recover. The claims a
// scale-out added are deleted just before that patch, so that the entry
// stays until they are: a recovery cut short is finished by the next one.
func recoverStatefulSet(ctx context.Context, cs kubernetes.Interface, ns, name string, match func(Entry) bool, dryRun bool) (string, error) {
	var line string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		line = ""
		s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		es, err := LedgerOf(s)
		if err != nil {
			return err
		}
		var kept []Entry
		var did []string
		spec := map[string]any{}
		fields := map[string]map[string]any{} // container -> fields to patch
		field := func(c string) map[string]any {
			if fields[c] == nil {
				fields[c] = map[string]any{}
			}
			return fields[c]
		}
		var claims []corev1.PersistentVolumeClaim
		for _, e := range es {
			if !match(e) {
				kept = append(kept, e)
				continue
			}
			switch e.Fault {
			case KindRollingRestart:
				did = append(did, fmt.Sprintf("drop restart entry, nothing to revert (%s)", e))
			case KindConfigChange:
				what, el, err := undoConfigChange(s, e)
				if err != nil {
					return err
				}
				did = append(did, what)
				if el != nil {
					f := field(e.Data[dataContainer])
					env, _ := f["env"].([]any)
					f["env"] = append(env, el)
				}
			case KindUpgrade:
				what, image := undoUpgrade(s, e)
				did = append(did, what)
				if image != "" {
					field(e.Data[dataContainer])["image"] = image
				}
			case KindDiskLoss:
				what, err := undoDiskLoss(ctx, cs, ns, e, dryRun)
				if err != nil {
					return err
				}
				did = append(did, what)
			case KindReassign:
				// moveBack drops it once the partitions are back; still
				// here, they are not.
				kept = append(kept, e)
				did = append(did, fmt.Sprintf("keep: the partitions moved are not back (%s)", e))
			case KindScale:
				if r, ok := entryOf(es, KindReassign); ok && !(dryRun && match(r)) {
					kept = append(kept, e)
					did = append(did, fmt.Sprintf("keep the scale-out (%s): its brokers hold partitions moved onto them (%s)", e, r))
					continue
				}
				what, replicas, cl, err := undoScale(ctx, cs, s, e)
				if err != nil {
					return err
				}
				did = append(did, what)
				if replicas != nil {
					spec["replicas"] = *replicas
				}
				claims = append(claims, cl...)
			default:
				kept = append(kept, e)
				did = append(did, fmt.Sprintf("keep entry of unknown kind (%s)", e))
			}
		}
		if len(kept) == len(es) {
			return nil
		}
		if len(fields) > 0 {
			maps.Copy(spec, containersPatch(fields))
		}
		line = summary(fmt.Sprintf("statefulset %s/%s", ns, name), did, dryRun)
		if dryRun {
			return nil
		}
		md, err := metaPatch(s, kept)
		if err != nil {
			return err
		}
		if err := deleteClaims(ctx, cs, ns, claims); err != nil {
			return err
		}
		p := map[string]any{"metadata": md}
		if len(spec) > 0 {
			p["spec"] = spec
		}
		return patch(ctx, cs, ns, name, "statefulsets", p)
	})
	return line, err
}
