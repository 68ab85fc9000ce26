package javaclients

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// Verifier checks Java producers' acknowledged sends against what Java
// consumers of one group read: the group's history with groupcheck, and
// each record's value at its offset (inconsistent offsets: the value
// acknowledged at offset X must be the value read at X). The consumers
// must run with --verbose, so that each record is reported. The values
// held are only those seen on one side so far; the group's events are
// kept until Result, which hands them to groupcheck in the order of the
// tools' clocks (several consumers' streams are read apart, so their
// arrival order is not the order things happened). It is safe for
// concurrent use, one goroutine per tool.
type Verifier struct {
	topic string
	group *groupcheck.Checker // told of acks as they come, of the group's events at Result

	mu           sync.Mutex
	acked, read  []map[int64]string // by partition: offset -> value, waiting for the other side
	events       []groupcheck.Event
	owns         map[string]map[int32]bool // by member: the partitions it owns, by its own events
	lastSaid     map[string]time.Time      // by member: its latest event's time
	processed    []int64                   // by partition: the highest offset read
	ackedHigh    []int64                   // by partition: the highest offset acknowledged
	inconsistent uint64
	witnesses    []string
	gaps         []AckGap    // by partition: the longest wait between two acknowledgements
	lastAck      []time.Time // by partition: the latest acknowledgement
	share        *shareState // a share group's record book; nil for a consumer group
}

// AckGap is a partition's longest wait between two of the producers'
// acknowledgements, by the tools' clocks: the stall a Java producer saw
// there (the tools print no per-record ack latency).
type AckGap struct {
	Partition int32         `json:"partition"`
	From      time.Time     `json:"from"` // the acknowledgement before the wait
	To        time.Time     `json:"to"`   // the one after
	Gap       time.Duration `json:"gap"`
}

// NewVerifier returns a Verifier of topic, whose group starts at start
// (each partition's committed offset).
func NewVerifier(topic string, begin time.Time, start []int64) *Verifier {
	v := &Verifier{topic: topic, group: groupcheck.New(begin, start), owns: map[string]map[int32]bool{}, lastSaid: map[string]time.Time{}}
	for _, o := range start {
		v.acked = append(v.acked, map[int64]string{})
		v.read = append(v.read, map[int64]string{})
		v.processed = append(v.processed, o-1)
		v.ackedHigh = append(v.ackedHigh, o-1)
		v.gaps = append(v.gaps, AckGap{Partition: int32(len(v.gaps))})
		v.lastAck = append(v.lastAck, time.Time{})
	}
	return v
}

// Producer takes one VerifiableProducer event.
func (v *Verifier) Producer(e Event) {
	if e.Name != ProducerSendOK || e.Topic != v.topic || e.Value == nil {
		return
	}
	if v.share != nil {
		v.mu.Lock()
		if r := v.share.rec(e.Partition, e.Offset); r != nil {
			r.acked = true
		}
		v.mu.Unlock()
	} else {
		v.group.Acked(e.Partition, e.Offset)
	}
	v.meet(e.Partition, e.Offset, *e.Value, true)
	v.ackedAt(e.Partition, e.Offset, e.At())
}

// ackedAt keeps partition p's highest acknowledged offset and its longest
// wait between acknowledgements, offset having been acknowledged at t.
func (v *Verifier) ackedAt(p int32, offset int64, t time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if p < 0 || int(p) >= len(v.lastAck) {
		return
	}
	v.ackedHigh[p] = max(v.ackedHigh[p], offset)
	if last := v.lastAck[p]; !last.IsZero() && t.Sub(last) > v.gaps[p].Gap {
		v.gaps[p] = AckGap{Partition: p, From: last, To: t, Gap: t.Sub(last)}
	}
	if t.After(v.lastAck[p]) {
		v.lastAck[p] = t
	}
}

// Consumer takes one VerifiableConsumer event of member (or one
// VerifiableShareConsumer event, for a share group).
func (v *Verifier) Consumer(member string, e Event) {
	if e.Name == RecordData && e.Topic == v.topic && e.Value != nil {
		v.meet(e.Partition, e.Offset, *e.Value, false)
	}
	gs := e.GroupEvents(member, v.topic)
	v.mu.Lock()
	defer v.mu.Unlock()
	prev := v.lastSaid[member]
	if e.At().After(prev) {
		v.lastSaid[member] = e.At()
	}
	if v.share != nil {
		v.share.event(v.topic, member, e)
		if e.Name == RecordData && e.Topic == v.topic && int(e.Partition) < len(v.processed) && e.Partition >= 0 {
			v.processed[e.Partition] = max(v.processed[e.Partition], e.Offset)
		}
		return
	}
	if e.Name == OffsetsCommitted && !prev.IsZero() {
		// The tool prints a commit when its response is handled, which a
		// frozen JVM delays past other members' commits; the broker
		// applied it at some time after the member's previous event, so it
		// goes there, where it cannot look like a commit backwards. (A
		// commit that did go backwards is caught by the group's committed
		// offsets, as the broker serves them.)
		for i := range gs {
			gs[i].At = prev
		}
	}
	for _, g := range gs {
		switch {
		case g.Kind == groupcheck.Polled && int(g.Partition) < len(v.processed):
			v.processed[g.Partition] = max(v.processed[g.Partition], g.Last)
		case g.Kind == groupcheck.Assigned:
			if v.owns[member] == nil {
				v.owns[member] = map[int32]bool{}
			}
			v.owns[member][g.Partition] = true
		case g.Kind == groupcheck.Revoked:
			delete(v.owns[member], g.Partition)
		}
	}
	v.events = append(v.events, gs...)
}

// Gone says that member died at at (its process killed), or at its last
// event if that came later (by its own clock): it owns nothing from then
// on, though it could not say so, and its partitions count as owned by no
// one until another member is assigned them.
func (v *Verifier) Gone(member string, at time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.share != nil {
		v.share.gone[v.share.member(member)] = true
		return
	}
	if last := v.lastSaid[member]; last.After(at) {
		at = last
	}
	parts := slices.Sorted(maps.Keys(v.owns[member]))
	for _, p := range parts {
		v.events = append(v.events, groupcheck.Event{At: at, Member: member, Kind: groupcheck.Revoked, Partition: p})
	}
	delete(v.owns, member)
}

// meet files the value acknowledged (ack) or read at offset, or compares
// it with the other side's when that came first.
func (v *Verifier) meet(p int32, offset int64, value string, ack bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	mine, other := v.read, v.acked
	if ack {
		mine, other = v.acked, v.read
	}
	if p < 0 || int(p) >= len(mine) {
		return
	}
	theirs, ok := other[p][offset]
	if !ok {
		if _, dup := mine[p][offset]; !dup { // an offset read again: its first value stands
			mine[p][offset] = value
		}
		return
	}
	delete(other[p], offset)
	if theirs != value {
		v.inconsistent++
		acked, read := theirs, value
		if ack {
			acked, read = value, theirs
		}
		if len(v.witnesses) < 10 {
			v.witnesses = append(v.witnesses, fmt.Sprintf("partition %d offset %d: acknowledged %q, read %q", p, offset, acked, read))
		}
	}
}

// Result is the verdict: the group's, and the inconsistent offsets.
type Result struct {
	Group groupcheck.Result `json:"group"`
	// Share is a share group's verdict; Group is then empty.
	Share                      *ShareResult `json:"share,omitempty"`
	InconsistentOffsets        uint64       `json:"inconsistentOffsets"`
	InconsistentOffsetExamples []string     `json:"inconsistentOffsetExamples,omitempty"`
	// AckGaps is each partition's longest wait between two of the
	// producers' acknowledgements.
	AckGaps []AckGap `json:"ackGaps,omitempty"`
	// Incomplete says what kept the run from being judged whole (a tool
	// that ended unasked, a drain that did not end), when its runner
	// knows (Local.Finish).
	Incomplete []string `json:"incomplete,omitempty"`
}

// LongestAckGap is the longest of r's AckGaps (zero without any).
func (r Result) LongestAckGap() AckGap {
	var longest AckGap
	for _, g := range r.AckGaps {
		if g.Gap > longest.Gap {
			longest = g
		}
	}
	return longest
}

// Clean reports whether nothing was found.
func (r Result) Clean() bool { return len(r.Problems()) == 0 }

// Problems lists what was found, one line per check.
func (r Result) Problems() []string {
	p := r.Group.Problems()
	if r.Share != nil {
		p = r.Share.Problems()
	}
	if r.InconsistentOffsets > 0 {
		p = append(p, fmt.Sprintf("inconsistent-offsets: %d; %v", r.InconsistentOffsets, r.InconsistentOffsetExamples))
	}
	return append(p, r.Incomplete...)
}

// Result gives the verdict, once, when every tool has stopped and the
// group has drained: the group's events, in the order of the tools' clocks (a
// stable sort: one tool's events stay in its order), go to groupcheck.
func (v *Verifier) Result(end time.Time) Result {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.share != nil {
		share := v.share.result()
		return Result{Share: &share, InconsistentOffsets: v.inconsistent, InconsistentOffsetExamples: v.witnesses, AckGaps: slices.Clone(v.gaps)}
	}
	slices.SortStableFunc(v.events, func(a, b groupcheck.Event) int { return a.At.Compare(b.At) })
	for _, e := range v.events {
		v.group.Observe(e)
	}
	v.events = nil
	return Result{Group: v.group.Result(end), InconsistentOffsets: v.inconsistent, InconsistentOffsetExamples: v.witnesses,
		AckGaps: slices.Clone(v.gaps)}
}

// Lag is the group's consumer lag now, as far as the tools have said: by
// partition, the acknowledged offsets above the highest read, summed (as
// groupcheck.Checker.Lag).
func (v *Verifier) Lag() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	var lag int64
	for p, high := range v.ackedHigh {
		lag += max(0, high-v.processed[p])
	}
	return lag
}

// ProcessedThrough reports whether the group has read every offset below
// end in each partition; for a share group, whether every record below
// end has been delivered, and is accepted or its outcome unseen
// (ShareResult.Unseen).
func (v *Verifier) ProcessedThrough(end []int64) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.share != nil {
		return v.share.drained(end)
	}
	for p, e := range end {
		if p < len(v.processed) && v.processed[p] < e-1 {
			return false
		}
	}
	return true
}
