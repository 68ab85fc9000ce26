package txncheck

import (
	"fmt"
	"sync"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/intervals"
)

// The copy job's checks: consume-transform-produce's exactly-once promise,
// every input offset in the output once.
const (
	// CheckCopiedTwice: an input record's copy is at two offsets of the
	// output, as a read_committed reader sees it.
	CheckCopiedTwice Check = "copied-twice"
	// CheckNotCopied: an input record of the run has no copy in the
	// output after the drain.
	CheckNotCopied Check = "not-copied"
)

// CopyChecker follows a consume-transform-produce job: which input offsets
// a read_committed reader of its output saw copied. Its memory grows with
// the gaps and duplicates, not with the records. It is safe for concurrent
// use.
type CopyChecker struct {
	mu        sync.Mutex
	start     []int64
	seen      []intervals.Set // by input partition: the input offsets copied
	lastOut   map[int32]int64 // by output partition: the highest offset read
	twice     uint64
	witnesses []Witness
	perCheck  map[Check]int
}

// NewCopyChecker follows a job whose input partitions start at start.
func NewCopyChecker(start []int64) *CopyChecker {
	return &CopyChecker{start: start, seen: make([]intervals.Set, len(start)), lastOut: map[int32]int64{}, perCheck: map[Check]int{}}
}

// Output records that the reader saw, at outPartition/outOffset, the copy
// of input record inPartition/inOffset. A record read again at an offset
// already passed (a refetch) is not a copy of its own.
func (c *CopyChecker) Output(inPartition int32, inOffset int64, outPartition int32, outOffset int64, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if last, ok := c.lastOut[outPartition]; ok && outOffset <= last {
		return
	}
	c.lastOut[outPartition] = outOffset
	if int(inPartition) >= len(c.seen) || inPartition < 0 || inOffset < c.start[inPartition] {
		return // not an input of this run
	}
	if c.seen[inPartition].Add(uint64(inOffset)) {
		c.twice++
		keep(c.perCheck, &c.witnesses, Witness{Check: CheckCopiedTwice, Partition: outPartition, Offset: outOffset, At: at,
			Detail: fmt.Sprintf("input partition %d offset %d copied again", inPartition, inOffset)})
	}
}

// Copied reports whether every input offset below end has a copy.
func (c *CopyChecker) Copied(end []int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, e := range end {
		if _, n := c.seen[p].In(uint64(c.start[p]), uint64(max(e, c.start[p]))); n < uint64(max(0, e-c.start[p])) {
			return false
		}
	}
	return true
}

// CopyResult is the copy job's verdict.
type CopyResult struct {
	// Inputs counts the input records of the run (below end); Copied
	// those with a copy.
	Inputs    uint64           `json:"inputs"`
	Copied    uint64           `json:"copied"`
	Counts    map[Check]uint64 `json:"counts,omitempty"`
	Witnesses []Witness        `json:"witnesses,omitempty"`
	// DrainIncomplete: the reader did not reach the end of the output.
	DrainIncomplete bool `json:"drainIncomplete,omitempty"`
}

// Result judges the job against the input's end offsets.
func (c *CopyChecker) Result(end []int64, drained bool) CopyResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := CopyResult{Counts: map[Check]uint64{}, DrainIncomplete: !drained, Witnesses: append([]Witness(nil), c.witnesses...)}
	per := map[Check]int{}
	for k, v := range c.perCheck {
		per[k] = v
	}
	if c.twice > 0 {
		r.Counts[CheckCopiedTwice] = c.twice
	}
	for p, e := range end {
		lo, hi := uint64(c.start[p]), uint64(max(e, c.start[p]))
		_, n := c.seen[p].In(lo, hi)
		r.Inputs += hi - lo
		r.Copied += n
		if missing := hi - lo - n; missing > 0 && drained { // else unverified
			r.Counts[CheckNotCopied] += missing
			first := c.seen[p].FirstGap(lo, hi)
			keep(per, &r.Witnesses, Witness{Check: CheckNotCopied, Partition: int32(p), Offset: int64(first),
				Detail: fmt.Sprintf("%d of input partition %d's offsets %d..%d not in the output, the first at %d", missing, p, lo, hi-1, first)})
		}
	}
	return r
}

// Total counts every anomaly.
func (r CopyResult) Total() uint64 {
	var n uint64
	for _, v := range r.Counts {
		n += v
	}
	return n
}

// Clean reports no anomaly, and a drain that completed.
func (r CopyResult) Clean() bool { return r.Total() == 0 && !r.DrainIncomplete }

// Problems describes each check that found anything.
func (r CopyResult) Problems() []string {
	var out []string
	for _, c := range []Check{CheckCopiedTwice, CheckNotCopied} {
		if n := r.Counts[c]; n > 0 {
			out = append(out, fmt.Sprintf("%s: %d", c, n))
		}
	}
	if r.DrainIncomplete {
		out = append(out, "the output's reader did not reach the end of the copy")
	}
	return out
}
