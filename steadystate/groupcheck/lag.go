package groupcheck

import (
	"fmt"
	"slices"
	"time"
)

// LagSample is the group's lag at a time (Checker.Lag).
type LagSample struct {
	At      time.Time
	Records int64
}

// Lag is what the group's consumer lag did around a fault, in records.
type Lag struct {
	// Baseline is the baseline's typical lag (the median of its samples:
	// a backlog left by the warm-up, such as KIP-848's first assignments,
	// drains early in it and does not count), BaselineMax its highest.
	Baseline    int64 `json:"baseline"`
	BaselineMax int64 `json:"baselineMax"`
	// Peak is the highest lag from the fault on, at PeakAt.
	Peak   int64     `json:"peak"`
	PeakAt time.Time `json:"peakAt"`
	// BackAt is the first time after the peak that the lag was at most
	// twice the baseline's again; zero if it never was (NeverBack) or
	// never rose above that. Back is that time less the fault's start.
	BackAt    time.Time     `json:"backAt"`
	Back      time.Duration `json:"back"`
	NeverBack bool          `json:"neverBack,omitempty"`
	Samples   int           `json:"samples"`
	// PerSecond is the lag over the run, for a chart: each second's
	// highest sample, from SecondsFrom (the first sample) to the load's
	// end; -1 for a second with no sample.
	SecondsFrom time.Time `json:"secondsFrom,omitzero"`
	PerSecond   []int64   `json:"perSecond,omitempty"`
}

// perSecond is samples' highest value in each second from the first, -1
// where a second has none.
func perSecond(samples []LagSample) (time.Time, []int64) {
	if len(samples) == 0 {
		return time.Time{}, nil
	}
	from := samples[0].At
	var out []int64
	for _, s := range samples {
		i := int(s.At.Sub(from) / time.Second)
		if i < 0 || i > maxLagSeconds {
			continue
		}
		for len(out) <= i {
			out = append(out, -1)
		}
		out[i] = max(out[i], s.Records)
	}
	return from, out
}

// maxLagSeconds bounds PerSecond: MaxLagSamples at LagEvery.
const maxLagSeconds = int(MaxLagSamples * LagEvery / time.Second)

// LagOf reads samples (in time order): the baseline is [baselineFrom,
// faultAt), the fault and what follows it [faultAt, loadEnd). Samples
// from loadEnd on are the final drain, with no new records: the lag
// falls to nothing there whatever the fault did, so they do not count.
func LagOf(samples []LagSample, baselineFrom, faultAt, loadEnd time.Time) Lag {
	if i := slices.IndexFunc(samples, func(s LagSample) bool { return !s.At.Before(loadEnd) }); i >= 0 {
		samples = samples[:i]
	}
	l := Lag{Samples: len(samples)}
	l.SecondsFrom, l.PerSecond = perSecond(samples)
	var base []int64
	peak := -1
	for i, s := range samples {
		switch {
		case s.At.Before(baselineFrom):
		case s.At.Before(faultAt):
			base = append(base, s.Records)
		case peak < 0 || s.Records > l.Peak:
			peak, l.Peak, l.PeakAt = i, s.Records, s.At
		}
	}
	if len(base) > 0 {
		slices.Sort(base)
		l.Baseline, l.BaselineMax = base[len(base)/2], base[len(base)-1]
	}
	back := 2 * l.Baseline
	if peak < 0 || l.Peak <= back {
		return l
	}
	for _, s := range samples[peak:] {
		if s.Records <= back {
			l.BackAt, l.Back = s.At, s.At.Sub(faultAt)
			return l
		}
	}
	l.NeverBack = true
	return l
}

// Problems says where l breaks bound: the time from the fault's start
// until the lag is back within twice the baseline's. why says where the
// bound comes from. A lag that never rose above twice the baseline's is
// within any bound; one not sampled after the fault shows nothing, and
// is a problem too.
func (l Lag) Problems(bound time.Duration, why string) []string {
	switch {
	case l.Samples == 0 || l.PeakAt.IsZero():
		return []string{"the lag was not sampled after the fault: it shows nothing"}
	case l.Peak <= 2*l.Baseline:
		return nil
	case l.NeverBack:
		return []string{fmt.Sprintf("the lag (peak %d records at %s UTC) was not back within twice the baseline's (%d) by the end of the load; bound %s: %s",
			l.Peak, l.PeakAt.UTC().Format("15:04:05.000"), l.Baseline, bound, why)}
	case l.Back > bound:
		return []string{fmt.Sprintf("the lag (peak %d records) was back within twice the baseline's (%d) %s after the fault began, over the bound %s: %s",
			l.Peak, l.Baseline, l.Back.Round(100*time.Millisecond), bound, why)}
	}
	return nil
}
