package steadystate

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Phase names a part of a run. Callers mark phases while a run goes on, and
// bounds are evaluated per phase.
type Phase string

// The phases of a chaos experiment.
const (
	// PhaseWarmup is the load starting up before the baseline, as
	// in-cluster agents do one by one. No bound is checked in it, its gaps
	// are not unavailability, and it is not the baseline; the record
	// invariants still hold for its records.
	PhaseWarmup   Phase = "warmup"
	PhaseBaseline Phase = "baseline"
	PhaseFault    Phase = "fault"
	PhaseRecovery Phase = "recovery"
	PhaseAfter    Phase = "after"
)

// Phases are the phases, in their order in a run.
var Phases = []Phase{PhaseWarmup, PhaseBaseline, PhaseFault, PhaseRecovery, PhaseAfter}

// Bounds are the limits one phase must stay within. A zero field is not
// checked.
type Bounds struct {
	// MinThroughput is the least acknowledged records/s over the phase.
	MinThroughput float64 `json:"minThroughput,omitempty"`
	// MinThroughputRatio is the least throughput as a fraction of the
	// baseline phase's; skipped when the run has no baseline phase.
	MinThroughputRatio float64 `json:"minThroughputRatio,omitempty"`
	// MaxP99Ack bounds the p99 of send -> ack latency.
	MaxP99Ack time.Duration `json:"maxP99Ack,omitempty"`
	// MaxP99AckRatio bounds the p99 of send -> ack latency as a multiple
	// of the baseline phase's p99, but never below P99AckFloor (a baseline
	// of a few milliseconds would make any multiple a hair trigger). It is
	// checked as a max-p99-ack bound with that limit; skipped when the run
	// has no baseline phase with acks, or in the baseline itself.
	MaxP99AckRatio float64       `json:"maxP99AckRatio,omitempty"`
	P99AckFloor    time.Duration `json:"p99AckFloor,omitempty"`
	// MaxP99E2E bounds the p99 of intended send -> consumed latency.
	MaxP99E2E time.Duration `json:"maxP99E2E,omitempty"`
	// MaxUnavailable bounds the longest time with no successful ack.
	MaxUnavailable time.Duration `json:"maxUnavailable,omitempty"`
}

// merge returns b with every zero field taken from o.
func (b Bounds) merge(o Bounds) Bounds {
	if b.MinThroughput == 0 {
		b.MinThroughput = o.MinThroughput
	}
	if b.MinThroughputRatio == 0 {
		b.MinThroughputRatio = o.MinThroughputRatio
	}
	if b.MaxP99Ack == 0 {
		b.MaxP99Ack = o.MaxP99Ack
	}
	if b.MaxP99AckRatio == 0 {
		b.MaxP99AckRatio = o.MaxP99AckRatio
	}
	if b.P99AckFloor == 0 {
		b.P99AckFloor = o.P99AckFloor
	}
	if b.MaxP99E2E == 0 {
		b.MaxP99E2E = o.MaxP99E2E
	}
	if b.MaxUnavailable == 0 {
		b.MaxUnavailable = o.MaxUnavailable
	}
	return b
}

// Hypothesis is the steady-state hypothesis: bounds per phase, and the
// record invariants (lost = 0, reordered = 0, and duplicates = 0 when the
// producer is idempotent), which always hold.
type Hypothesis struct {
	// All applies to every phase.
	All Bounds `json:"all"`
	// Phases adds or overrides bounds for one phase; its non-zero fields win
	// over All's.
	Phases map[Phase]Bounds `json:"phases,omitempty"`
	// MaxPartitionStall bounds every partition's longest time with no ack
	// after the warm-up (Report.Partitions), over the whole run. A fault
	// that stalls one partition while the others ack is invisible to
	// MaxUnavailable, which sees only the times when no partition got one.
	// Zero: not checked.
	MaxPartitionStall time.Duration `json:"maxPartitionStall,omitempty"`
}

// DefaultHypothesis checks the record invariants, and that throughput after
// a fault is back to at least 90% of the baseline's.
func DefaultHypothesis() Hypothesis {
	return Hypothesis{Phases: map[Phase]Bounds{PhaseAfter: {MinThroughputRatio: 0.9}}}
}

// For returns the bounds in force for phase p.
func (h Hypothesis) For(p Phase) Bounds { return h.Phases[p].merge(h.All) }

func (h Hypothesis) validate() error {
	check := func(name string, b Bounds) error {
		if b.MinThroughput < 0 || b.MinThroughputRatio < 0 || b.MaxP99Ack < 0 || b.MaxP99AckRatio < 0 || b.P99AckFloor < 0 || b.MaxP99E2E < 0 || b.MaxUnavailable < 0 {
			return fmt.Errorf("%w: bounds for %s must not be negative", ErrInvalidConfig, name)
		}
		return nil
	}
	if err := check("all phases", h.All); err != nil {
		return err
	}
	if h.MaxPartitionStall < 0 {
		return fmt.Errorf("%w: the partition stall bound must not be negative", ErrInvalidConfig)
	}
	for p, b := range h.Phases {
		if err := check(string(p), b); err != nil {
			return err
		}
	}
	return nil
}

// evaluate checks h against the phases, partition stalls and records of a
// run.
func (h Hypothesis) evaluate(phases []PhaseStats, partitions []PartitionStall, rec Records, idempotent bool, end time.Time) ([]Verdict, []Violation) {
	var verdicts []Verdict
	var violations []Violation
	check := func(ph Phase, k BoundKind, limit, observed figure, ok bool, at time.Time) {
		v := newVerdict(ph, k, limit, observed, ok)
		verdicts = append(verdicts, v)
		if !ok {
			violations = append(violations, v.violation(at))
		}
	}

	baseline := -1.0
	var baselineP99 time.Duration // 0: no baseline acks
	for _, ps := range phases {
		if ps.Phase == PhaseBaseline && ps.Seconds > 0 {
			baseline = ps.Throughput
			if ps.Ack.Count > 0 {
				baselineP99 = time.Duration(ps.Ack.P99) * time.Microsecond
			}
			break
		}
	}
	for _, ps := range phases {
		if ps.Phase == PhaseWarmup {
			continue
		}
		b := h.For(ps.Phase)
		checkRatio := b.MinThroughputRatio > 0 && baseline > 0 && ps.Phase != PhaseBaseline
		if ps.Seconds == 0 {
			// Not measured, so not held against the phase.
			unmeasured := nothing("not measured: the phase holds no whole second")
			if b.MinThroughput > 0 {
				check(ps.Phase, BoundMinThroughput, recordsPerSecond(b.MinThroughput), unmeasured, true, ps.From)
			}
			if checkRatio {
				check(ps.Phase, BoundMinThroughputRatio, ratio(b.MinThroughputRatio), unmeasured, true, ps.From)
			}
			b.MinThroughput, checkRatio = 0, false
		}
		if b.MinThroughput > 0 {
			check(ps.Phase, BoundMinThroughput, recordsPerSecond(b.MinThroughput), recordsPerSecond(ps.Throughput),
				ps.Throughput >= b.MinThroughput, ps.From)
		}
		if checkRatio {
			r := ps.Throughput / baseline
			check(ps.Phase, BoundMinThroughputRatio, ratio(b.MinThroughputRatio),
				number(r, fmt.Sprintf("%.2f (%.1f of %.1f records/s)", r, ps.Throughput, baseline)), r >= b.MinThroughputRatio, ps.From)
		}
		if b.MaxP99Ack > 0 {
			got := time.Duration(ps.Ack.P99) * time.Microsecond
			if ps.Ack.Count == 0 {
				observed, ok := h.noAck(ps, phases)
				check(ps.Phase, BoundMaxP99Ack, seconds(b.MaxP99Ack), observed, ok, ps.From)
			} else {
				check(ps.Phase, BoundMaxP99Ack, seconds(b.MaxP99Ack), seconds(got), got <= b.MaxP99Ack, ps.WorstAckAt)
			}
		}
		if b.MaxP99AckRatio > 0 && baselineP99 > 0 && ps.Phase != PhaseBaseline {
			limit := max(time.Duration(b.MaxP99AckRatio*float64(baselineP99)), b.P99AckFloor).Round(time.Millisecond)
			lim := number(limit.Seconds(), fmt.Sprintf("%s (%g× the baseline's %s, at least %s)", limit, b.MaxP99AckRatio,
				baselineP99.Round(time.Millisecond), b.P99AckFloor))
			got := time.Duration(ps.Ack.P99) * time.Microsecond
			switch {
			case ps.Ack.Count == 0: // a phase of no whole second (a recovery over at once) included
				observed, ok := h.noAck(ps, phases)
				check(ps.Phase, BoundMaxP99Ack, lim, observed, ok, ps.From)
			default:
				check(ps.Phase, BoundMaxP99Ack, lim, seconds(got), got <= limit, ps.WorstAckAt)
			}
		}
		if b.MaxP99E2E > 0 {
			got := time.Duration(ps.E2E.P99) * time.Microsecond
			if ps.E2E.Count == 0 {
				check(ps.Phase, BoundMaxP99E2E, seconds(b.MaxP99E2E), nothing("nothing consumed in the phase"), false, ps.From)
			} else {
				check(ps.Phase, BoundMaxP99E2E, seconds(b.MaxP99E2E), seconds(got), got <= b.MaxP99E2E, ps.WorstE2EAt)
			}
		}
		if b.MaxUnavailable > 0 {
			check(ps.Phase, BoundMaxUnavailability, seconds(b.MaxUnavailable), seconds(ps.Unavailable),
				ps.Unavailable <= b.MaxUnavailable, ps.UnavailableFrom)
		}
	}
	if h.MaxPartitionStall > 0 {
		limit := seconds(h.MaxPartitionStall)
		if worst, ok := worstStall(partitions); ok {
			check("", BoundMaxPartitionStall, limit,
				number(worst.Longest.Seconds(), fmt.Sprintf("%s (partition %d)", worst.Longest, worst.Partition)),
				worst.Longest <= h.MaxPartitionStall, worst.From)
		} else {
			check("", BoundMaxPartitionStall, limit, nothing("not measured: no per-partition figures"), true, end)
		}
	}
	count := func(k BoundKind, n uint64) {
		observed := fmt.Sprint(n)
		if rec.DrainIncomplete && n > 0 {
			observed += " (unverified: the final drain did not complete)"
		}
		check("", k, number(0, "0"), number(float64(n), observed), n == 0, end)
	}
	count(BoundLostRecords, rec.Lost)
	if idempotent {
		count(BoundDuplicateRecords, rec.Duplicates)
	}
	count(BoundReorderedRecords, rec.Reordered)
	count(BoundInconsistentOffsets, rec.InconsistentOffsets)
	return verdicts, violations
}

// worstStall returns the partition with the longest stall; false when
// there are no per-partition figures.
func worstStall(ps []PartitionStall) (PartitionStall, bool) {
	if len(ps) == 0 {
		return PartitionStall{}, false
	}
	return slices.MaxFunc(ps, func(a, b PartitionStall) int { return cmp.Compare(a.Longest, b.Longest) }), true
}

// noAck judges the latency of a phase, of phases, in which nothing was
// acked. Its latency is unbounded, unless the whole phase lay inside one
// stall that an unavailability bound judges: a hold shorter than a hard
// fault's modelled outage has no ack by design. The stall is judged whole
// in the phase that holds most of it (phaseStats), so that phase's bound
// decides here too; the latency of the records it held back is judged
// where they were acked, in a later phase.
func (h Hypothesis) noAck(ps PhaseStats, phases []PhaseStats) (figure, bool) {
	if ps.Seconds == 0 {
		// A phase shorter than a second (a recovery over at once) holds no
		// second of its own: its records' latency is judged in the phases
		// around it.
		return nothing("not measured: the phase holds no whole second"), true
	}
	unbounded := nothing("no ack in the phase")
	if ps.StalledThrough == 0 {
		return unbounded, false
	}
	i := mostOf(phases, Gap{From: ps.StalledFrom, To: ps.StalledFrom.Add(ps.StalledThrough)})
	if i < 0 || phases[i].Phase == PhaseWarmup {
		return unbounded, false
	}
	limit := h.For(phases[i].Phase).MaxUnavailable
	if limit == 0 {
		return unbounded, false
	}
	return nothing(fmt.Sprintf("no ack in the phase: it lies within a stall of %s, judged by the %s phase's max unavailability (%s), and its records' latency where they were acked",
		ps.StalledThrough.Round(time.Millisecond), phases[i].Phase, limit)), ps.StalledThrough <= limit
}
