package steadystate

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

const testRunID = "00000000000000aa"

// histOf returns the sparse histogram of ds.
func histOf(ds ...time.Duration) SparseHistogram {
	h := newHist()
	for _, d := range ds {
		recordDur(h, d)
	}
	return sparseOf(h)
}

// repeat returns n copies of d.
func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// acked is a second with n acks, all of ack latency lat.
func acked(t int64, n int, lat time.Duration) MeasuredSecond {
	return MeasuredSecond{T: t, Sent: int64(n), Acked: int64(n), AckedBytes: 100 * int64(n), Consumed: int64(n),
		Latency: map[Metric]SparseHistogram{AckLatency: histOf(repeat(lat, n)...)}}
}

// stalled returns 14 seconds with an ack of 1 ms in each, except in seconds
// from to to (none) and in the second after to (the held-back records,
// acked after wait).
func stalled(from, to int64, wait time.Duration) []MeasuredSecond {
	var out []MeasuredSecond
	for s := int64(0); s < 14; s++ {
		switch {
		case s >= from && s <= to:
			out = append(out, MeasuredSecond{T: s})
		case s == to+1:
			out = append(out, acked(s, 100, wait))
		default:
			out = append(out, acked(s, 10, time.Millisecond))
		}
	}
	return out
}

// measured returns one producer's measurements of len(secs) seconds of load
// from start, with no ack gap.
func measured(base uint32, start time.Time, secs ...MeasuredSecond) Measurements {
	var n uint64
	for _, s := range secs {
		n += uint64(s.Acked)
	}
	loadEnd := start.Add(time.Duration(len(secs)) * time.Second)
	return Measurements{
		RunID: testRunID, Topic: "t", ProducerBase: base, Producers: 1, Rate: 100, RecordSize: 100, Acks: AcksAll, Idempotent: true,
		Start: start, LoadEnd: loadEnd, End: loadEnd.Add(200 * time.Millisecond),
		Seconds: secs, AckGaps: [][]Gap{nil}, Records: Records{Acked: n, Consumed: n},
	}
}

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	// Agent a: 990 acks at 1 ms and 10 at 500 ms (p99 1 ms); agent b:
	// 1000 acks at 2 ms (p99 2 ms). Together the p99 is 2 ms, not the
	// 1.5 ms that averaging the agents' p99s would give.
	slow := MeasuredSecond{T: 0, Sent: 1000, Acked: 1000, AckedBytes: 100_000, Consumed: 1000,
		Latency: map[Metric]SparseHistogram{AckLatency: histOf(append(repeat(time.Millisecond, 990), repeat(500*time.Millisecond, 10)...)...)}}
	all := newHist()
	for _, d := range append(append(repeat(time.Millisecond, 990), repeat(500*time.Millisecond, 10)...), repeat(2*time.Millisecond, 1000)...) {
		recordDur(all, d)
	}
	mergedP99 := statsOf(all).P99

	withGaps := func(m Measurements, end time.Time, gaps ...Gap) Measurements {
		m.End, m.LoadEnd = end, end
		m.AckGaps = [][]Gap{gaps}
		return m
	}
	withMarks := func(m Measurements, marks ...Mark) Measurements { m.Marks = marks; return m }
	// threeAgents load over the same two seconds at different rates.
	threeAgents := func() []Measurements {
		return []Measurements{
			measured(0, t0, acked(0, 1000, time.Millisecond), acked(1, 1200, time.Millisecond)),
			measured(1, t0, acked(0, 3000, time.Millisecond), acked(1, 2800, time.Millisecond)),
			measured(2, t0, acked(0, 500, time.Millisecond), acked(1, 700, time.Millisecond)),
		}
	}

	// No ack from 2.9 s to 10.1 s: the fault, marked from 3 s to 9.5 s,
	// has none.
	stallMs := []Measurements{withGaps(measured(0, t0, stalled(3, 8, 7*time.Second)...), at(14*time.Second),
		Gap{at(2900 * time.Millisecond), at(10100 * time.Millisecond)})}
	stallMarks := []Mark{{PhaseBaseline, t0}, {PhaseFault, at(3 * time.Second)}, {PhaseRecovery, at(9500 * time.Millisecond)}}
	tests := []struct {
		name  string
		ms    []Measurements
		marks []Mark
		h     Hypothesis
		check func(t *testing.T, rep *Report)
	}{
		{
			// Throughput mode: 3 agents over the same window. The merged
			// kafka-producer-perf-test line sums theirs.
			name: "the merged perf line sums the agents' lines",
			ms:   threeAgents(),
			check: func(t *testing.T, rep *Report) {
				var records int64
				var perSec, mb float64
				for i, m := range threeAgents() {
					one, err := Merge([]Measurements{m}, nil, Hypothesis{})
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("agent %d: %s", i, one.SummaryLine)
					records += one.Summary.Records
					perSec += one.Summary.RecordsPerSec
					mb += one.Summary.MBPerSec
				}
				t.Logf("merged: %s", rep.SummaryLine)
				if rep.Summary.Records != records || records != 9200 {
					t.Errorf("merged records %d, the agents' sum %d; want both 9200", rep.Summary.Records, records)
				}
				if d := rep.Summary.RecordsPerSec - perSec; d > 1e-6 || d < -1e-6 {
					t.Errorf("merged records/sec %f, the agents' sum %f", rep.Summary.RecordsPerSec, perSec)
				}
				if d := rep.Summary.MBPerSec - mb; d > 1e-9 || d < -1e-9 {
					t.Errorf("merged MB/sec %f, the agents' sum %f", rep.Summary.MBPerSec, mb)
				}
			},
		},
		{
			name: "p99 comes from the merged histogram",
			ms:   []Measurements{measured(0, t0, slow), measured(1, t0, acked(0, 1000, 2*time.Millisecond))},
			check: func(t *testing.T, rep *Report) {
				ack := rep.Latency[AckLatency.String()]
				if ack.Count != 2000 || ack.P99 != mergedP99 {
					t.Errorf("ack latency %+v; want 2000 values and p99 %d µs", ack, mergedP99)
				}
				if avg := (int64(1000) + 2000) / 2; ack.P99 == avg {
					t.Errorf("p99 %d µs is the average of the agents' p99s", ack.P99)
				}
				if rep.Series[0].AckP99Us != mergedP99 || rep.Phases[0].Ack.P99 != mergedP99 {
					t.Errorf("second 0 p99 %d, phase p99 %d; want %d", rep.Series[0].AckP99Us, rep.Phases[0].Ack.P99, mergedP99)
				}
				if rep.Records.Acked != 2000 || rep.Summary.Records != 2000 || rep.Producers != 2 || rep.Rate != 200 {
					t.Errorf("records %d, summary %d, producers %d, rate %d; want 2000, 2000, 2, 200",
						rep.Records.Acked, rep.Summary.Records, rep.Producers, rep.Rate)
				}
			},
		},
		{
			name: "seconds are rebased on the earliest start",
			// b started 1.4 s after a: its second 0 is the merged second 1.
			ms: []Measurements{
				measured(0, t0, acked(0, 10, time.Millisecond), acked(1, 20, time.Millisecond), acked(2, 30, time.Millisecond)),
				measured(1, at(1400*time.Millisecond), acked(0, 1, time.Millisecond), acked(1, 2, time.Millisecond)),
			},
			check: func(t *testing.T, rep *Report) {
				var got []int64
				for _, s := range rep.Series {
					got = append(got, s.Acked)
				}
				// The merged load ends at 3.4 s: a fourth second, empty.
				if want := []int64{10, 21, 32, 0}; !reflect.DeepEqual(got, want) {
					t.Errorf("acked per second %v, want %v", got, want)
				}
				if !rep.Start.Equal(t0) || !rep.LoadEnd.Equal(at(3400*time.Millisecond)) {
					t.Errorf("start %s load end %s", rep.Start, rep.LoadEnd)
				}
			},
		},
		{
			name: "unavailable only when no agent got an ack",
			// a's gap [3 s, 6 s] and b's [4 s, 8 s] overlap in [4 s, 6 s];
			// a ended at 10 s after a gap from 9.5 s, b had one from 9 s
			// to its end at 12 s: after a ended nobody got an ack.
			ms: []Measurements{
				withGaps(measured(0, t0), at(10*time.Second), Gap{at(3 * time.Second), at(6 * time.Second)}, Gap{at(9500 * time.Millisecond), at(10 * time.Second)}),
				withGaps(measured(1, t0), at(12*time.Second), Gap{at(4 * time.Second), at(8 * time.Second)}, Gap{at(9 * time.Second), at(12 * time.Second)}),
			},
			check: func(t *testing.T, rep *Report) {
				if rep.Unavailable != 2500*time.Millisecond || !rep.UnavailableFrom.Equal(at(9500*time.Millisecond)) {
					t.Errorf("unavailable %s from %s; want 2.5s from %s", rep.Unavailable, rep.UnavailableFrom, at(9500*time.Millisecond))
				}
			},
		},
		{
			name: "an agent that started late leaves the others' gap before its start",
			ms: []Measurements{
				withGaps(measured(0, t0), at(10*time.Second), Gap{at(500 * time.Millisecond), at(1500 * time.Millisecond)}),
				withGaps(measured(1, at(time.Second)), at(10*time.Second)),
			},
			check: func(t *testing.T, rep *Report) {
				if rep.Unavailable != 500*time.Millisecond || !rep.UnavailableFrom.Equal(at(500*time.Millisecond)) {
					t.Errorf("unavailable %s from %s; want 500ms from %s", rep.Unavailable, rep.UnavailableFrom, at(500*time.Millisecond))
				}
			},
		},
		{
			name: "a warm-up is not judged and is not the baseline",
			// The agents were deployed at 0 s; b started at 5 s, so until
			// then a's ack gap [1 s, 5 s] is everyone's. The baseline
			// starts at 6 s, when all of them produce.
			ms: []Measurements{
				withGaps(measured(0, t0, acked(0, 1, time.Millisecond), acked(1, 1, time.Millisecond), acked(2, 1, time.Millisecond),
					acked(3, 1, time.Millisecond), acked(4, 1, time.Millisecond), acked(5, 1, time.Millisecond), acked(6, 100, time.Millisecond),
					acked(7, 100, time.Millisecond), acked(8, 100, time.Millisecond)), at(9*time.Second), Gap{at(time.Second), at(5 * time.Second)}),
				withGaps(measured(1, at(5*time.Second)), at(9*time.Second)),
			},
			marks: []Mark{{PhaseWarmup, at(-time.Second)}, {PhaseBaseline, at(6 * time.Second)}, {PhaseAfter, at(8 * time.Second)}},
			h:     Hypothesis{All: Bounds{MaxUnavailable: time.Second}},
			check: func(t *testing.T, rep *Report) {
				if rep.Unavailable != 0 {
					t.Errorf("unavailable %s from %s: the warm-up's gap counted", rep.Unavailable, rep.UnavailableFrom)
				}
				if got := rep.BaselineThroughput(); got != 100 {
					t.Errorf("baseline throughput %g, want 100 (not the warm-up's)", got)
				}
				judged := map[Phase]bool{}
				for _, v := range rep.Verdicts {
					judged[v.Phase] = true
				}
				if judged[PhaseWarmup] || !judged[PhaseBaseline] {
					t.Errorf("phases judged %v: want the baseline's bounds, and none for the warm-up", judged)
				}
				if rep.Phases[0].Phase != PhaseWarmup || rep.Phases[0].Unavailable != 4*time.Second {
					t.Errorf("first phase %+v; want the warm-up, showing its 4s gap", rep.Phases[0])
				}
			},
		},
		{
			name: "a stall from the fault into the recovery is judged whole, in the fault phase",
			// No ack from 4 s to 10 s; the recovery was marked at 7.5 s. Cut
			// at the mark it would be stalls of 3.5 s and 2.5 s, each
			// within 5 s.
			ms:    []Measurements{withGaps(measured(0, t0), at(12*time.Second), Gap{at(4 * time.Second), at(10 * time.Second)})},
			marks: []Mark{{PhaseBaseline, t0}, {PhaseFault, at(3 * time.Second)}, {PhaseRecovery, at(7500 * time.Millisecond)}},
			h:     Hypothesis{All: Bounds{MaxUnavailable: 5 * time.Second}},
			check: func(t *testing.T, rep *Report) {
				got := map[Phase]time.Duration{}
				for _, p := range rep.Phases {
					got[p.Phase] = p.Unavailable
				}
				if want := map[Phase]time.Duration{PhaseBaseline: 0, PhaseFault: 6 * time.Second, PhaseRecovery: 0}; !reflect.DeepEqual(got, want) {
					t.Errorf("unavailable per phase %v, want %v", got, want)
				}
				if len(rep.Violations) != 1 || rep.Violations[0].Phase != PhaseFault || rep.Violations[0].Kind != BoundMaxUnavailability ||
					!rep.Violations[0].At.Equal(at(4*time.Second)) {
					t.Errorf("violations %v, want one of the fault phase's unavailability at 4s", rep.Violations)
				}
			},
		},
		{
			name: "a stall mostly in the recovery is the recovery's, though it began in the fault",
			// No ack from 6 s to 12 s: 1 s of it in the fault, 5 s in the
			// recovery marked at 7 s.
			ms:    []Measurements{withGaps(measured(0, t0), at(14*time.Second), Gap{at(6 * time.Second), at(12 * time.Second)})},
			marks: []Mark{{PhaseBaseline, t0}, {PhaseFault, at(3 * time.Second)}, {PhaseRecovery, at(7 * time.Second)}},
			h:     Hypothesis{Phases: map[Phase]Bounds{PhaseRecovery: {MaxUnavailable: 5 * time.Second}}},
			check: func(t *testing.T, rep *Report) {
				got := map[Phase]time.Duration{}
				for _, p := range rep.Phases {
					got[p.Phase] = p.Unavailable
				}
				if want := map[Phase]time.Duration{PhaseBaseline: 0, PhaseFault: 0, PhaseRecovery: 6 * time.Second}; !reflect.DeepEqual(got, want) {
					t.Errorf("unavailable per phase %v, want %v", got, want)
				}
				if len(rep.Violations) != 1 || rep.Violations[0].Phase != PhaseRecovery || !rep.Violations[0].At.Equal(at(6*time.Second)) {
					t.Errorf("violations %v, want the recovery's 6s stall from 6s", rep.Violations)
				}
			},
		},
		{
			name: "a fault phase inside one stall is judged by the stall, and its records' latency where they were acked",
			// Its records waited up to 7 s, acked in the recovery; the
			// stall is within 8 s.
			ms: stallMs, marks: stallMarks,
			h: Hypothesis{All: Bounds{MaxUnavailable: 8 * time.Second, MaxP99Ack: 10 * time.Second}},
			check: func(t *testing.T, rep *Report) {
				if f := rep.Phases[1]; f.Phase != PhaseFault || f.Ack.Count != 0 || f.StalledThrough != 7200*time.Millisecond {
					t.Errorf("fault phase %+v; want no ack, stalled through 7.2s", f)
				}
				if len(rep.Violations) != 0 {
					t.Errorf("violations %v, want none", rep.Violations)
				}
			},
		},
		{
			name: "a fault phase inside a stall longer than the unavailability bound fails its latency too",
			ms:   stallMs, marks: stallMarks,
			h: Hypothesis{All: Bounds{MaxUnavailable: 5 * time.Second, MaxP99Ack: 10 * time.Second}},
			check: func(t *testing.T, rep *Report) {
				var kinds []BoundKind
				for _, v := range rep.Violations {
					if v.Phase == PhaseFault {
						kinds = append(kinds, v.Kind)
					}
				}
				if want := []BoundKind{BoundMaxP99Ack, BoundMaxUnavailability}; !reflect.DeepEqual(kinds, want) {
					t.Errorf("the fault phase's violations %v, want %v", kinds, want)
				}
			},
		},
		{
			name: "a fault phase inside a stall that no unavailability bound judges fails its latency",
			ms:   stallMs, marks: stallMarks,
			h: Hypothesis{Phases: map[Phase]Bounds{PhaseFault: {MaxP99Ack: 10 * time.Second}}},
			check: func(t *testing.T, rep *Report) {
				if len(rep.Violations) != 1 || rep.Violations[0].Phase != PhaseFault || rep.Violations[0].Kind != BoundMaxP99Ack {
					t.Errorf("violations %v, want the fault phase's latency", rep.Violations)
				}
			},
		},
		{
			name: "marks default to the first measurements'",
			ms: []Measurements{
				withMarks(measured(0, t0, acked(0, 1, time.Millisecond), acked(1, 1, time.Millisecond)), Mark{PhaseFault, at(time.Second)}),
				withMarks(measured(1, t0), Mark{PhaseAfter, at(time.Second)}),
			},
			check: func(t *testing.T, rep *Report) {
				if len(rep.Phases) != 2 || rep.Phases[1].Phase != PhaseFault || rep.Series[1].Phase != PhaseFault {
					t.Errorf("phases %+v; want baseline then fault", rep.Phases)
				}
			},
		},
		{
			name:  "marks from the caller win",
			ms:    []Measurements{withMarks(measured(0, t0, acked(0, 1, time.Millisecond), acked(1, 1, time.Millisecond)), Mark{PhaseFault, at(time.Second)})},
			marks: []Mark{{PhaseRecovery, at(time.Second)}},
			check: func(t *testing.T, rep *Report) {
				if len(rep.Phases) != 2 || rep.Phases[1].Phase != PhaseRecovery {
					t.Errorf("phases %+v; want baseline then recovery", rep.Phases)
				}
			},
		},
		{
			name: "records add up, drain errors name their agent",
			ms: func() []Measurements {
				a, b := measured(0, t0, acked(0, 5, time.Millisecond)), measured(3, t0, acked(0, 7, time.Millisecond))
				a.Records.OtherProducers, b.Records.OtherProducers = 7, 5
				b.Records.Lost, b.Records.DrainIncomplete, b.DrainError = 2, true, "drain timed out"
				b.Records.LostExamples = []LostRange{{Partition: 1, Producer: 3, FirstSeq: 4, LastSeq: 5, Count: 2}}
				return []Measurements{a, b}
			}(),
			check: func(t *testing.T, rep *Report) {
				want := Records{Acked: 12, Consumed: 12, Lost: 2, OtherProducers: 12, DrainIncomplete: true,
					LostExamples: []LostRange{{Partition: 1, Producer: 3, FirstSeq: 4, LastSeq: 5, Count: 2}}}
				if !reflect.DeepEqual(rep.Records, want) {
					t.Errorf("records %+v\nwant    %+v", rep.Records, want)
				}
				last := rep.Violations[len(rep.Violations)-1]
				if last.Kind != BoundFinalDrain || last.Observed != "producers [3, 4): drain timed out" {
					t.Errorf("last violation %v; want the final drain of producers [3, 4)", last)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Merge(tt.ms, tt.marks, tt.h)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			tt.check(t, rep)
		})
	}
}

func TestMergeRejects(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	one := func(base uint32, edit func(m *Measurements)) Measurements {
		m := measured(base, t0, acked(0, 1, time.Millisecond))
		if edit != nil {
			edit(&m)
		}
		return m
	}
	tests := []struct {
		name string
		ms   []Measurements
	}{
		{"nothing", nil},
		{"different run IDs", []Measurements{one(0, nil), one(1, func(m *Measurements) { m.RunID = "00000000000000bb" })}},
		{"same producer range", []Measurements{one(0, nil), one(0, nil)}},
		{"overlapping producer ranges", []Measurements{one(2, func(m *Measurements) { m.Producers = 3 }), one(4, nil)}},
		{"different topics", []Measurements{one(0, nil), one(1, func(m *Measurements) { m.Topic = "u" })}},
		{"different idempotence", []Measurements{one(0, nil), one(1, func(m *Measurements) { m.Idempotent = false })}},
		{"no start", []Measurements{one(0, func(m *Measurements) { m.Start = time.Time{} })}},
		{"corrupt histogram", []Measurements{one(0, func(m *Measurements) {
			m.Seconds[0].Latency[AckLatency] = SparseHistogram{Buckets: []int32{1 << 30}, Counts: []int64{1}}
		})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Merge(tt.ms, nil, Hypothesis{})
			if !errors.Is(err, ErrCannotMerge) {
				t.Errorf("Merge = %v, %v; want an error wrapping ErrCannotMerge", rep, err)
			}
		})
	}
	// Adjacent ranges are fine.
	if _, err := Merge([]Measurements{one(2, func(m *Measurements) { m.Producers = 2 }), one(4, nil)}, nil, Hypothesis{}); err != nil {
		t.Errorf("adjacent ranges [2, 4) and [4, 5): %v", err)
	}
}
