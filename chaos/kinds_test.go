package chaos

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// okExec answers every exec like the scripts do when they succeed: a PID.
func okExec(context.Context, string, string, string, []string) (string, error) { return "4242\n", nil }

// touched is an object a fault wrote to.
type touched struct {
	gvr      schema.GroupVersionResource
	ns, name string
}

// ledgersWritten reads, after the fact, every object that cs's mutating
// calls touched and is still there, and returns the kinds of the ledger
// entries on them, each with the resources it was found on.
func ledgersWritten(t *testing.T, cs fakeClient) (map[string][]string, []touched) {
	t.Helper()
	var objs []touched
	for _, a := range cs.Actions() {
		switch a.GetVerb() {
		case "create", "patch", "update":
		default:
			continue
		}
		if a.GetSubresource() != "" {
			continue // an eviction writes no ledger
		}
		o := touched{gvr: a.GetResource(), ns: a.GetNamespace()}
		switch a := a.(type) {
		case k8stesting.PatchAction:
			o.name = a.GetName()
		case k8stesting.CreateAction:
			o.name = a.GetObject().(metav1.Object).GetName()
		case k8stesting.UpdateAction:
			o.name = a.GetObject().(metav1.Object).GetName()
		}
		if !slices.Contains(objs, o) {
			objs = append(objs, o)
		}
	}
	found := map[string][]string{}
	for _, o := range objs {
		obj, err := cs.Tracker().Get(o.gvr, o.ns, o.name)
		if apierrors.IsNotFound(err) {
			continue // deleted by the fault itself
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ledger(t, accessor(t, obj)) {
			if !slices.Contains(found[e.Fault], o.gvr.Resource) {
				found[e.Fault] = append(found[e.Fault], o.gvr.Resource)
			}
		}
	}
	return found, objs
}

func accessor(t *testing.T, obj runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEveryLedgerKindHasAnUndo injects every fault of k8sFaults (which
// TestEveryFaultIsTested keeps complete), and a scale-out's Spread, each
// against a fake cluster of its own; reads the ledger entries they actually
// wrote on the objects they touched; and checks that the registry has a
// row for each kind, on the kind of object it was found on, with an undo,
// and that RecoverAll then leaves no entry behind. A row of the registry
// that no fault wrote fails too.
func TestEveryLedgerKindHasAnUndo(t *testing.T) {
	type injection struct {
		name   string
		inject func(ctx context.Context, target Scope) error
		access Access
	}
	var injections []injection
	for name := range k8sFaults(Scope{}, nil) {
		injections = append(injections, injection{name: name, inject: func(ctx context.Context, target Scope) error {
			return k8sFaults(target, okExec)[name].Inject(ctx)
		}, access: Access{Exec: okExec}})
	}
	sort.Slice(injections, func(i, j int) bool { return injections[i].name < injections[j].name })
	kafka := &fakeKafka{now: threeBrokers()}
	injections = append(injections, injection{name: "scale out and spread", inject: func(ctx context.Context, target Scope) error {
		f := &Scale{Scope: target, StatefulSet: "kafka", Replicas: 4, Kafka: kafka, Topics: []string{"t"}}
		if err := f.Inject(ctx); err != nil {
			return err
		}
		_, err := f.Spread(ctx, []int32{0, 1, 2, 3})
		return err
	}, access: Access{Kafka: kafka}})

	written := map[string]bool{}
	for _, in := range injections {
		t.Run(in.name, func(t *testing.T) {
			cs := newClient(cluster(allowedNS("kafka"))...)
			if err := in.inject(t.Context(), Scope{Client: cs, Namespace: "kafka", RunID: "r1"}); err != nil {
				t.Fatal(err)
			}
			found, objs := ledgersWritten(t, cs)
			for _, kind := range slices.Sorted(maps.Keys(found)) {
				written[kind] = true
				k, ok := ledgerKindOf(kind)
				switch {
				case !ok:
					t.Errorf("%s wrote ledger entries of kind %q, which the registry (ledgerKinds) lacks: nothing would recover them", in.name, kind)
					continue
				case k.undo == nil:
					t.Errorf("the registry's row of %q has no undo", kind)
				}
				if want := []string{k.object.resource()}; !slices.Equal(found[kind], want) {
					t.Errorf("%q entries were written on %v; the registry says on %v", kind, found[kind], want)
				}
			}
			if _, err := RecoverAll(t.Context(), cs, in.access, nil, "", false); err != nil {
				t.Fatalf("RecoverAll: %v", err)
			}
			for _, o := range objs {
				obj, err := cs.Tracker().Get(o.gvr, o.ns, o.name)
				if err != nil {
					continue // gone: nothing left on it
				}
				if es := ledger(t, accessor(t, obj)); len(es) > 0 {
					t.Errorf("after RecoverAll, %s %s/%s still carries %v", o.gvr.Resource, o.ns, o.name, kinds(es))
				}
			}
		})
	}
	for _, k := range ledgerKinds() {
		if !written[k.kind] {
			t.Errorf("the registry has a row for %q, which no fault wrote: a fault is missing from the test, or the row is stale", k.kind)
		}
	}
}

// TestLedgerKinds checks the registry's own shape.
func TestLedgerKinds(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range ledgerKinds() {
		if seen[k.kind] {
			t.Errorf("kind %q has two rows", k.kind)
		}
		seen[k.kind] = true
		if k.kind == "" || k.object == "" || k.order == 0 || k.undo == nil {
			t.Errorf("row %+v lacks a field", k)
		}
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{name: "objects in order of recovery", got: objectKinds(), want: []objectKind{onNode, onPod, onNetworkPolicy, onStatefulSet}},
		{name: "a StatefulSet's partitions move back before its patch", got: stagesOf(onStatefulSet), want: []int{orderKafka, orderStatefulSets}},
		{name: "a node in one stage", got: stagesOf(onNode), want: []int{orderNodes}},
		{name: "resources", got: []string{onNode.resource(), onNetworkPolicy.resource()}, want: []string{"nodes", "networkpolicies"}},
		{name: "names", got: []string{onNode.describe("", "n"), onStatefulSet.describe("kafka", "s")}, want: []string{"node n", "statefulset kafka/s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !equalAny(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func equalAny(a, b any) bool {
	switch a := a.(type) {
	case []objectKind:
		return slices.Equal(a, b.([]objectKind))
	case []int:
		return slices.Equal(a, b.([]int))
	case []string:
		return slices.Equal(a, b.([]string))
	}
	return false
}

// An undo's action runs once, though a conflict makes the recovery read
// the object again; a failed one is tried again by the next recovery.
func TestRecoverActsOnceThroughConflicts(t *testing.T) {
	tests := []struct {
		name      string
		conflicts int   // patches of the pod answered with a conflict
		execErr   error // what the exec answers
		wantCONT  int
		wantErr   bool
		wantLeft  int // entries left on the pod
	}{
		{name: "no conflict", wantCONT: 1},
		{name: "two conflicts", conflicts: 2, wantCONT: 1},
		{name: "exec fails", execErr: errors.New("exit 3"), wantCONT: 1, wantErr: true, wantLeft: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := entry(KindPause, "r1")
			e.Data = map[string]string{"container": "kafka"}
			cs := newClient(allowedNS("kafka"), withLedger(t, brokerPod("kafka-0"), e))
			left := tt.conflicts
			cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if left == 0 {
					return false, nil, nil
				}
				left--
				return true, nil, apierrors.NewConflict(a.GetResource().GroupResource(), "kafka-0", errors.New("changed"))
			})
			var calls []execCall
			_, err := RecoverAll(t.Context(), cs, Access{Exec: recordingExec(cs, &calls, tt.execErr)}, nil, "", false)
			if (err != nil) != tt.wantErr {
				t.Fatalf("RecoverAll error %v, want one: %t", err, tt.wantErr)
			}
			if len(calls) != tt.wantCONT {
				t.Errorf("exec calls %+v, want %d SIGCONT", calls, tt.wantCONT)
			}
			p := accessor(t, mustGet(t, cs, "pods", "kafka", "kafka-0"))
			if got := len(ledger(t, p)); got != tt.wantLeft {
				t.Errorf("%d entries left, want %d", got, tt.wantLeft)
			}
		})
	}
}

func mustGet(t *testing.T, cs fakeClient, resource, ns, name string) runtime.Object {
	t.Helper()
	obj, err := cs.Tracker().Get(schema.GroupVersionResource{Version: "v1", Resource: resource}, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}
