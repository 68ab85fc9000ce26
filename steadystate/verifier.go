package steadystate

import "github.com/kafkachaos/kafkachaos/internal/intervals"

// maxExamples is how many examples of each anomaly a report keeps.
const maxExamples = 10

// Records is the verifier's verdict on a run.
type Records struct {
	Acked    uint64 `json:"acked"`
	Consumed uint64 `json:"consumed"`
	// Lost counts acknowledged records never consumed after the final drain.
	Lost uint64 `json:"lost"`
	// Duplicates counts records consumed more than once at different offsets.
	Duplicates uint64 `json:"duplicates"`
	// Reordered counts records consumed after a later record of the same
	// producer in the same partition.
	Reordered uint64 `json:"reordered"`
	// InconsistentOffsets counts acknowledged records consumed only at an
	// offset other than the one the broker acknowledged (Jepsen's
	// inconsistent-offsets; offsetMatcher says what is judged).
	InconsistentOffsets uint64 `json:"inconsistentOffsets"`
	// UnackedSeen counts records consumed whose produce was never
	// acknowledged (the producer saw an error or gave up): allowed.
	UnackedSeen uint64 `json:"unackedSeen"`
	// Redelivered counts offsets the consumer read again (after a rebalance
	// or a retry); they are not duplicates in the log and are ignored.
	Redelivered uint64 `json:"redelivered"`
	// Foreign counts records on the topic that belong to another run or are
	// not kafkachaos records.
	Foreign uint64 `json:"foreign"`
	// OtherProducers counts records of this run from producers outside the
	// runner's own range (Config.ProducerBase): other agents' records, which
	// that agent verifies. They are not anomalies. In a merged report it is
	// the sum over agents, so a record may be counted once per other agent.
	OtherProducers uint64 `json:"otherProducers,omitempty"`
	// DrainIncomplete is set when the final drain was skipped or timed out:
	// then Lost counts acked records that were not read, which may or may
	// not be in the log.
	DrainIncomplete bool `json:"drainIncomplete,omitempty"`

	LostExamples      []LostRange `json:"lostExamples,omitempty"`
	DuplicateExamples []Anomaly   `json:"duplicateExamples,omitempty"`
	ReorderExamples   []Anomaly   `json:"reorderExamples,omitempty"`
	// InconsistentOffsetExamples are the first inconsistent offsets.
	InconsistentOffsetExamples []OffsetMismatch `json:"inconsistentOffsetExamples,omitempty"`
}

// Clean reports whether the run had no loss, duplicate, reordering or
// inconsistent offset.
func (r Records) Clean() bool {
	return r.Lost == 0 && r.Duplicates == 0 && r.Reordered == 0 && r.InconsistentOffsets == 0
}

// Anomaly names one record the verifier objected to.
type Anomaly struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Producer  uint32 `json:"producer"`
	Seq       uint64 `json:"seq"`
	// PrevSeq is, for a reordering, the higher sequence consumed before it.
	PrevSeq uint64 `json:"prevSeq,omitempty"`
}

// LostRange is a run of consecutive sequences of one producer in one
// partition that were acknowledged and never consumed. LastAckOffset is the
// offset the broker acknowledged for the last record of the range.
type LostRange struct {
	Partition int32  `json:"partition"`
	Producer  uint32 `json:"producer"`
	FirstSeq  uint64 `json:"firstSeq"`
	LastSeq   uint64 `json:"lastSeq"`
	Count     uint64 `json:"count"`
}

// ackLog holds what one producer had acknowledged. It is owned by that
// producer's promise goroutine (franz-go calls promises serially), so it
// takes no locks.
type ackLog struct {
	parts   []intervals.Set // by partition
	maxOffs []int64         // by partition: the highest offset acked, -1 for none
	n       uint64
}

func newAckLog(partitions int) *ackLog {
	a := &ackLog{parts: make([]intervals.Set, partitions), maxOffs: make([]int64, partitions)}
	for i := range a.maxOffs {
		a.maxOffs[i] = -1
	}
	return a
}

// ack records that seq was acknowledged in partition p at offset.
func (a *ackLog) ack(p int32, seq uint64, offset int64) {
	if int(p) >= len(a.parts) || p < 0 {
		return
	}
	if !a.parts[p].Add(seq) {
		a.n++
	}
	a.maxOffs[p] = max(a.maxOffs[p], offset)
}

// stream is the consumer-side state of one (partition, producer) stream.
type stream struct {
	consumed intervals.Set
	max      uint64
	any      bool
}

// verifier checks consumed records of its own producers, IDs [base,
// base+producers). It is owned by the consumer goroutine. Its memory is
// O(partitions x own producers + anomalies): each stream is an interval
// set, which stays one range while records arrive in order. Its offset
// matcher (shared with the producers) adds the records acked but not yet
// read, or read but not yet acked: O(records in flight), not O(records).
type verifier struct {
	run        uint64
	base       uint32 // first own producer ID; set after newVerifier
	producers  int
	streams    [][]stream // [partition][producer - base]
	nextOffset []int64    // by partition: one past the highest offset consumed
	res        Records
	obs        Observer       // told of duplicates and reorderings as they are found
	match      *offsetMatcher // shared with the producers' promises; nil: not checked
}

func newVerifier(run uint64, partitions, producers int) *verifier {
	v := &verifier{
		run:        run,
		producers:  producers,
		streams:    make([][]stream, partitions),
		nextOffset: make([]int64, partitions),
		obs:        nopObserver{},
	}
	for p := range v.streams {
		v.streams[p] = make([]stream, producers)
	}
	return v
}

// consume checks one consumed record and reports whether it was a new,
// valid record of this run (so its latency should be recorded).
func (v *verifier) consume(p int32, offset int64, h header) bool {
	if p < 0 || int(p) >= len(v.streams) {
		v.res.Foreign++
		return false
	}
	if offset < v.nextOffset[p] {
		v.res.Redelivered++
		return false
	}
	v.nextOffset[p] = offset + 1
	if h.RunID != v.run {
		v.res.Foreign++
		return false
	}
	if h.Producer < v.base || uint64(h.Producer-v.base) >= uint64(v.producers) {
		v.res.OtherProducers++
		return false
	}
	v.match.consumed(p, int(h.Producer-v.base), h.Seq, offset)
	s := &v.streams[p][h.Producer-v.base]
	if s.consumed.Add(h.Seq) {
		v.res.Duplicates++
		v.obs.Duplicate()
		if len(v.res.DuplicateExamples) < maxExamples {
			v.res.DuplicateExamples = append(v.res.DuplicateExamples, Anomaly{Partition: p, Offset: offset, Producer: h.Producer, Seq: h.Seq})
		}
		return false
	}
	v.res.Consumed++
	if s.any && h.Seq < s.max {
		v.res.Reordered++
		v.obs.Reordered()
		if len(v.res.ReorderExamples) < maxExamples {
			v.res.ReorderExamples = append(v.res.ReorderExamples, Anomaly{Partition: p, Offset: offset, Producer: h.Producer, Seq: h.Seq, PrevSeq: s.max})
		}
		return true
	}
	s.max, s.any = h.Seq, true
	return true
}

// foreign counts a record that is not a kafkachaos record, and moves past it.
func (v *verifier) foreign(p int32, offset int64) {
	v.res.Foreign++
	if p >= 0 && int(p) < len(v.nextOffset) && offset >= v.nextOffset[p] {
		v.nextOffset[p] = offset + 1
	}
}

// consumedThrough reports whether the consumer has read every offset below
// end in each partition.
func (v *verifier) consumedThrough(end []int64) bool {
	for p, e := range end {
		if p < len(v.nextOffset) && v.nextOffset[p] < e {
			return false
		}
	}
	return true
}

// verdict compares what was consumed with what the producers had acked;
// acks[i] is producer base+i's. It must be called after every producer and
// the consumer have stopped.
func (v *verifier) verdict(acks []*ackLog) Records {
	res := v.res
	res.LostExamples = nil
	for prod, a := range acks {
		if a == nil {
			continue
		}
		res.Acked += a.n
		for p := range a.parts {
			if p >= len(v.streams) || prod >= v.producers {
				continue
			}
			consumed := &v.streams[p][prod].consumed
			a.parts[p].Minus(consumed, func(lo, hi uint64) {
				res.Lost += hi - lo
				if len(res.LostExamples) < maxExamples {
					res.LostExamples = append(res.LostExamples, LostRange{
						Partition: int32(p), Producer: v.base + uint32(prod), FirstSeq: lo, LastSeq: hi - 1, Count: hi - lo,
					})
				}
			})
			consumed.Minus(&a.parts[p], func(lo, hi uint64) { res.UnackedSeen += hi - lo })
		}
	}
	res.InconsistentOffsets, res.InconsistentOffsetExamples = v.match.verdict(v.base)
	return res
}
