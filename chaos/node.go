package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

const (
	// DefaultEvictTimeout is how long NodeDrain retries evictions that a
	// PodDisruptionBudget refuses.
	DefaultEvictTimeout = 2 * time.Minute
	// evictRetryInterval is the pause between rounds of refused evictions
	// (kubectl drain waits 5s too).
	evictRetryInterval = 5 * time.Second
	// mirrorPodAnnotation marks static pods, which cannot be evicted.
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
)

// NodeDrain cordons a node and evicts the pods of Scope.Namespace on it,
// like kubectl drain limited to the opted-in namespace. Pods of other
// namespaces are left alone. Evictions go through the policy/v1 Eviction
// API, so PodDisruptionBudgets are honoured: refusals (429) are retried
// until ctx ends or EvictTimeout passes.
//
// The cordon writes a ledger entry on the Node. Recover uncordons the node
// only if that entry is there, so a node someone else cordoned stays
// cordoned.
type NodeDrain struct {
	Scope
	Node string
	// EvictTimeout bounds the retries of refused evictions; zero means
	// DefaultEvictTimeout.
	EvictTimeout time.Duration

	retryEvery time.Duration // tests shorten it; zero means evictRetryInterval
}

var _ Fault = (*NodeDrain)(nil)

// DrainError reports a drain that did not evict every pod.
type DrainError struct {
	Node    string
	Evicted []string // namespace/name of the pods evicted
	Blocked []string // namespace/name of the pods still not evicted
	// Err is the last refusal (a 429 from a PodDisruptionBudget), another
	// API error, or ctx's error.
	Err error
}

func (e *DrainError) Error() string {
	return fmt.Sprintf("chaos: drain node %s: %d pod(s) not evicted (%s), %d evicted (%s): %v",
		e.Node, len(e.Blocked), strings.Join(e.Blocked, ", "), len(e.Evicted), strings.Join(e.Evicted, ", "), e.Err)
}

func (e *DrainError) Unwrap() error { return e.Err }

// Name implements Fault.
func (f *NodeDrain) Name() string { return "drain node " + f.Node }

func (f *NodeDrain) timeout() time.Duration {
	if f.EvictTimeout > 0 {
		return f.EvictTimeout
	}
	return DefaultEvictTimeout
}

// Plan says what Inject does.
func (f *NodeDrain) Plan() string {
	return fmt.Sprintf("cordon node %s (ledger entry on the node) and evict the pods of namespace %s on it through the Eviction API, retrying PodDisruptionBudget refusals for up to %s",
		f.Node, f.Namespace, f.timeout())
}

// Inject implements Fault. If some pods are still not evicted when ctx ends
// or EvictTimeout passes, it returns a *DrainError; the node stays
// cordoned until Recover.
func (f *NodeDrain) Inject(ctx context.Context) error { return f.inject(ctx, nil, f.look) }

func (f *NodeDrain) look(ctx context.Context) (string, func(context.Context) error, error) {
	if _, err := f.Client.CoreV1().Nodes().Get(ctx, f.Node, metav1.GetOptions{}); err != nil {
		return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	pods, err := f.pods(ctx)
	if err != nil {
		return "", nil, err
	}
	drain := func(ctx context.Context) error {
		if err := f.cordon(ctx); err != nil {
			return err
		}
		return f.evict(ctx, pods)
	}
	return fmt.Sprintf("%s; pods of %s on it now: %s", f.Plan(), f.Namespace, orNone(pods)), drain, nil
}

// pods lists the evictable pods of the namespace on the node.
func (f *NodeDrain) pods(ctx context.Context) ([]string, error) {
	list, err := f.Client.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", f.Node).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("chaos: %s: list pods: %w", f.Name(), err)
	}
	var names []string
	for _, p := range list.Items {
		// The field selector is checked again: not every client (the fake
		// one) applies it.
		if p.Spec.NodeName != f.Node || p.DeletionTimestamp != nil || p.Annotations[mirrorPodAnnotation] != "" {
			continue
		}
		names = append(names, p.Name)
	}
	return names, nil
}

func (f *NodeDrain) cordon(ctx context.Context) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := f.Client.CoreV1().Nodes().Get(ctx, f.Node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		es, err := LedgerOf(n)
		if err != nil {
			return err
		}
		e, ours := entryOf(es, KindNodeDrain)
		switch {
		case !ours && n.Spec.Unschedulable:
			f.say("%s: node was already cordoned by someone else; Recover will leave it cordoned", f.Name())
			return nil
		case ours && n.Spec.Unschedulable:
			f.say("%s: node already cordoned by kafkachaos (%s)", f.Name(), e)
			return nil
		case !ours:
			e = Entry{Fault: KindNodeDrain, RunID: f.RunID, At: time.Now().UTC(), Undo: "uncordon node " + f.Node}
		}
		md, err := metaPatch(n, withEntry(es, e))
		if err != nil {
			return err
		}
		if err := patch(ctx, f.Client, "", n.Name, "nodes", map[string]any{
			"metadata": md,
			"spec":     map[string]any{"unschedulable": true},
		}); err != nil {
			return err
		}
		f.say("%s: cordoned", f.Name())
		return nil
	})
	if err != nil {
		return fmt.Errorf("chaos: %s: cordon: %w", f.Name(), err)
	}
	return nil
}

// evict evicts the pending pods, and again those a PodDisruptionBudget
// refused, every retryEvery until none is left or EvictTimeout passes. A
// *DrainError says what was evicted and what was still refused last.
func (f *NodeDrain) evict(ctx context.Context, pending []string) error {
	every := f.retryEvery
	if every <= 0 {
		every = evictRetryInterval
	}
	var evicted []string
	var last error // the last refusal
	round := 0
	err := wait.PollUntilContextTimeout(ctx, every, f.timeout(), true, func(ctx context.Context) (bool, error) {
		if round++; round > 1 {
			f.say("%s: retrying %d eviction(s) refused by a PodDisruptionBudget: %s", f.Name(), len(pending), strings.Join(pending, ", "))
		}
		var blocked []string
		for i, name := range pending {
			if ctx.Err() != nil {
				pending = append(blocked, pending[i:]...)
				return false, nil
			}
			err := f.Client.CoreV1().Pods(f.Namespace).EvictV1(ctx, &policyv1.Eviction{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.Namespace},
			})
			switch {
			case err == nil || apierrors.IsNotFound(err):
				evicted = append(evicted, f.Namespace+"/"+name)
				f.say("%s: evicted pod %s/%s", f.Name(), f.Namespace, name)
			case apierrors.IsTooManyRequests(err):
				blocked, last = append(blocked, name), err
			case ctx.Err() != nil:
				pending = append(blocked, pending[i:]...)
				return false, nil
			default:
				return false, &DrainError{Node: f.Node, Evicted: evicted, Blocked: qualify(f.Namespace, append(blocked, pending[i:]...)), Err: err}
			}
		}
		pending = blocked
		return len(pending) == 0, nil
	})
	var de *DrainError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &de):
		return de
	}
	// ctx ended or EvictTimeout passed: err is ctx's error.
	if last == nil || errors.Is(err, context.Canceled) {
		last = err
	}
	return &DrainError{Node: f.Node, Evicted: evicted, Blocked: qualify(f.Namespace, pending), Err: last}
}

// Recover implements Fault: it uncordons the node if our ledger entry is on
// it, and removes the entry.
func (f *NodeDrain) Recover(ctx context.Context) error {
	return f.recoverOn(ctx, f.Name(), Access{}, onNode, f.Node, func(e Entry) bool { return e.Fault == KindNodeDrain })
}

// nodeDrainLedger is KindNodeDrain's row of the registry: on a Node,
// recovered first.
func nodeDrainLedger() ledgerKind {
	return ledgerKind{kind: KindNodeDrain, object: onNode, order: orderNodes, undo: undoNodeDrain}
}

// undoNodeDrain uncordons the node, if it is still cordoned.
func undoNodeDrain(_ context.Context, u *undo, e Entry) (string, bool, error) {
	n, err := object[*corev1.Node](u)
	if err != nil {
		return "", false, err
	}
	if !n.Spec.Unschedulable {
		return fmt.Sprintf("drop entry, node already schedulable (%s)", e), false, nil
	}
	u.spec["unschedulable"] = false
	return fmt.Sprintf("uncordon (%s)", e), false, nil
}

func qualify(ns string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = ns + "/" + n
	}
	return out
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
