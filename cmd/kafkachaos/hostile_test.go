package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostileTimeout is how long a refusal may take on a loaded machine: far
// less than any dial with retries or wait for a cluster would.
const hostileTimeout = 5 * time.Second

// TestHostileInputExitsTwo: hostile values on every command that touches a
// cluster or Kafka exit 2 at once, naming the bad input, with no request to
// the API server.
func TestHostileInputExitsTwo(t *testing.T) {
	var requests atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "the test's API server takes no requests", http.StatusForbidden)
	}))
	defer api.Close()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+api.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	noNamespace := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(noNamespace, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withHostPath := filepath.Join(dir, "sts.yaml")
	if err := os.WriteFile(withHostPath, []byte("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: k, namespace: ns}\n"+
		"spec:\n  template:\n    spec:\n      volumes:\n      - {name: data, hostPath: {path: /var/lib/kafka}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"recover: missing kubeconfig", []string{"recover", "--kubeconfig", filepath.Join(dir, "none")}, "--kubeconfig"},
		{"recover: kubeconfig is a directory", []string{"recover", "--kubeconfig", dir}, "--kubeconfig"},
		{"recover: no such context", []string{"recover", "--context", "nope"}, `context "nope"`},
		{"recover: namespace with bad characters", []string{"recover", "--namespace", "Bad_NS!"}, "--namespace"},
		{"recover: empty namespace", []string{"recover", "--namespace", ""}, "--namespace"},
		{"recover: argument", []string{"recover", "now"}, "takes no arguments"},
		{"steadystate: negative rate", []string{"steadystate", "--bootstrap", "127.0.0.1:1", "--rate", "-5"}, "rate -5"},
		{"steadystate: rate past int64", []string{"steadystate", "--bootstrap", "127.0.0.1:1", "--rate", "99999999999999999999"}, "--rate"},
		{"steadystate: negative duration", []string{"steadystate", "--bootstrap", "127.0.0.1:1", "--duration", "-1s"}, "duration -1s"},
		{"steadystate: duration past int64", []string{"steadystate", "--bootstrap", "127.0.0.1:1", "--duration", "99999999999h"}, "--duration"},
		{"steadystate: port out of range", []string{"steadystate", "--bootstrap", "127.0.0.1:99999"}, "127.0.0.1:99999"},
		{"recover: negative retry", []string{"recover", "--retry-for", "-1s"}, "--retry-for"},
		{"recover: bootstrap port out of range", []string{"recover", "--bootstrap", "127.0.0.1:99999"}, "127.0.0.1:99999"},
		{"steadystate: port not a number", []string{"steadystate", "--bootstrap", "kafka:ninety"}, "kafka:ninety"},
		{"steadystate: one bad broker of two", []string{"steadystate", "--bootstrap", "127.0.0.1:9092,127.0.0.1:0"}, "127.0.0.1:0"},
		{"steadystate: huge partitions", []string{"steadystate", "--bootstrap", "127.0.0.1:1", "--partitions", "2000000"}, "partitions 2000000"},
		{"cluster up: no nodes", []string{"cluster", "up", "--state-dir", filepath.Join(dir, "state"), "--nodes", "0"}, "--nodes 0"},
		{"cluster up: unknown Kafka line", []string{"cluster", "up", "--state-dir", filepath.Join(dir, "state"), "--kafka-version", "3.6.0"}, "known lines are 4.x and 3.7.x to 3.9.x"},
		{"cluster up: unknown layout", []string{"cluster", "up", "--state-dir", filepath.Join(dir, "state"), "--kafka", "raft-on-mars"}, "--kafka"},
		{"cluster up: ZooKeeper mode on Kafka 4", []string{"cluster", "up", "--state-dir", filepath.Join(dir, "state"), "--kafka", "zookeeper", "--kafka-version", "4.4.0"}, "Kafka 4 removed"},
		{"cluster up: missing manifest", []string{"cluster", "up", "--state-dir", filepath.Join(dir, "state"), "--manifest", filepath.Join(dir, "none.yaml")}, "--manifest"},
		{"cluster up: manifest that is not YAML", []string{"cluster", "up", "--state-dir", filepath.Join(dir, "state"), "--manifest", garbage}, "garbage.json"},
		{"cluster up: manifest and a layout", []string{"cluster", "up", "--state-dir", filepath.Join(dir, "state"), "--manifest", kubeconfig, "--kafka", "combined"}, "leave out --kafka"},
		{"cluster up: manifest without a namespace", []string{"cluster", "up", "--state-dir", filepath.Join(dir, "state"), "--manifest", noNamespace}, "no object names a namespace"},
		{"cluster up: manifest with a hostPath volume", []string{"cluster", "up", "--state-dir", filepath.Join(dir, "state"), "--manifest", withHostPath}, "hostPath volumes"},
		{"compare: missing reports", []string{"compare", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}, "a.json"},
		{"report: not JSON", []string{"report", garbage}, "garbage.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := requests.Load()
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := run(tt.args, &stdout, &stderr)
			took := time.Since(start)
			if code != exitBadInput {
				t.Errorf("exit code %d, want %d; stderr: %s", code, exitBadInput, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
			if n := requests.Load() - before; n != 0 {
				t.Errorf("%d requests reached the API server", n)
			}
			if took > hostileTimeout {
				t.Errorf("took %s to refuse", took)
			}
			if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
				t.Errorf("a refused cluster up made its state dir")
			}
		})
	}
}
