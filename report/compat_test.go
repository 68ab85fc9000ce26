package report

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// v1FixturePath is a report.json of schema 1, a bare list of specs, as
// kafkachaos wrote it before schema 2: a real run of the three partition
// specs on the local cluster (make chaos), the peers-only one failing its
// bounds. Compare and the page must read it as long as such reports exist.
const v1FixturePath = "testdata/report-v1-partition.json"

func loadV1Fixture(t *testing.T) Run {
	t.Helper()
	run, err := Read(v1FixturePath)
	if err != nil {
		t.Fatal(err)
	}
	if run.Schema != 1 || run.Environment != nil || len(run.Specs) != 3 {
		t.Fatalf("%s: schema %d, environment %v, %d specs; want schema 1, none, 3", v1FixturePath, run.Schema, run.Environment, len(run.Specs))
	}
	return run
}

// TestReadSchema1: the recovery times of schema 1's map of strings read as
// typed durations; its checks are the suite's; its verdicts have no
// figures.
func TestReadSchema1(t *testing.T) {
	ms := func(n int64) Duration { return Reached(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		spec   string // the start of its text
		rec    Recovery
		failed []CheckName
	}{
		{"The leader of partition 0 is partitioned from every other Kafka node (isolate)", Recovery{ToPodsReady: ms(20), ToHealthy: ms(2253), InjectToHealthy: ms(47313), ThroughputBack: ms(286)}, nil},
		{"The leader of partition 0 is partitioned from the other brokers' replication only (peers-only)", Recovery{ToPodsReady: ms(12), ToHealthy: ms(1077), InjectToHealthy: ms(46118), ThroughputBack: ms(4189)}, []CheckName{CheckBounds}},
		{"The active KRaft controller is partitioned", Recovery{ToPodsReady: ms(6), ToHealthy: ms(8304), InjectToHealthy: ms(28334), ThroughputBack: ms(2055)}, nil},
	}
	run := loadV1Fixture(t)
	for i, tt := range tests {
		s := run.Specs[i]
		t.Run(tt.spec, func(t *testing.T) {
			if !strings.HasPrefix(s.Spec, tt.spec) {
				t.Fatalf("spec %d is %q", i, s.Spec)
			}
			if s.Recovery != tt.rec {
				t.Errorf("recovery %v, want %v", s.Recovery, tt.rec)
			}
			if got := s.FailedChecks(); !slices.Equal(got, tt.failed) {
				t.Errorf("failed checks %v, want %v", got, tt.failed)
			}
			for _, c := range s.Checks {
				if !slices.Contains(Checks(), c.Name) {
					t.Errorf("check %q is none of the suite's", c.Name)
				}
			}
			if s.SteadyState == nil || len(s.SteadyState.Verdicts) == 0 {
				t.Fatal("no verdicts")
			}
			for _, v := range s.SteadyState.Verdicts {
				if v.Kind != "" || v.ObservedValue != nil {
					t.Errorf("verdict %s has figures %+v: schema 1 had none", v.Bound, v.Figures)
				}
			}
		})
	}
}

// TestWriteHTMLSchema1: the page of a schema 1 report has its charts and
// tables, but no bound lines (its verdicts have no figures) and no
// environment.
func TestWriteHTMLSchema1(t *testing.T) {
	out := renderRun(t, loadV1Fixture(t))
	for _, want := range []string{"1 of 3 spec(s) failed", "2 PASS · 0 CAUGHT", "(peers-only)", "max unavailability", "38.059898988s",
		"victims Ready, after the fault was recovered", "47.313s", ">4.189s<", "partition pod kafka/kafka-2 (controller)"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(out, `<svg class="plot"`); n != 6 {
		t.Errorf("%d charts, want 2 per spec (6)", n)
	}
	for _, bad := range []string{`<line class="bound`, `class="env"`} {
		if strings.Contains(out, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
}

// TestCompareSchema1WithSchema2: a run of schema 1 compares with the same
// run written as schema 2, figure by figure, recovery times included.
func TestCompareSchema1WithSchema2(t *testing.T) {
	a := loadV1Fixture(t)
	path := filepath.Join(t.TempDir(), "report.json")
	if err := Write(path, a); err != nil {
		t.Fatal(err)
	}
	b, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.Schema != SchemaVersion {
		t.Fatalf("written as schema %d", b.Schema)
	}
	c := Compare(a.Specs, b.Specs, 0.2)
	// Schema 1 knew nothing of the pods' resources: the two rows of
	// those are left out.
	if want := 3 * (len(Metrics()) - 2); len(c.Rows) != want {
		t.Errorf("%d rows, want %d: every metric but resources of every spec", len(c.Rows), want)
	}
	for _, r := range c.Rows {
		if r.A != r.B || r.Regressed {
			t.Errorf("%s %s: %g then %g (regressed %v): the same run", r.Spec, r.Metric, r.A, r.B, r.Regressed)
		}
	}
	i := slices.IndexFunc(c.Rows, func(r Row) bool { return r.Spec == a.Specs[0].Spec && r.Metric == "recovery to healthy" })
	if i < 0 || c.Rows[i].A != 2.253 {
		t.Errorf("no row of the first spec's recovery to healthy, 2.253 s, in %+v", c.Rows)
	}
}
