package groupcheck

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/intervals"
)

// maxGaps bounds the poll gaps kept for the verdict; past it they are
// judged no more (and the result says so in a witness).
const maxGaps = 10000

// Checker takes a group's events in the order they happened, and the
// records acknowledged to its topic's producers, and gives the verdict.
// Members call Observe synchronously when the thing happens (a commit's
// event before the member rebalances), so that events arrive in causal
// order. It is safe for concurrent use.
type Checker struct {
	mu      sync.Mutex
	parts   []partition
	members map[string][]memberPart // by member, by partition
	gaps    []gap                   // within-member poll gaps, judged at the end
	dropped uint64                  // gaps past maxGaps
	res     Result
}

// partition is the group's view of one partition.
type partition struct {
	acked  intervals.Set // offsets acknowledged to producers
	polled intervals.Set // offsets polled by any member
	// processed is the highest offset polled; committed the last
	// acknowledged commit (the next offset to read); ackedHigh the
	// highest offset acknowledged.
	processed, committed, ackedHigh int64
	owners                          int
	unownedSince                    time.Time // when owners fell to 0
}

// memberPart is one member's view of one partition.
type memberPart struct {
	owned bool
	last  int64 // the last offset polled since it was assigned, -1 for none
	reset bool  // a reset since the last poll
}

// gap is a range of offsets [from, to] a member skipped between two polls.
type gap struct {
	member    string
	at        time.Time
	partition int32
	from, to  int64
}

// New returns a Checker for a group that starts at start (the committed
// offset of each partition, by index), at the time begin.
func New(begin time.Time, start []int64) *Checker {
	c := &Checker{parts: make([]partition, len(start)), members: map[string][]memberPart{}, res: Result{Counts: map[Check]uint64{}}}
	for p, o := range start {
		c.parts[p] = partition{processed: o - 1, committed: o, ackedHigh: o - 1, unownedSince: begin}
	}
	return c
}

// Acked records that a producer's record was acknowledged at offset of
// partition p.
func (c *Checker) Acked(p int32, offset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pt := c.part(p); pt != nil && offset >= 0 {
		pt.acked.Add(uint64(offset))
		pt.ackedHigh = max(pt.ackedHigh, offset)
	}
}

// Lag is the group's consumer lag now, in records: by partition, the
// acknowledged offsets above the highest one processed, added up.
func (c *Checker) Lag() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var lag int64
	for _, pt := range c.parts {
		lag += max(0, pt.ackedHigh-pt.processed)
	}
	return lag
}

func (c *Checker) part(p int32) *partition {
	if p < 0 || int(p) >= len(c.parts) {
		return nil
	}
	return &c.parts[p]
}

func (c *Checker) member(name string, p int32) *memberPart {
	mps, ok := c.members[name]
	if !ok {
		mps = make([]memberPart, len(c.parts))
		for i := range mps {
			mps[i].last = -1
		}
		c.members[name] = mps
	}
	return &mps[p]
}

// Observe takes one event.
func (c *Checker) Observe(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pt := c.part(e.Partition)
	if pt == nil {
		return
	}
	mp := c.member(e.Member, e.Partition)
	if (e.Kind == Assigned || e.Kind == Revoked) && len(c.res.Rebalances) < MaxRebalances {
		c.res.Rebalances = append(c.res.Rebalances, e)
	}
	switch e.Kind {
	case Assigned:
		c.res.Assignments++
		if !mp.owned {
			if pt.owners == 0 {
				c.res.Unowned = append(c.res.Unowned, Unowned{Partition: e.Partition, From: pt.unownedSince, To: e.At})
			}
			pt.owners++
		}
		*mp = memberPart{owned: true, last: -1}
	case Revoked:
		c.res.Revocations++
		if mp.owned {
			pt.owners--
			if pt.owners == 0 {
				pt.unownedSince = e.At
			}
		}
		*mp = memberPart{last: -1}
	case Polled:
		c.polled(e, pt, mp)
	case Committed:
		c.committed(e, pt)
	case Reset:
		c.res.Resets++
		mp.reset = true
	}
}

// polled judges a poll of e.First..e.Last against the member's previous
// poll of the partition, or, for its first since it was assigned, against
// the group's last commit.
func (c *Checker) polled(e Event, pt *partition, mp *memberPart) {
	switch {
	case mp.last >= 0 && e.First <= mp.last && !mp.reset:
		c.found(CheckNonmonotonicPoll, e, e.First, uint64(mp.last-e.First+1), fmt.Sprintf("its previous poll of the partition ended at %d", mp.last))
	case mp.last >= 0 && e.First > mp.last+1:
		if len(c.gaps) < maxGaps {
			c.gaps = append(c.gaps, gap{member: e.Member, at: e.At, partition: e.Partition, from: mp.last + 1, to: e.First - 1})
		} else {
			c.dropped++
		}
	case mp.last < 0 && e.First < pt.committed && !mp.reset:
		// A member that starts a partition reads from the last commit on.
		n := uint64(min(e.Last+1, pt.committed) - e.First)
		c.found(CheckRedeliveredBeforeCommit, e, e.First, n, fmt.Sprintf("the last acknowledged commit was %d", pt.committed))
	}
	for o := e.First; o <= e.Last; o++ {
		if pt.polled.Add(uint64(o)) {
			c.res.Redelivered++
		}
	}
	mp.last, mp.reset = e.Last, false
	pt.processed = max(pt.processed, e.Last)
}

// committed judges an acknowledged commit against the last one and what
// the group has processed.
func (c *Checker) committed(e Event, pt *partition) {
	switch {
	case e.First < pt.committed:
		c.found(CheckCommitBackward, e, e.First, 1, fmt.Sprintf("the commit before it was %d", pt.committed))
	case e.First > pt.processed+1:
		c.found(CheckCommitPastProcessed, e, e.First, 1, fmt.Sprintf("the group had processed up to %d", pt.processed))
	}
	pt.committed = e.First
}

func (c *Checker) found(ch Check, e Event, offset int64, n uint64, detail string) {
	c.res.Counts[ch] += n
	c.witness(Witness{Check: ch, At: e.At, Member: e.Member, Partition: e.Partition, Offset: offset, Count: n, Detail: detail})
}

func (c *Checker) witness(w Witness) {
	if countOf(c.res.Witnesses, w.Check) < maxWitnesses {
		c.res.Witnesses = append(c.res.Witnesses, w)
	}
}

// Result gives the verdict at end, once (it adds the poll gaps it judges
// to the counts), when every producer and member has stopped and the group
// has drained to the end offsets: the poll gaps are judged against the
// acknowledged records, and what was acknowledged and never polled is lost. Partitions unowned at the end are so until end.
func (c *Checker) Result(end time.Time) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.gaps {
		first, n := c.parts[g.partition].acked.In(uint64(g.from), uint64(g.to)+1)
		if n > 0 {
			c.res.Counts[CheckPollSkip] += n
			c.witness(Witness{Check: CheckPollSkip, At: g.at, Member: g.member, Partition: g.partition, Offset: int64(first), Count: n,
				Detail: fmt.Sprintf("its polls went from %d to %d", g.from-1, g.to+1)})
		}
	}
	if c.dropped > 0 {
		c.witness(Witness{Check: CheckPollSkip, Detail: fmt.Sprintf("%d more poll gaps were not judged (over %d)", c.dropped, maxGaps)})
	}
	res := c.res
	res.Counts = maps.Clone(c.res.Counts)
	res.Witnesses = slices.Clone(c.res.Witnesses)
	res.Unowned = slices.Clone(c.res.Unowned)
	res.Rebalances = slices.Clone(c.res.Rebalances)
	for p := range c.parts {
		pt := &c.parts[p]
		acked, lost := pt.acked.Len(), uint64(0)
		pt.acked.Minus(&pt.polled, func(lo, hi uint64) {
			lost += hi - lo
			if countOf(res.Witnesses, CheckLost) < maxWitnesses {
				res.Witnesses = append(res.Witnesses, Witness{Check: CheckLost, At: end, Partition: int32(p), Offset: int64(lo), Count: hi - lo,
					Detail: "acknowledged, never polled by the group"})
			}
		})
		res.Acked, res.Consumed = res.Acked+acked, res.Consumed+acked-lost
		if lost > 0 {
			res.Counts[CheckLost] += lost
		}
		if pt.owners == 0 {
			res.Unowned = append(res.Unowned, Unowned{Partition: int32(p), From: pt.unownedSince, To: end})
		}
	}
	return res
}

func countOf(ws []Witness, c Check) int {
	n := 0
	for _, w := range ws {
		if w.Check == c {
			n++
		}
	}
	return n
}

// UnownedNow lists the partitions no member owns now.
func (c *Checker) UnownedNow() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []int32
	for p := range c.parts {
		if c.parts[p].owners == 0 {
			ps = append(ps, int32(p))
		}
	}
	return ps
}

// ProcessedThrough reports whether the group has processed every offset
// below end in each partition (by index).
func (c *Checker) ProcessedThrough(end []int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, e := range end {
		if p < len(c.parts) && c.parts[p].processed < e-1 {
			return false
		}
	}
	return true
}
