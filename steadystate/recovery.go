package steadystate

import "time"

// baselineHold is how many consecutive seconds throughput must stay at the
// baseline level to count as recovered.
const baselineHold = 3

// BaselineThroughput is the mean acked records/s of the baseline phase, or 0
// when the run has none.
func (r *Report) BaselineThroughput() float64 {
	for _, p := range r.Phases {
		if p.Phase == PhaseBaseline && p.Seconds > 0 {
			return p.Throughput
		}
	}
	return 0
}

// ThroughputBackAfter returns how long after since the acked records/s got
// back to ratio x the baseline and stayed there for three seconds. ok is
// false when the run has no baseline or never got back.
func (r *Report) ThroughputBackAfter(since time.Time, ratio float64) (d time.Duration, ok bool) {
	base := r.BaselineThroughput()
	if base <= 0 {
		return 0, false
	}
	run := 0
	// The last second may be partial, so it never counts.
	for i := 0; i < len(r.Series)-1; i++ {
		s := r.Series[i]
		at := r.Start.Add(time.Duration(s.T) * time.Second)
		if at.Before(since) {
			continue
		}
		if float64(s.Acked) >= ratio*base {
			run++
			if run == baselineHold {
				first := r.Start.Add(time.Duration(r.Series[i-baselineHold+1].T) * time.Second)
				return max(first.Sub(since), 0), true
			}
		} else {
			run = 0
		}
	}
	return 0, false
}
