package steadystate

import (
	"encoding/json"
	"fmt"
	"math"
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

// SparseHistogram is a latency histogram's non-zero buckets, in the bucket
// layout of the package's HdrHistograms (1 µs to 5 minutes, 3 significant
// figures): Counts[i] values fell in bucket Buckets[i], and Buckets ascend.
// It is what one second of one recorder keeps once sealed, so a long run
// does not hold a dense histogram per second, and it is how Measurements
// carry latencies: merging histograms adds their buckets, so percentiles of a
// merged histogram are exact, never averages of percentiles.
//
// In JSON the buckets are delta-encoded, as they mostly step by one:
// {"bucketDeltas": [Buckets[0], Buckets[1]-Buckets[0], ...], "counts":
// [...]}. That makes Measurements about 40% smaller, and half as big again
// once gzipped.
type SparseHistogram struct {
	Buckets []int32
	Counts  []int64
}

// sparseJSON is SparseHistogram's JSON form.
type sparseJSON struct {
	BucketDeltas []int32 `json:"bucketDeltas"`
	Counts       []int64 `json:"counts"`
}

// MarshalJSON writes s with delta-encoded buckets.
func (s SparseHistogram) MarshalJSON() ([]byte, error) {
	j := sparseJSON{BucketDeltas: make([]int32, len(s.Buckets)), Counts: s.Counts}
	prev := int32(0)
	for i, b := range s.Buckets {
		j.BucketDeltas[i], prev = b-prev, b
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *SparseHistogram) UnmarshalJSON(b []byte) error {
	var j sparseJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	out := SparseHistogram{Counts: j.Counts}
	if len(j.BucketDeltas) > 0 {
		out.Buckets = make([]int32, len(j.BucketDeltas))
	}
	sum := int64(0)
	for i, d := range j.BucketDeltas {
		sum += int64(d)
		if sum < 0 || sum > math.MaxInt32 {
			return fmt.Errorf("steadystate: histogram bucket %d out of range", sum)
		}
		out.Buckets[i] = int32(sum)
	}
	*s = out
	return nil
}

func sparseOf(h *hdr.Histogram) SparseHistogram {
	var s SparseHistogram
	if h.TotalCount() == 0 {
		return s
	}
	for i, c := range h.Export().Counts {
		if c != 0 {
			s.Buckets = append(s.Buckets, int32(i))
			s.Counts = append(s.Counts, c)
		}
	}
	return s
}

// empty reports whether s holds no value.
func (s SparseHistogram) empty() bool { return len(s.Buckets) == 0 }

// merge returns the bucket-wise sum of s and o. It never modifies either;
// when one is empty the other is returned as is.
func (s SparseHistogram) merge(o SparseHistogram) SparseHistogram {
	switch {
	case o.empty():
		return s
	case s.empty():
		return o
	}
	n := len(s.Buckets) + len(o.Buckets)
	out := SparseHistogram{Buckets: make([]int32, 0, n), Counts: make([]int64, 0, n)}
	i, j := 0, 0
	for i < len(s.Buckets) || j < len(o.Buckets) {
		switch {
		case j == len(o.Buckets) || i < len(s.Buckets) && s.Buckets[i] < o.Buckets[j]:
			out.Buckets, out.Counts = append(out.Buckets, s.Buckets[i]), append(out.Counts, s.Counts[i])
			i++
		case i == len(s.Buckets) || o.Buckets[j] < s.Buckets[i]:
			out.Buckets, out.Counts = append(out.Buckets, o.Buckets[j]), append(out.Counts, o.Counts[j])
			j++
		default: // same bucket
			out.Buckets, out.Counts = append(out.Buckets, s.Buckets[i]), append(out.Counts, s.Counts[i]+o.Counts[j])
			i++
			j++
		}
	}
	return out
}

// check reports whether s is well formed for histograms of numBuckets
// buckets, so that decoding a corrupt one cannot make a merge panic.
func (s SparseHistogram) check(numBuckets int) error {
	if len(s.Buckets) != len(s.Counts) {
		return fmt.Errorf("%d buckets but %d counts", len(s.Buckets), len(s.Counts))
	}
	for i, b := range s.Buckets {
		if b < 0 || int(b) >= numBuckets {
			return fmt.Errorf("bucket %d out of range [0, %d)", b, numBuckets)
		}
		if i > 0 && b <= s.Buckets[i-1] {
			return fmt.Errorf("buckets not ascending at %d", b)
		}
		if s.Counts[i] < 0 {
			return fmt.Errorf("negative count %d in bucket %d", s.Counts[i], b)
		}
	}
	return nil
}

// numBuckets is how many buckets the package's histograms have.
func numBuckets() int { return len(newHist().Export().Counts) }

// histMerger adds sparse histograms into one dense histogram.
type histMerger struct{ counts []int64 }

func (m *histMerger) add(s SparseHistogram) {
	if s.empty() {
		return
	}
	if m.counts == nil {
		m.counts = make([]int64, numBuckets())
	}
	for i, b := range s.Buckets {
		m.counts[b] += s.Counts[i]
	}
}

func (m *histMerger) addAll(ss []SparseHistogram) {
	for _, s := range ss {
		m.add(s)
	}
}

// reset empties the merger, keeping its buffer.
func (m *histMerger) reset() { clear(m.counts) }

// stats returns the statistics of ss merged, reusing m's buffer.
func (m *histMerger) stats(ss []SparseHistogram) LatencyStats {
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
