package steadystate

import (
	"fmt"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// Measurements are what one runner measured in a run, before they are
// summarised into a Report: per-second counts and sparse latency histograms,
// each producer's ack gaps, and the verifier's verdict on its own producers.
// They are JSON-serialisable, and Merge turns the measurements of several
// runners of one run (in-cluster agents with disjoint producer ranges) into
// one report, as if a single runner had produced the load. Treat them as
// read-only.
type Measurements struct {
	// RunID is the run's ID in hex, as Report.RunID prints it.
	RunID string `json:"runId"`
	Topic string `json:"topic"`
	// ProducerBase and Producers give the producer IDs this runner used and
	// verified: [ProducerBase, ProducerBase+Producers).
	ProducerBase uint32 `json:"producerBase"`
	Producers    int    `json:"producers"`
	Rate         int    `json:"rate"`
	RecordSize   int    `json:"recordSize"`
	Acks         Acks   `json:"acks"`
	Idempotent   bool   `json:"idempotent"`

	// Start is when the load started, LoadEnd when the producers stopped
	// sending, End when the final flush ended.
	Start   time.Time `json:"start"`
	LoadEnd time.Time `json:"loadEnd"`
	End     time.Time `json:"end"`
	// Marks are the phases marked on this runner (Runner.Mark), if any.
	Marks []Mark `json:"marks,omitempty"`

	// Seconds holds every second in which something was measured, in
	// order. Events after LoadEnd (the flush and drain) are in the seconds
	// they happened; a report counts them in its last second.
	Seconds []MeasuredSecond `json:"seconds"`
	// AckGaps are, for each producer in ID order, the times it got no
	// acknowledgement for longer than the run's gap threshold.
	AckGaps [][]Gap `json:"ackGaps"`
	// PartitionAckGaps are, for each producer in ID order and each of its
	// partitions, the times it got no acknowledgement on that partition for
	// longer than the partition's gap threshold.
	PartitionAckGaps [][][]Gap `json:"partitionAckGaps,omitempty"`
	// Records is the verifier's verdict on this runner's producers.
	Records Records `json:"records"`
	// DrainError says why the final drain did not read every acknowledged
	// record; empty when it did.
	DrainError string `json:"drainError,omitempty"`
	// Group is the verdict on the application's consumer group, when the
	// run had one (Config.Group).
	Group *groupcheck.Result `json:"group,omitempty"`
	// Transactions is the verdict on the transactional workload, when the
	// run had one (Config.Transactions).
	Transactions *txncheck.Result `json:"transactions,omitempty"`
	// Java is the verdict on Kafka's own Java clients beside the load,
	// when the run had them (Config.Java).
	Java *javaclients.Result `json:"java,omitempty"`
}

// MeasuredSecond is one second of a runner's measurements, summed over its
// producers and its consumer.
type MeasuredSecond struct {
	// T is the second since Measurements.Start: events at Start+T s up to
	// Start+(T+1) s.
	T          int64            `json:"t"`
	Sent       int64            `json:"sent,omitempty"`
	Acked      int64            `json:"acked,omitempty"`
	AckedBytes int64            `json:"ackedBytes,omitempty"`
	Consumed   int64            `json:"consumed,omitempty"`
	Errors     map[string]int64 `json:"errors,omitempty"`
	// Latency holds the second's histogram of each metric that had values.
	Latency map[Metric]SparseHistogram `json:"latency,omitempty"`
}

func (s MeasuredSecond) counts() counts {
	return counts{Sent: s.Sent, Acked: s.Acked, AckedBytes: s.AckedBytes, Consumed: s.Consumed, Errors: s.Errors}
}

// Measurements returns what the run measured, once Run has returned a
// report; ok is false before that, or when Run failed without a report.
func (r *Runner) Measurements() (m Measurements, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.measured == nil {
		return Measurements{}, false
	}
	return *r.measured, true
}

// fmtRunID prints a run ID as reports and consumer groups show it.
func fmtRunID(run uint64) string { return fmt.Sprintf("%016x", run) }

// mergeSealed sums the sealed seconds of recorders by second, merging their
// histograms, and returns the seconds that hold anything, in order. Every
// recorder must have finished.
func mergeSealed(recs []*recorder) []MeasuredSecond {
	type acc struct {
		used  bool
		c     counts
		hists [numMetrics]SparseHistogram
	}
	var secs []acc // by second
	for _, rec := range recs {
		for _, ss := range rec.sealed {
			if ss.sec < 0 {
				continue // cannot happen: a recorder's seconds start at 0
			}
			for int64(len(secs)) <= ss.sec {
				secs = append(secs, acc{})
			}
			a := &secs[ss.sec]
			a.used = true
			a.c.add(ss.counts)
			for m := range numMetrics {
				a.hists[m] = a.hists[m].merge(ss.hists[m])
			}
		}
	}
	var out []MeasuredSecond
	for t, a := range secs {
		if !a.used {
			continue
		}
		s := MeasuredSecond{
			T: int64(t), Sent: a.c.Sent, Acked: a.c.Acked, AckedBytes: a.c.AckedBytes,
			Consumed: a.c.Consumed, Errors: a.c.Errors,
		}
		for m, h := range a.hists {
			if h.empty() {
				continue
			}
			if s.Latency == nil {
				s.Latency = make(map[Metric]SparseHistogram)
			}
			s.Latency[Metric(m)] = h
		}
		out = append(out, s)
	}
	return out
}

// add sums o into r. The counts of runners with disjoint producers add up
// exactly; examples are kept up to maxExamples of each kind.
func (r *Records) add(o Records) {
	r.Acked += o.Acked
	r.Consumed += o.Consumed
	r.Lost += o.Lost
	r.Duplicates += o.Duplicates
	r.Reordered += o.Reordered
	r.InconsistentOffsets += o.InconsistentOffsets
	r.UnackedSeen += o.UnackedSeen
	r.Redelivered += o.Redelivered
	r.Foreign += o.Foreign
	r.OtherProducers += o.OtherProducers
	r.DrainIncomplete = r.DrainIncomplete || o.DrainIncomplete
	r.LostExamples = appendExamples(r.LostExamples, o.LostExamples)
	r.DuplicateExamples = appendExamples(r.DuplicateExamples, o.DuplicateExamples)
	r.ReorderExamples = appendExamples(r.ReorderExamples, o.ReorderExamples)
	r.InconsistentOffsetExamples = appendExamples(r.InconsistentOffsetExamples, o.InconsistentOffsetExamples)
}

func appendExamples[T any](dst, src []T) []T {
	n := min(len(src), maxExamples-len(dst))
	if n <= 0 {
		return dst
	}
	return append(dst, src[:n]...)
}
