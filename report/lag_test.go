package report

import (
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// The lag chart draws each sampled group's lag on the run's seconds, a
// second without a sample as a gap, and is left out without a sample.
func TestLagChart(t *testing.T) {
	start := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	lag := func(from time.Duration, perSecond ...int64) *groupcheck.Lag {
		return &groupcheck.Lag{SecondsFrom: start.Add(from), PerSecond: perSecond}
	}
	tests := []struct {
		name    string
		group   *groupcheck.Lag
		java    *javaclients.Result
		lines   map[string]int // class -> polylines
		noChart bool
	}{
		{"no group", nil, nil, nil, true},
		{"a group never sampled", &groupcheck.Lag{}, nil, nil, true},
		{"the steady state's group, one second unsampled", lag(2*time.Second, 3, -1, 40, 2), nil, map[string]int{classLagGroup: 2}, false},
		{"both groups", lag(0, 1, 2), &javaclients.Result{Group: groupcheck.Result{Lag: lag(time.Second, 5, 9)}}, map[string]int{classLagGroup: 1, classLagJava: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &steadystate.Report{Start: start, LoadEnd: start.Add(30 * time.Second)}
			if tt.group != nil {
				r.Group = &groupcheck.Result{Lag: tt.group}
			}
			c, ok := lagChart(r, tt.java)
			if ok == tt.noChart {
				t.Fatalf("chart drawn %t, want %t", ok, !tt.noChart)
			}
			got := map[string]int{}
			for _, l := range c.Lines {
				got[l.Class] = len(l.Points)
			}
			for class, n := range tt.lines {
				if got[class] != n {
					t.Errorf("line %s: %d polylines, want %d (lines %v)", class, got[class], n, got)
				}
			}
		})
	}
}
