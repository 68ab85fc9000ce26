package steadystate

import (
	"sync"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// The group's lag is sampled every lagEvery, at most maxLagSamples times
// (83 minutes' worth; a longer run keeps its first 83 minutes, and
// groupcheck.Lag.Samples says how many were kept).
const (
	lagEvery      = 250 * time.Millisecond
	maxLagSamples = 20000
)

// lagSamples are a group's lag samples, in time order.
type lagSamples struct {
	mu      sync.Mutex
	samples []groupcheck.LagSample
}

// sampleLag samples the group's lag until it stops.
func (g *appGroup) sampleLag() {
	t := time.NewTicker(lagEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case now := <-t.C:
			lag := g.chk.Lag()
			g.lag.mu.Lock()
			if len(g.lag.samples) < maxLagSamples {
				g.lag.samples = append(g.lag.samples, groupcheck.LagSample{At: now, Records: lag})
			}
			g.lag.mu.Unlock()
		}
	}
}

// lagFigures reads the lag samples around the run's fault, up to the
// load's end: nil unless marks has a baseline and a fault.
func (g *appGroup) lagFigures(marks []Mark, loadEnd time.Time) *groupcheck.Lag {
	var baseline, fault time.Time
	for _, m := range marks {
		switch {
		case m.Phase == PhaseBaseline && baseline.IsZero():
			baseline = m.At
		case m.Phase == PhaseFault && fault.IsZero():
			fault = m.At
		}
	}
	if baseline.IsZero() || fault.IsZero() {
		return nil
	}
	g.lag.mu.Lock()
	defer g.lag.mu.Unlock()
	l := groupcheck.LagOf(g.lag.samples, baseline, fault, loadEnd)
	return &l
}
