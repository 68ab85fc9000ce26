package chaos

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConfigChange(t *testing.T) {
	fromCM := &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "kafka-config"}, Key: "rebalance"}}
	other := corev1.EnvVar{Name: "KAFKA_NODE_ID", Value: "1"}
	tests := []struct {
		name       string
		container  string // "" = first
		in         string // the container changed
		env        []corev1.EnvVar
		wantUndo   string
		hadPrev    string
		wantPrevFr bool
	}{
		{name: "previous value", in: "kafka", env: []corev1.EnvVar{other, {Name: "KAFKA_X", Value: "false"}},
			wantUndo: `restore env KAFKA_X="false" in container kafka`, hadPrev: "true"},
		{name: "absent", in: "kafka", env: []corev1.EnvVar{other},
			wantUndo: "remove env KAFKA_X from container kafka", hadPrev: "false"},
		{name: "no env at all", in: "kafka",
			wantUndo: "remove env KAFKA_X from container kafka", hadPrev: "false"},
		{name: "previous value from a config map", in: "kafka", env: []corev1.EnvVar{{Name: "KAFKA_X", ValueFrom: fromCM}, other},
			wantUndo: "restore env KAFKA_X (from a source) in container kafka", hadPrev: "true", wantPrevFr: true},
		{name: "named container", container: "sidecar", in: "sidecar",
			wantUndo: "remove env KAFKA_X from container sidecar", hadPrev: "false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(allowedNS("kafka"), testSTS("kafka", "kafka", tt.env...))
			orig := getSTS(t, cs, "kafka", "kafka").Spec.Template.Spec.Containers
			f := &ConfigChange{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"},
				StatefulSet: "kafka", Container: tt.container, Env: "KAFKA_X", Value: "true"}
			if err := f.Inject(t.Context()); err != nil {
				t.Fatal(err)
			}
			s := getSTS(t, cs, "kafka", "kafka")
			c, err := container(s, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if v := envVar(c, "KAFKA_X"); !isValue(v, "true") {
				t.Errorf("KAFKA_X after Inject: %+v", v)
			}
			if v := envVar(c, "KAFKA_NODE_ID"); len(tt.env) > 0 && tt.in == "kafka" && !isValue(v, "1") {
				t.Errorf("another env var was clobbered: %+v", c.Env)
			}
			es := ledger(t, s)
			if len(es) != 1 || es[0].Fault != KindConfigChange || es[0].RunID != "r1" || es[0].Undo != tt.wantUndo ||
				es[0].Data[dataHadPrevious] != tt.hadPrev || (es[0].Data[dataPreviousValueFrom] != "") != tt.wantPrevFr {
				t.Errorf("ledger %+v", es)
			}

			for i := range 2 {
				if err := f.Recover(t.Context()); err != nil {
					t.Fatalf("Recover #%d: %v", i+1, err)
				}
				s := getSTS(t, cs, "kafka", "kafka")
				if got := s.Spec.Template.Spec.Containers; !sameEnv(got, orig) {
					t.Errorf("after Recover #%d containers\n%+v\nwant\n%+v", i+1, got, orig)
				}
				if _, ok := s.Annotations[LedgerAnnotation]; ok {
					t.Errorf("ledger still there after Recover #%d", i+1)
				}
			}
		})
	}
}

// sameEnv compares the env of each container, nil and empty alike.
func sameEnv(a, b []corev1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || len(a[i].Env) != len(b[i].Env) {
			return false
		}
		if len(a[i].Env) > 0 && !reflect.DeepEqual(a[i].Env, b[i].Env) {
			return false
		}
	}
	return true
}

func TestConfigChangeEdges(t *testing.T) {
	prev := corev1.EnvVar{Name: "KAFKA_X", Value: "false"}
	tests := []struct {
		name    string
		steps   func(t *testing.T, f *ConfigChange) error
		wantX   string // KAFKA_X at the end, "" = absent
		wantErr string
	}{
		{name: "recover without an entry does nothing", wantX: "false",
			steps: func(t *testing.T, f *ConfigChange) error { return f.Recover(t.Context()) }},
		{name: "value already set: no entry, nothing to undo", wantX: "false",
			steps: func(t *testing.T, f *ConfigChange) error {
				f.Value = "false"
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				if es := ledger(t, getSTS(t, f.Client.(fakeClient), "kafka", "kafka")); len(es) != 0 {
					t.Errorf("ledger %v", es)
				}
				return f.Recover(t.Context())
			}},
		{name: "re-inject keeps the original value", wantX: "false",
			steps: func(t *testing.T, f *ConfigChange) error {
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				f.Value = "maybe"
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				return f.Recover(t.Context())
			}},
		{name: "changed since injection: left alone", wantX: "someone-else",
			steps: func(t *testing.T, f *ConfigChange) error {
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				cs := f.Client.(fakeClient)
				s := getSTS(t, cs, "kafka", "kafka")
				envVar(&s.Spec.Template.Spec.Containers[0], "KAFKA_X").Value = "someone-else"
				if _, err := cs.AppsV1().StatefulSets("kafka").Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				return f.Recover(t.Context())
			}},
		{name: "a second variable is refused", wantX: "true", wantErr: "already carries a config-change entry for KAFKA_X",
			steps: func(t *testing.T, f *ConfigChange) error {
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				g := *f
				g.Env = "KAFKA_Y"
				return g.Inject(t.Context())
			}},
		{name: "missing container", wantX: "false", wantErr: `no container "nope"`,
			steps: func(t *testing.T, f *ConfigChange) error {
				f.Container = "nope"
				return f.Inject(t.Context())
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(allowedNS("kafka"), testSTS("kafka", "kafka", prev))
			f := &ConfigChange{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"},
				StatefulSet: "kafka", Env: "KAFKA_X", Value: "true"}
			err := tt.steps(t, f)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			s := getSTS(t, cs, "kafka", "kafka")
			got := ""
			if v := envVar(&s.Spec.Template.Spec.Containers[0], "KAFKA_X"); v != nil {
				got = v.Value
			}
			if got != tt.wantX {
				t.Errorf("KAFKA_X = %q, want %q", got, tt.wantX)
			}
			if envVar(&s.Spec.Template.Spec.Containers[0], "KAFKA_Y") != nil {
				t.Error("KAFKA_Y set")
			}
		})
	}
}
