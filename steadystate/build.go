package steadystate

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// buildReport merges ms, which checkMergeable accepted, into a report with
// the phases marks, and evaluates h on it.
func buildReport(ms []Measurements, marks []Mark, h Hypothesis) *Report {
	r := newReport(ms, marks)
	secs := mergeSeconds(ms, r.Start, r.LoadEnd)
	var all counts
	r.Series, all = series(secs, marks, r.Start)
	r.Errors = all.Errors
	r.Latency = latency(secs)
	gaps := noAckGaps(ms, r.Start, r.End)
	r.Unavailable, r.UnavailableFrom = unavailability(gaps, marks)
	for p, pg := range partitionNoAckGaps(ms, r.Start, r.End) {
		longest, from := unavailability(pg, marks)
		r.Partitions = append(r.Partitions, PartitionStall{Partition: int32(p), Longest: longest, From: from})
	}
	r.Phases = phaseStats(r.Start, r.LoadEnd, marks, r.Series, secs, gaps)
	r.Summary = summarize(all, r.Latency[Response.String()], r.Start, r.End)
	r.SummaryLine = r.Summary.Line()
	r.Verdicts, r.Violations = h.evaluate(r.Phases, r.Partitions, r.Records, r.Idempotent, r.End)
	r.Violations = append(r.Violations, drainViolations(ms)...)
	var extra []Verdict
	if r.Group != nil {
		extra = append(extra, groupVerdict(*r.Group))
	}
	if r.Transactions != nil {
		extra = append(extra, txnVerdict(*r.Transactions))
	}
	if r.Java != nil {
		extra = append(extra, javaVerdict(*r.Java))
	}
	for _, v := range extra {
		r.Verdicts = append(r.Verdicts, v)
		if !v.Passed {
			r.Violations = append(r.Violations, v.violation(r.End))
		}
	}
	return r
}

// firstGroup is the group verdict of ms: one runner's (agents run no
// application group yet).
func firstGroup(ms []Measurements) *groupcheck.Result {
	for _, m := range ms {
		if m.Group != nil {
			return m.Group
		}
	}
	return nil
}

// firstTxn is the transactional verdict of ms: one runner's (agents run
// no transactional workload).
func firstTxn(ms []Measurements) *txncheck.Result {
	for _, m := range ms {
		if m.Transactions != nil {
			return m.Transactions
		}
	}
	return nil
}

// firstJava is the Java clients' verdict of ms: one runner's (agents run
// no Java clients).
func firstJava(ms []Measurements) *javaclients.Result {
	for _, m := range ms {
		if m.Java != nil {
			return m.Java
		}
	}
	return nil
}

// javaVerdict is the verdict on the Java clients' checks: none may find
// anything, and the run must have been judged whole.
func javaVerdict(j javaclients.Result) Verdict {
	p := j.Problems()
	observed := "0"
	if len(p) > 0 {
		observed = strings.Join(p, "; ")
	}
	return newVerdict("", BoundJavaAnomalies, number(0, "0"), number(float64(len(p)), observed), len(p) == 0)
}

// txnVerdict is the verdict on the transactional checks: none may find
// anything, and the run must have been able to.
func txnVerdict(t txncheck.Result) Verdict {
	observed := "0"
	if p := t.Problems(); len(p) > 0 {
		observed = strings.Join(p, "; ")
	}
	return newVerdict("", BoundTransactionAnomalies, number(0, "0"), number(float64(t.Total()), observed), t.Clean())
}

// groupVerdict is the verdict on the consumer group's checks: none may
// find anything.
func groupVerdict(g groupcheck.Result) Verdict {
	n := g.Total()
	observed := "0"
	if p := g.Problems(); len(p) > 0 {
		observed = strings.Join(p, "; ")
	}
	return newVerdict("", BoundGroupAnomalies, number(0, "0"), number(float64(n), observed), n == 0)
}

// newReport returns the report of ms with what the runners configured and
// counted, and no measured figures yet: the run spans from the earliest
// start to the latest load end and end; rates, producers and records add up
// (a rate is unlimited when any runner's is).
func newReport(ms []Measurements, marks []Mark) *Report {
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
	return &Report{
		RunID:        f.RunID,
		Topic:        f.Topic,
		Start:        start,
		LoadEnd:      loadEnd,
		End:          end,
		Rate:         rate,
		Record:       f.RecordSize,
		Producers:    producers,
		Acks:         f.Acks,
		Idempotent:   f.Idempotent,
		Records:      records,
		Group:        firstGroup(ms),
		Transactions: firstTxn(ms),
		Java:         firstJava(ms),
		Marks:        marks,
	}
}

// mergeSeconds merges every runner's seconds into a dense series of the
// seconds from start to loadEnd, a runner's seconds rebased onto start in
// whole seconds. Events after the load ended (the final flush and drain)
// count in the last second.
func mergeSeconds(ms []Measurements, start, loadEnd time.Time) []secData {
	last := int64(loadEnd.Sub(start) / time.Second)
	if loadEnd.Sub(start)%time.Second == 0 && last > 0 {
		last--
	}
	secs := make([]secData, last+1)
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
	return secs
}

// series returns the report's per-second time series of secs, which start
// at start, each second in the phase that marks put in force at its start;
// and the counts of all the seconds together.
func series(secs []secData, marks []Mark, start time.Time) ([]Second, counts) {
	out := make([]Second, len(secs))
	var all counts
	var scratch histMerger
	for s := range secs {
		sc := secs[s].counts
		all.add(sc)
		ack := scratch.stats(secs[s].hists[AckLatency])
		e2e := scratch.stats(secs[s].hists[EndToEnd])
		out[s] = Second{
			T: int64(s), Phase: phaseAt(marks, start.Add(time.Duration(s)*time.Second)),
			Sent: sc.Sent, Acked: sc.Acked, Consumed: sc.Consumed,
			MBPerSec: float64(sc.AckedBytes) / (1 << 20),
			AckP50Us: ack.P50, AckP99Us: ack.P99, E2EP50Us: e2e.P50, E2EP99Us: e2e.P99,
			Errors: sc.Errors,
		}
	}
	return out, all
}

// latency returns the statistics of every metric over all of secs, keyed
// by the metric's name.
func latency(secs []secData) map[string]LatencyStats {
	out := make(map[string]LatencyStats)
	var scratch histMerger
	for m := range numMetrics {
		scratch.reset()
		for s := range secs {
			scratch.addAll(secs[s].hists[m])
		}
		out[m.String()] = statsOf(scratch.hist())
	}
	return out
}

// unavailability returns the longest of gaps, the times when no producer got
// an ack, and when it started. A leading warm-up's gaps (agents starting)
// are not unavailability: only what is left of a gap after the warm-up
// counts.
func unavailability(gaps []Gap, marks []Mark) (longest time.Duration, from time.Time) {
	judged := warmupEnd(marks)
	for _, g := range gaps {
		f := maxTime(g.From, judged)
		if g.To.Sub(f) > longest {
			longest, from = g.To.Sub(f), f
		}
	}
	return longest, from
}

// summarize returns the figures of kafka-producer-perf-test's final line for
// the run from start to end, from the counts of all its seconds and resp,
// its Response latency.
func summarize(all counts, resp LatencyStats, start, end time.Time) Summary {
	s := Summary{
		Records: all.Acked,
		AvgMs:   resp.Mean / 1000,
		MaxMs:   float64(resp.Max) / 1000,
		P50Ms:   resp.P50 / 1000,
		P95Ms:   resp.P95 / 1000,
		P99Ms:   resp.P99 / 1000,
		P999Ms:  resp.P999 / 1000,
	}
	if elapsed := end.Sub(start).Seconds(); elapsed > 0 {
		s.RecordsPerSec = float64(all.Acked) / elapsed
		s.MBPerSec = float64(all.AckedBytes) / (1 << 20) / elapsed
	}
	return s
}

// drainViolations returns a "final drain" violation for every runner of ms
// whose final drain did not read every acked record. When there are several
// runners, each violation names the runner's producers.
func drainViolations(ms []Measurements) []Violation {
	var out []Violation
	for _, m := range ms {
		if m.DrainError == "" {
			continue
		}
		observed := m.DrainError
		if len(ms) > 1 {
			observed = fmt.Sprintf("producers [%d, %d): %s", m.ProducerBase, uint64(m.ProducerBase)+uint64(m.Producers), observed)
		}
		v := newVerdict("", BoundFinalDrain, number(0, "all acked records read"), nothing(observed), false)
		out = append(out, v.violation(m.End))
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
	judged := warmupEnd(marks) // zero without a warm-up
	if len(marks) == 0 || marks[0].At.After(start) {
		marks = append([]Mark{{PhaseBaseline, start}}, marks...)
	}
	var out []PhaseStats
	var spans []Gap // the measured seconds of each phase of out
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
		span := Gap{From: to, To: from} // empty until a second is in the phase
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
			secStart := start.Add(time.Duration(s) * time.Second)
			span.From, span.To = minTime(span.From, secStart), maxTime(span.To, secStart.Add(time.Second))
			if s != last || lastFull {
				ps.Seconds++
				fullAcked += secs[s].counts.Acked
			}
			ack.addAll(secs[s].hists[AckLatency])
			e2e.addAll(secs[s].hists[EndToEnd])
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
		out, spans = append(out, ps), append(spans, span)
	}
	stalledThrough(out, spans, gaps)
	// A gap counts whole, in the phase that holds most of it: a stall from
	// the fault into the recovery is one stall, not two halves that each
	// pass the bound, and a stall that began with the last ack before the
	// fault was marked is the fault's. The warm-up's part of a gap is the
	// warm-up's own (shown, never judged).
	for _, g := range gaps {
		parts := []Gap{g}
		if g.From.Before(judged) && g.To.After(judged) {
			parts = []Gap{{g.From, judged}, {judged, g.To}}
		}
		for _, p := range parts {
			if i := mostOf(out, p); i >= 0 && p.To.Sub(p.From) > out[i].Unavailable {
				out[i].Unavailable, out[i].UnavailableFrom = p.To.Sub(p.From), p.From
			}
		}
	}
	return out
}

// stalledThrough sets, on each phase of out with no ack, the length of the
// gap that spans all its measured seconds (spans, parallel to out).
func stalledThrough(out []PhaseStats, spans []Gap, gaps []Gap) {
	for i := range out {
		if out[i].Ack.Count > 0 || !spans[i].To.After(spans[i].From) {
			continue
		}
		for _, g := range gaps {
			if !g.From.After(spans[i].From) && !g.To.Before(spans[i].To) {
				out[i].StalledThrough, out[i].StalledFrom = g.To.Sub(g.From), g.From
			}
		}
	}
}

// mostOf returns the index of the phase of ps that holds the largest part
// of g; -1 when none holds any.
func mostOf(ps []PhaseStats, g Gap) int {
	best, most := -1, time.Duration(0)
	for i, p := range ps {
		if d := minTime(g.To, p.To).Sub(maxTime(g.From, p.From)); d > most {
			best, most = i, d
		}
	}
	return best
}
