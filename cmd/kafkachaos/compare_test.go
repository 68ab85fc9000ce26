package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestCompareExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, rate float64) string {
		p := filepath.Join(dir, name)
		specs := []report.Spec{{Spec: "pod-kill", SteadyState: &steadystate.Report{Summary: steadystate.Summary{RecordsPerSec: rate}}}}
		raw, err := json.Marshal(specs)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before, same, worse := write("a.json", 1000), write("b.json", 990), write("c.json", 500)
	// A report of schema 1 (a bare list), and the same run as schema 2
	// with its environment: compare reads both.
	v1 := filepath.Join("..", "..", "report", "testdata", "report-v1-partition.json")
	old, err := report.Read(v1)
	if err != nil {
		t.Fatal(err)
	}
	old.Environment = &report.Environment{RunID: "r2", Kubernetes: "v1.37.2", Nodes: []report.Node{{ID: 0, Kafka: "v4.4"}}}
	v2 := filepath.Join(dir, "v2.json")
	if err := report.Write(v2, old); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout+stderr
	}{
		{"no regression", []string{before, same}, exitOK, "no regression beyond 20%"},
		{"schema 1 and 2", []string{v1, v2}, exitOK, "B: " + v2 + "\n   Kafka v4.4, Kubernetes v1.37.2, kafkachaos unknown revision, run r2\n"},
		{"schema 1 and 2: recovery times", []string{v1, v2}, exitOK, "recovery to healthy  2.25 s"},
		{"regression", []string{before, worse}, exitFailed, "REGRESSION"},
		{"looser threshold", []string{before, worse, "--threshold", "60"}, exitOK, "no regression beyond 60%"},
		{"one argument", []string{before}, exitBadInput, "wants two reports"},
		{"missing file", []string{before, filepath.Join(dir, "none.json")}, exitBadInput, "none.json"},
		{"not JSON", []string{before, garbage}, exitBadInput, "garbage.json"},
		{"bad threshold", []string{before, same, "--threshold", "-5"}, exitBadInput, "--threshold -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"compare"}, tt.args...), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, stderr.String())
			}
			if out := stdout.String() + stderr.String(); !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
		})
	}
}
