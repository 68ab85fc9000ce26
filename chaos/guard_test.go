package chaos

import (
	"bytes"
	"errors"
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

// k8sFaults builds one of each Kubernetes fault against target t.
func k8sFaults(t Target) map[string]Planner {
	return map[string]Planner{
		"pod delete":       &PodDelete{Target: t, Pod: "kafka-0"},
		"pod force delete": &PodDelete{Target: t, Pod: "kafka-0", Force: true},
		"node drain":       &NodeDrain{Target: t, Node: "node-1"},
		"rolling restart":  &RollingRestart{Target: t, StatefulSet: "kafka"},
		"config change":    &ConfigChange{Target: t, StatefulSet: "kafka", Env: "KAFKA_X", Value: "true"},
		"scale":            &Scale{Target: t, StatefulSet: "kafka", Replicas: 4},
		"strimzi roll":     &ManualRollingUpdate{Target: t, Pods: []string{"kafka-0", "kafka-1"}},
		"pause":            &Pause{Target: t, Exec: refuseExec, Pod: "kafka-0"},
		"partition":        &Partition{Target: t, Mode: PartitionIsolate, Pod: "kafka-0", KafkaPods: []string{"kafka-0", "kafka-1"}},
	}
}

func cluster(ns *corev1.Namespace) []runtime.Object {
	return []runtime.Object{
		ns, testNode("node-1", false),
		testPod("kafka", "kafka-0", "node-1"), testPod("kafka", "kafka-1", "node-1"),
		testSTS("kafka", "kafka", corev1.EnvVar{Name: "KAFKA_X", Value: "false"}),
	}
}

func TestInjectRefusesNamespaceWithoutOptIn(t *testing.T) {
	for name := range k8sFaults(Target{}) {
		t.Run(name, func(t *testing.T) {
			cs := newClient(cluster(plainNS("kafka", nil))...)
			f := k8sFaults(Target{Client: cs, Namespace: "kafka"})[name]
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
	for name := range k8sFaults(Target{}) {
		t.Run(name, func(t *testing.T) {
			cs := newClient(cluster(allowedNS("kafka"))...)
			var out bytes.Buffer
			f := k8sFaults(Target{Client: cs, Namespace: "kafka", RunID: "r1", DryRun: true, Out: &out})[name]
			if err := f.Inject(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := f.Recover(t.Context()); err != nil {
				t.Fatal(err)
			}
			if m := mutations(cs); len(m) > 0 {
				t.Errorf("mutating calls %v", m)
			}
			if !strings.Contains(out.String(), "dry-run: "+f.Plan()) {
				t.Errorf("output %q does not hold the plan %q", out.String(), f.Plan())
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
	target := Target{Client: cs, Namespace: "kafka", DryRun: true}
	for name, f := range k8sFaults(target) {
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
