package steadystate

import (
	"fmt"
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

// runData is what a finished run hands to buildReport.
type runData struct {
	cfg       Config
	start     time.Time
	loadEnd   time.Time
	end       time.Time
	marks     []Mark
	recorders []*recorder
	ackGaps   [][]gap // per producer
	records   Records
}

func buildReport(d runData) *Report {
	c := d.cfg
	r := &Report{
		RunID:      fmt.Sprintf("%016x", c.RunID),
		Topic:      c.Topic,
		Start:      d.start,
		LoadEnd:    d.loadEnd,
		End:        d.end,
		Rate:       c.Rate,
		Record:     c.RecordSize,
		Producers:  c.Producers,
		Acks:       c.Acks,
		Idempotent: !c.NoIdempotence,
		Records:    d.records,
		Marks:      d.marks,
		Latency:    make(map[string]LatencyStats),
	}

	// Merge every recorder's sealed seconds into a dense series. Events
	// after the load ended (the final flush and drain) count in the last
	// second.
	last := int64(d.loadEnd.Sub(d.start) / time.Second)
	if d.loadEnd.Sub(d.start)%time.Second == 0 && last > 0 {
		last--
	}
	n := last + 1
	secs := make([]secData, n)
	for _, rec := range d.recorders {
		for _, ss := range rec.sealed {
			sd := &secs[min(max(ss.sec, 0), last)]
			sd.counts.add(ss.counts)
			for m := range numMetrics {
				if len(ss.hists[m].idx) > 0 {
					sd.hists[m] = append(sd.hists[m], ss.hists[m])
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
			T: s, Phase: phaseAt(d.marks, d.start.Add(time.Duration(s)*time.Second)),
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
	gaps := intersectGaps(d.ackGaps)
	for _, g := range gaps {
		if g.to.Sub(g.from) > r.Unavailable {
			r.Unavailable, r.UnavailableFrom = g.to.Sub(g.from), g.from
		}
	}

	r.Phases = phaseStats(d, r.Series, secs, gaps)

	resp := r.Latency[Response.String()]
	elapsed := d.end.Sub(d.start).Seconds()
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

	r.Verdicts, r.Violations = c.Hypothesis.evaluate(r.Phases, r.Records, r.Idempotent, d.end)
	return r
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
	hists  [numMetrics][]sparseHist
}

// phaseStats computes the figures of each phase interval. A second belongs
// to the interval that holds its middle.
func phaseStats(d runData, series []Second, secs []secData, gaps []gap) []PhaseStats {
	marks := d.marks
	if len(marks) == 0 || marks[0].At.After(d.start) {
		marks = append([]Mark{{PhaseBaseline, d.start}}, marks...)
	}
	var out []PhaseStats
	var ack, e2e histMerger
	last := len(secs) - 1
	lastFull := d.loadEnd.Sub(d.start.Add(time.Duration(last)*time.Second)) >= time.Second
	for i, m := range marks {
		from, to := m.At, d.loadEnd
		if i+1 < len(marks) && marks[i+1].At.Before(to) {
			to = marks[i+1].At
		}
		if from.Before(d.start) {
			from = d.start
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
			mid := d.start.Add(time.Duration(s)*time.Second + time.Second/2)
			inPhase := !mid.Before(from) && mid.Before(to)
			// The last second (which also holds the flush and drain
			// tail) belongs to the phase in force when the load ended.
			if s == last {
				inPhase = to.Equal(d.loadEnd)
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
			secStart := d.start.Add(time.Duration(s) * time.Second)
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
			f, t := maxTime(g.from, from), minTime(g.to, to)
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
func intersectGaps(lists [][]gap) []gap {
	if len(lists) == 0 {
		return nil
	}
	cur := lists[0]
	for _, l := range lists[1:] {
		var next []gap
		for _, a := range cur {
			for _, b := range l {
				f, t := maxTime(a.from, b.from), minTime(a.to, b.to)
				if t.After(f) {
					next = append(next, gap{f, t})
				}
			}
		}
		cur = next
	}
	sort.Slice(cur, func(i, j int) bool { return cur[i].from.Before(cur[j].from) })
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
