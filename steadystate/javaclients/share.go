package javaclients

import (
	"fmt"
	"strings"
	"time"
)

// A share group (KIP-932) has no order, no partition owner and no
// committed offset: its members are handed records, each under an
// acquisition lock, and acknowledge them one by one. What it promises, and
// what the share verifier checks, is per record:
//   - every record the producer had acknowledged is delivered to a member
//     (lost, judged once the group has drained);
//   - at the offset where it was acknowledged (inconsistent offsets, as
//     for a consumer group);
//   - no more often than the delivery count limit
//     (group.share.delivery.count.limit): past it the broker archives the
//     record instead;
//   - accepted once: a member's acknowledgement succeeds only while it
//     holds the record's lock, so a record two members both accepted was
//     processed twice with the broker's consent;
//   - and acknowledged: a delivered record that no member accepted, whose
//     acknowledgement never failed and whose member was not killed holding
//     it, was neither processed nor given back.
//
// A record whose lock expired (its member frozen or killed) must be
// delivered again; the verifier counts the redeliveries, and the drain
// waits for the brokers' share-partition start offset to pass every
// record, which it does only once each is accepted or archived.

// DefaultDeliveryLimit is group.share.delivery.count.limit's default.
const DefaultDeliveryLimit = 5

// maxShareSpan bounds how far past a partition's start offset a record is
// kept (a line from another process names any offset): 32 MiB of record
// book a partition, hours of a run's load.
const maxShareSpan = 1 << 22

// ShareResult is the verdict on a share group's history.
type ShareResult struct {
	DeliveryLimit int    `json:"deliveryLimit"`
	Acked         uint64 `json:"acked"`       // records the producers had acknowledged
	Delivered     uint64 `json:"delivered"`   // records delivered to a member at least once
	Deliveries    uint64 `json:"deliveries"`  // deliveries in all
	Redelivered   uint64 `json:"redelivered"` // records delivered more than once
	// MostDeliveries is one record's most deliveries.
	MostDeliveries int    `json:"mostDeliveries"`
	Accepted       uint64 `json:"accepted"`   // records a member's acknowledgement succeeded for
	FailedAcks     uint64 `json:"failedAcks"` // acknowledgements of a record that failed
	// Unseen are records no member was seen to accept, whose outcome the
	// members could not say: the member of their latest delivery reported
	// its acknowledgement failed, or was killed holding them. The brokers
	// counted them done in the drain, so they were accepted or archived;
	// which, the brokers do not say (a refusal whose record was archived
	// instead of delivered again would hide here: the examples name them).
	Unseen            uint64       `json:"unseen"`
	UnseenExamples    []string     `json:"unseenExamples,omitempty"`
	Lost              ShareAnomaly `json:"lost"`
	OverLimit         ShareAnomaly `json:"overLimit"`
	AcceptedTwice     ShareAnomaly `json:"acceptedTwice"`
	NeverAcknowledged ShareAnomaly `json:"neverAcknowledged"`
}

// ShareAnomaly is how many records broke one of the share group's checks,
// with the first few as witnesses.
type ShareAnomaly struct {
	Count    uint64   `json:"count"`
	Examples []string `json:"examples,omitempty"`
}

func (a *ShareAnomaly) add(p int32, offset int64, what string) {
	a.Count++
	if len(a.Examples) < 10 {
		a.Examples = append(a.Examples, fmt.Sprintf("partition %d offset %d: %s", p, offset, what))
	}
}

// Problems lists what was found, one line per check.
func (r ShareResult) Problems() []string {
	var p []string
	for _, c := range []struct {
		name string
		a    ShareAnomaly
	}{{"lost", r.Lost}, {"delivered-over-the-limit", r.OverLimit}, {"accepted-twice", r.AcceptedTwice}, {"never-acknowledged", r.NeverAcknowledged}} {
		if c.a.Count > 0 {
			p = append(p, fmt.Sprintf("%s: %d; %s", c.name, c.a.Count, strings.Join(c.a.Examples, "; ")))
		}
	}
	if r.Delivered == 0 {
		p = append(p, "the share group was delivered nothing: the run shows nothing")
	}
	return p
}

// shareRec is what was said of one record.
type shareRec struct {
	acked                       bool // by a producer
	deliveries, accepts, failed uint8
	last                        int32 // the member it was last delivered to, by index + 1
	// lastFailed: the member of the latest delivery reported its
	// acknowledgement failed.
	lastFailed bool
}

// shareState is a share verifier's record book, by partition and offset
// from the group's start: 8 bytes a record written during the run.
type shareState struct {
	limit   int
	base    []int64
	recs    [][]shareRec
	members map[string]int32
	gone    []bool // by member index: killed
}

func newShareState(start []int64, limit int) *shareState {
	return &shareState{limit: limit, base: start, recs: make([][]shareRec, len(start)), members: map[string]int32{}}
}

// NewShareVerifier returns a Verifier of a share group on topic, whose
// records from start (by partition) are the run's, with the brokers'
// delivery count limit. Its Consumer takes VerifiableShareConsumer events
// (run with --verbose); Result's Share is its verdict.
func NewShareVerifier(topic string, begin time.Time, start []int64, limit int) *Verifier {
	v := NewVerifier(topic, begin, start)
	v.share = newShareState(start, limit)
	return v
}

// rec is the record at offset of partition p, nil outside the run's.
func (s *shareState) rec(p int32, offset int64) *shareRec {
	if p < 0 || int(p) >= len(s.recs) || s.base[p] < 0 || offset < s.base[p] || offset-s.base[p] >= maxShareSpan {
		return nil
	}
	i := int(offset - s.base[p])
	if i >= len(s.recs[p]) {
		s.recs[p] = append(s.recs[p], make([]shareRec, i+1-len(s.recs[p]))...)
	}
	return &s.recs[p][i]
}

// member is name's index, given on its first event.
func (s *shareState) member(name string) int32 {
	i, ok := s.members[name]
	if !ok {
		i = int32(len(s.gone))
		s.members[name] = i
		s.gone = append(s.gone, false)
	}
	return i
}

// inc counts one more, saturating.
func inc(n uint8) uint8 { return n + min(1, 255-n) }

// event files one share consumer event of member.
func (s *shareState) event(topic, member string, e Event) {
	switch e.Name {
	case RecordData:
		if e.Topic != topic {
			return
		}
		if r := s.rec(e.Partition, e.Offset); r != nil {
			r.deliveries = inc(r.deliveries)
			r.last, r.lastFailed = s.member(member)+1, false
		}
	case OffsetsAcknowledged:
		m := s.member(member) + 1
		for _, p := range e.Partitions {
			if p.Topic != topic {
				continue
			}
			for _, o := range p.Offsets {
				r := s.rec(p.Partition, o)
				switch {
				case r == nil:
				case e.Success:
					r.accepts = inc(r.accepts)
				default:
					r.failed = inc(r.failed)
					r.lastFailed = r.lastFailed || r.last == m
				}
			}
		}
	}
}

// settled reports whether r needs nothing more of the group: accepted, or
// its outcome unseen, which the brokers' start offset settles: the member
// of its latest delivery was killed holding it, or reported its
// acknowledgement failed (the tool prints no reason, and a failure after
// a timeout may have been applied: the tools' output cannot tell it from
// a refusal that must bring the record back).
func (s *shareState) settled(r shareRec) bool {
	return r.accepts > 0 || r.lastFailed || r.last > 0 && s.gone[r.last-1]
}

// drained reports whether every record below end has been delivered and
// is settled: a share group hands out every record of its partitions, so
// one never delivered (acknowledged to its producer or not) holds the
// drain until it times out.
func (s *shareState) drained(end []int64) bool {
	for p, e := range end {
		if p >= len(s.recs) {
			continue
		}
		if e-s.base[p] > int64(len(s.recs[p])) {
			return false
		}
		for _, r := range s.recs[p][:max(0, e-s.base[p])] {
			if r.deliveries == 0 || !s.settled(r) {
				return false
			}
		}
	}
	return true
}

// result judges every record.
func (s *shareState) result() ShareResult {
	res := ShareResult{DeliveryLimit: s.limit}
	for p, recs := range s.recs {
		for i, r := range recs {
			s.judge(&res, int32(p), s.base[p]+int64(i), r)
		}
	}
	return res
}

// judge files one record's figures and anomalies into res.
func (s *shareState) judge(res *ShareResult, p int32, offset int64, r shareRec) {
	if r.acked {
		res.Acked++
		if r.deliveries == 0 {
			res.Lost.add(p, offset, "acknowledged to the producer, never delivered")
		}
	}
	if r.deliveries == 0 {
		return
	}
	res.Delivered++
	res.Deliveries += uint64(r.deliveries)
	res.MostDeliveries = max(res.MostDeliveries, int(r.deliveries))
	res.FailedAcks += uint64(r.failed)
	if r.deliveries > 1 {
		res.Redelivered++
	}
	if int(r.deliveries) > s.limit {
		res.OverLimit.add(p, offset, fmt.Sprintf("delivered %d times, the limit is %d", r.deliveries, s.limit))
	}
	switch {
	case r.accepts > 1 && r.deliveries > 1:
		res.Accepted++
		res.AcceptedTwice.add(p, offset, fmt.Sprintf("accepted %d times in %d deliveries", r.accepts, r.deliveries))
	case r.accepts > 0:
		res.Accepted++
	case s.settled(r):
		res.Unseen++
		if len(res.UnseenExamples) < 10 {
			res.UnseenExamples = append(res.UnseenExamples, fmt.Sprintf("partition %d offset %d: delivered %d times, %d acknowledgements failed", p, offset, r.deliveries, r.failed))
		}
	default:
		res.NeverAcknowledged.add(p, offset, fmt.Sprintf("delivered %d times, never acknowledged", r.deliveries))
	}
}
