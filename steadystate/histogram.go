package steadystate

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histograms are in microseconds, from 1 µs to 5 minutes, with 3 significant
// figures. Larger values are clamped to the maximum, so a stall is never lost.
const (
	histLowest  = 1
	histHighest = int64(5 * time.Minute / time.Microsecond)
	histSigFigs = 3
)

func newHist() *hdr.Histogram { return hdr.New(histLowest, histHighest, histSigFigs) }

// recordDur records d in h, clamped to the histogram's range.
func recordDur(h *hdr.Histogram, d time.Duration) {
	us := d.Microseconds()
	switch {
	case us < histLowest:
		us = histLowest
	case us > histHighest:
		us = histHighest
	}
	_ = h.RecordValue(us) // cannot fail: us is within range
}

// sparseHist is a histogram's non-zero buckets: what one second of one
// recorder keeps after it is sealed, so a long run does not hold a dense
// histogram per second.
type sparseHist struct {
	idx []int32
	n   []int64
}

func sparseOf(h *hdr.Histogram) sparseHist {
	var s sparseHist
	if h.TotalCount() == 0 {
		return s
	}
	for i, c := range h.Export().Counts {
		if c != 0 {
			s.idx = append(s.idx, int32(i))
			s.n = append(s.n, c)
		}
	}
	return s
}

// histMerger adds sparse histograms into one dense histogram.
type histMerger struct{ counts []int64 }

func (m *histMerger) add(s sparseHist) {
	if len(s.idx) == 0 {
		return
	}
	if m.counts == nil {
		m.counts = make([]int64, len(newHist().Export().Counts))
	}
	for i, idx := range s.idx {
		m.counts[idx] += s.n[i]
	}
}

func (m *histMerger) addAll(ss []sparseHist) {
	for _, s := range ss {
		m.add(s)
	}
}

// reset empties the merger, keeping its buffer.
func (m *histMerger) reset() { clear(m.counts) }

// stats returns the statistics of ss merged, reusing m's buffer.
func (m *histMerger) stats(ss []sparseHist) LatencyStats {
	if len(ss) == 0 {
		return LatencyStats{}
	}
	m.reset()
	m.addAll(ss)
	return statsOf(m.hist())
}

func (m *histMerger) hist() *hdr.Histogram {
	if m.counts == nil {
		return newHist()
	}
	return hdr.Import(&hdr.Snapshot{
		LowestTrackableValue:  histLowest,
		HighestTrackableValue: histHighest,
		SignificantFigures:    histSigFigs,
		Counts:                m.counts,
	})
}

// LatencyStats summarises one latency histogram, in microseconds.
type LatencyStats struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"meanUs"`
	P50   int64   `json:"p50Us"`
	P95   int64   `json:"p95Us"`
	P99   int64   `json:"p99Us"`
	P999  int64   `json:"p999Us"`
	Max   int64   `json:"maxUs"`
}

func statsOf(h *hdr.Histogram) LatencyStats {
	if h.TotalCount() == 0 {
		return LatencyStats{}
	}
	q := h.ValueAtPercentiles([]float64{50, 95, 99, 99.9})
	return LatencyStats{
		Count: h.TotalCount(),
		Mean:  h.Mean(),
		P50:   q[50],
		P95:   q[95],
		P99:   q[99],
		P999:  q[99.9],
		Max:   h.Max(),
	}
}
