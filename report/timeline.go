package report

import (
	"fmt"
	"math"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// span is one phase of a run, in seconds since its start.
type span struct {
	phase    steadystate.Phase
	from, to float64
}

// phaseSpans derives the phases from the marks: each lasts from its mark
// to the next one or the end of the load; before the first mark it is the
// baseline.
func phaseSpans(r *steadystate.Report, end float64) []span {
	var spans []span
	cur := span{phase: steadystate.PhaseBaseline}
	for _, m := range r.Marks {
		at := min(max(m.At.Sub(r.Start).Seconds(), 0), end)
		if at > cur.from {
			cur.to = at
			spans = append(spans, cur)
		}
		cur = span{phase: m.Phase, from: at}
	}
	if end > cur.from {
		cur.to = end
		spans = append(spans, cur)
	}
	return spans
}

// loadSeconds is how long the load ran: from the report's times, else the
// length of its series.
func loadSeconds(r *steadystate.Report) float64 {
	if d := r.LoadEnd.Sub(r.Start).Seconds(); !r.LoadEnd.IsZero() && d > 0 {
		return d
	}
	return float64(len(r.Series))
}

// Classes of the chart's series: the CSS gives each its color.
const (
	classThroughput = "thr"
	classAck        = "ack"
	classE2E        = "e2e"
)

// bound is a verdict's limit drawn on a chart.
type bound struct {
	class string // the series it bounds
	value float64
	min   bool // a least value, not a most
	label string
}

// boundOf reads the limit of verdict v as a value on the charts, from its
// figures: records/s for throughput, milliseconds for latency. baseline is
// the baseline's throughput, for a ratio. ok is false for a bound that is
// no horizontal line (unavailability, records), a verdict without figures
// (from a report written before them), and a non-positive limit.
func boundOf(v steadystate.Verdict, baseline float64) (bound, bool) {
	var class, name string
	switch v.Kind {
	case steadystate.BoundMinThroughput, steadystate.BoundMinThroughputRatio:
		class, name = classThroughput, "min"
	case steadystate.BoundMaxP99Ack:
		class, name = classAck, "max p99 ack"
	case steadystate.BoundMaxP99E2E:
		class, name = classE2E, "max p99 end-to-end"
	default:
		return bound{}, false
	}
	b := bound{class: class, min: v.Kind.Min(), label: name + " " + v.Limit}
	switch v.Unit {
	case steadystate.UnitRecordsPerSecond:
		b.value = v.LimitValue
	case steadystate.UnitRatio:
		b.value = v.LimitValue * baseline
		b.label = fmt.Sprintf("%s %s × baseline (%.0f records/s)", name, v.Limit, b.value)
	case steadystate.UnitSeconds:
		b.value = v.LimitValue * 1000
	}
	if !(b.value > 0) || math.IsInf(b.value, 0) {
		return bound{}, false
	}
	return b, true
}

// point is one second's value; ok is false when the second measured
// nothing (no ack: no latency either).
type point struct {
	t, v float64
	ok   bool
}

// series is one line of a chart before it is scaled.
type series struct {
	class, label string
	points       []point
}

// timelineCharts draws r's per-second series: acked records/s, then p99
// ack and end-to-end latency on a log scale. The last second is left out
// when it is partial (it holds the flush and drain, not a second of load).
func timelineCharts(r *steadystate.Report) []chart {
	end := loadSeconds(r)
	spans := phaseSpans(r, end)
	thr := series{class: classThroughput, label: "acked records/s"}
	ack := series{class: classAck, label: "p99 ack latency"}
	e2e := series{class: classE2E, label: "p99 end-to-end latency"}
	for _, s := range r.Series {
		if float64(s.T)+1 > end+1e-9 {
			continue
		}
		t := float64(s.T) + 0.5
		thr.points = append(thr.points, point{t, float64(s.Acked), true})
		ack.points = append(ack.points, point{t, float64(s.AckP99Us) / 1000, s.Acked > 0 && s.AckP99Us > 0})
		e2e.points = append(e2e.points, point{t, float64(s.E2EP99Us) / 1000, s.Consumed > 0 && s.E2EP99Us > 0})
	}
	var thrBounds, latBounds []placedBound
	for _, b := range placeBounds(r, spans) {
		if b.class == classThroughput {
			thrBounds = append(thrBounds, b)
		} else {
			latBounds = append(latBounds, b)
		}
	}
	lat := newChart("Latency: p99 per second (log scale)", end, spans, []series{ack, e2e}, latBounds, true)
	lat.Caption = "A gap in a line is a second in which nothing was acked (or consumed): its latency is unknown, not low."
	return []chart{newChart("Throughput: acked records/s", end, spans, []series{thr}, thrBounds, false), lat}
}

// placedBound is a bound over the seconds from..to.
type placedBound struct {
	bound
	from, to float64
}

// placeBounds lays each phase's bounds over its span, joining a bound that
// holds in consecutive phases into one line.
func placeBounds(r *steadystate.Report, spans []span) []placedBound {
	baseline := r.BaselineThroughput()
	var out []placedBound
	for _, sp := range spans {
		for _, v := range r.Verdicts {
			if v.Phase != sp.phase {
				continue
			}
			b, ok := boundOf(v, baseline)
			if !ok {
				continue
			}
			joined := false
			for i := range out {
				if out[i].bound == b && out[i].to == sp.from {
					out[i].to, joined = sp.to, true
				}
			}
			if !joined {
				out = append(out, placedBound{b, sp.from, sp.to})
			}
		}
	}
	return out
}
