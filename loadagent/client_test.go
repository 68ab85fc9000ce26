package loadagent

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

func goodSpec() Spec {
	return Spec{Namespace: "kafka", Agents: 3, RunID: "00c0ffee", Bootstrap: []string{"kafka-0.kafka:9092", "kafka-1.kafka:9092"}, Rate: 300}
}

func TestStatefulSet(t *testing.T) {
	s := goodSpec()
	s.Topic, s.Producers, s.MaxDuration, s.Args = "load", 2, 20*time.Minute, []string{"--acks", "all"}
	sts := StatefulSet(s)
	if *sts.Spec.Replicas != 3 || sts.Name != "kafkachaos-agent" || sts.Namespace != "kafka" {
		t.Errorf("statefulset %s/%s replicas %d", sts.Namespace, sts.Name, *sts.Spec.Replicas)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	if c.Image != Image {
		t.Errorf("image %q", c.Image)
	}
	want := []string{"steadystate", "--agent", "--run-id", "00c0ffee", "--bootstrap", "kafka-0.kafka:9092,kafka-1.kafka:9092",
		"--rate", "300", "--topic", "load", "--producers", "2", "--max-duration", "20m0s", "--acks", "all"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args %q\nwant %q", c.Args, want)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "KAFKACHAOS_AGENT_INDEX" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.labels['apps.kubernetes.io/pod-index']" {
		t.Errorf("env %+v: the agent index must come from the pod index", c.Env)
	}
	if p := c.ReadinessProbe.HTTPGet; p == nil || p.Path != "/healthz" || p.Port.IntValue() != Port {
		t.Errorf("readiness probe %+v", c.ReadinessProbe)
	}
	if sel := sts.Spec.Selector.MatchLabels; !mapsSubset(sel, sts.Spec.Template.Labels) {
		t.Errorf("selector %v does not select the template's labels %v", sel, sts.Spec.Template.Labels)
	}
	if got := s.Pods(); !slices.Equal(got, []string{"kafkachaos-agent-0", "kafkachaos-agent-1", "kafkachaos-agent-2"}) {
		t.Errorf("pods %q", got)
	}
}

func TestDeployValidates(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Spec)
		wantErr string
	}{
		{"good", func(*Spec) {}, ""},
		{"as fast as it can", func(s *Spec) { s.Rate = steadystate.RateUnlimited }, ""},
		{"no namespace", func(s *Spec) { s.Namespace = "" }, "no namespace"},
		{"no agents", func(s *Spec) { s.Agents = 0 }, "at least 1"},
		{"no run ID", func(s *Spec) { s.RunID = "" }, "run ID"},
		{"no bootstrap", func(s *Spec) { s.Bootstrap = nil }, "bootstrap"},
		{"no rate", func(s *Spec) { s.Rate = 0 }, "want records/s > 0"},
		{"negative rate", func(s *Spec) { s.Rate = -2 }, "want records/s > 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := goodSpec()
			tt.edit(&s)
			cs := fake.NewClientset()
			err := Deploy(t.Context(), cs, s)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if err := Deploy(t.Context(), cs, s); err == nil {
					t.Error("a second Deploy over a live agent set must fail")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if l, _ := cs.AppsV1().StatefulSets(s.Namespace).List(t.Context(), metav1.ListOptions{}); len(l.Items) > 0 {
				t.Error("bad spec created a StatefulSet")
			}
		})
	}
}

func mapsSubset(sub, m map[string]string) bool {
	for k, v := range sub {
		if m[k] != v {
			return false
		}
	}
	return true
}

func TestObserve(t *testing.T) {
	s := goodSpec()
	cs := fake.NewClientset()
	seen, err := Observe(t.Context(), cs, s)
	if err != nil || !seen.Gone() || seen.AllReady() {
		t.Fatalf("before Deploy: %v, %v; want gone and not ready", seen, err)
	}
	if err := Deploy(t.Context(), cs, s); err != nil {
		t.Fatal(err)
	}
	seen, err = Observe(t.Context(), cs, s)
	if err != nil || seen.Gone() || seen.AllReady() || !seen.StatefulSet || seen.Want != 3 {
		t.Fatalf("after Deploy, no pods yet: %v, %v; want the StatefulSet, 0 of 3 Ready", seen, err)
	}
	for i, pod := range s.Pods() {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: pod, Labels: StatefulSet(s).Spec.Template.Labels}}
		if i < 2 {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if _, err := cs.CoreV1().Pods(s.Namespace).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	seen, err = Observe(t.Context(), cs, s)
	if err != nil || seen.Ready != 2 || seen.AllReady() || !strings.Contains(seen.String(), "(2 of 3 Ready)") {
		t.Errorf("2 of 3 Ready: %v, %v", seen, err)
	}
}
