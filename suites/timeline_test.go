package suites

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// killSeen returns what a pod kill's timeline lacks: the victim broker
// taken out by the controller (seen fenced or gone, or dropped from an
// ISR: a replacement pod that registers as the session runs out is fenced
// for less than the 0.5 s between two looks) and a partition's leader
// moving off it, both between the fault's mark and the after phase's.
func killSeen(o outcome) []string {
	if o.SteadyState == nil || len(o.Victims) == 0 {
		return []string{"no steady-state report or no victim"}
	}
	var from, to time.Time
	for _, m := range o.SteadyState.Marks {
		switch m.Phase {
		case steadystate.PhaseFault:
			from = m.At
		case steadystate.PhaseAfter:
			to = m.At
		}
	}
	victim := fmt.Sprint(o.Victims[0])
	var fenced, moved bool
	for _, e := range o.Events {
		if e.At.Before(from) || e.At.After(to) {
			continue
		}
		switch {
		case (e.Kind == timeline.BrokerFenced || e.Kind == timeline.BrokerGone) && e.Subject == "broker "+victim,
			e.Kind == timeline.ISRShrunk && slices.Contains(idList(e.From), victim) && !slices.Contains(idList(e.To), victim):
			fenced = true
		case e.Kind == timeline.LeaderChanged && e.From == victim:
			moved = true
		}
	}
	var missing []string
	if !fenced {
		missing = append(missing, fmt.Sprintf("broker %s was not seen fenced, gone or dropped from an ISR between %s and %s", victim, from.Format(time.TimeOnly), to.Format(time.TimeOnly)))
	}
	if !moved {
		missing = append(missing, fmt.Sprintf("no leadership was seen moving off broker %s", victim))
	}
	return missing
}

// idList splits an event's "[0 1 2]" into its IDs.
func idList(s string) []string { return strings.Fields(strings.Trim(s, "[]")) }

func TestKillSeen(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	base := outcome{Victims: []int32{2}, SteadyState: &steadystate.Report{Marks: []steadystate.Mark{
		{Phase: steadystate.PhaseFault, At: at(10)}, {Phase: steadystate.PhaseRecovery, At: at(20)}, {Phase: steadystate.PhaseAfter, At: at(25)}}}}
	fenced := timeline.Event{At: at(19), Lane: timeline.LaneKafka, Kind: timeline.BrokerFenced, Subject: "broker 2"}
	moved := timeline.Event{At: at(19), Lane: timeline.LaneKafka, Kind: timeline.LeaderChanged, Subject: "partition 0", From: "2", To: "0"}
	shrunk := timeline.Event{At: at(19), Lane: timeline.LaneKafka, Kind: timeline.ISRShrunk, Subject: "partition 0", From: "[0 1 2]", To: "[0 1]"}
	otherShrunk := shrunk
	otherShrunk.To = "[1 2]"
	early := moved
	early.At = at(5)
	tests := []struct {
		name    string
		events  []timeline.Event
		missing int
	}{
		{"both seen", []timeline.Event{fenced, moved}, 0},
		{"dropped from an ISR, fenced between two looks", []timeline.Event{shrunk, moved}, 0},
		{"another broker dropped from an ISR", []timeline.Event{otherShrunk, moved}, 1},
		{"no fencing", []timeline.Event{moved}, 1},
		{"the move before the kill", []timeline.Event{fenced, early}, 1},
		{"nothing", nil, 2},
	}
	for _, tt := range tests {
		o := base
		o.Events = tt.events
		if got := killSeen(o); len(got) != tt.missing {
			t.Errorf("%s: %q, want %d missing", tt.name, got, tt.missing)
		}
	}
}
