package steadystate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Report is the outcome of one run. It is JSON-serialisable.
type Report struct {
	RunID      string    `json:"runId"`
	Topic      string    `json:"topic"`
	Start      time.Time `json:"start"`
	LoadEnd    time.Time `json:"loadEnd"`
	End        time.Time `json:"end"`
	Rate       int       `json:"rate"`
	Record     int       `json:"recordSize"`
	Producers  int       `json:"producers"`
	Acks       Acks      `json:"acks"`
	Idempotent bool      `json:"idempotent"`

	Summary     Summary                 `json:"summary"`
	SummaryLine string                  `json:"summaryLine"`
	Latency     map[string]LatencyStats `json:"latency"`
	Records     Records                 `json:"records"`
	Errors      map[string]int64        `json:"errors,omitempty"`

	// Unavailable is the longest time with no successful ack, from
	// UnavailableFrom.
	Unavailable     time.Duration `json:"unavailable"`
	UnavailableFrom time.Time     `json:"unavailableFrom"`

	Marks      []Mark       `json:"marks"`
	Phases     []PhaseStats `json:"phases"`
	Series     []Second     `json:"series"`
	Verdicts   []Verdict    `json:"verdicts"`
	Violations []Violation  `json:"violations,omitempty"`
}

// Passed reports whether every bound held.
func (r *Report) Passed() bool { return len(r.Violations) == 0 }

// Mark is the start of a phase.
type Mark struct {
	Phase Phase     `json:"phase"`
	At    time.Time `json:"at"`
}

// Summary holds the figures of kafka-producer-perf-test's final line.
// Latencies are intended send -> ack (Response), which for an unlimited rate
// is what the Kafka tool measures.
type Summary struct {
	Records       int64   `json:"records"`
	RecordsPerSec float64 `json:"recordsPerSec"`
	MBPerSec      float64 `json:"mbPerSec"`
	AvgMs         float64 `json:"avgMs"`
	MaxMs         float64 `json:"maxMs"`
	P50Ms         int64   `json:"p50Ms"`
	P95Ms         int64   `json:"p95Ms"`
	P99Ms         int64   `json:"p99Ms"`
	P999Ms        int64   `json:"p999Ms"`
}

// Line formats s exactly as kafka-producer-perf-test prints its total.
func (s Summary) Line() string {
	return fmt.Sprintf("%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
		s.Records, s.RecordsPerSec, s.MBPerSec, s.AvgMs, s.MaxMs, s.P50Ms, s.P95Ms, s.P99Ms, s.P999Ms)
}

// Second is one point of the per-second time series.
type Second struct {
	T        int64            `json:"t"` // seconds since Start
	Phase    Phase            `json:"phase"`
	Sent     int64            `json:"sent"`
	Acked    int64            `json:"acked"`
	Consumed int64            `json:"consumed"`
	MBPerSec float64          `json:"mbPerSec"`
	AckP50Us int64            `json:"ackP50Us"`
	AckP99Us int64            `json:"ackP99Us"`
	E2EP50Us int64            `json:"e2eP50Us"`
	E2EP99Us int64            `json:"e2eP99Us"`
	Errors   map[string]int64 `json:"errors,omitempty"`
}

// PhaseStats are the figures of one phase interval.
type PhaseStats struct {
	Phase      Phase        `json:"phase"`
	From       time.Time    `json:"from"`
	To         time.Time    `json:"to"`
	Acked      int64        `json:"acked"`
	Seconds    int          `json:"seconds"`    // whole seconds measured
	Throughput float64      `json:"throughput"` // acked records/s over Seconds
	Ack        LatencyStats `json:"ack"`
	E2E        LatencyStats `json:"e2e"`
	// WorstAckAt and WorstE2EAt are the start of the second with the
	// highest p99 in the phase.
	WorstAckAt      time.Time     `json:"worstAckAt"`
	WorstE2EAt      time.Time     `json:"worstE2eAt"`
	Unavailable     time.Duration `json:"unavailable"`
	UnavailableFrom time.Time     `json:"unavailableFrom"`
}

// Duration of the phase interval.
func (p PhaseStats) Duration() time.Duration { return p.To.Sub(p.From) }

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

// buildReport merges ms, which checkMergeable accepted, into a report.
func buildReport(ms []Measurements, marks []Mark, h Hypothesis) *Report {
	f := ms[0]
	start, loadEnd, end := f.Start, f.LoadEnd, f.End
	rate, producers := 0, 0
	var records Records
	for _, m := range ms {
		start, loadEnd, end = minTime(start, m.Start), maxTime(loadEnd, m.LoadEnd), maxTime(end, m.End)
		if rate == RateUnlimited || m.Rate == RateUnlimited {
			rate = RateUnlimited
		} else {
			rate += m.Rate
		}
		producers += m.Producers
		records.add(m.Records)
	}
	r := &Report{
		RunID:      f.RunID,
		Topic:      f.Topic,
		Start:      start,
		LoadEnd:    loadEnd,
		End:        end,
		Rate:       rate,
		Record:     f.RecordSize,
		Producers:  producers,
		Acks:       f.Acks,
		Idempotent: f.Idempotent,
		Records:    records,
		Marks:      marks,
		Latency:    make(map[string]LatencyStats),
	}

	// Merge every runner's seconds into a dense series. Events after the
	// load ended (the final flush and drain) count in the last second.
	last := int64(loadEnd.Sub(start) / time.Second)
	if loadEnd.Sub(start)%time.Second == 0 && last > 0 {
		last--
	}
	n := last + 1
	secs := make([]secData, n)
	for _, m := range ms {
		rebase := int64(m.Start.Sub(start) / time.Second)
		for _, sec := range m.Seconds {
			sd := &secs[min(max(sec.T+rebase, 0), last)]
			sd.counts.add(sec.counts())
			for metric := range numMetrics {
				if hist := sec.Latency[metric]; !hist.empty() {
					sd.hists[metric] = append(sd.hists[metric], hist)
				}
			}
		}
	}

	r.Series = make([]Second, n)
	var all counts
	var scratch histMerger
	for s := range n {
		sc := secs[s].counts
		all.add(sc)
		ack := scratch.stats(secs[s].hists[AckLatency])
		e2e := scratch.stats(secs[s].hists[EndToEnd])
		r.Series[s] = Second{
			T: s, Phase: phaseAt(marks, start.Add(time.Duration(s)*time.Second)),
			Sent: sc.Sent, Acked: sc.Acked, Consumed: sc.Consumed,
			MBPerSec: float64(sc.AckedBytes) / (1 << 20),
			AckP50Us: ack.P50, AckP99Us: ack.P99, E2EP50Us: e2e.P50, E2EP99Us: e2e.P99,
			Errors: sc.Errors,
		}
	}
	r.Errors = all.Errors
	for m := range numMetrics {
		scratch.reset()
		for s := range secs {
			scratch.addAll(secs[s].hists[m])
		}
		r.Latency[m.String()] = statsOf(scratch.hist())
	}

	// Unavailability: times when no producer had an ack.
	var lists [][]Gap
	for _, m := range ms {
		for _, g := range m.AckGaps {
			lists = append(lists, padGaps(g, start, m.Start, m.End, end))
		}
	}
	gaps := intersectGaps(lists)
	judged := warmupEnd(marks) // a warm-up's gaps (agents starting) are not unavailability
	for _, g := range gaps {
		from := maxTime(g.From, judged)
		if g.To.Sub(from) > r.Unavailable {
			r.Unavailable, r.UnavailableFrom = g.To.Sub(from), from
		}
	}

	r.Phases = phaseStats(start, loadEnd, marks, r.Series, secs, gaps)

	resp := r.Latency[Response.String()]
	elapsed := end.Sub(start).Seconds()
	if elapsed > 0 {
		r.Summary.RecordsPerSec = float64(all.Acked) / elapsed
		r.Summary.MBPerSec = float64(all.AckedBytes) / (1 << 20) / elapsed
	}
	r.Summary.Records = all.Acked
	r.Summary.AvgMs = resp.Mean / 1000
	r.Summary.MaxMs = float64(resp.Max) / 1000
	r.Summary.P50Ms, r.Summary.P95Ms = resp.P50/1000, resp.P95/1000
	r.Summary.P99Ms, r.Summary.P999Ms = resp.P99/1000, resp.P999/1000
	r.SummaryLine = r.Summary.Line()

	r.Verdicts, r.Violations = h.evaluate(r.Phases, r.Records, r.Idempotent, end)
	for _, m := range ms {
		if m.DrainError == "" {
			continue
		}
		observed := m.DrainError
		if len(ms) > 1 {
			observed = fmt.Sprintf("producers [%d, %d): %s", m.ProducerBase, uint64(m.ProducerBase)+uint64(m.Producers), observed)
		}
		r.Violations = append(r.Violations, Violation{Bound: "final drain", Limit: "all acked records read", Observed: observed, At: m.End})
	}
	return r
}

// padGaps returns a copy of one producer's gaps, which ran from runStart to
// runEnd, extended to the merged run from start to end: before and after its
// run the producer got no ack. A pad joins the gap it touches.
func padGaps(gs []Gap, start, runStart, runEnd, end time.Time) []Gap {
	out := make([]Gap, 0, len(gs)+2)
	if runStart.After(start) {
		out = append(out, Gap{start, runStart})
	}
	for i, g := range gs {
		if i == 0 && len(out) == 1 && g.From.Equal(runStart) {
			out[0].To = g.To
			continue
		}
		out = append(out, g)
	}
	if end.After(runEnd) {
		if n := len(out); n > 0 && out[n-1].To.Equal(runEnd) {
			out[n-1].To = end
		} else {
			out = append(out, Gap{runEnd, end})
		}
	}
	return out
}

// warmupEnd returns when a leading warm-up phase ends (the next mark), or
// the zero time when the marks start with no warm-up.
func warmupEnd(marks []Mark) time.Time {
	if len(marks) > 1 && marks[0].Phase == PhaseWarmup {
		return marks[1].At
	}
	return time.Time{}
}

// phaseAt returns the phase in force at t: the last mark at or before it.
func phaseAt(marks []Mark, t time.Time) Phase {
	p := PhaseBaseline
	for _, m := range marks {
		if m.At.After(t) {
			break
		}
		p = m.Phase
	}
	return p
}

// secData is one second of the run, merged over recorders.
type secData struct {
	counts counts
	hists  [numMetrics][]SparseHistogram
}

// phaseStats computes the figures of each phase interval. A second belongs
// to the interval that holds its middle.
func phaseStats(start, loadEnd time.Time, marks []Mark, series []Second, secs []secData, gaps []Gap) []PhaseStats {
	if len(marks) == 0 || marks[0].At.After(start) {
		marks = append([]Mark{{PhaseBaseline, start}}, marks...)
	}
	var out []PhaseStats
	var ack, e2e histMerger
	last := len(secs) - 1
	lastFull := loadEnd.Sub(start.Add(time.Duration(last)*time.Second)) >= time.Second
	for i, m := range marks {
		from, to := m.At, loadEnd
		if i+1 < len(marks) && marks[i+1].At.Before(to) {
			to = marks[i+1].At
		}
		if from.Before(start) {
			from = start
		}
		if !to.After(from) {
			continue // marked after the load ended: nothing to measure
		}
		ps := PhaseStats{Phase: m.Phase, From: from, To: to}
		ack.reset()
		e2e.reset()
		var worstAck, worstE2E int64 = -1, -1
		var fullAcked int64
		for s := range secs {
			mid := start.Add(time.Duration(s)*time.Second + time.Second/2)
			inPhase := !mid.Before(from) && mid.Before(to)
			// The last second (which also holds the flush and drain
			// tail) belongs to the phase in force when the load ended.
			if s == last {
				inPhase = to.Equal(loadEnd)
			}
			if !inPhase {
				continue
			}
			ps.Acked += secs[s].counts.Acked
			if s != last || lastFull {
				ps.Seconds++
				fullAcked += secs[s].counts.Acked
			}
			ack.addAll(secs[s].hists[AckLatency])
			e2e.addAll(secs[s].hists[EndToEnd])
			secStart := start.Add(time.Duration(s) * time.Second)
			if p := series[s].AckP99Us; p > worstAck {
				worstAck, ps.WorstAckAt = p, secStart
			}
			if p := series[s].E2EP99Us; p > worstE2E {
				worstE2E, ps.WorstE2EAt = p, secStart
			}
		}
		// Throughput counts whole seconds only, so a partial second and
		// the flush tail do not skew it.
		if ps.Seconds > 0 {
			ps.Throughput = float64(fullAcked) / float64(ps.Seconds)
		}
		ps.Ack, ps.E2E = statsOf(ack.hist()), statsOf(e2e.hist())
		for _, g := range gaps {
			f, t := maxTime(g.From, from), minTime(g.To, to)
			if t.Sub(f) > ps.Unavailable {
				ps.Unavailable, ps.UnavailableFrom = t.Sub(f), f
			}
		}
		out = append(out, ps)
	}
	return out
}

// intersectGaps returns the times that are inside a gap of every list: when
// no producer got an ack.
func intersectGaps(lists [][]Gap) []Gap {
	if len(lists) == 0 {
		return nil
	}
	cur := lists[0]
	for _, l := range lists[1:] {
		var next []Gap
		for _, a := range cur {
			for _, b := range l {
				f, t := maxTime(a.From, b.From), minTime(a.To, b.To)
				if t.After(f) {
					next = append(next, Gap{f, t})
				}
			}
		}
		cur = next
	}
	sort.Slice(cur, func(i, j int) bool { return cur[i].From.Before(cur[j].From) })
	return cur
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
