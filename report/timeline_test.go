package report

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// verdict is a passed verdict on a bound of kind k with limit (in k's
// unit) and its text.
func verdict(phase steadystate.Phase, k steadystate.BoundKind, limit float64, text string) steadystate.Verdict {
	return steadystate.Verdict{Phase: phase, Limit: text, Observed: "x", Passed: true,
		Figures: steadystate.Figures{Kind: k, Unit: k.Unit(), LimitValue: limit}}
}

func TestBoundOf(t *testing.T) {
	tests := []struct {
		name  string
		v     steadystate.Verdict
		ok    bool
		class string
		value float64
		label string
	}{
		{"min throughput", verdict("", steadystate.BoundMinThroughput, 500, "500.0 records/s"), true, classThroughput, 500, "min 500.0 records/s"},
		{"throughput ratio", verdict("", steadystate.BoundMinThroughputRatio, 0.9, "0.90"), true, classThroughput, 900, "min 0.90 × baseline (900 records/s)"},
		{"p99 ack", verdict("", steadystate.BoundMaxP99Ack, 1.5, "1.5s"), true, classAck, 1500, "max p99 ack 1.5s"},
		{"p99 end-to-end", verdict("", steadystate.BoundMaxP99E2E, 0.25, "250ms"), true, classE2E, 250, "max p99 end-to-end 250ms"},
		{"unavailability: no line", verdict("", steadystate.BoundMaxUnavailability, 30, "30s"), false, "", 0, ""},
		{"records: no line", verdict("", steadystate.BoundLostRecords, 0, "0"), false, "", 0, ""},
		{"zero limit", verdict("", steadystate.BoundMaxP99Ack, 0, "0s"), false, "", 0, ""},
		{"negative limit", verdict("", steadystate.BoundMinThroughput, -1, "-1.0 records/s"), false, "", 0, ""},
		{"infinite limit", verdict("", steadystate.BoundMinThroughput, math.Inf(1), "+Inf records/s"), false, "", 0, ""},
		{"NaN limit", verdict("", steadystate.BoundMinThroughput, math.NaN(), "NaN records/s"), false, "", 0, ""},
		// A report written before verdicts had figures: its texts are
		// not read back as numbers.
		{"no figures", steadystate.Verdict{Bound: "max p99 ack latency", Limit: "1.5s"}, false, "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := boundOf(tt.v, 1000)
			if ok != tt.ok || b.class != tt.class || math.Abs(b.value-tt.value) > 1e-9 || b.label != tt.label {
				t.Errorf("got %+v %v, want %s %g %q %v", b, ok, tt.class, tt.value, tt.label, tt.ok)
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
