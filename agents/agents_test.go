package agents

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
		{"no namespace", func(s *Spec) { s.Namespace = "" }, "no namespace"},
		{"no agents", func(s *Spec) { s.Agents = 0 }, "at least 1"},
		{"no run ID", func(s *Spec) { s.RunID = "" }, "run ID"},
		{"no bootstrap", func(s *Spec) { s.Bootstrap = nil }, "bootstrap"},
		{"unbounded", func(s *Spec) { s.Rate = 0 }, "bounded rate"},
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

// fakeAgents serves each pod's agent endpoints from an httptest server,
// reached as Stop and Collect reach them through a port-forward.
type fakeAgents struct {
	mu      sync.Mutex
	running map[string]bool // pods whose /raw answers 409
	stopped []string
	servers map[string]*httptest.Server
}

func newFakeAgents(t *testing.T, pods []string, running ...string) *fakeAgents {
	f := &fakeAgents{running: map[string]bool{}, servers: map[string]*httptest.Server{}}
	for _, p := range running {
		f.running[p] = true
	}
	for _, pod := range pods {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /stop", func(w http.ResponseWriter, _ *http.Request) {
			f.mu.Lock()
			f.stopped = append(f.stopped, pod)
			f.mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
		})
		mux.HandleFunc("GET /raw", func(w http.ResponseWriter, _ *http.Request) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.running[pod] {
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`{"state":"running"}`))
				return
			}
			_ = json.NewEncoder(w).Encode(steadystate.Measurements{Topic: pod})
		})
		f.servers[pod] = httptest.NewServer(mux)
		t.Cleanup(f.servers[pod].Close)
	}
	return f
}

func (f *fakeAgents) reach(_ context.Context, pod string, fn func(string) error) error {
	srv, ok := f.servers[pod]
	if !ok {
		return errors.New("no such pod " + pod)
	}
	return fn(srv.URL)
}

func TestStopAndCollect(t *testing.T) {
	s := goodSpec()
	f := newFakeAgents(t, s.Pods(), "kafkachaos-agent-1")
	if err := stop(t.Context(), f.reach, s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.stopped, s.Pods()) {
		t.Errorf("stopped %q, want every agent", f.stopped)
	}
	if _, err := collect(t.Context(), f.reach, s); !errors.Is(err, ErrNotDone) || !strings.Contains(err.Error(), "kafkachaos-agent-1") {
		t.Fatalf("collect while agent 1 runs: %v, want ErrNotDone naming it", err)
	}
	f.mu.Lock()
	f.running = nil
	f.mu.Unlock()
	ms, err := collect(t.Context(), f.reach, s)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.Topic != s.Pods()[i] {
			t.Errorf("measurements %d from %q, want %q (index order)", i, m.Topic, s.Pods()[i])
		}
	}
	s.Agents = 4 // a pod that is not there
	if _, err := collect(t.Context(), f.reach, s); err == nil || errors.Is(err, ErrNotDone) {
		t.Errorf("collect from a missing agent: %v, want a hard error", err)
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
