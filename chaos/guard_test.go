package chaos

import (
	"bytes"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestCheckNamespace(t *testing.T) {
	tests := []struct {
		name     string
		ns       string
		objs     []runtime.Object
		wantErr  bool
		notFound bool
		say      []string // in the error
	}{
		{name: "labelled", ns: "kafka", objs: []runtime.Object{allowedNS("kafka")}},
		{name: "unlabelled", ns: "kafka", objs: []runtime.Object{plainNS("kafka", nil)}, wantErr: true,
			say: []string{`namespace "kafka"`, AllowLabel, "kubectl label namespace kafka kafkachaos.io/allow-disruption=true"}},
		{name: "labelled false", ns: "kafka", objs: []runtime.Object{plainNS("kafka", map[string]string{AllowLabel: "false"})}, wantErr: true,
			say: []string{"kubectl label namespace kafka kafkachaos.io/allow-disruption=true --overwrite"}},
		{name: "another namespace is labelled", ns: "kafka", objs: []runtime.Object{allowedNS("other"), plainNS("kafka", nil)}, wantErr: true,
			say: []string{"kubectl label namespace kafka"}},
		{name: "missing", ns: "kafka", objs: []runtime.Object{allowedNS("other")}, wantErr: true, notFound: true,
			say: []string{`namespace "kafka" does not exist`}},
		{name: "empty name", ns: "", wantErr: true, say: []string{"no namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckNamespace(t.Context(), newClient(tt.objs...), tt.ns)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %t", err, tt.wantErr)
			}
			if err == nil {
				return
			}
			if !errors.Is(err, ErrNotAllowed) {
				t.Errorf("%v does not wrap ErrNotAllowed", err)
			}
			if apierrors.IsNotFound(err) != tt.notFound {
				t.Errorf("IsNotFound(%v) = %t, want %t", err, !tt.notFound, tt.notFound)
			}
			for _, s := range tt.say {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

// k8sFaults builds one of each Kubernetes fault against target t, those
// that exec with exec. In cluster(allowedNS("kafka")) each injects.
func k8sFaults(t Scope, exec Exec) map[string]Fault {
	return map[string]Fault{
		"pod delete":       &PodDelete{Scope: t, Pod: "kafka-0"},
		"pod force delete": &PodDelete{Scope: t, Pod: "kafka-0", Force: true},
		"node drain":       &NodeDrain{Scope: t, Node: "node-1"},
		"rolling restart":  &RollingRestart{Scope: t, StatefulSet: "kafka"},
		"config change":    &ConfigChange{Scope: t, StatefulSet: "kafka", Env: "KAFKA_X", Value: "true"},
		"scale":            &Scale{Scope: t, StatefulSet: "kafka", Replicas: 4},
		"strimzi roll":     &ManualRollingUpdate{Scope: t, Pods: []string{"kafka-0", "kafka-1"}},
		"pause":            &Pause{Scope: t, Exec: exec, Pod: "kafka-0"},
		"stop":             &Stop{Scope: t, Pods: []string{"kafka-0"}},
		"hard stop":        &Stop{Scope: t, Exec: exec, Pods: []string{"kafka-0", "kafka-1"}, Hard: true},
		"partition":        &Partition{Scope: t, Mode: PartitionIsolate, Pod: "kafka-0", KafkaPods: []string{"kafka-0", "kafka-1"}},
		"upgrade":          &Upgrade{Scope: t, StatefulSet: "kafka", Image: "apache/kafka:4.4.0"},
		"disk loss":        &DiskLoss{Scope: t, Exec: exec, Pod: "kafka-1", Mode: DiskLossClaim, AllowDataLoss: true},
		"disk wipe":        &DiskLoss{Scope: t, Exec: exec, Pod: "kafka-1", Mode: DiskLossWipe, AllowDataLoss: true},
		"sequence": &Sequence{Scope: t, What: "delete pod kafka-0, then wait", Steps: []Step{
			{What: "delete pod kafka-0", Fault: func(context.Context) (Fault, error) { return &PodDelete{Scope: t, Pod: "kafka-0"}, nil }},
			{What: "wait", Do: func(context.Context) error { return nil }},
		}},
	}
}

// cluster is namespace ns with node-1, StatefulSet kafka (KAFKA_X=false,
// a claim template "data") and its pods kafka-0 and kafka-1 on node-1, the
// latter mounting its claim data-kafka-1.
// TestEveryFaultIsTested finds, in the package's source, every type with
// an Inject method, and checks that k8sFaults has one of each: the tests of
// the guard and of the dry run then cover it.
func TestEveryFaultIsTested(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var injectors []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Inject" {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				injectors = append(injectors, id.Name)
			}
		}
	}
	var tested []string
	for _, f := range k8sFaults(Scope{}, nil) {
		tested = append(tested, reflect.TypeOf(f).Elem().Name())
	}
	if len(injectors) < 10 {
		t.Fatalf("found only %v: the source scan is broken", injectors)
	}
	for _, name := range injectors {
		if !slices.Contains(tested, name) {
			t.Errorf("%s has an Inject method and is not in k8sFaults: the guard and dry-run tests do not cover it", name)
		}
	}
}

func cluster(ns *corev1.Namespace) []runtime.Object {
	s := testSTS("kafka", "kafka", corev1.EnvVar{Name: "KAFKA_X", Value: "false"})
	s.Spec.VolumeClaimTemplates = diskSTS().Spec.VolumeClaimTemplates
	return []runtime.Object{
		ns, testNode("node-1", false),
		withImage(testPod("kafka", "kafka-0", "node-1"), "apache/kafka:4.4.0"), withImage(diskPod(), "apache/kafka:4.4.0"), diskClaim(), s,
	}
}

// withImage gives p's first container image.
func withImage(p *corev1.Pod, image string) *corev1.Pod {
	p.Spec.Containers[0].Image = image
	return p
}

func TestInjectRefusesNamespaceWithoutOptIn(t *testing.T) {
	for name := range k8sFaults(Scope{}, nil) {
		t.Run(name, func(t *testing.T) {
			cs := newClient(cluster(plainNS("kafka", nil))...)
			f := k8sFaults(Scope{Client: cs, Namespace: "kafka"}, refuseExec)[name]
			err := f.Inject(t.Context())
			if !errors.Is(err, ErrNotAllowed) {
				t.Errorf("Inject = %v, want ErrNotAllowed", err)
			}
			if m := mutations(cs); len(m) > 0 {
				t.Errorf("mutating calls %v", m)
			}
		})
	}
}

func TestDryRunMakesNoChange(t *testing.T) {
	for name := range k8sFaults(Scope{}, nil) {
		t.Run(name, func(t *testing.T) {
			cs := newClient(cluster(allowedNS("kafka"))...)
			var out bytes.Buffer
			f := k8sFaults(Scope{Client: cs, Namespace: "kafka", RunID: "r1", DryRun: true, Out: &out}, refuseExec)[name]
			if err := f.Inject(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := f.Recover(t.Context()); err != nil {
				t.Fatal(err)
			}
			if m := mutations(cs); len(m) > 0 {
				t.Errorf("mutating calls %v", m)
			}
			want := "dry-run: " + f.Plan()
			if _, ok := f.(*DiskLoss); ok {
				// A disk loss prints its plan with the victim's names filled in.
				want = "dry-run: write a disk-loss ledger entry on statefulset kafka/kafka, then "
			}
			if !strings.Contains(out.String(), want) {
				t.Errorf("output %q does not hold the plan %q", out.String(), want)
			}
		})
	}
}

func TestDryRunRecoverMakesNoChange(t *testing.T) {
	cc := entry(KindConfigChange, "r1")
	cc.Data = map[string]string{dataContainer: "kafka", dataEnv: "KAFKA_X", dataValue: "true", dataHadPrevious: "false"}
	cs := newClient(allowedNS("kafka"),
		withLedger(t, testNode("node-1", true), entry(KindNodeDrain, "r1")),
		withLedger(t, testSTS("kafka", "kafka", corev1.EnvVar{Name: "KAFKA_X", Value: "true"}), cc, entry(KindRollingRestart, "r1")))
	target := Scope{Client: cs, Namespace: "kafka", DryRun: true}
	for name, f := range k8sFaults(target, refuseExec) {
		if err := f.Recover(t.Context()); err != nil {
			t.Errorf("%s: Recover: %v", name, err)
		}
	}
	lines, err := RecoverAll(t.Context(), cs, Access{}, nil, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "would recover node node-1: uncordon") {
		t.Errorf("dry-run lines %q", lines)
	}
	if m := mutations(cs); len(m) > 0 {
		t.Errorf("mutating calls %v", m)
	}
}
