package groupcheck

import "time"

// LagSample is the group's lag at a time (Checker.Lag).
type LagSample struct {
	At      time.Time
	Records int64
}

// Lag is what the group's consumer lag did around a fault, in records.
type Lag struct {
	// Baseline is the highest lag of the baseline.
	Baseline int64 `json:"baseline"`
	// Peak is the highest lag from the fault on, at PeakAt.
	Peak   int64     `json:"peak"`
	PeakAt time.Time `json:"peakAt"`
	// BackAt is the first time after the peak that the lag was at most
	// the baseline's again; zero if it never was (NeverBack) or never
	// rose above it. Back is that time less the fault's start.
	BackAt    time.Time     `json:"backAt"`
	Back      time.Duration `json:"back"`
	NeverBack bool          `json:"neverBack,omitempty"`
	Samples   int           `json:"samples"`
}

// LagOf reads samples (in time order): the baseline is [baselineFrom,
// faultAt), the fault and what follows it from faultAt on.
func LagOf(samples []LagSample, baselineFrom, faultAt time.Time) Lag {
	l := Lag{Samples: len(samples)}
	peak := -1
	for i, s := range samples {
		switch {
		case s.At.Before(baselineFrom):
		case s.At.Before(faultAt):
			l.Baseline = max(l.Baseline, s.Records)
		case peak < 0 || s.Records > l.Peak:
			peak, l.Peak, l.PeakAt = i, s.Records, s.At
		}
	}
	if peak < 0 || l.Peak <= l.Baseline {
		return l
	}
	for _, s := range samples[peak:] {
		if s.Records <= l.Baseline {
			l.BackAt, l.Back = s.At, s.At.Sub(faultAt)
			return l
		}
	}
	l.NeverBack = true
	return l
}
