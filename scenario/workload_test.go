package scenario

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// stubRunner is a steady state's load that returns rep.
type stubRunner struct{ rep *steadystate.Report }

func (stubRunner) Mark(steadystate.Phase)                      {}
func (stubRunner) WarmUp(context.Context, time.Duration) error { return nil }
func (r stubRunner) Finish(context.Context, steadystate.Hypothesis) (*steadystate.Report, error) {
	return r.rep, nil
}

// The steady state's checks are the records' and the bounds', the records
// judged against what the configured rate should have sent while the load
// ran.
func TestSteadyStateChecks(t *testing.T) {
	rep := &steadystate.Report{Records: steadystate.Records{Acked: 100},
		Violations: []steadystate.Violation{{Phase: steadystate.PhaseFault, Bound: "maxUnavailable", Limit: "5s", Observed: "9s"}}}
	s := &SteadyState{r: stubRunner{rep}, rate: 1000, started: time.Now().Add(-2 * time.Second)}
	if s.Checks() != nil {
		t.Error("checks before Finish")
	}
	if err := s.Finish(t.Context(), steadystate.Hypothesis{}); err != nil {
		t.Fatal(err)
	}
	var _ Measured = s
	if s.Report() != rep {
		t.Error("the report is not the runner's")
	}
	cs := s.Checks()
	var names []report.CheckName
	for _, c := range cs {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []report.CheckName{report.CheckRecords, report.CheckBounds}) {
		t.Fatalf("checks %v", names)
	}
	if p := cs[0].Problems; len(p) != 1 || !strings.Contains(p[0], "only 100 records acknowledged of about 2000") {
		t.Errorf("records: %q", p)
	}
	if p := cs[1].Problems; len(p) != 1 {
		t.Errorf("bounds: %q", p)
	}
}

// With an application's consumer group, its verdict is a check of its own,
// after the bounds; clean, it has no problems.
func TestSteadyStateGroupCheck(t *testing.T) {
	for _, tt := range []struct {
		counts map[groupcheck.Check]uint64
		want   int // problems
	}{{map[groupcheck.Check]uint64{}, 0}, {map[groupcheck.Check]uint64{groupcheck.CheckPollSkip: 3, groupcheck.CheckCommitBackward: 1}, 2}} {
		rep := &steadystate.Report{Records: steadystate.Records{Acked: 2000}, Group: &groupcheck.Result{Counts: tt.counts}}
		s := &SteadyState{r: stubRunner{rep}, rate: 1000, started: time.Now().Add(-2 * time.Second)}
		if err := s.Finish(t.Context(), steadystate.Hypothesis{}); err != nil {
			t.Fatal(err)
		}
		cs := s.Checks()
		if len(cs) != 3 || cs[2].Name != report.CheckGroup || len(cs[2].Problems) != tt.want {
			t.Errorf("counts %v: checks %+v, want the group's third with %d problems", tt.counts, cs, tt.want)
		}
	}
}

// With transactions, their verdict is a check of its own: a clean run has
// no problems; an inconclusive one, and one with anomalies, do, witnesses
// and all.
func TestSteadyStateTransactionsCheck(t *testing.T) {
	witness := txncheck.Witness{Check: txncheck.CheckAbortedRead, Txn: txncheck.Txn{Producer: 1, Seq: 5}, Partition: 2, Offset: 9}
	for _, tt := range []struct {
		name string
		res  txncheck.Result
		want int // problems
	}{
		{"clean", txncheck.Result{ControlAbortedReads: 4}, 0},
		{"inconclusive", txncheck.Result{Inconclusive: true}, 1},
		{"an aborted read", txncheck.Result{ControlAbortedReads: 4, Counts: map[txncheck.Check]uint64{txncheck.CheckAbortedRead: 1}, Witnesses: []txncheck.Witness{witness}}, 2},
	} {
		rep := &steadystate.Report{Records: steadystate.Records{Acked: 2000}, Transactions: &tt.res}
		s := &SteadyState{r: stubRunner{rep}, rate: 1000, started: time.Now().Add(-2 * time.Second)}
		if err := s.Finish(t.Context(), steadystate.Hypothesis{}); err != nil {
			t.Fatal(err)
		}
		cs := s.Checks()
		if len(cs) != 3 || cs[2].Name != report.CheckTransactions || len(cs[2].Problems) != tt.want {
			t.Errorf("%s: checks %+v, want the transactions' third with %d problems", tt.name, cs, tt.want)
		}
	}
}

// Throughput mode needs agents; agents need an environment that allows
// them.
func TestStartSteadyStateRefuses(t *testing.T) {
	if _, err := StartSteadyState(t.Context(), &Env{}, "t", Shape{Unlimited: true}); err == nil || !strings.HasPrefix(err.Error(), "scenario: throughput mode needs agents") {
		t.Errorf("unlimited without agents: %v", err)
	}
	if _, err := StartSteadyState(t.Context(), &Env{}, "t", Shape{Agents: 2, Group: steadystate.GroupConfig{Members: 3}}); err == nil || !strings.Contains(err.Error(), "in this process only") {
		t.Errorf("a consumer group with agents: %v", err)
	}
	_, err := StartSteadyState(t.Context(), &Env{NoAgents: "not here"}, "t", Shape{Agents: 2})
	if skip, ok := err.(*SkipError); !ok || skip.Reason != "not here" {
		t.Errorf("agents refused: %v", err)
	}
}

// The lag's observation says each case as it is.
func TestLagObservation(t *testing.T) {
	peak := time.Date(2026, 12, 7, 11, 0, 5, 0, time.UTC)
	tests := []struct {
		l    groupcheck.Lag
		want string
	}{
		{groupcheck.Lag{Baseline: 40, Peak: 30, PeakAt: peak, Samples: 200}, "never more than twice that after the fault"},
		{groupcheck.Lag{Baseline: 40, Peak: 9000, PeakAt: peak, Back: 21 * time.Second, Samples: 200}, "peak 9000 records at 11:00:05.000 UTC; back within twice the baseline's 21s after"},
		{groupcheck.Lag{Baseline: 40, Peak: 9000, PeakAt: peak, NeverBack: true, Samples: 200}, "not back within twice the baseline's"},
		{groupcheck.Lag{Baseline: 40}, "not sampled after the fault"},
	}
	for _, tt := range tests {
		if got := LagObservation("the consumer group", tt.l); !strings.Contains(got, tt.want) {
			t.Errorf("LagObservation(%+v) = %q, want %q in it", tt.l, got, tt.want)
		}
	}
}
