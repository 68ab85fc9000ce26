// This file is a little over 400 lines: the process lifecycle (start,
// kill, restart, orphans after a crash) is one story its tests tell in order.

package localkafka

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeJava stands in for java: it "formats" storage by writing
// meta.properties and counting the formats in formats.count, and "runs a
// node" by sleeping, ignoring SIGTERM if the node's dir holds ignore-term.
const fakeJava = `#!/bin/sh
case "$*" in
*kafka.tools.StorageTool*)
	echo format >>../formats.count
	mkdir -p data && echo version=1 >data/meta.properties
	exit 0 ;;
esac
if [ -e ignore-term ]; then trap '' TERM; fi
echo "fake node $$: $*"
exec sleep 600
`

// fakeCluster returns a cluster whose "JVMs" are fakeJava, in a temporary
// directory, closed when the test ends.
func fakeCluster(t *testing.T, opts ...Option) *Cluster {
	t.Helper()
	dir := t.TempDir()
	java := filepath.Join(dir, "java")
	if err := os.WriteFile(java, []byte(fakeJava), 0o755); err != nil {
		t.Fatal(err)
	}
	libs := filepath.Join(dir, "libs")
	if err := os.MkdirAll(libs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(libs, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := New(append([]Option{WithJava(java), WithLibsDir(libs), WithDir(filepath.Join(dir, "cluster"))}, opts...)...)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close() error = %v", err)
		}
	})
	return c
}

// alive reports whether pid is a live (not reaped) process.
func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

func pidOf(t *testing.T, c *Cluster, id int32) int {
	t.Helper()
	for _, n := range c.Nodes() {
		if n.ID == id {
			return n.PID
		}
	}
	t.Fatalf("no node %d in %+v", id, c.Nodes())
	return 0
}

func readConfig(t *testing.T, c *Cluster, id int32) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Dir(), "node-"+itoa(id), "server.properties"))
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		props[k] = strings.ReplaceAll(v, `\:`, ":")
	}
	return props
}

func itoa(id int32) string { return strconv.Itoa(int(id)) }

// waitForLog polls node id's log until it holds text.
func waitForLog(t *testing.T, c *Cluster, id int32, text string) {
	t.Helper()
	const timeout, interval = 10 * time.Second, 10 * time.Millisecond
	deadline := time.Now().Add(timeout)
	for {
		logs, err := c.Logs(id)
		if err == nil && strings.Contains(logs, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d log lacks %q after %v: %q, %v", id, text, timeout, logs, err)
		}
		time.Sleep(interval)
	}
}

func TestNodeConfigs(t *testing.T) {
	tests := []struct {
		name        string
		opts        []Option
		wantIDs     []int32
		wantRoles   map[int32]string
		wantVoters  int
		wantRF      string
		wantMinISR  string
		wantBrokers int
	}{
		{
			name:        "combined",
			wantIDs:     []int32{0, 1, 2},
			wantRoles:   map[int32]string{0: "broker,controller", 1: "broker,controller", 2: "broker,controller"},
			wantVoters:  3,
			wantRF:      "3",
			wantMinISR:  "2",
			wantBrokers: 3,
		},
		{
			name:        "separate controllers",
			opts:        []Option{WithNodes(2), WithSeparateControllers(1)},
			wantIDs:     []int32{0, 1, 100},
			wantRoles:   map[int32]string{0: "broker", 1: "broker", 100: "controller"},
			wantVoters:  1,
			wantRF:      "2",
			wantMinISR:  "1",
			wantBrokers: 2,
		},
		{
			name:        "one node, overridden config",
			opts:        []Option{WithNodes(1), WithBrokerConfig("num.partitions", "7"), WithEnv("KAFKA_HEAP_OPTS", "-Xmx300m")},
			wantIDs:     []int32{0},
			wantRoles:   map[int32]string{0: "broker,controller"},
			wantVoters:  1,
			wantRF:      "1",
			wantMinISR:  "1",
			wantBrokers: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fakeCluster(t, tt.opts...)
			if err := c.Start(t.Context()); err != nil {
				t.Fatalf("Start() error = %v", err)
			}
			var ids []int32
			for _, n := range c.Nodes() {
				ids = append(ids, n.ID)
				if !alive(n.PID) {
					t.Errorf("node %d: not running (pid %d)", n.ID, n.PID)
				}
				props := readConfig(t, c, n.ID)
				checks := map[string]string{
					"node.id":                          itoa(n.ID),
					"process.roles":                    tt.wantRoles[n.ID],
					"default.replication.factor":       tt.wantRF,
					"min.insync.replicas":              tt.wantMinISR,
					"offsets.topic.replication.factor": tt.wantRF,
					"group.initial.rebalance.delay.ms": "0",
					"controller.listener.names":        "CONTROLLER",
					"log.dirs":                         filepath.Join(n.Dir, "data"),
				}
				for k, want := range checks {
					if props[k] != want {
						t.Errorf("node %d: %s = %q; want %q", n.ID, k, props[k], want)
					}
				}
				if got := strings.Count(props["controller.quorum.voters"], "@127.0.0.1:"); got != tt.wantVoters {
					t.Errorf("node %d: controller.quorum.voters = %q; want %d voters", n.ID, props["controller.quorum.voters"], tt.wantVoters)
				}
				_, advertised := props["advertised.listeners"]
				if advertised != n.IsBroker() {
					t.Errorf("node %d (%s): advertised.listeners set = %v", n.ID, n.Roles, advertised)
				}
				if n.IsBroker() && !strings.Contains(props["listeners"], "PLAINTEXT://"+n.BrokerAddr) {
					t.Errorf("node %d: listeners = %q; want the broker address %s", n.ID, props["listeners"], n.BrokerAddr)
				}
				if _, err := os.Stat(filepath.Join(n.Dir, "kafka.pid")); err != nil {
					t.Errorf("node %d: %v", n.ID, err)
				}
			}
			if !slices.Equal(ids, tt.wantIDs) {
				t.Errorf("node IDs = %v; want %v", ids, tt.wantIDs)
			}
			if got := len(c.Bootstrap()); got != tt.wantBrokers {
				t.Errorf("Bootstrap() = %v; want %d brokers", c.Bootstrap(), tt.wantBrokers)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"no brokers", []Option{WithNodes(0)}, "need at least one broker"},
		{"bad cluster ID", []Option{WithClusterID("nope")}, "WithClusterID"},
		{"bad property", []Option{WithBrokerConfig("a_.b", "x")}, "WithBrokerConfig"},
		{"missing libs", []Option{WithLibsDir(t.TempDir())}, "not a complete fetch"},
		{"missing java", []Option{WithJava("/nonexistent/java"), WithLibsDir(t.TempDir())}, "not a complete fetch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New() error = %v; want one containing %q", err, tt.want)
			}
		})
	}
}

func TestProcessLifecycle(t *testing.T) {
	c := fakeCluster(t, WithStopTimeout(300*time.Millisecond))
	ctx := t.Context()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	dir := c.Dir()
	formats := func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "formats.count"))
		return strings.Count(string(b), "format")
	}
	if got := formats(); got != 3 {
		t.Fatalf("storage formatted %d times on first start; want 3", got)
	}

	t.Run("WaitHealthy on nodes that serve no Kafka says what it saw last", func(t *testing.T) {
		// Long enough for one whole health check, not for the next: the
		// one the deadline cuts short must not hide what the first saw.
		waitCtx, cancel := context.WithTimeout(ctx, healthCheckTimeout+time.Second)
		defer cancel()
		err := c.WaitHealthy(waitCtx)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "localkafka: cluster not healthy (context deadline exceeded); last observed: unhealthy (") {
			t.Fatalf("WaitHealthy() error = %v; want not healthy after the deadline, with what it saw last", err)
		}
	})

	t.Run("Kill ends the process and WaitHealthy says so", func(t *testing.T) {
		pid := pidOf(t, c, 1)
		if err := c.Kill(ctx, 1); err != nil {
			t.Fatalf("Kill() error = %v", err)
		}
		if alive(pid) || pidOf(t, c, 1) != 0 {
			t.Fatalf("node 1 (pid %d) still running after Kill", pid)
		}
		err := c.WaitHealthy(ctx)
		if err == nil || !strings.Contains(err.Error(), "node 1 is not running") {
			t.Fatalf("WaitHealthy() error = %v; want node 1 not running", err)
		}
		if err := c.Kill(ctx, 1); err != nil {
			t.Fatalf("second Kill() error = %v; want nil", err)
		}
	})

	t.Run("Restart starts the same node again without formatting", func(t *testing.T) {
		before := readConfig(t, c, 1)
		if err := c.Restart(ctx, 1); err != nil {
			t.Fatalf("Restart() error = %v", err)
		}
		if !alive(pidOf(t, c, 1)) {
			t.Fatal("node 1 not running after Restart")
		}
		if after := readConfig(t, c, 1); after["listeners"] != before["listeners"] || after["node.id"] != "1" {
			t.Errorf("config changed across restart: %v -> %v", before, after)
		}
		if got := formats(); got != 3 {
			t.Errorf("storage formatted %d times in all; want 3 (none on restart)", got)
		}
		logs, err := c.Logs(1)
		if err != nil || strings.Count(logs, "node 1: starting") != 2 {
			t.Errorf("Logs(1) = %q, %v; want two starts", logs, err)
		}
	})

	t.Run("Stop escalates to SIGKILL after the stop timeout", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "node-2", "ignore-term"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := c.Restart(ctx, 2); err != nil { // picks up ignore-term
			t.Fatalf("Restart() error = %v", err)
		}
		pid := pidOf(t, c, 2)
		waitForLog(t, c, 2, fmt.Sprintf("fake node %d", pid)) // SIGTERM is ignored from then on
		err := c.Stop(ctx, 2)
		if err == nil || !strings.Contains(err.Error(), "node 2 did not exit in time after SIGTERM, so it was killed (stop timeout 300ms)") {
			t.Fatalf("Stop() error = %v; want the SIGKILL escalation", err)
		}
		if alive(pid) {
			t.Fatalf("node 2 (pid %d) still running after Stop", pid)
		}

		// Restart starts it again all the same, and its log says why.
		if err := c.Restart(ctx, 2); err != nil {
			t.Fatalf("Restart() error = %v", err)
		}
		pid = pidOf(t, c, 2)
		waitForLog(t, c, 2, fmt.Sprintf("fake node %d", pid))
		if err := c.Restart(ctx, 2); err != nil {
			t.Fatalf("Restart() of a node that ignores SIGTERM: error = %v; want it restarted", err)
		}
		if alive(pid) || !alive(pidOf(t, c, 2)) {
			t.Fatalf("after Restart: old pid %d alive %v, new pid %d alive %v", pid, alive(pid), pidOf(t, c, 2), alive(pidOf(t, c, 2)))
		}
		waitForLog(t, c, 2, "did not exit in time after SIGTERM")
		if err := os.Remove(filepath.Join(dir, "node-2", "ignore-term")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Stop with SIGTERM", func(t *testing.T) {
		if err := c.Restart(ctx, 2); err != nil {
			t.Fatalf("Restart() error = %v", err)
		}
		pid := pidOf(t, c, 2)
		if err := c.Stop(ctx, 2); err != nil {
			t.Fatalf("Stop() error = %v", err)
		}
		if alive(pid) {
			t.Fatalf("node 2 (pid %d) still running after Stop", pid)
		}
		if err := c.Restart(ctx, 2); err != nil {
			t.Fatalf("Restart() error = %v", err)
		}
	})

	t.Run("a node that exits by itself fails WaitHealthy with its log", func(t *testing.T) {
		pid := pidOf(t, c, 0)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := c.WaitHealthy(waitCtx)
		if err == nil || !strings.Contains(err.Error(), "node 0 exited by itself: signal: killed") || !strings.Contains(err.Error(), "fake node") {
			t.Fatalf("WaitHealthy() error = %v; want node 0 exited, with its log", err)
		}
	})

	t.Run("Close kills everything, and again is a no-op", func(t *testing.T) {
		var pids []int
		for _, n := range c.Nodes() {
			if n.PID != 0 {
				pids = append(pids, n.PID)
			}
		}
		if len(pids) != 2 {
			t.Fatalf("running nodes = %v; want 2", pids)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close() error = %v", err)
		}
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("pid %d alive after Close", pid)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatalf("second Close() error = %v", err)
		}
		if err := c.Restart(ctx, 1); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Fatalf("Restart() after Close error = %v; want closed", err)
		}
	})
}

func TestCloseRemovesOwnDir(t *testing.T) {
	c := fakeCluster(t)
	c.cfg.dir = "" // as without WithDir: a temporary directory of its own
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	dir := c.Dir()
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dir %s after Close: %v; want it removed", dir, err)
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		n    int
		want string
	}{
		{0, ""}, {1, "c\n"}, {2, "b\nc\n"}, {3, "a\nb\nc\n"}, {10, "a\nb\nc\n"},
	}
	for _, tt := range tests {
		got, err := tail(path, tt.n)
		if err != nil || got != tt.want {
			t.Errorf("tail(%d) = %q, %v; want %q", tt.n, got, err, tt.want)
		}
	}
}
