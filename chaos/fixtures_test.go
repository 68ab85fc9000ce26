package chaos

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func allowedNS(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{AllowLabel: "true"}}}
}

func plainNS(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func testNode(name string, unschedulable bool) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: unschedulable}}
}

// testPod is a pod of a StatefulSet: it carries PodNameLabel.
func testPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{PodNameLabel: name}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "kafka"}}}}
}

func testSTS(ns, name string, env ...corev1.EnvVar) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "kafka", Image: "apache/kafka", Env: env},
			{Name: "sidecar", Image: "busybox"},
		}}}},
	}
}

// withLedger returns obj with a ledger of es (obj is modified).
func withLedger[T metav1.Object](t *testing.T, obj T, es ...Entry) T {
	t.Helper()
	b, err := json.Marshal(es)
	if err != nil {
		t.Fatal(err)
	}
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[LedgerAnnotation] = string(b)
	obj.SetAnnotations(a)
	return obj
}

func entry(kind, runID string) Entry {
	return Entry{Fault: kind, RunID: runID, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Undo: "test"}
}

// fakeClient is the fake clientset, as a Scope holds it.
type fakeClient = *fake.Clientset

func newClient(objs ...runtime.Object) *fake.Clientset { return fake.NewClientset(objs...) }

// mutations lists the actions other than reads, as "verb resource[/sub] ns/name".
func mutations(cs *fake.Clientset) []string {
	var out []string
	for _, a := range cs.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		out = append(out, describeAction(a))
	}
	return out
}

func describeAction(a k8stesting.Action) string {
	res := a.GetResource().Resource
	if a.GetSubresource() != "" {
		res += "/" + a.GetSubresource()
	}
	name := ""
	switch a := a.(type) {
	case k8stesting.CreateAction:
		if m, ok := a.GetObject().(metav1.Object); ok {
			name = m.GetName()
		}
	case k8stesting.DeleteAction:
		name = a.GetName()
	case k8stesting.PatchAction:
		name = a.GetName()
	case k8stesting.UpdateAction:
		if m, ok := a.GetObject().(metav1.Object); ok {
			name = m.GetName()
		}
	}
	return fmt.Sprintf("%s %s %s/%s", a.GetVerb(), res, a.GetNamespace(), name)
}

// evictions lists the pods evictions were requested for, as ns/name.
func evictions(cs *fake.Clientset) []string {
	var out []string
	for _, a := range cs.Actions() {
		if c, ok := a.(k8stesting.CreateAction); ok && a.GetResource().Resource == "pods" && a.GetSubresource() == "eviction" {
			m := c.GetObject().(metav1.Object)
			out = append(out, a.GetNamespace()+"/"+m.GetName())
		}
	}
	slices.Sort(out)
	return out
}

func getNode(t *testing.T, cs *fake.Clientset, name string) *corev1.Node {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func getSTS(t *testing.T, cs *fake.Clientset, ns, name string) *appsv1.StatefulSet {
	t.Helper()
	s, err := cs.AppsV1().StatefulSets(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ledger(t *testing.T, obj metav1.Object) []Entry {
	t.Helper()
	es, err := LedgerOf(obj)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// recoverAll runs RecoverAll and checks that it returns no error and a
// line per prefix of want, in order.
func recoverAll(t *testing.T, cs fakeClient, namespaces []string, runID string, dryRun bool, want []string) {
	t.Helper()
	lines, err := RecoverAll(t.Context(), cs, Access{}, namespaces, runID, dryRun)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(want) {
		t.Fatalf("lines %q, want %d", lines, len(want))
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, want[i]) {
			t.Errorf("line %d %q, want prefix %q", i, l, want[i])
		}
	}
}

func kinds(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Fault+"@"+e.RunID)
	}
	slices.Sort(out)
	return out
}
