package groupcheck

import (
	"sync"
	"time"
)

// A group's lag is sampled every LagEvery, at most MaxLagSamples times
// (83 minutes' worth; a longer run keeps its first 83 minutes, and
// Lag.Samples says how many were kept).
const (
	LagEvery      = 250 * time.Millisecond
	MaxLagSamples = 20000
)

// Sampler keeps a group's lag samples, in time order. The zero value is
// ready; it is safe for concurrent use.
type Sampler struct {
	mu      sync.Mutex
	samples []LagSample
}

// Run samples lag every LagEvery until stop is closed.
func (s *Sampler) Run(stop <-chan struct{}, lag func() int64) {
	t := time.NewTicker(LagEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			s.Add(LagSample{At: now, Records: lag()})
		}
	}
}

// Add keeps one sample, unless MaxLagSamples are kept already.
func (s *Sampler) Add(l LagSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) < MaxLagSamples {
		s.samples = append(s.samples, l)
	}
}

// Lag reads the samples around a fault (LagOf): nil unless baselineFrom
// and faultAt are both known.
func (s *Sampler) Lag(baselineFrom, faultAt, loadEnd time.Time) *Lag {
	if baselineFrom.IsZero() || faultAt.IsZero() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := LagOf(s.samples, baselineFrom, faultAt, loadEnd)
	return &l
}
