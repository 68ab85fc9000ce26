package steadystate

import (
	"fmt"
	"slices"
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
//     the consumer has read the stream at or past the acked offset, or the
//     run ended;
//   - a record written twice (a retry without idempotence) and read at both
//     offsets is consistent when one of them is the acked one, whichever
//     comes first;
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
	acked    seqQueue // acked, not yet consumed
	consumed seqQueue // consumed, not yet acked
	// waiting are acked records read only before their acked offset so
	// far (seenAt): a copy may still come there.
	waiting []seqOffset
	// copies are records read again (a sequence at or below maxRead),
	// kept for their acks.
	copies  []seqOffset
	maxRead uint64
	anyRead bool
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
	s.copies = slices.DeleteFunc(s.copies, func(c seqOffset) bool { return c.seq < seq })
	seenAt := int64(-1)
	for _, c := range s.copies { // a copy read again before this ack
		if c.seq == seq && c.offset == offset {
			s.dropConsumed(seq)
			return
		}
	}
	for i := 0; i < s.consumed.len() && s.consumed.at(i).seq == seq; i++ {
		c := s.consumed.at(i)
		if c.offset == offset {
			s.dropConsumed(seq)
			return
		}
		seenAt = max(seenAt, c.offset)
	}
	switch {
	case seenAt > offset:
		// Read past its acked offset: the consumer moved past that offset
		// without reading it there.
		pm.found(p, prod, seq, offset, seenAt)
		s.dropConsumed(seq)
	case seenAt >= 0:
		// Read only before its acked offset, so far: a copy may still come.
		s.waiting = append(s.waiting, seqOffset{seq: seq, offset: offset, seenAt: seenAt})
		s.dropConsumed(seq)
	default:
		s.acked.push(seqOffset{seq: seq, offset: offset, seenAt: -1})
	}
}

// dropConsumed drops the reads of seq waiting at the front of the consumed
// queue; the stream is locked.
func (s *streamMatch) dropConsumed(seq uint64) {
	for s.consumed.len() > 0 && s.consumed.front().seq <= seq {
		s.consumed.pop()
	}
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
	if s.settleWaiting(pm, p, prod, seq, offset) {
		return
	}
	if s.anyRead && seq <= s.maxRead {
		s.readAgain(pm, p, prod, seq, offset)
		return
	}
	s.anyRead, s.maxRead = true, seq
	for s.acked.len() > 0 && s.acked.front().seq < seq {
		s.acked.pop() // acked, not consumed in order: lost or reordered, the verifier's to say
	}
	if s.acked.len() == 0 || s.acked.front().seq != seq {
		s.consumed.push(seqOffset{seq: seq, offset: offset, seenAt: -1})
		return
	}
	a := *s.acked.front()
	s.acked.pop()
	switch {
	case a.offset == offset:
	case offset > a.offset:
		pm.found(p, prod, seq, a.offset, offset)
	default: // a copy before its acked offset: the acked one may still come
		a.seenAt = offset
		s.waiting = append(s.waiting, a)
	}
}

// settleWaiting judges the records read elsewhere than their acked offset
// against a read of seq at offset: the acked copy at last (consistent, and
// the read is taken), or a read at or past an acked offset that was not it
// (inconsistent). The stream is locked.
func (s *streamMatch) settleWaiting(pm *partMatcher, p int32, prod int, seq uint64, offset int64) (taken bool) {
	s.waiting = slices.DeleteFunc(s.waiting, func(w seqOffset) bool {
		switch {
		case w.seq == seq && w.offset == offset:
			taken = true
			return true
		case offset >= w.offset:
			pm.found(p, prod, w.seq, w.offset, w.seenAt)
			return true
		}
		return false
	})
	return taken
}

// readAgain takes a read of a sequence at or below the highest read yet: a
// copy of a record written twice (a producer's retry without idempotence),
// which the verifier counts as a duplicate. At its acked offset it settles
// the ack; elsewhere it is kept for an ack still to come. The stream is
// locked.
func (s *streamMatch) readAgain(pm *partMatcher, p int32, prod int, seq uint64, offset int64) {
	for i := 0; i < s.acked.len(); i++ {
		a := s.acked.at(i)
		if a.seq != seq {
			continue
		}
		if a.offset == offset {
			s.acked.remove(i)
		} else if offset > a.offset {
			pm.found(p, prod, seq, a.offset, offset)
			s.acked.remove(i)
		}
		return
	}
	if len(s.copies) < maxCopies {
		s.copies = append(s.copies, seqOffset{seq: seq, offset: offset, seenAt: -1})
	}
}

// maxCopies bounds the copies of records read again that a stream keeps
// for acks still to come: duplicates are anomalies, and few.
const maxCopies = 1024

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
			for _, w := range pm.streams[prod].waiting {
				pm.found(int32(p), prod, w.seq, w.offset, w.seenAt)
			}
			pm.streams[prod] = streamMatch{}
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
