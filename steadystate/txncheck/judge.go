package txncheck

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Result judges the history. drained says whether the readers reached the
// end of every transaction of the run.
func (c *Checker) Result(drained bool) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := Result{Counts: map[Check]uint64{CheckDuplicate: c.dups}, DrainIncomplete: !drained, Witnesses: slices.Clone(c.witnesses)}
	tl := tally{&r, maps.Clone(c.perCheck)}
	for _, t := range slices.SortedFunc(maps.Keys(c.txns), func(a, b Txn) int {
		return cmp.Or(cmp.Compare(a.Producer, b.Producer), cmp.Compare(a.Seq, b.Seq))
	}) {
		judge(tl, c.cfg, t, c.txns[t], drained)
	}
	// Without an aborted record seen by the control, an aborted read could
	// not have shown; without an acknowledged commit, a lost or torn one.
	r.Inconclusive = r.ControlAbortedReads == 0 || r.Committed == 0
	r.LongestTxn = c.longest
	if len(c.commits) > 0 {
		d := slices.Clone(c.commits)
		slices.Sort(d)
		r.CommitP99, r.CommitMax = d[(len(d)*99+99)/100-1], d[len(d)-1]
	}
	maps.DeleteFunc(r.Counts, func(_ Check, n uint64) bool { return n == 0 })
	return r
}

// tally is a verdict being built: the result and its witnesses.
type tally struct {
	r   *Result
	per map[Check]int
}

// count adds one to w's check, and keeps w if there is room.
func (t tally) count(w Witness) {
	t.r.Counts[w.Check]++
	keep(t.per, &t.r.Witnesses, w)
}

// judge adds transaction t, in state s, to the tally; what depends on
// the readers having read everything only when drained. Callers hold the
// checker's mu.
func judge(tl tally, cfg Config, t Txn, s *txnState, drained bool) {
	r := tl.r
	r.Begun++
	if s.stalled {
		r.Stalled++
		switch {
		case s.outcome == Committed || len(s.seen) > 0:
			// Its coordinator must have aborted it: whatever its client
			// heard, nothing of it may commit.
			tl.count(Witness{Check: CheckZombieCommitted, Txn: t, Partition: -1, Offset: -1, At: s.ended,
				Detail: fmt.Sprintf("held open past its timeout, then committed: its client heard %s, %d of its %d records visible", s.outcome, len(s.seen), s.records)})
			return
		case s.outcome == Aborted:
			r.StalledFenced++
		}
	}
	o := s.outcome
	if o == Open {
		o = Aborted // no commit sent: the coordinator can only abort it
		if !s.commitSent.IsZero() {
			o = Unknown
		}
	}
	switch o {
	case Committed:
		r.Committed++
	case Unknown:
		r.Unknown++
	case Aborted:
		r.Aborted++
		if s.unasked {
			r.AbortedUnasked++
		}
		r.ControlAbortedReads += uint64(s.control)
		for _, i := range slices.Sorted(maps.Keys(s.seen)) {
			rd := s.seen[i]
			tl.count(Witness{Check: CheckAbortedRead, Txn: t, Partition: rd.partition, Offset: rd.offset, At: rd.at,
				Detail: fmt.Sprintf("record %d of %d of a transaction that did not commit", i, s.records)})
		}
		return
	}
	var first, last time.Time
	for _, i := range slices.Sorted(maps.Keys(s.seen)) {
		rd := s.seen[i]
		if first.IsZero() || rd.at.Before(first) {
			first = rd.at
		}
		if rd.at.After(last) {
			last = rd.at
		}
		if rd.at.Before(s.commitSent) {
			tl.count(Witness{Check: CheckPrecommittedRead, Txn: t, Partition: rd.partition, Offset: rd.offset, At: rd.at,
				Detail: fmt.Sprintf("record %d read %s before the commit was sent", i, s.commitSent.Sub(rd.at).Round(time.Millisecond))})
		}
	}
	switch visible := len(s.seen); {
	case !drained && visible < s.records:
		// Unverified: the rest may not have been read yet.
	case visible == 0 && o == Committed:
		tl.count(Witness{Check: CheckLostCommit, Txn: t, Partition: -1, Offset: -1, At: s.ended,
			Detail: fmt.Sprintf("commit acknowledged, none of its %d records visible", s.records)})
	case visible > 0 && visible < s.records:
		tl.count(Witness{Check: CheckTorn, Txn: t, Partition: -1, Offset: -1, At: last,
			Detail: fmt.Sprintf("%d of its %d records visible", visible, s.records)})
	case visible == s.records:
		r.VisibilitySkew = max(r.VisibilitySkew, last.Sub(first))
		if o != Committed || !last.After(s.ended) {
			return
		}
		late := last.Sub(s.ended)
		r.CommitToVisible = max(r.CommitToVisible, late)
		if cfg.StuckAfter > 0 && late > cfg.StuckAfter {
			tl.count(Witness{Check: CheckStuckLSO, Txn: t, Partition: -1, Offset: -1, At: s.ended,
				Detail: fmt.Sprintf("visible %s after its commit was acknowledged, over %s", late.Round(time.Millisecond), cfg.StuckAfter)})
		}
	}
}
