package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafkachaos/kafkachaos/loadagent"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/metrics"
)

// How tests wait for an agent.
const (
	agentPoll    = 50 * time.Millisecond
	agentWait    = 90 * time.Second
	agentTimeout = 10 * time.Second // one HTTP request
)

// lockedBuffer is a bytes.Buffer that the agent writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var listeningOn = regexp.MustCompile(`agent listening on (\S+)`)

// testAgent is a `kafkachaos steadystate --agent` running in-process.
type testAgent struct {
	base           string // http://host:port
	stdout, stderr *lockedBuffer
	exit           chan int
	client         *http.Client
}

// startAgent runs the CLI with args in agent mode against cluster c, on a
// random loopback port, and waits until it says where it listens.
func startAgent(t *testing.T, c *kfake.Cluster, args ...string) *testAgent {
	t.Helper()
	a := &testAgent{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exit: make(chan int, 1), client: &http.Client{Timeout: agentTimeout}}
	args = append([]string{"steadystate", "--agent", "--listen", "127.0.0.1:0", "--bootstrap", strings.Join(c.ListenAddrs(), ","),
		"--partitions", "3", "--rate", "1000"}, args...)
	go func() { a.exit <- run(args, a.stdout, a.stderr) }()
	a.base = "http://" + waitFor(t, "the agent's listen address", func() (string, bool) {
		select {
		case code := <-a.exit:
			t.Fatalf("the agent exited with %d before listening\nstderr: %s", code, a.stderr.String())
		default:
		}
		m := listeningOn.FindStringSubmatch(a.stderr.String())
		if m == nil {
			return "no 'listening on' line on stderr yet", false
		}
		return m[1], true
	})
	return a
}

// waitFor polls fn until it reports done, and returns what it last
// observed; it fails the test with that observation after agentWait.
func waitFor(t *testing.T, what string, fn func() (observed string, done bool)) string {
	t.Helper()
	deadline := time.Now().Add(agentWait)
	tick := time.NewTicker(agentPoll)
	defer tick.Stop()
	for {
		observed, done := fn()
		if done {
			return observed
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: after %s, last observed: %s", what, agentWait, observed)
		}
		select {
		case <-tick.C:
		case <-t.Context().Done():
			t.Fatalf("waiting for %s: %v; last observed: %s", what, t.Context().Err(), observed)
		}
	}
}

// do sends a request to the agent and returns the status code and body.
func (a *testAgent) do(t *testing.T, method, path string) (int, []byte, *http.Response) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, a.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, body, resp
}

func (a *testAgent) status(t *testing.T) loadagent.Status {
	t.Helper()
	code, body, _ := a.do(t, http.MethodGet, "/status")
	var st loadagent.Status
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil {
		t.Fatalf("GET /status = %d %s (%v)", code, body, err)
	}
	return st
}

// waitProducing waits until /healthz answers 200 and something was acked.
func (a *testAgent) waitProducing(t *testing.T) {
	t.Helper()
	waitFor(t, "/healthz to answer 200", func() (string, bool) {
		code, body, _ := a.do(t, http.MethodGet, "/healthz")
		return fmt.Sprintf("%d %s", code, body), code == http.StatusOK
	})
	waitFor(t, "acks", func() (string, bool) {
		st := a.status(t)
		return fmt.Sprintf("%+v", st), st.Acked > 0
	})
}

// terminate sends SIGTERM, which run's signal handler turns over to the
// agent, and returns the exit code.
func (a *testAgent) terminate(t *testing.T) int {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-a.exit:
		return code
	case <-time.After(agentWait):
		t.Fatalf("the agent did not exit %s after SIGTERM\nstderr: %s", agentWait, a.stderr.String())
		return -1
	}
}

func TestAgentServesMeasurementsAfterStop(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Setenv(loadagent.IndexEnv, "2")
	a := startAgent(t, c, "--run-id", "0xc4")
	a.waitProducing(t)

	code, body, _ := a.do(t, http.MethodGet, "/raw")
	var st loadagent.Status
	if err := json.Unmarshal(body, &st); code != http.StatusConflict || err != nil || st.State != loadagent.StateRunning {
		t.Errorf("GET /raw while running = %d %s; want 409 with the running status", code, body)
	}
	if st.RunID != "00000000000000c4" || st.ProducerBase != 2 || st.Producers != 1 {
		t.Errorf("status %+v; want run 00000000000000c4 and producer IDs [2, 3) from %s=2", st, loadagent.IndexEnv)
	}
	if code, _, _ := a.do(t, http.MethodGet, "/stop"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /stop = %d, want 405", code)
	}
	for range 2 { // idempotent
		if code, body, _ := a.do(t, http.MethodPost, "/stop"); code != http.StatusAccepted {
			t.Errorf("POST /stop = %d %s, want 202", code, body)
		}
	}

	var resp *http.Response
	waitFor(t, "/raw to answer 200", func() (string, bool) {
		code, body, resp = a.do(t, http.MethodGet, "/raw")
		return fmt.Sprintf("%d %.200s", code, body), code == http.StatusOK
	})
	if !resp.Uncompressed {
		t.Errorf("/raw was not served gzipped to a client that asked for it")
	}
	var m steadystate.Measurements
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("/raw is not Measurements: %v", err)
	}
	if m.RunID != "00000000000000c4" || m.ProducerBase != 2 || m.Records.Acked == 0 || m.Records.Lost != 0 || !m.Records.Clean() {
		t.Errorf("measurements: run %s, producer base %d, records %+v; want acks and no loss", m.RunID, m.ProducerBase, m.Records)
	}
	merged, err := steadystate.Merge([]steadystate.Measurements{m}, nil, steadystate.DefaultHypothesis())
	if err != nil || merged.Records.Acked != m.Records.Acked {
		t.Errorf("Merge of the agent's measurements: %v, %+v", err, merged)
	}

	code, body, _ = a.do(t, http.MethodGet, "/report")
	var rep steadystate.Report
	if err := json.Unmarshal(body, &rep); code != http.StatusOK || err != nil || rep.Records.Acked != m.Records.Acked {
		t.Errorf("GET /report = %d (%v), acked %d; want 200 and %d acked", code, err, rep.Records.Acked, m.Records.Acked)
	}
	if st := a.status(t); st.State != loadagent.StateDone {
		t.Errorf("state %q after the run, want %q", st.State, loadagent.StateDone)
	}
	code, body, _ = a.do(t, http.MethodGet, loadagent.PathMetrics)
	if line := metricLine(metrics.RecordsAcked, rep.Records.Acked); code != http.StatusOK || !strings.Contains(string(body), line) {
		t.Errorf("GET %s = %d, want 200 with the line %q in:\n%.2000s", loadagent.PathMetrics, code, strings.TrimSpace(line), body)
	}

	if code := a.terminate(t); code != exitOK {
		t.Errorf("exit %d after SIGTERM once done, want 0\nstderr: %s", code, a.stderr.String())
	}
	if !strings.Contains(a.stdout.String(), " records sent, ") {
		t.Errorf("no summary line on stdout: %s", a.stdout.String())
	}
}

// SIGTERM while the load runs (the pod is deleted) stops it gracefully:
// the run ends with its flush and drain, and the agent exits 0.
func TestAgentSIGTERMStopsTheLoad(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := startAgent(t, c, "--run-id", "c5", "--agent-index", "1", "--producers", "2")
	a.waitProducing(t)
	if st := a.status(t); st.ProducerBase != 2 || st.Producers != 2 {
		t.Errorf("status %+v; want producer IDs [2, 4) for agent 1 of 2 producers", st)
	}
	if code := a.terminate(t); code != exitOK {
		t.Errorf("exit %d, want 0\nstderr: %s", code, a.stderr.String())
	}
	if !strings.Contains(a.stderr.String(), "terminating") || !strings.Contains(a.stdout.String(), "lost 0,") {
		t.Errorf("no graceful stop:\nstdout: %s\nstderr: %s", a.stdout.String(), a.stderr.String())
	}
}

// --max-duration bounds a run that nobody stops.
func TestAgentStopsAfterMaxDuration(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := startAgent(t, c, "--run-id", "c6", "--max-duration", "500ms")
	waitFor(t, "/raw to answer 200", func() (string, bool) {
		code, body, _ := a.do(t, http.MethodGet, "/raw")
		return fmt.Sprintf("%d %.200s", code, body), code == http.StatusOK
	})
	if !strings.Contains(a.stderr.String(), "--max-duration 500ms reached") {
		t.Errorf("stderr does not say why the load stopped: %s", a.stderr.String())
	}
	if code := a.terminate(t); code != exitOK {
		t.Errorf("exit %d, want 0\nstderr: %s", code, a.stderr.String())
	}
}

func TestAgentBadFlagsExitTwo(t *testing.T) {
	boot := []string{"--bootstrap", "127.0.0.1:1"}
	tests := []struct {
		name string
		args []string
		env  string // KAFKACHAOS_AGENT_INDEX
		want string // in stderr
	}{
		{"no run ID", []string{"--agent"}, "", "needs --run-id"},
		{"run ID not hex", []string{"--agent", "--run-id", "xyz"}, "", "not up to 16 hex digits"},
		{"run ID too long", []string{"--agent", "--run-id", "12345678901234567"}, "", "not up to 16 hex digits"},
		{"run ID zero", []string{"--agent", "--run-id", "0"}, "", "0 is not a run ID"},
		{"listen without agent", []string{"--listen", ":9"}, "", "--listen needs --agent"},
		{"index without agent", []string{"--agent-index", "1"}, "", "--agent-index needs --agent"},
		{"listen without port", []string{"--agent", "--run-id", "a", "--listen", "localhost"}, "", "--listen"},
		{"zero max duration", []string{"--agent", "--run-id", "a", "--max-duration", "0"}, "", "must be positive"},
		{"negative index", []string{"--agent", "--run-id", "a", "--agent-index", "-1"}, "", "negative"},
		{"index overflows producer IDs", []string{"--agent", "--run-id", "a", "--agent-index", "5000000000"}, "", "overflows"},
		{"bad index env", []string{"--agent", "--run-id", "a"}, "two", "is not an agent index"},
		{"bad load flags", []string{"--agent", "--run-id", "a", "--rate", "0"}, "", "rate 0"},
		{"metrics address with agent", []string{"--agent", "--run-id", "a", "--metrics-addr", "127.0.0.1:0"}, "", "serves /metrics on --listen"},
		{"a consumer group with agent", []string{"--agent", "--run-id", "a", "--group-members", "3"}, "", "not with --agent"},
		{"transactions with agent", []string{"--agent", "--run-id", "a", "--txn-producers", "3"}, "", "not with --agent"},
		{"Java clients with agent", []string{"--agent", "--run-id", "a", "--java-members", "3"}, "", "not with --agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(loadagent.IndexEnv, tt.env)
			var stdout, stderr bytes.Buffer
			code := run(append(append([]string{"steadystate"}, boot...), tt.args...), &stdout, &stderr)
			if code != exitBadInput {
				t.Errorf("exit code %d, want %d; stderr: %s", code, exitBadInput, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestParseRunID(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"00000000000000c4", 0xc4},
		{"0xC4", 0xc4},
		{"ffffffffffffffff", 1<<64 - 1},
	}
	for _, tt := range tests {
		if got, err := parseRunID(tt.in); err != nil || got != tt.want {
			t.Errorf("parseRunID(%q) = %x, %v; want %x", tt.in, got, err, tt.want)
		}
	}
}
