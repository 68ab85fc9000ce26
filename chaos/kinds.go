package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ledgerKind is one row of the registry of ledger kinds: a kind of entry
// (Entry.Fault), the kind of object it is written on, when it is recovered
// and how. Each fault's file declares the rows of its kinds; ledgerKinds
// lists them all.
type ledgerKind struct {
	kind   string     // KindNodeDrain, ...
	object objectKind // what the entry is written on
	// order is when the entry is recovered: lower first. On one object,
	// the entries of kinds of the same order are undone together, in one
	// change; those of a lower order before.
	order int
	undo  undoFunc
}

// undoFunc undoes entry e on the object u holds. It adds to u what the one
// change that recovers the object must do (spec fields, claims to delete
// before it, the object's deletion); an action that cannot be part of that
// change (a signal, a move in Kafka) it makes through u.act, which does
// nothing in a dry run. It returns what it does, for the summary line, and
// keep when the entry is to stay.
type undoFunc func(ctx context.Context, u *undo, e Entry) (did string, keep bool, err error)

// Orders of recovery. Moving partitions back needs the brokers resumed and
// reachable, so StatefulSets come last, and a scale-in only once the
// partitions moved onto its brokers are back.
const (
	orderNodes        = 10 // uncordon
	orderPods         = 20 // resume paused JVMs
	orderNetwork      = 30 // end partitions
	orderKafka        = 40 // move partitions back
	orderStatefulSets = 50 // everything else on a StatefulSet, in one patch
)

// ledgerKinds is the registry: every ledger kind a fault writes. It is a
// function, so that nothing can change it.
func ledgerKinds() []ledgerKind {
	return []ledgerKind{
		nodeDrainLedger(),
		pauseLedger(),
		stopLedger(),
		partitionLedger(),
		reassignLedger(),
		rollingRestartLedger(),
		configChangeLedger(),
		upgradeLedger(),
		diskLossLedger(),
		scaleLedger(),
	}
}

// ledgerKindOf returns the registry's row of kind.
func ledgerKindOf(kind string) (ledgerKind, bool) {
	for _, k := range ledgerKinds() {
		if k.kind == kind {
			return k, true
		}
	}
	return ledgerKind{}, false
}

// stagesOf returns the orders of the kinds written on objects of kind o,
// lowest first, without repeats.
func stagesOf(o objectKind) []int {
	var orders []int
	for _, k := range ledgerKinds() {
		if k.object == o {
			orders = append(orders, k.order)
		}
	}
	slices.Sort(orders)
	return slices.Compact(orders)
}

// objectKinds returns the kinds of object entries are written on, in the
// order of their first stage.
func objectKinds() []objectKind {
	var out []objectKind
	for _, k := range ledgerKinds() {
		if !slices.Contains(out, k.object) {
			out = append(out, k.object)
		}
	}
	slices.SortStableFunc(out, func(a, b objectKind) int { return stagesOf(a)[0] - stagesOf(b)[0] })
	return out
}

// objectKind is a kind of Kubernetes object that faults write ledger
// entries on.
type objectKind string

// The kinds of object faults mark.
const (
	onNode          objectKind = "Node"
	onPod           objectKind = "Pod"
	onNetworkPolicy objectKind = "NetworkPolicy"
	onStatefulSet   objectKind = "StatefulSet"
)

// managedBySelector selects the objects kafkachaos created (a partition's
// NetworkPolicy): those are listed by it rather than all.
const managedBySelector = managedByLabel + "=kafkachaos"

// resource is o's API resource: "nodes", "pods", ...
func (o objectKind) resource() string {
	if o == onNetworkPolicy {
		return "networkpolicies"
	}
	return strings.ToLower(string(o)) + "s"
}

func (o objectKind) namespaced() bool { return o != onNode }

// describe names object ns/name as recovery's lines do: "node n",
// "statefulset ns/n".
func (o objectKind) describe(ns, name string) string {
	if !o.namespaced() {
		return strings.ToLower(string(o)) + " " + name
	}
	return strings.ToLower(string(o)) + " " + ns + "/" + name
}

// get reads object ns/name of kind o.
func (o objectKind) get(ctx context.Context, cs kubernetes.Interface, ns, name string) (metav1.Object, error) {
	var obj metav1.Object
	var err error
	switch o {
	case onNode:
		obj, err = cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	case onPod:
		obj, err = cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	case onNetworkPolicy:
		obj, err = cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, name, metav1.GetOptions{})
	case onStatefulSet:
		obj, err = cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	default:
		err = fmt.Errorf("no way to read a %s", o)
	}
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// listMarked lists the objects of kind o in namespace ns (all of them for
// a cluster-scoped kind) that carry a ledger.
func (o objectKind) listMarked(ctx context.Context, cs kubernetes.Interface, ns string) ([]metav1.Object, error) {
	var objs []metav1.Object
	var err error
	switch o {
	case onNode:
		var l *corev1.NodeList
		if l, err = cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
			objs = asObjects(l.Items)
		}
	case onPod:
		var l *corev1.PodList
		if l, err = cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
			objs = asObjects(l.Items)
		}
	case onNetworkPolicy:
		var l *networkingv1.NetworkPolicyList
		if l, err = cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{LabelSelector: managedBySelector}); err == nil {
			objs = asObjects(l.Items)
		}
	case onStatefulSet:
		var l *appsv1.StatefulSetList
		if l, err = cs.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{}); err == nil {
			objs = asObjects(l.Items)
		}
	default:
		err = fmt.Errorf("no way to list %s", o.resource())
	}
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(objs, func(obj metav1.Object) bool {
		_, ok := obj.GetAnnotations()[LedgerAnnotation]
		return !ok
	}), nil
}

// asObjects returns pointers to the items of a list.
func asObjects[T any, P interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

// remove deletes obj, of kind o, only if it is still the object read (a
// UID precondition). One already gone is fine.
func (o objectKind) remove(ctx context.Context, cs kubernetes.Interface, obj metav1.Object) error {
	var opts metav1.DeleteOptions
	if uid := obj.GetUID(); uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	var err error
	switch o {
	case onNetworkPolicy:
		err = cs.NetworkingV1().NetworkPolicies(obj.GetNamespace()).Delete(ctx, obj.GetName(), opts)
	default:
		err = fmt.Errorf("recovery does not delete a %s", o)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
