package loadagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/metrics"
)

// The protocol end to end: real Servers, each serving a real
// steadystate.Runner that produces to kfake, behind httptest, reached by
// the client's stop and collect as they reach pods through a port-forward.

const (
	runWait   = 90 * time.Second // a run against kfake to start or end
	runPoll   = 50 * time.Millisecond
	testRunID = 0xc0ffee
)

// testAgent is one agent: its runner, its server and the run's outcome.
type testAgent struct {
	srv  *Server
	http *httptest.Server
	done chan struct{} // closed once Finish was called
}

// startAgents starts one agent per pod of s, each running the load with
// its own producer IDs against c, and waits until every one produces.
func startAgents(t *testing.T, c *kfake.Cluster, s Spec) map[string]*testAgent {
	t.Helper()
	agents := map[string]*testAgent{}
	for i, pod := range s.Pods() {
		m := metrics.New()
		r, err := steadystate.New(steadystate.Config{
			Bootstrap: c.ListenAddrs(), Topic: "load", Partitions: 3, Rate: 200,
			RunID: testRunID, Producers: 1, ProducerBase: uint32(i), Observer: m,
		})
		if err != nil {
			t.Fatal(err)
		}
		a := &testAgent{srv: NewServer(r, m.Handler()), done: make(chan struct{})}
		a.http = httptest.NewServer(a.srv.Handler())
		t.Cleanup(a.http.Close)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			defer close(a.done)
			rep, err := r.Run(ctx)
			if err := a.srv.Finish(rep, err); err != nil {
				t.Errorf("agent %s: %v", pod, err)
			}
		}()
		t.Cleanup(func() { cancel(); <-a.done })
		agents[pod] = a
	}
	for pod, a := range agents {
		got := poll(t, pod+" /healthz to answer 200", func() (string, bool) {
			body, code, err := call(t.Context(), http.MethodGet, a.http.URL+PathHealthz)
			return fmt.Sprintf("%d %s %v", code, strings.TrimSpace(string(body)), err), code == http.StatusOK
		})
		t.Logf("%s: %s", pod, got)
	}
	return agents
}

// reach finds a pod's agent as the port-forward would.
func reachAgents(agents map[string]*testAgent) reach {
	return func(_ context.Context, pod string, fn func(string) error) error {
		a, ok := agents[pod]
		if !ok {
			return errors.New("no such pod " + pod)
		}
		return fn(a.http.URL)
	}
}

// poll calls fn until it reports done and returns what it last saw; it
// fails the test with that after runWait.
func poll(t *testing.T, what string, fn func() (seen string, done bool)) string {
	t.Helper()
	var seen string
	err := wait.PollUntilContextTimeout(t.Context(), runPoll, runWait, true, func(context.Context) (bool, error) {
		var done bool
		seen, done = fn()
		return done, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last seen: %s", what, err, seen)
	}
	return seen
}

func TestServerAndClient(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := goodSpec()
	agents := startAgents(t, c, s)
	r := reachAgents(agents)

	if _, err := collect(t.Context(), r, s); !errors.Is(err, ErrNotDone) || !strings.Contains(err.Error(), "kafkachaos-agent-0") {
		t.Fatalf("collect while the agents run: %v, want ErrNotDone naming the first agent", err)
	}
	for pod, a := range agents {
		if body, code, _ := call(t.Context(), http.MethodGet, a.http.URL+PathStop); code != http.StatusMethodNotAllowed {
			t.Errorf("%s: GET %s = %d %s, want 405", pod, PathStop, code, body)
		}
	}

	// The suite's phase marks reach every agent's metrics and its marks.
	if err := markPhase(t.Context(), r, s, steadystate.PhaseBaseline); err != nil {
		t.Fatal(err)
	}
	for pod, a := range agents {
		body, code, err := call(t.Context(), http.MethodGet, a.http.URL+PathMetrics)
		if line := fmt.Sprintf("\n%s{phase=%q} 1\n", metrics.CurrentPhase, steadystate.PhaseBaseline); code != http.StatusOK || err != nil || !strings.Contains(string(body), line) {
			t.Errorf("%s: GET %s = %d (%v), want the line %q", pod, PathMetrics, code, err, strings.TrimSpace(line))
		}
		if body, code, _ := call(t.Context(), http.MethodPost, a.http.URL+PathPhase+"?name=lunch"); code != http.StatusBadRequest || !strings.Contains(string(body), "lunch") {
			t.Errorf("%s: POST %s?name=lunch = %d %s, want 400 naming it", pod, PathPhase, code, body)
		}
	}

	for range 2 { // stop is idempotent
		if err := stop(t.Context(), r, s); err != nil {
			t.Fatal(err)
		}
	}
	var ms []steadystate.Measurements
	poll(t, "every agent's measurements", func() (string, bool) {
		ms, err = collect(t.Context(), r, s)
		return fmt.Sprint(err), err == nil
	})
	if len(ms) != int(s.Agents) {
		t.Fatalf("%d measurements from %d agents", len(ms), s.Agents)
	}
	for i, m := range ms {
		if m.RunID != fmt.Sprintf("%016x", testRunID) || m.ProducerBase != uint32(i) || m.Records.Acked == 0 || !m.Records.Clean() {
			t.Errorf("agent %d: run %s, producer base %d, records %+v; want index order, acks, clean", i, m.RunID, m.ProducerBase, m.Records)
		}
		if n := len(m.Marks); n == 0 || m.Marks[n-1].Phase != steadystate.PhaseBaseline {
			t.Errorf("agent %d: marks %v, want the baseline last", i, m.Marks)
		}
	}
	merged, err := steadystate.Merge(ms, nil, steadystate.DefaultHypothesis())
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, m := range ms {
		sum += m.Records.Acked
	}
	if merged.Records.Acked != sum || !merged.Records.Clean() {
		t.Errorf("merged records %+v, want %d acked, clean", merged.Records, sum)
	}

	a := agents["kafkachaos-agent-0"]
	if st := a.srv.Status(); st.State != StateDone {
		t.Errorf("state %q after the run, want %q", st.State, StateDone)
	}
	body, code, err := call(t.Context(), http.MethodGet, a.http.URL+PathReport)
	var rep steadystate.Report
	if err == nil {
		err = json.Unmarshal(body, &rep)
	}
	if code != http.StatusOK || err != nil || rep.Records.Acked != ms[0].Records.Acked {
		t.Errorf("GET %s = %d (%v), acked %d; want 200 and %d", PathReport, code, err, rep.Records.Acked, ms[0].Records.Acked)
	}
	body, code, err = call(t.Context(), http.MethodGet, a.http.URL+PathMetrics)
	if line := fmt.Sprintf("\n%s %d\n", metrics.RecordsAcked, ms[0].Records.Acked); code != http.StatusOK || err != nil || !strings.Contains(string(body), line) {
		t.Errorf("GET %s = %d (%v), want 200 with the line %q in:\n%.2000s", PathMetrics, code, err, strings.TrimSpace(line), body)
	}

	s.Agents = 4 // a pod that is not there
	if _, err := collect(t.Context(), r, s); err == nil || errors.Is(err, ErrNotDone) {
		t.Errorf("collect from a missing agent: %v, want a hard error", err)
	}
}

// A failed run is a 500 with the error in the status, and /healthz 503.
func TestServerFailedRun(t *testing.T) {
	r, err := steadystate.New(steadystate.Config{Bootstrap: []string{"127.0.0.1:1"}, Rate: 10})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(r, nil)
	h := httptest.NewServer(srv.Handler())
	defer h.Close()
	if _, code, _ := call(t.Context(), http.MethodGet, h.URL+PathHealthz); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz before the load = %d, want 503", code)
	}
	if _, code, _ := call(t.Context(), http.MethodGet, h.URL+PathMetrics); code != http.StatusNotFound {
		t.Errorf("%s of a server without metrics = %d, want 404", PathMetrics, code)
	}
	if err := srv.Finish(nil, errors.New("no brokers")); err != nil {
		t.Fatal(err)
	}
	body, code, _ := call(t.Context(), http.MethodGet, h.URL+PathRaw)
	var st Status
	if err := json.Unmarshal(body, &st); code != http.StatusInternalServerError || err != nil || st.State != StateFailed || st.Error != "no brokers" {
		t.Errorf("GET %s after a failed run = %d %s, want 500 with the error", PathRaw, code, body)
	}
	if _, code, _ := call(t.Context(), http.MethodGet, h.URL+PathHealthz); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz after a failed run = %d, want 503", code)
	}
}

// Gzip is served to clients that ask, and only to them.
func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"deflate, gzip;q=0.5", true},
		{"gzip;q=0", false},
		{"GZIP", true},
		{"br", false},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, PathRaw, nil)
		req.Header.Set("Accept-Encoding", tt.header)
		if got := acceptsGzip(req); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %t, want %t", tt.header, got, tt.want)
		}
	}
}
