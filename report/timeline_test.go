package report

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestBoundOf(t *testing.T) {
	tests := []struct {
		bound, limit string
		ok           bool
		class        string
		value        float64
	}{
		{"min throughput", "500.0 records/s", true, classThroughput, 500},
		{"min throughput ratio to baseline", "0.90", true, classThroughput, 900},
		{"max p99 ack latency", "1.5s", true, classAck, 1500},
		{"max p99 end-to-end latency", "250ms", true, classE2E, 250},
		{"max unavailability", "30s", false, "", 0},
		{"lost records", "0", false, "", 0},
		{"min throughput", "many", false, "", 0},
		{"min throughput", "NaN records/s", false, "", 0},
		{"min throughput", "Inf records/s", false, "", 0},
		{"max p99 ack latency", "0s", false, "", 0},
		{"max p99 ack latency", "-1s", false, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.bound+" "+tt.limit, func(t *testing.T) {
			b, ok := boundOf(steadystate.Verdict{Bound: tt.bound, Limit: tt.limit}, 1000)
			if ok != tt.ok || b.class != tt.class || math.Abs(b.value-tt.value) > 1e-9 {
				t.Errorf("got %+v %v, want %s %g %v", b, ok, tt.class, tt.value, tt.ok)
			}
		})
	}
}

func TestPhaseSpans(t *testing.T) {
	mark := func(p steadystate.Phase, sec float64) steadystate.Mark {
		return steadystate.Mark{Phase: p, At: at(sec)}
	}
	tests := []struct {
		name  string
		marks []steadystate.Mark
		want  string
	}{
		{"no marks: all baseline", nil, "baseline 0-40"},
		{"the story's phases", testReport().Marks, "baseline 0-10 fault 10-20 recovery 20-25 after 25-40"},
		{"marked at the start", []steadystate.Mark{mark("fault", 0)}, "fault 0-40"},
		{"marked after the load", []steadystate.Mark{mark("fault", 30), mark("after", 45)}, "baseline 0-30 fault 30-40"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range phaseSpans(&steadystate.Report{Start: at(0), Marks: tt.marks}, 40) {
				got = append(got, string(s.phase)+" "+strconv.FormatFloat(s.from, 'f', -1, 64)+"-"+strconv.FormatFloat(s.to, 'f', -1, 64))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("spans %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// TestTimelineSkipsPartialLastSecond: the last second of a series holds
// the flush and drain; when the load ended inside it, it is not drawn.
func TestTimelineSkipsPartialLastSecond(t *testing.T) {
	r := testReport()
	r.LoadEnd = at(39.4)
	r.Series[39].Acked = 3
	charts := timelineCharts(r)
	if len(charts) != 2 {
		t.Fatalf("%d charts, want 2: throughput and latency", len(charts))
	}
	if len(charts[0].Lines) != 1 || len(charts[1].Lines) != 2 {
		t.Fatalf("%d and %d lines, want 1 (throughput) and 2 (ack, end-to-end)", len(charts[0].Lines), len(charts[1].Lines))
	}
	pts := strings.Fields(strings.Join(charts[0].Lines[0].Points, " "))
	if len(pts) != 39 {
		t.Errorf("%d throughput points, want 39 (the partial last second left out)", len(pts))
	}
	// The ack line has a gap where nothing was acked: two polylines.
	for _, l := range charts[1].Lines {
		if len(l.Points) != 2 {
			t.Errorf("%s: %d polylines, want 2 around the seconds with no ack", l.Class, len(l.Points))
		}
	}
}
