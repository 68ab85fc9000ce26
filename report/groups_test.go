package report

import (
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
	"github.com/kafkachaos/kafkachaos/timeline"
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

// Both groups' assignments and revocations go to the groups' lane, in
// time order, and the lane is drawn only when there are some.
func TestGroupLane(t *testing.T) {
	start := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	r := &steadystate.Report{Start: start, LoadEnd: at(30), Group: &groupcheck.Result{Rebalances: []groupcheck.Event{
		{At: at(5), Member: "m0", Kind: groupcheck.Assigned, Partition: 1}, {At: at(20), Member: "m0", Kind: groupcheck.Revoked, Partition: 1}}}}
	java := &javaclients.Result{Group: groupcheck.Result{Rebalances: []groupcheck.Event{{At: at(10), Member: "c-1-0", Kind: groupcheck.Assigned, Partition: 4}}}}
	evs := groupEvents(r, java)
	want := []timeline.Kind{timeline.PartitionsAssigned, timeline.PartitionsAssigned, timeline.PartitionsRevoked}
	if len(evs) != len(want) {
		t.Fatalf("events %v, want %d", evs, len(want))
	}
	for i, e := range evs {
		if e.Kind != want[i] || e.Lane != timeline.LaneGroups {
			t.Errorf("event %d: %v, want %s in the groups' lane", i, e, want[i])
		}
	}
	if evs[1].Subject != "Java c-1-0 p4" {
		t.Errorf("subject %q", evs[1].Subject)
	}
	lanes := func(c *laneChart) []string {
		var names []string
		for _, l := range c.Lanes {
			names = append(names, l.Name)
		}
		return names
	}
	kafka := []timeline.Event{{At: at(7), Lane: timeline.LaneKafka, Kind: timeline.LeaderChanged, Subject: "partition 0"}}
	if got := lanes(eventLanes(kafka, r)); len(got) != 2 {
		t.Errorf("lanes without group events: %v, want Kafka and K8s", got)
	}
	if got := lanes(eventLanes(append(kafka, evs...), r)); len(got) != 3 || got[2] != "Groups" {
		t.Errorf("lanes with group events: %v, want a third, Groups", got)
	}
}
