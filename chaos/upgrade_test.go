package chaos

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUpgrade(t *testing.T) {
	const to = "apache/kafka:4.4.0"
	tests := []struct {
		name      string
		steps     func(t *testing.T, f *Upgrade, cs fakeClient) error
		wantImage string // the kafka container's image at the end
		wantEnv   bool   // KAFKA_X=true still set at the end
		wantLeft  int    // ledger entries left
		wantErr   string
	}{
		{name: "inject then recover twice rolls back", wantImage: "apache/kafka",
			steps: func(t *testing.T, f *Upgrade, cs fakeClient) error {
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				s := getSTS(t, cs, "kafka", "kafka")
				es := ledger(t, s)
				if s.Spec.Template.Spec.Containers[0].Image != to || s.Spec.Template.Spec.Containers[1].Image != "busybox" ||
					len(es) != 1 || es[0].Fault != KindUpgrade || es[0].Data[dataPreviousImage] != "apache/kafka" || es[0].Data[dataImage] != to {
					t.Errorf("after Inject: containers %+v, ledger %+v", s.Spec.Template.Spec.Containers, es)
				}
				if err := f.Recover(t.Context()); err != nil {
					return err
				}
				return f.Recover(t.Context())
			}},
		{name: "re-inject keeps the first previous image", wantImage: "apache/kafka",
			steps: func(t *testing.T, f *Upgrade, cs fakeClient) error {
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				f.Image = "apache/kafka:4.5.0"
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				return f.Recover(t.Context())
			}},
		{name: "commit keeps the image and drops the entry", wantImage: to,
			steps: func(t *testing.T, f *Upgrade, cs fakeClient) error {
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				if err := f.Commit(t.Context()); err != nil {
					return err
				}
				return f.Recover(t.Context())
			}},
		{name: "an image changed since is left alone", wantImage: "apache/kafka:9.9.9",
			steps: func(t *testing.T, f *Upgrade, cs fakeClient) error {
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				s := getSTS(t, cs, "kafka", "kafka")
				s.Spec.Template.Spec.Containers[0].Image = "apache/kafka:9.9.9"
				if _, err := cs.AppsV1().StatefulSets("kafka").Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
					return err
				}
				return f.Recover(t.Context())
			}},
		{name: "already at the image: no entry", wantImage: "apache/kafka",
			steps: func(t *testing.T, f *Upgrade, cs fakeClient) error {
				f.Image = "apache/kafka"
				return f.Inject(t.Context())
			}},
		{name: "dry run changes nothing", wantImage: "apache/kafka",
			steps: func(t *testing.T, f *Upgrade, cs fakeClient) error {
				f.DryRun = true
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				if m := mutations(cs); len(m) != 0 {
					t.Errorf("dry run mutated: %v", m)
				}
				return f.Commit(t.Context())
			}},
		{name: "upgrade and config change of one container both recovered", wantImage: "apache/kafka",
			steps: func(t *testing.T, f *Upgrade, cs fakeClient) error {
				cc := &ConfigChange{Scope: f.Scope, StatefulSet: "kafka", Env: "KAFKA_X", Value: "true"}
				if err := cc.Inject(t.Context()); err != nil {
					return err
				}
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				before := len(mutations(cs))
				recoverAll(t, cs, []string{"kafka"}, "", false, []string{"recovered statefulset kafka/kafka"})
				if m := mutations(cs)[before:]; len(m) != 1 {
					t.Errorf("recovery made %d changes, want one patch: %v", len(m), m)
				}
				return nil
			}},
		{name: "config change survives the upgrade's recovery", wantImage: "apache/kafka", wantEnv: true, wantLeft: 1,
			steps: func(t *testing.T, f *Upgrade, cs fakeClient) error {
				cc := &ConfigChange{Scope: f.Scope, StatefulSet: "kafka", Env: "KAFKA_X", Value: "true"}
				if err := cc.Inject(t.Context()); err != nil {
					return err
				}
				if err := f.Inject(t.Context()); err != nil {
					return err
				}
				return f.Recover(t.Context())
			}},
		{name: "no image", wantImage: "apache/kafka", wantErr: "no image",
			steps: func(t *testing.T, f *Upgrade, cs fakeClient) error {
				f.Image = ""
				return f.Inject(t.Context())
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(allowedNS("kafka"), testSTS("kafka", "kafka"))
			f := &Upgrade{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, StatefulSet: "kafka", Image: to}
			err := tt.steps(t, f, cs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v; want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			s := getSTS(t, cs, "kafka", "kafka")
			c := s.Spec.Template.Spec.Containers
			if c[0].Image != tt.wantImage || c[1].Image != "busybox" {
				t.Errorf("images %s, %s; want %s, busybox", c[0].Image, c[1].Image, tt.wantImage)
			}
			if got := isValue(envVar(&c[0], "KAFKA_X"), "true"); got != tt.wantEnv {
				t.Errorf("KAFKA_X=true is %v; want %v (env %+v)", got, tt.wantEnv, c[0].Env)
			}
			if es := ledger(t, s); len(es) != tt.wantLeft {
				t.Errorf("ledger %+v; want %d entries", es, tt.wantLeft)
			}
		})
	}
}
