package steadystate

import (
	"fmt"
	"time"
)

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
