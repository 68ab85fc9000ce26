package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

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
	c.XTicks, c.Bands = timeAxis(end, x), phaseBands(spans, x)
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

// timeAxis is the ticks of the seconds 0..end on x, as every chart and the
// event lanes share them.
func timeAxis(end float64, x scale) []tick {
	var out []tick
	vs, _ := linearTicks(end, 10)
	for _, v := range vs {
		if v <= end+1e-9 {
			out = append(out, tick{x.at(v), fmt.Sprintf("%g s", v)})
		}
	}
	return out
}

// phaseBands places the phases on x: the fault and recovery shaded.
func phaseBands(spans []span, x scale) []band {
	var out []band
	for i, sp := range spans {
		x1, x2 := x.at(sp.from), x.at(sp.to)
		out = append(out, band{
			Phase: string(sp.phase), X: x1, W: round1(x2 - x1), LabelX: round1((x1 + x2) / 2),
			Shaded: sp.phase == steadystate.PhaseFault || sp.phase == steadystate.PhaseRecovery,
			Starts: i > 0,
		})
	}
	return out
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
