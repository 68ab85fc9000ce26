package steadystate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrCannotMerge is wrapped by Merge's errors about measurements that do not
// belong together.
var ErrCannotMerge = errors.New("steadystate: cannot merge measurements")

// Merge summarises the measurements of one run into its report, and
// evaluates the hypothesis h on it. A Runner's own report is Merge of its
// Measurements; the measurements of several runners of one run (agents with
// the same run ID and disjoint producer ranges) merge into one report as if a
// single runner had produced their load:
//
//   - Every runner's seconds are rebased onto the earliest Start in whole
//     seconds: a runner that started 1.4 s later has its second s counted in
//     second s+1. A second of the merged series may thus hold events of up
//     to one second later; the error is below one second.
//   - Counts add up, and histograms are merged bucket by bucket, so merged
//     percentiles are exact (never averages of percentiles).
//   - Unavailability is when no producer of any runner got an ack: the
//     intersection of every producer's ack gaps, where a runner's producers
//     count as without acks before its Start and after its End.
//   - Records add up (they are disjoint by producer).
//
// marks are the phases of the merged run (a suite marks them; agents do not
// know them); nil takes the marks of ms[0]. Errors wrap ErrCannotMerge when
// the measurements have different run IDs, topics, record sizes, acks or
// idempotence, or overlapping producer ranges, or are malformed; and
// ErrInvalidConfig when h is invalid.
func Merge(ms []Measurements, marks []Mark, h Hypothesis) (*Report, error) {
	if err := checkMergeable(ms); err != nil {
		return nil, err
	}
	if err := h.validate(); err != nil {
		return nil, err
	}
	if marks == nil {
		marks = ms[0].Marks
	}
	return buildReport(ms, marks, h), nil
}

// MaxLoad is the longest load that one runner's measurements may span; the
// runners of one merge must also start within MaxLoad of each other.
const MaxLoad = 7 * 24 * time.Hour

// checkMergeable reports why ms cannot be merged, if they cannot.
func checkMergeable(ms []Measurements) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrCannotMerge}, a...)...)
	}
	if len(ms) == 0 {
		return bad("no measurements")
	}
	f := ms[0]
	nb := numBuckets()
	for i, m := range ms {
		switch {
		case m.RunID != f.RunID:
			return bad("measurements %d are of run %s, measurements 0 of run %s", i, m.RunID, f.RunID)
		case m.Topic != f.Topic:
			return bad("measurements %d are of topic %s, measurements 0 of topic %s", i, m.Topic, f.Topic)
		case m.RecordSize != f.RecordSize || m.Acks != f.Acks || m.Idempotent != f.Idempotent:
			return bad("measurements %d (record size %d, acks=%s, idempotent=%t) differ from measurements 0 (record size %d, acks=%s, idempotent=%t)",
				i, m.RecordSize, m.Acks, m.Idempotent, f.RecordSize, f.Acks, f.Idempotent)
		case m.Producers < 1:
			return bad("measurements %d have %d producers", i, m.Producers)
		case m.Start.IsZero() || m.LoadEnd.Before(m.Start) || m.End.Before(m.LoadEnd):
			return bad("measurements %d have no valid start %s, load end %s and end %s", i, m.Start, m.LoadEnd, m.End)
		case m.LoadEnd.Sub(m.Start) > MaxLoad || m.LoadEnd.Sub(f.Start).Abs() > MaxLoad || m.Start.Sub(f.Start).Abs() > MaxLoad:
			// The report has a row per second of load: a clock gone wrong
			// must not make it allocate one per second of a century.
			return bad("measurements %d span %s to %s, and measurements 0 start at %s: more than the %s a run may last",
				i, m.Start, m.LoadEnd, f.Start, MaxLoad)
		}
		for _, s := range m.Seconds {
			for metric, h := range s.Latency {
				if metric < 0 || metric >= numMetrics {
					return bad("measurements %d, second %d: unknown metric %d", i, s.T, int(metric))
				}
				if err := h.check(nb); err != nil {
					return bad("measurements %d, second %d, %s histogram: %v", i, s.T, metric, err)
				}
			}
		}
	}
	byBase := make([]Measurements, len(ms))
	copy(byBase, ms)
	slices.SortFunc(byBase, func(a, b Measurements) int { return cmp.Compare(a.ProducerBase, b.ProducerBase) })
	for i := 1; i < len(byBase); i++ {
		p, m := byBase[i-1], byBase[i]
		if uint64(p.ProducerBase)+uint64(p.Producers) > uint64(m.ProducerBase) {
			return bad("producer ranges [%d, %d) and [%d, %d) overlap", p.ProducerBase, uint64(p.ProducerBase)+uint64(p.Producers),
				m.ProducerBase, uint64(m.ProducerBase)+uint64(m.Producers))
		}
	}
	return nil
}
