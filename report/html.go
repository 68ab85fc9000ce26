package report

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// HTMLOptions describe the page WriteHTML writes.
type HTMLOptions struct {
	// Title heads the page; default "kafkachaos run report".
	Title string
	// Source names the report.json the page shows, as readers should see it.
	Source string
	// Generated is when the page was made; the zero time leaves it out.
	Generated time.Time
}

// WriteHTML writes specs as one self-contained HTML page: an overall
// verdict, a summary table, and per spec its timeline charts (inline SVG)
// and tables of verdicts, anomalies, checks and recovery times. The page
// loads nothing: no script, font or image from anywhere.
func WriteHTML(w io.Writer, specs []Spec, opts HTMLOptions) error {
	t, err := template.New("report").Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("report: html template: %w", err)
	}
	if err := t.Execute(w, newPage(specs, opts)); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	return nil
}

// page is what the template shows.
type page struct {
	Title, Source, Generated, RunTime string
	Total, Passed, Caught, Failed     int
	Specs                             []specView
}

func newPage(specs []Spec, opts HTMLOptions) page {
	p := page{Title: cmp.Or(opts.Title, "kafkachaos run report"), Source: opts.Source, Total: len(specs)}
	if !opts.Generated.IsZero() {
		p.Generated = opts.Generated.UTC().Format("2006-01-02 15:04:05 MST")
	}
	var start, end time.Time
	for i, s := range specs {
		switch s.Verdict() {
		case VerdictPass:
			p.Passed++
		case VerdictCaught:
			p.Caught++
		default:
			p.Failed++
		}
		if r := s.SteadyState; r != nil {
			if start.IsZero() || r.Start.Before(start) {
				start = r.Start
			}
			for _, t := range []time.Time{r.Start, r.LoadEnd, r.End} {
				if t.After(end) {
					end = t
				}
			}
		}
		p.Specs = append(p.Specs, newSpecView(i+1, s))
	}
	if !start.IsZero() {
		p.RunTime = fmt.Sprintf("%s – %s (%s)", start.UTC().Format("2006-01-02 15:04:05"),
			end.UTC().Format("15:04:05 MST"), end.Sub(start).Round(time.Second))
	}
	return p
}

// specView is one spec's row and section.
type specView struct {
	ID, Name, Verdict, Fault, Victims string
	Failure                           string // why the spec failed outside its checks
	Load                              string // the workload, in a line
	Row                               summaryRow
	HasSteadyState                    bool
	Charts                            []chart
	Phases                            []phaseRow
	Verdicts                          []verdictRow
	Records                           []cell
	Examples, Violations              []string
	Errors                            []cell
	Checks                            []checkRow
	Recovery                          []cell
}

// summaryRow holds a spec's figures for the summary table; "-" when the
// spec has none.
type summaryRow struct {
	Rate, P99Ack, Unavailable, Records, ToHealthy, ThroughputBack string
	RecordsBad, BackBad                                           bool
}

// cell is a named figure; Bad marks one that should not be.
type cell struct {
	Name, Value string
	Bad         bool
}

type phaseRow struct {
	Phase, From, To, Throughput, P99Ack, P99E2E, Unavailable string
	Seconds                                                  int
}

type verdictRow struct {
	Phase, Bound, Observed, Limit string
	Passed                        bool
}

type checkRow struct {
	Name     string
	Problems []string
}

func newSpecView(n int, s Spec) specView {
	v := specView{
		ID: fmt.Sprintf("spec-%d", n), Name: s.Spec, Verdict: s.Verdict(),
		Fault: cmp.Or(s.Fault, "-"), Victims: victims(s.Victims), Failure: s.FailureReason,
		Row: summaryRow{Rate: "-", P99Ack: "-", Unavailable: "-", Records: "-",
			ToHealthy: cmp.Or(s.Recovery["toHealthy"], "-"), ThroughputBack: cmp.Or(s.Recovery["throughputBack"], "-")},
	}
	v.Row.BackBad = v.Row.ThroughputBack == "never"
	for _, c := range s.Checks {
		v.Checks = append(v.Checks, checkRow{c.Name, c.Problems})
	}
	v.Recovery = recoveryCells(s.Recovery)
	r := s.SteadyState
	if r == nil {
		return v
	}
	v.HasSteadyState = true
	idem := "idempotent"
	if !r.Idempotent {
		idem = "not idempotent"
	}
	v.Load = fmt.Sprintf("topic %s, %d records/s of %d B from %d producer(s), acks=%s, %s, run %s",
		r.Topic, r.Rate, r.Record, r.Producers, r.Acks, idem, r.RunID)
	rec := r.Records
	v.Row.Rate = fmt.Sprintf("%.0f", r.Summary.RecordsPerSec)
	v.Row.P99Ack = latencyMs(r.Latency[steadystate.AckLatency.String()])
	v.Row.Unavailable = r.Unavailable.Round(time.Millisecond).String()
	v.Row.Records = fmt.Sprintf("%d / %d / %d", rec.Lost, rec.Duplicates, rec.Reordered)
	v.Row.RecordsBad = !rec.Clean()
	v.Charts = timelineCharts(r)
	for _, ps := range r.Phases {
		v.Phases = append(v.Phases, phaseRow{
			Phase: string(ps.Phase), From: offset(r.Start, ps.From), To: offset(r.Start, ps.To), Seconds: ps.Seconds,
			Throughput: fmt.Sprintf("%.1f", ps.Throughput), P99Ack: latencyMs(ps.Ack), P99E2E: latencyMs(ps.E2E),
			Unavailable: ps.Unavailable.Round(time.Millisecond).String(),
		})
	}
	for _, vd := range r.Verdicts {
		v.Verdicts = append(v.Verdicts, verdictRow{cmp.Or(string(vd.Phase), "run"), vd.Bound, vd.Observed, vd.Limit, vd.Passed})
	}
	v.Records = []cell{
		{"acked", fmt.Sprint(rec.Acked), false},
		{"consumed", fmt.Sprint(rec.Consumed), false},
		{"lost", fmt.Sprint(rec.Lost), rec.Lost > 0},
		{"duplicated", fmt.Sprint(rec.Duplicates), rec.Duplicates > 0},
		{"reordered", fmt.Sprint(rec.Reordered), rec.Reordered > 0},
		{"consumed, never acked (allowed)", fmt.Sprint(rec.UnackedSeen), false},
		{"redelivered (ignored)", fmt.Sprint(rec.Redelivered), false},
		{"foreign (ignored)", fmt.Sprint(rec.Foreign), false},
	}
	if rec.DrainIncomplete {
		v.Records = append(v.Records, cell{"final drain", "incomplete: lost records are unverified", true})
	}
	v.Examples = examples(rec)
	for _, kind := range slices.Sorted(maps.Keys(r.Errors)) {
		v.Errors = append(v.Errors, cell{kind, fmt.Sprint(r.Errors[kind]), true})
	}
	for _, vi := range r.Violations {
		v.Violations = append(v.Violations, fmt.Sprintf("%s: %s observed %s, limit %s (at %s)",
			cmp.Or(string(vi.Phase), "run"), vi.Bound, vi.Observed, vi.Limit, offset(r.Start, vi.At)))
	}
	return v
}

func victims(ids []int32) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}

// latencyMs formats a p99 in milliseconds; "-" when nothing was measured.
func latencyMs(l steadystate.LatencyStats) string {
	if l.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", float64(l.P99)/1000)
}

// offset formats t as seconds since start.
func offset(start, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("+%.1f s", t.Sub(start).Seconds())
}

// recoveryCells lists the recovery times: the ones runStory records, in
// order and described, then any other by name.
func recoveryCells(rec map[string]string) []cell {
	names := []struct{ key, name string }{
		{"toPodsReady", "victims Ready, after the fault was recovered"},
		{"toHealthy", "cluster healthy, after the fault was recovered"},
		{"injectToHealthy", "cluster healthy, after the fault was injected"},
		{"throughputBack", "throughput back to the baseline's, after the fault was recovered"},
	}
	var cells []cell
	known := map[string]bool{}
	for _, n := range names {
		known[n.key] = true
		if d, ok := rec[n.key]; ok {
			cells = append(cells, cell{n.name, d, d == "never"})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rec)) {
		if !known[k] {
			cells = append(cells, cell{k, rec[k], rec[k] == "never"})
		}
	}
	return cells
}

// examples describes the examples of lost, duplicated and reordered
// records the verifier kept.
func examples(rec steadystate.Records) []string {
	var out []string
	for _, l := range rec.LostExamples {
		out = append(out, fmt.Sprintf("lost: partition %d, producer %d, sequences %d–%d (%d records)", l.Partition, l.Producer, l.FirstSeq, l.LastSeq, l.Count))
	}
	for _, d := range rec.DuplicateExamples {
		out = append(out, fmt.Sprintf("duplicate: partition %d offset %d, producer %d sequence %d", d.Partition, d.Offset, d.Producer, d.Seq))
	}
	for _, d := range rec.ReorderExamples {
		out = append(out, fmt.Sprintf("reordered: partition %d offset %d, producer %d sequence %d after %d", d.Partition, d.Offset, d.Producer, d.Seq, d.PrevSeq))
	}
	return out
}

// Chart geometry, in SVG user units: the plot box sits inside a viewBox
// of chartWidth x chartHeight, with room for the phase labels above and
// the tick labels left and below.
const (
	chartWidth  = 1140
	chartHeight = 250
	plotLeft    = 64
	plotTop     = 26
	plotWidth   = chartWidth - plotLeft - 16
	plotHeight  = chartHeight - plotTop - 34
)

// chart is one SVG timeline: lines over the seconds of the run, the phases
// as bands, and the bounds as dashed lines.
type chart struct {
	Title, Caption           string
	Width, Height            float64
	Left, Top, Right, Bottom float64 // the plot box
	XTicks, YTicks           []tick
	Bands                    []band
	Lines                    []line
	Bounds                   []boundLine
	Legend                   []legendItem
}

type tick struct {
	Pos   float64
	Label string
}

// band is one phase: shaded when it is the fault or the recovery, with
// its name above the plot and a rule where it starts.
type band struct {
	Phase          string
	X, W, LabelX   float64
	Shaded, Starts bool
}

// line is one series; a gap in the data splits it into several polylines.
type line struct {
	Class, Label string
	Points       []string // polyline points attributes
}

type boundLine struct {
	Class, Label              string
	X1, X2, Y, LabelX, LabelY float64
}

type legendItem struct {
	Class, Label string
	Kind         string // "line", "bound" or "band"
}

// scale maps data values onto pixels: lo..hi onto from..to, linearly or
// on a log10 scale. Values out of range are clamped.
type scale struct {
	lo, hi, from, to float64
	log              bool
}

func (s scale) at(v float64) float64 {
	lo, hi := s.lo, s.hi
	v = min(max(v, lo), hi)
	if s.log {
		lo, hi, v = math.Log10(lo), math.Log10(hi), math.Log10(v)
	}
	f := 0.0
	if hi > lo {
		f = (v - lo) / (hi - lo)
	}
	return round1(s.from + f*(s.to-s.from))
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// niceStep returns 1, 2 or 5 times a power of ten: the least that is at
// least raw.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// linearTicks returns the ticks from 0 to at least top, about n of them,
// and the last.
func linearTicks(top float64, n int) ([]float64, float64) {
	step := niceStep(top / float64(n))
	hi := math.Ceil(top/step-1e-9) * step
	var ticks []float64
	for v := 0.0; v <= hi+step/2; v += step {
		ticks = append(ticks, v)
	}
	return ticks, hi
}

// logRange widens lo..hi to whole decades and returns the ticks: every
// decade, and 2 and 5 times it when the range spans two decades or less.
func logRange(lo, hi float64) (ticks []float64, from, to float64) {
	if !(lo > 0) || math.IsInf(hi, 0) || hi < lo {
		lo, hi = 1, 1000 // nothing to show: a sensible empty chart
	}
	from = math.Pow(10, math.Floor(math.Log10(lo)))
	to = math.Pow(10, math.Ceil(math.Log10(hi)))
	if to <= from {
		to = from * 10
	}
	mults := []float64{1}
	if to/from <= 100 {
		mults = []float64{1, 2, 5}
	}
	for d := from; d <= to*(1+1e-9); d *= 10 {
		for _, m := range mults {
			if v := d * m; v <= to*(1+1e-9) {
				ticks = append(ticks, v)
			}
		}
	}
	return ticks, from, to
}

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

// boundOf reads the limit of verdict v as a value on the charts: records/s
// for throughput, milliseconds for latency. baseline is the baseline's
// throughput, for a ratio. ok is false for a bound that is no horizontal
// line (unavailability, records) or an unreadable or non-positive limit.
func boundOf(v steadystate.Verdict, baseline float64) (bound, bool) {
	b, ok := parseBound(v, baseline)
	if !ok || !(b.value > 0) || math.IsInf(b.value, 0) {
		return bound{}, false
	}
	return b, true
}

func parseBound(v steadystate.Verdict, baseline float64) (bound, bool) {
	switch v.Bound {
	case "min throughput":
		var x float64
		if _, err := fmt.Sscanf(v.Limit, "%g records/s", &x); err != nil {
			return bound{}, false
		}
		return bound{classThroughput, x, true, "min " + v.Limit}, true
	case "min throughput ratio to baseline":
		x, err := strconv.ParseFloat(v.Limit, 64)
		if err != nil || baseline <= 0 {
			return bound{}, false
		}
		return bound{classThroughput, x * baseline, true, fmt.Sprintf("min %s × baseline (%.0f records/s)", v.Limit, x*baseline)}, true
	case "max p99 ack latency", "max p99 end-to-end latency":
		d, err := time.ParseDuration(v.Limit)
		if err != nil {
			return bound{}, false
		}
		class, name := classAck, "ack"
		if strings.Contains(v.Bound, "end-to-end") {
			class, name = classE2E, "end-to-end"
		}
		return bound{class, float64(d) / float64(time.Millisecond), false, "max p99 " + name + " " + v.Limit}, true
	}
	return bound{}, false
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

// newChart scales the series and bounds of one chart onto its plot box.
func newChart(title string, end float64, spans []span, ss []series, bounds []placedBound, logY bool) chart {
	c := chart{Title: title, Width: chartWidth, Height: chartHeight,
		Left: plotLeft, Top: plotTop, Right: plotLeft + plotWidth, Bottom: plotTop + plotHeight}
	x := scale{lo: 0, hi: end, from: c.Left, to: c.Right}

	// The y range holds every value and every bound.
	lo, hi := math.Inf(1), 0.0
	for _, s := range ss {
		for _, p := range s.points {
			if p.ok && p.v > 0 {
				lo, hi = min(lo, p.v), max(hi, p.v)
			}
		}
	}
	for _, b := range bounds {
		lo, hi = min(lo, b.value), max(hi, b.value)
	}
	y := scale{from: c.Bottom, to: c.Top, log: logY}
	var yTicks []float64
	if logY {
		if hi == 0 {
			lo, hi = 1, 1000
		}
		yTicks, y.lo, y.hi = logRange(lo, hi)
	} else {
		yTicks, y.hi = linearTicks(max(hi*1.05, 1), 5)
	}
	for _, v := range yTicks {
		label := strconv.FormatFloat(v, 'f', -1, 64)
		if logY {
			label = msLabel(v)
		}
		c.YTicks = append(c.YTicks, tick{y.at(v), label})
	}
	xTicks, _ := linearTicks(end, 10)
	for _, v := range xTicks {
		if v <= end+1e-9 {
			c.XTicks = append(c.XTicks, tick{x.at(v), fmt.Sprintf("%g s", v)})
		}
	}

	for i, sp := range spans {
		x1, x2 := x.at(sp.from), x.at(sp.to)
		c.Bands = append(c.Bands, band{
			Phase: string(sp.phase), X: x1, W: round1(x2 - x1), LabelX: round1((x1 + x2) / 2),
			Shaded: sp.phase == steadystate.PhaseFault || sp.phase == steadystate.PhaseRecovery,
			Starts: i > 0,
		})
	}
	for _, s := range ss {
		// The first series is drawn last: on top of the others.
		c.Lines = slices.Insert(c.Lines, 0, line{Class: s.class, Label: s.label, Points: polylines(s.points, x, y)})
		c.Legend = append(c.Legend, legendItem{s.class, s.label, "line"})
	}
	for _, b := range bounds {
		// A minimum is labelled below its line, a maximum above, unless
		// the plot box has no room there.
		yb := y.at(b.value)
		ly := yb - 5
		if b.min && yb+14 < c.Bottom || ly < c.Top+12 {
			ly = yb + 14
		}
		c.Bounds = append(c.Bounds, boundLine{Class: b.class, Label: b.label,
			X1: x.at(b.from), X2: x.at(b.to), Y: yb, LabelX: x.at(b.from) + 6, LabelY: ly})
		c.Legend = append(c.Legend, legendItem{b.class, "bound: " + b.label, "bound"})
	}
	for _, shaded := range []steadystate.Phase{steadystate.PhaseFault, steadystate.PhaseRecovery} {
		if slices.ContainsFunc(spans, func(sp span) bool { return sp.phase == shaded }) {
			c.Legend = append(c.Legend, legendItem{string(shaded), string(shaded) + " phase", "band"})
		}
	}
	return c
}

// Positions the template needs around the plot box.
func (c chart) PlotHeight() float64  { return c.Bottom - c.Top }
func (c chart) YLabelX() float64     { return c.Left - 7 }
func (c chart) TickEnd() float64     { return c.Bottom + 4 }
func (c chart) XLabelY() float64     { return c.Bottom + 17 }
func (c chart) PhaseLabelY() float64 { return c.Top - 8 }

// polylines returns the points attributes of the polylines that draw ps:
// a point that measured nothing ends one and starts the next.
func polylines(ps []point, x, y scale) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, p := range ps {
		if !p.ok {
			flush()
			continue
		}
		cur = append(cur, fmt.Sprintf("%g,%g", x.at(p.t), y.at(p.v)))
	}
	flush()
	return out
}

// msLabel formats a latency tick: "0.1 ms", "20 ms", "1 s".
func msLabel(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'f', -1, 64) + " ms"
}

// pageTemplate is the page. Its CSS colors the chart's classes; it holds
// no script and no link to anything outside the page.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
:root { --pass: #15803d; --fail: #b91c1c; --caught: #7c3aed; --muted: #6b7280; --rule: #e5e7eb; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: #111827; font: 14px/1.45 system-ui, "Segoe UI", "Liberation Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 22px; margin: 0 0 6px; }
h2 { font-size: 17px; margin: 0 0 6px; line-height: 1.35; }
h3 { font-size: 14px; margin: 18px 0 6px; text-transform: uppercase; letter-spacing: .04em; color: #374151; }
a { color: inherit; }
.meta { color: var(--muted); margin: 2px 0; }
.banner { margin: 14px 0 20px; padding: 12px 16px; border-radius: 6px; font-size: 17px; font-weight: 600; }
.banner.ok { background: #ecfdf3; color: var(--pass); border: 1px solid #a7f3c4; }
.banner.bad { background: #fef2f2; color: var(--fail); border: 1px solid #fecaca; }
.banner small { display: block; font-size: 13px; font-weight: 400; color: #374151; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 8px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--rule); vertical-align: top; }
th { font-size: 12px; color: #374151; background: #f9fafb; font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
.verdict { display: inline-block; min-width: 60px; text-align: center; padding: 1px 8px; border-radius: 4px; font-size: 12px; font-weight: 700; color: #fff; }
.verdict.PASS { background: var(--pass); }
.verdict.FAIL { background: var(--fail); }
.verdict.CAUGHT { background: var(--caught); }
.bad { color: var(--fail); font-weight: 600; }
.ok { color: var(--pass); }
section.spec { border-top: 2px solid var(--rule); margin-top: 28px; padding-top: 18px; }
.failure { background: #fef2f2; border: 1px solid #fecaca; border-radius: 6px; padding: 10px 12px; margin: 10px 0; }
.failure pre { margin: 4px 0 0; white-space: pre-wrap; font: 12px/1.4 "DejaVu Sans Mono", monospace; }
.note { background: #f5f3ff; border: 1px solid #ddd6fe; border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 0 28px; }
ul.problems { margin: 0; padding-left: 18px; color: var(--fail); }
table.summary td:first-child { width: 34%; }
table.checks td:first-child { width: 42%; }
.chart { margin: 10px 0 4px; }
.chart .title { font-weight: 600; }
.caption { font-size: 12px; color: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 12px; color: #374151; margin: 2px 0 2px; }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
svg.plot { width: 100%; height: auto; display: block; }
svg text { font-size: 11px; fill: #4b5563; font-family: system-ui, "Liberation Sans", "DejaVu Sans", sans-serif; }
svg text.phase { font-size: 12px; fill: #374151; text-anchor: middle; }
svg text.ylabel { text-anchor: end; }
svg text.xlabel { text-anchor: middle; }
svg .grid { stroke: #eef0f3; stroke-width: 1; }
svg .axis { stroke: #9ca3af; stroke-width: 1; }
svg .mark { stroke: #9ca3af; stroke-width: 1; stroke-dasharray: 2 3; }
svg rect.band, svg rect.fault, svg rect.recovery { stroke: none; }
svg rect.fault { fill: #fde2e2; }
svg rect.recovery { fill: #fef3c7; }
svg polyline { fill: none; stroke-width: 2; stroke-linejoin: round; stroke-linecap: round; }
svg line.bound { stroke-width: 1.5; stroke-dasharray: 7 5; }
svg .thr { stroke: #2563eb; } svg text.thr { fill: #1d4ed8; stroke: none; }
svg .ack { stroke: #ea580c; } svg text.ack { fill: #c2410c; stroke: none; }
svg .e2e { stroke: #0d9488; } svg text.e2e { fill: #0f766e; stroke: none; }
svg text.bound { font-size: 11px; font-weight: 600; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
{{with .RunTime}}<p class="meta">Run: {{.}}</p>{{end}}
{{with .Source}}<p class="meta">Source: {{.}}</p>{{end}}
{{with .Generated}}<p class="meta">Generated: {{.}}</p>{{end}}
{{if .Failed}}<div class="banner bad">{{.Failed}} of {{.Total}} spec(s) failed
{{else if .Total}}<div class="banner ok">All {{.Total}} spec(s) passed
{{else}}<div class="banner bad">The report holds no spec
{{end}}<small>{{.Passed}} PASS · {{.Caught}} CAUGHT (a negative spec whose checks failed, as they must) · {{.Failed}} FAIL</small></div>

<table class="summary">
<tr><th>Spec</th><th>Fault</th><th>Victims</th><th>Verdict</th><th class="num">Records/s</th><th class="num">p99 ack</th><th class="num">Unavailable</th><th class="num">Lost / dup / reorder</th><th class="num">Healthy after</th><th class="num">Throughput back</th></tr>
{{range .Specs}}<tr><td><a href="#{{.ID}}">{{.Name}}</a></td><td>{{.Fault}}</td><td>{{.Victims}}</td><td><span class="verdict {{.Verdict}}">{{.Verdict}}</span></td><td class="num">{{.Row.Rate}}</td><td class="num">{{.Row.P99Ack}}</td><td class="num">{{.Row.Unavailable}}</td><td class="num{{if .Row.RecordsBad}} bad{{end}}">{{.Row.Records}}</td><td class="num">{{.Row.ToHealthy}}</td><td class="num{{if .Row.BackBad}} bad{{end}}">{{.Row.ThroughputBack}}</td></tr>
{{end}}</table>

{{range .Specs}}<section class="spec" id="{{.ID}}">
<h2><span class="verdict {{.Verdict}}">{{.Verdict}}</span> {{.Name}}</h2>
<p class="meta">{{if eq .Fault "-"}}No fault injected{{else}}Fault: {{.Fault}} · victims: {{.Victims}}{{end}}{{with .Load}} · {{.}}{{end}}</p>
{{if eq .Verdict "CAUGHT"}}<div class="note">A negative spec: it runs against an unsafe cluster, and passes when its checks fail there.</div>{{end}}
{{with .Failure}}<div class="failure"><strong class="bad">Failure</strong><pre>{{.}}</pre></div>{{end}}
{{if not .HasSteadyState}}<p class="meta">No steady-state report: the spec ended before its load did.</p>{{end}}
{{range .Charts}}<div class="chart">
<div class="title">{{.Title}}</div>
<div class="legend">{{range .Legend}}<span><svg width="30" height="12" aria-hidden="true">{{if eq .Kind "band"}}<rect class="{{.Class}}" x="0" y="0" width="30" height="12"/>{{else if eq .Kind "bound"}}<line class="key bound {{.Class}}" x1="0" y1="6" x2="30" y2="6"/>{{else}}<polyline class="{{.Class}}" points="1,6 29,6"/>{{end}}</svg>{{.Label}}</span>{{end}}</div>
<svg class="plot" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="{{.Title}}">
{{$c := .}}{{range .Bands}}{{if .Shaded}}<rect class="band {{.Phase}}" x="{{.X}}" y="{{$c.Top}}" width="{{.W}}" height="{{$c.PlotHeight}}"/>{{end}}
{{end}}{{range .YTicks}}<line class="grid" x1="{{$c.Left}}" y1="{{.Pos}}" x2="{{$c.Right}}" y2="{{.Pos}}"/><text class="ylabel" x="{{$c.YLabelX}}" y="{{.Pos}}" dy="4">{{.Label}}</text>
{{end}}{{range .XTicks}}<line class="axis" x1="{{.Pos}}" y1="{{$c.Bottom}}" x2="{{.Pos}}" y2="{{$c.TickEnd}}"/><text class="xlabel" x="{{.Pos}}" y="{{$c.XLabelY}}">{{.Label}}</text>
{{end}}{{range .Bands}}{{if .Starts}}<line class="mark" x1="{{.X}}" y1="{{$c.Top}}" x2="{{.X}}" y2="{{$c.Bottom}}"/>{{end}}<text class="phase" x="{{.LabelX}}" y="{{$c.PhaseLabelY}}">{{.Phase}}</text>
{{end}}<line class="axis" x1="{{.Left}}" y1="{{.Bottom}}" x2="{{.Right}}" y2="{{.Bottom}}"/><line class="axis" x1="{{.Left}}" y1="{{.Top}}" x2="{{.Left}}" y2="{{.Bottom}}"/>
{{range .Bounds}}<line class="bound {{.Class}}" x1="{{.X1}}" y1="{{.Y}}" x2="{{.X2}}" y2="{{.Y}}"/><text class="bound {{.Class}}" x="{{.LabelX}}" y="{{.LabelY}}">{{.Label}}</text>
{{end}}{{range .Lines}}{{$l := .}}{{range .Points}}<polyline class="{{$l.Class}}" points="{{.}}"/>{{end}}
{{end}}</svg>
{{with .Caption}}<div class="caption">{{.}}</div>{{end}}
</div>
{{end}}
{{if .HasSteadyState}}<h3>Phases</h3>
<table><tr><th>Phase</th><th class="num">From</th><th class="num">To</th><th class="num">Seconds</th><th class="num">Records/s</th><th class="num">p99 ack</th><th class="num">p99 end-to-end</th><th class="num">Unavailable</th></tr>
{{range .Phases}}<tr><td>{{.Phase}}</td><td class="num">{{.From}}</td><td class="num">{{.To}}</td><td class="num">{{.Seconds}}</td><td class="num">{{.Throughput}}</td><td class="num">{{.P99Ack}}</td><td class="num">{{.P99E2E}}</td><td class="num">{{.Unavailable}}</td></tr>
{{end}}</table>
<h3>Hypothesis verdicts</h3>
<table><tr><th>Phase</th><th>Bound</th><th>Observed</th><th>Limit</th><th>Result</th></tr>
{{range .Verdicts}}<tr><td>{{.Phase}}</td><td>{{.Bound}}</td><td{{if not .Passed}} class="bad"{{end}}>{{.Observed}}</td><td>{{.Limit}}</td><td>{{if .Passed}}<span class="ok">ok</span>{{else}}<span class="bad">violated</span>{{end}}</td></tr>
{{end}}</table>
<h3>Anomalies</h3>
<div class="cols"><div>
<table><tr><th>Records</th><th class="num">Count</th></tr>
{{range .Records}}<tr><td>{{.Name}}</td><td class="num{{if .Bad}} bad{{end}}">{{.Value}}</td></tr>
{{end}}</table></div><div>
<table><tr><th>Producer errors</th><th class="num">Count</th></tr>
{{range .Errors}}<tr><td>{{.Name}}</td><td class="num bad">{{.Value}}</td></tr>
{{else}}<tr><td class="ok">none</td><td></td></tr>
{{end}}</table>
<table><tr><th>Violations</th></tr>
{{range .Violations}}<tr><td class="bad">{{.}}</td></tr>
{{else}}<tr><td class="ok">none</td></tr>
{{end}}</table>
{{with .Examples}}<table><tr><th>Examples</th></tr>
{{range .}}<tr><td>{{.}}</td></tr>
{{end}}</table>{{end}}
</div></div>
{{end}}
<div class="cols"><div>
<h3>Checks</h3>
<table class="checks"><tr><th>Check</th><th>Result</th></tr>
{{range .Checks}}<tr><td>{{.Name}}</td><td>{{with .Problems}}<ul class="problems">{{range .}}<li>{{.}}</li>{{end}}</ul>{{else}}<span class="ok">ok</span>{{end}}</td></tr>
{{else}}<tr><td class="meta">no check ran</td><td></td></tr>
{{end}}</table></div><div>
<h3>Recovery times</h3>
<table><tr><th>Time</th><th class="num">Duration</th></tr>
{{range .Recovery}}<tr><td>{{.Name}}</td><td class="num{{if .Bad}} bad{{end}}">{{.Value}}</td></tr>
{{else}}<tr><td class="meta">none measured</td><td></td></tr>
{{end}}</table></div></div>
</section>
{{end}}</main>
</body>
</html>
`
