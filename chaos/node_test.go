package chaos

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

func drainCluster() []runtime.Object {
	return []runtime.Object{
		allowedNS("kafka"), allowedNS("other"),
		testNode("node-1", false), testNode("node-2", false),
		testPod("kafka", "kafka-0", "node-1"), testPod("kafka", "kafka-1", "node-1"),
		testPod("kafka", "kafka-2", "node-2"), testPod("other", "app-0", "node-1"),
	}
}

func TestNodeDrainInjectRecover(t *testing.T) {
	cs := newClient(drainCluster()...)
	f := &NodeDrain{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, Node: "node-1"}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := getNode(t, cs, "node-1")
	if !n.Spec.Unschedulable {
		t.Error("node-1 not cordoned")
	}
	if got := kinds(ledger(t, n)); !slices.Equal(got, []string{"node-drain@r1"}) {
		t.Errorf("ledger on node-1 %v", got)
	}
	if getNode(t, cs, "node-2").Spec.Unschedulable {
		t.Error("node-2 cordoned")
	}
	if got, want := evictions(cs), []string{"kafka/kafka-0", "kafka/kafka-1"}; !slices.Equal(got, want) {
		t.Errorf("evictions %v, want %v (only namespace kafka, only node-1)", got, want)
	}
	for _, a := range cs.Actions() {
		if c, ok := a.(k8stesting.CreateAction); ok && a.GetSubresource() == "eviction" {
			if _, ok := c.GetObject().(*policyv1.Eviction); !ok {
				t.Errorf("eviction object %T, want policy/v1 Eviction", c.GetObject())
			}
		}
	}

	for i := range 2 {
		if err := f.Recover(t.Context()); err != nil {
			t.Fatalf("Recover #%d: %v", i+1, err)
		}
		n := getNode(t, cs, "node-1")
		if n.Spec.Unschedulable || len(ledger(t, n)) != 0 {
			t.Errorf("after Recover #%d: unschedulable %t, ledger %v", i+1, n.Spec.Unschedulable, ledger(t, n))
		}
	}
}

func TestNodeDrainLeavesForeignCordon(t *testing.T) {
	tests := []struct {
		name   string
		inject bool
	}{
		{name: "recover only"},
		{name: "inject then recover", inject: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append(drainCluster(), testNode("node-3", true))
			cs := newClient(objs...)
			f := &NodeDrain{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, Node: "node-3"}
			if tt.inject {
				if err := f.Inject(t.Context()); err != nil {
					t.Fatal(err)
				}
				if es := ledger(t, getNode(t, cs, "node-3")); len(es) != 0 {
					t.Errorf("ledger written on a node someone else cordoned: %v", es)
				}
			}
			if err := f.Recover(t.Context()); err != nil {
				t.Fatal(err)
			}
			if !getNode(t, cs, "node-3").Spec.Unschedulable {
				t.Error("Recover uncordoned a node it did not cordon")
			}
			for _, m := range mutations(cs) {
				if m == "patch nodes /node-3" {
					t.Errorf("node-3 patched")
				}
			}
		})
	}
}

func TestNodeDrainPDB(t *testing.T) {
	tests := []struct {
		name        string
		refusals    int // 429s for kafka-0 before it is evicted; -1 = always
		wantBlocked []string
	}{
		{name: "no PDB", refusals: 0},
		{name: "PDB refuses twice", refusals: 2},
		{name: "PDB always refuses", refusals: -1, wantBlocked: []string{"kafka/kafka-0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(drainCluster()...)
			var mu sync.Mutex
			tries := 0
			cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				ev, ok := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
				if a.GetSubresource() != "eviction" || !ok || ev.Name != "kafka-0" {
					return false, nil, nil
				}
				mu.Lock()
				defer mu.Unlock()
				tries++
				if tt.refusals < 0 || tries <= tt.refusals {
					return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
				}
				return false, nil, nil
			})
			f := &NodeDrain{Scope: Scope{Client: cs, Namespace: "kafka"}, Node: "node-1",
				EvictTimeout: 300 * time.Millisecond, retryEvery: 5 * time.Millisecond}
			err := f.Inject(t.Context())
			if tt.wantBlocked == nil {
				if err != nil {
					t.Fatal(err)
				}
				if tries != tt.refusals+1 {
					t.Errorf("%d eviction attempts for kafka-0, want %d", tries, tt.refusals+1)
				}
				return
			}
			var de *DrainError
			if !errors.As(err, &de) {
				t.Fatalf("Inject = %v, want a *DrainError", err)
			}
			if !slices.Equal(de.Blocked, tt.wantBlocked) || !slices.Equal(de.Evicted, []string{"kafka/kafka-1"}) {
				t.Errorf("blocked %v evicted %v", de.Blocked, de.Evicted)
			}
			if !apierrors.IsTooManyRequests(err) {
				t.Errorf("%v does not wrap the 429", err)
			}
			if tries < 2 {
				t.Errorf("%d eviction attempts, want retries", tries)
			}
			if !getNode(t, cs, "node-1").Spec.Unschedulable {
				t.Error("node uncordoned after a blocked drain; Recover should do that")
			}
		})
	}
}

func TestNodeDrainStopsWhenContextEnds(t *testing.T) {
	cs := newClient(drainCluster()...)
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewTooManyRequests("disruption budget", 0)
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := &NodeDrain{Scope: Scope{Client: cs, Namespace: "kafka"}, Node: "node-1", retryEvery: time.Millisecond}
	time.AfterFunc(20*time.Millisecond, cancel)
	err := f.Inject(ctx)
	var de *DrainError
	if !errors.As(err, &de) || len(de.Blocked) != 2 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Inject = %v, want both pods blocked and context.Canceled", err)
	}
}
