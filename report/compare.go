package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/kafkachaos/kafkachaos/resources"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Noise floors: a change smaller than these is never a regression, however
// large in percent (p99 going from 2 ms to 3 ms is +50 % and nothing).
const (
	latencyFloor  = 5 * time.Millisecond
	durationFloor = time.Second
	rateFloor     = 10  // records/s
	cpuFloor      = 0.1 // cores
	memoryFloor   = 64  // MiB
)

// Metric is one figure compared between two runs.
type Metric struct {
	Name         string
	HigherBetter bool
	// Value returns the figure of a spec, false when the spec has none.
	value func(Spec) (float64, bool)
	floor float64 // see the noise floors
	unit  string  // "rec/s", "ms", "s"
}

// Metrics are the figures Compare compares, in table order.
func Metrics() []Metric {
	ms := func(m steadystate.Metric, p func(steadystate.LatencyStats) int64) func(Spec) (float64, bool) {
		return func(s Spec) (float64, bool) {
			if s.SteadyState == nil {
				return 0, false
			}
			l, ok := s.SteadyState.Latency[m.String()]
			return float64(p(l)) / 1000, ok && l.Count > 0
		}
	}
	recovery := func(of func(Recovery) Duration) func(Spec) (float64, bool) {
		return func(s Spec) (float64, bool) {
			d := of(s.Recovery)
			if v, ok := d.Value(); ok {
				return v.Seconds(), true
			}
			return math.Inf(1), d.IsNever()
		}
	}
	return []Metric{
		{Name: "throughput", HigherBetter: true, unit: "rec/s", floor: rateFloor, value: func(s Spec) (float64, bool) {
			if s.SteadyState == nil {
				return 0, false
			}
			return s.SteadyState.Summary.RecordsPerSec, true
		}},
		{Name: "p50 ack", unit: "ms", floor: ms1(latencyFloor), value: ms(steadystate.AckLatency, func(l steadystate.LatencyStats) int64 { return l.P50 })},
		{Name: "p99 ack", unit: "ms", floor: ms1(latencyFloor), value: ms(steadystate.AckLatency, func(l steadystate.LatencyStats) int64 { return l.P99 })},
		{Name: "p99 end-to-end", unit: "ms", floor: ms1(latencyFloor), value: ms(steadystate.EndToEnd, func(l steadystate.LatencyStats) int64 { return l.P99 })},
		{Name: "unavailable", unit: "s", floor: durationFloor.Seconds(), value: func(s Spec) (float64, bool) {
			if s.SteadyState == nil {
				return 0, false
			}
			return s.SteadyState.Unavailable.Seconds(), true
		}},
		{Name: "recovery to healthy", unit: "s", floor: durationFloor.Seconds(), value: recovery(func(r Recovery) Duration { return r.ToHealthy })},
		{Name: "throughput back", unit: "s", floor: durationFloor.Seconds(), value: recovery(func(r Recovery) Duration { return r.ThroughputBack })},
		{Name: "CPU, all pods", unit: "cores", floor: cpuFloor, value: usage(func(u resources.Usage) float64 { return u.CPUCores() })},
		{Name: "peak memory, all pods", unit: "MiB", floor: memoryFloor, value: usage(func(u resources.Usage) float64 { return float64(u.PeakMemoryBytes()) / (1 << 20) })},
	}
}

// usage reads a figure of the pods' use, when the run measured it.
func usage(of func(resources.Usage) float64) func(Spec) (float64, bool) {
	return func(s Spec) (float64, bool) {
		if s.Resources == nil || len(s.Resources.Pods) == 0 {
			return 0, false
		}
		return of(*s.Resources), true
	}
}

func ms1(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Row is one metric of one spec in both runs.
type Row struct {
	Spec, Metric string
	A, B         float64
	Unit         string
	// Change is (B-A)/A; NaN when A is 0 or either is infinite.
	Change float64
	// Regressed says B is worse than A by more than the threshold and the
	// metric's noise floor.
	Regressed bool
}

// Comparison is two runs side by side.
type Comparison struct {
	Threshold float64 // the fraction a metric may worsen by
	Rows      []Row
	OnlyInA   []string // specs run in A and not in B
	OnlyInB   []string
}

// Regressions returns the rows that regressed.
func (c Comparison) Regressions() []Row {
	var rs []Row
	for _, r := range c.Rows {
		if r.Regressed {
			rs = append(rs, r)
		}
	}
	return rs
}

// Compare matches the specs of two runs by their text and compares each
// Metric. threshold is the fraction (0.2 for 20 %) by which a metric may
// worsen from a to b before the row counts as a regression.
func Compare(a, b []Spec, threshold float64) Comparison {
	c := Comparison{Threshold: threshold}
	inB := map[string]Spec{}
	for _, s := range b {
		inB[s.Spec] = s
	}
	seen := map[string]bool{}
	for _, sa := range a {
		sb, ok := inB[sa.Spec]
		if !ok {
			c.OnlyInA = append(c.OnlyInA, sa.Spec)
			continue
		}
		seen[sa.Spec] = true
		for _, m := range Metrics() {
			va, okA := m.value(sa)
			vb, okB := m.value(sb)
			if !okA || !okB {
				continue
			}
			c.Rows = append(c.Rows, row(sa.Spec, m, va, vb, threshold))
		}
	}
	for _, s := range b {
		if !seen[s.Spec] {
			c.OnlyInB = append(c.OnlyInB, s.Spec)
		}
	}
	return c
}

func row(spec string, m Metric, a, b, threshold float64) Row {
	r := Row{Spec: spec, Metric: m.Name, A: a, B: b, Unit: m.unit, Change: math.NaN()}
	if a != 0 && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
		r.Change = (b - a) / a
	}
	worse := b - a
	if m.HigherBetter {
		worse = a - b
	}
	switch {
	case math.IsInf(b, 1) && !math.IsInf(a, 1): // "never" came back
		r.Regressed = true
	case math.IsInf(a, 1) || math.IsInf(b, 1):
	case worse > m.floor && worse > threshold*math.Abs(a):
		r.Regressed = true
	}
	return r
}

// Write prints the comparison: per spec, a table of its figures in A and
// B; then the specs only one run has.
func (c Comparison) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	spec := ""
	for _, r := range c.Rows {
		if r.Spec != spec {
			spec = r.Spec
			fmt.Fprintf(tw, "\n%s\n", spec)
			fmt.Fprintln(tw, "  METRIC\tA\tB\tCHANGE\t")
		}
		flag := ""
		if r.Regressed {
			flag = fmt.Sprintf("REGRESSION (> %.0f%%)", c.Threshold*100)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.Metric, figure(r.A, r.Unit), figure(r.B, r.Unit), change(r.Change), flag)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range c.OnlyInA {
		fmt.Fprintf(w, "only in A: %s\n", s)
	}
	for _, s := range c.OnlyInB {
		fmt.Fprintf(w, "only in B: %s\n", s)
	}
	return nil
}

func figure(v float64, unit string) string {
	switch {
	case math.IsInf(v, 1):
		return "never"
	case unit == "s":
		return fmt.Sprintf("%.2f s", v)
	case unit == "ms":
		return fmt.Sprintf("%.1f ms", v)
	case unit == "cores":
		return fmt.Sprintf("%.2f cores", v)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}

func change(c float64) string {
	if math.IsNaN(c) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", c*100)
}
