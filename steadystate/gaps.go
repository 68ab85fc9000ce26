package steadystate

import (
	"sort"
	"time"
)

// gapTracker records the spans of at least min between acknowledgements,
// for one producer or one producer's partition.
type gapTracker struct {
	min   time.Duration
	start time.Time
	last  time.Time // the latest ack; zero before the first
	gaps  []Gap
}

func newGapTracker(start time.Time, min time.Duration) *gapTracker {
	return &gapTracker{start: start, min: min}
}

// ack records an acknowledgement at t.
func (g *gapTracker) ack(t time.Time) {
	// The wait for the first ack is connection set-up, not unavailability.
	if !g.last.IsZero() && t.Sub(g.last) >= g.min {
		g.gaps = append(g.gaps, Gap{g.last, t})
	}
	if t.After(g.last) {
		g.last = t
	}
}

// finish closes the last gap at end.
func (g *gapTracker) finish(end time.Time) {
	switch {
	case g.last.IsZero():
		g.gaps = append(g.gaps, Gap{g.start, end}) // never an ack
	case end.Sub(g.last) >= g.min:
		g.gaps = append(g.gaps, Gap{g.last, end})
	}
}

// wallClock returns the gaps with wall-clock times only (Round(0)), as
// Measurements carry them.
func (g *gapTracker) wallClock() []Gap {
	out := make([]Gap, len(g.gaps))
	for i, x := range g.gaps {
		out[i] = Gap{From: x.From.Round(0), To: x.To.Round(0)}
	}
	return out
}

// noAckGaps returns the times from start to end when no producer of any of
// ms got an ack: the intersection of every producer's ack gaps, each padded
// to the merged run (before its runner's Start and after its End a producer
// got no ack).
func noAckGaps(ms []Measurements, start, end time.Time) []Gap {
	var lists [][]Gap
	for _, m := range ms {
		for _, g := range m.AckGaps {
			lists = append(lists, padGaps(g, start, m.Start, m.End, end))
		}
	}
	return intersectGaps(lists)
}

// partitionNoAckGaps returns, for each partition, the times from start to
// end when no producer of ms got an ack on it; nil when the measurements
// do not carry per-partition gaps (older agents).
func partitionNoAckGaps(ms []Measurements, start, end time.Time) [][]Gap {
	var out [][]Gap
	for p := 0; ; p++ {
		var lists [][]Gap
		for _, m := range ms {
			for _, byPart := range m.PartitionAckGaps {
				if p >= len(byPart) {
					return out
				}
				lists = append(lists, padGaps(byPart[p], start, m.Start, m.End, end))
			}
		}
		if len(lists) == 0 {
			return out
		}
		out = append(out, intersectGaps(lists))
	}
}

// padGaps returns a copy of one producer's gaps, which ran from runStart to
// runEnd, extended to the merged run from start to end: before and after its
// run the producer got no ack. A pad joins the gap it touches.
func padGaps(gs []Gap, start, runStart, runEnd, end time.Time) []Gap {
	out := make([]Gap, 0, len(gs)+2)
	if runStart.After(start) {
		out = append(out, Gap{start, runStart})
	}
	for i, g := range gs {
		if i == 0 && len(out) == 1 && g.From.Equal(runStart) {
			out[0].To = g.To
			continue
		}
		out = append(out, g)
	}
	if end.After(runEnd) {
		if n := len(out); n > 0 && out[n-1].To.Equal(runEnd) {
			out[n-1].To = end
		} else {
			out = append(out, Gap{runEnd, end})
		}
	}
	return out
}

// intersectGaps returns the times that are inside a gap of every list: when
// no producer got an ack.
func intersectGaps(lists [][]Gap) []Gap {
	if len(lists) == 0 {
		return nil
	}
	cur := lists[0]
	for _, l := range lists[1:] {
		var next []Gap
		for _, a := range cur {
			for _, b := range l {
				f, t := maxTime(a.From, b.From), minTime(a.To, b.To)
				if t.After(f) {
					next = append(next, Gap{f, t})
				}
			}
		}
		cur = next
	}
	sort.Slice(cur, func(i, j int) bool { return cur[i].From.Before(cur[j].From) })
	return cur
}

// maxTime returns the later of a and b.
func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
