package report

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestVerdict(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"passed", Spec{Passed: true}, VerdictPass},
		{"failed", Spec{Passed: false}, VerdictFail},
		{"negative spec whose checks failed", Spec{Passed: true, ExpectFailures: true, Checks: []Check{{Name: CheckAudit, Problems: []string{"no PDB"}}}}, VerdictCaught},
		{"negative spec that failed", Spec{Passed: false, ExpectFailures: true}, VerdictFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.spec.Verdict(); got != tt.want {
				t.Errorf("verdict %s, want %s", got, tt.want)
			}
		})
	}
}

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	s := spec("pod-kill", 1000, 100, time.Second, Reached(10*time.Second), Never())
	s.Add(CheckRecords, "3 lost")
	env := &Environment{RunID: "r1", Kubernetes: "v1.33.1", Flavor: "statefulset",
		Nodes: []Node{{ID: 0, Pod: "kafka-0", Image: "apache/kafka:4.4.0", Kafka: "v4.4"}},
		Load:  Load{Rate: 1000, Partitions: 6, RecordSize: 100, Producers: 1, Acks: steadystate.AcksAll, Idempotent: true}}
	if err := Write(path, Run{Environment: env, Specs: []Spec{s}}); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != SchemaVersion || !reflect.DeepEqual(got.Environment, env) || len(got.Specs) != 1 {
		t.Fatalf("read back schema %d, environment %+v, %d specs", got.Schema, got.Environment, len(got.Specs))
	}
	g := got.Specs[0]
	if g.Problems(CheckRecords)[0] != "3 lost" || g.SteadyState.Summary.RecordsPerSec != 1000 || g.Recovery != s.Recovery {
		t.Errorf("read back %+v", g)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("reading a missing file: want an error")
	}
}

// TestReadSchemas: a report is an object of schema 2 up to SchemaVersion,
// or a bare list of specs (schema 1).
func TestReadSchemas(t *testing.T) {
	tests := []struct {
		name, json string
		schema     int
		specs      int
		err        string
	}{
		{"schema 2", `{"schema": 2, "specs": [{"spec": "a"}, {"spec": "b"}]}`, 2, 2, ""},
		{"schema 1: a list", ` [{"spec": "a", "recovery": {"toHealthy": "never"}}]`, 1, 1, ""},
		{"schema 1: empty", `[]`, 1, 0, ""},
		{"no schema", `{"specs": []}`, 0, 0, "schema 0: not a run report"},
		{"newer schema", `{"schema": 3, "specs": []}`, 0, 0, "schema 3: this kafkachaos reads reports up to schema 2"},
		{"not JSON", `{`, 0, 0, "unexpected end of JSON input"},
		{"a bad list", `[1]`, 0, 0, "cannot unmarshal number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "report.json")
			if err := os.WriteFile(path, []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			run, err := Read(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), path) {
					t.Errorf("error %v, want one naming %s and saying %q", err, path, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if run.Schema != tt.schema || len(run.Specs) != tt.specs {
				t.Errorf("schema %d with %d specs, want %d with %d", run.Schema, len(run.Specs), tt.schema, tt.specs)
			}
		})
	}
}
