package steadystate

import (
	"fmt"
	"sync"
)

// Inconsistent offsets (Jepsen's name): the record a broker acknowledged
// at offset X of a partition must be the record the consumer reads at X.
// offsetMatcher checks it record by record. Both sides of one (partition,
// producer) stream come in sequence order: a producer's acks of one
// partition in the order it sent them, and the consumer's reads in offset
// order. So each side waits in a queue only until the other side has seen
// the same sequence, and the memory is O(partitions x producers + the
// records acked but not yet consumed, or consumed but not yet acked), not
// O(records).
//
// What is judged, so that legitimate histories never trip it:
//   - an acked record consumed at its acked offset is consistent, even if a
//     copy of it was also read at another offset (a duplicate, counted by
//     the verifier);
//   - an acked record consumed only at another offset is inconsistent: once
//     the consumer has moved past the acked offset, or read a later record
//     of the stream, or the run ended;
//   - a record never consumed is lost, and a record never acked was not
//     promised: neither is judged here.
type offsetMatcher struct {
	parts []partMatcher // by partition
}

// partMatcher is one partition's streams, locked together: its producers'
// promise goroutines and the consumer goroutine meet here.
type partMatcher struct {
	mu       sync.Mutex
	streams  []streamMatch // by producer - base
	n        uint64        // inconsistent offsets found
	examples []OffsetMismatch
}

// streamMatch holds one stream's records seen by one side only, so far.
type streamMatch struct {
	acked    seqQueue // acked, not yet consumed at their offset
	consumed seqQueue // consumed, not yet acked
}

// seqOffset is one record of a stream at one offset. seenAt, for an acked
// record, is the offset at which the consumer read it instead, or -1.
type seqOffset struct {
	seq    uint64
	offset int64
	seenAt int64
}

// seqQueue is a FIFO whose buffer is reused, so a stream that keeps up
// allocates nothing per record.
type seqQueue struct {
	buf  []seqOffset
	head int
}

func (q *seqQueue) len() int            { return len(q.buf) - q.head }
func (q *seqQueue) front() *seqOffset   { return &q.buf[q.head] }
func (q *seqQueue) push(e seqOffset)    { q.buf = append(q.buf, e) }
func (q *seqQueue) items() []seqOffset  { return q.buf[q.head:] }
func (q *seqQueue) at(i int) *seqOffset { return &q.buf[q.head+i] }

func (q *seqQueue) pop() {
	q.head++
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	} else if q.head > 64 && q.head*2 > len(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		q.buf, q.head = q.buf[:n], 0
	}
}

// remove drops the i-th item.
func (q *seqQueue) remove(i int) {
	copy(q.buf[q.head+i:], q.buf[q.head+i+1:])
	q.buf = q.buf[:len(q.buf)-1]
}

func newOffsetMatcher(partitions, producers int) *offsetMatcher {
	m := &offsetMatcher{parts: make([]partMatcher, partitions)}
	for p := range m.parts {
		m.parts[p].streams = make([]streamMatch, producers)
	}
	return m
}

// stream returns the locked partition and its stream of producer index
// prod, or nil (unlocked) when either is out of range.
func (m *offsetMatcher) stream(p int32, prod int) (*partMatcher, *streamMatch) {
	if m == nil || p < 0 || int(p) >= len(m.parts) {
		return nil, nil
	}
	pm := &m.parts[p]
	if prod < 0 || prod >= len(pm.streams) {
		return nil, nil
	}
	pm.mu.Lock()
	return pm, &pm.streams[prod]
}

// acked records that the producer of index prod had seq acknowledged at
// offset of partition p.
func (m *offsetMatcher) acked(p int32, prod int, seq uint64, offset int64) {
	pm, s := m.stream(p, prod)
	if pm == nil {
		return
	}
	defer pm.mu.Unlock()
	for s.consumed.len() > 0 && s.consumed.front().seq < seq {
		s.consumed.pop() // consumed, never acked: not promised
	}
	seenAt := int64(-1)
	for i := 0; i < s.consumed.len() && s.consumed.at(i).seq == seq; i++ {
		c := s.consumed.at(i)
		if c.offset == offset {
			s.consumed.remove(i)
			return
		}
		seenAt = max(seenAt, c.offset)
	}
	if seenAt > offset {
		// The consumer read it past its acked offset, so it has moved past
		// that offset without reading it there.
		pm.found(p, prod, seq, offset, seenAt)
		return
	}
	s.acked.push(seqOffset{seq: seq, offset: offset, seenAt: seenAt})
}

// consumed records that the consumer read the producer of index prod's seq
// at offset of partition p (each offset once: the verifier leaves out
// offsets read again).
func (m *offsetMatcher) consumed(p int32, prod int, seq uint64, offset int64) {
	pm, s := m.stream(p, prod)
	if pm == nil {
		return
	}
	defer pm.mu.Unlock()
	for s.acked.len() > 0 && s.acked.front().seq < seq {
		if a := s.acked.front(); a.seenAt >= 0 {
			pm.found(p, prod, a.seq, a.offset, a.seenAt) // a later record came, never it at its offset
		}
		s.acked.pop() // otherwise acked, not consumed in order: lost or reordered, the verifier's to say
	}
	if s.acked.len() == 0 || s.acked.front().seq != seq {
		s.consumed.push(seqOffset{seq: seq, offset: offset, seenAt: -1})
		return
	}
	a := s.acked.front()
	switch {
	case a.offset == offset:
		s.acked.pop()
	case offset > a.offset:
		pm.found(p, prod, seq, a.offset, offset)
		s.acked.pop()
	default:
		a.seenAt = offset // a copy before its acked offset: it may still come there
	}
}

// found counts one inconsistent offset; pm is locked.
func (pm *partMatcher) found(p int32, prod int, seq uint64, acked, consumed int64) {
	pm.n++
	if len(pm.examples) < maxExamples {
		pm.examples = append(pm.examples, OffsetMismatch{Partition: p, Producer: uint32(prod), Seq: seq, AckedOffset: acked, ConsumedOffset: consumed})
	}
}

// verdict returns the inconsistent offsets, once every producer and the
// consumer have stopped: records still waiting that were consumed
// elsewhere count too. base turns producer indexes into IDs.
func (m *offsetMatcher) verdict(base uint32) (uint64, []OffsetMismatch) {
	if m == nil {
		return 0, nil
	}
	var n uint64
	var ex []OffsetMismatch
	for p := range m.parts {
		pm := &m.parts[p]
		pm.mu.Lock()
		for prod := range pm.streams {
			for _, a := range pm.streams[prod].acked.items() {
				if a.seenAt >= 0 {
					pm.found(int32(p), prod, a.seq, a.offset, a.seenAt)
				}
			}
			pm.streams[prod].acked = seqQueue{}
		}
		n += pm.n
		for _, e := range pm.examples {
			if len(ex) < maxExamples {
				e.Producer += base
				ex = append(ex, e)
			}
		}
		pm.n, pm.examples = 0, nil
		pm.mu.Unlock()
	}
	return n, ex
}

// OffsetMismatch witnesses an inconsistent offset: the broker acknowledged
// Seq of Producer at AckedOffset of Partition, and the consumer read it at
// ConsumedOffset instead.
type OffsetMismatch struct {
	Partition      int32  `json:"partition"`
	Producer       uint32 `json:"producer"`
	Seq            uint64 `json:"seq"`
	AckedOffset    int64  `json:"ackedOffset"`
	ConsumedOffset int64  `json:"consumedOffset"`
}

func (m OffsetMismatch) String() string {
	return fmt.Sprintf("partition %d, producer %d sequence %d: acknowledged at offset %d, consumed at offset %d", m.Partition, m.Producer, m.Seq, m.AckedOffset, m.ConsumedOffset)
}
