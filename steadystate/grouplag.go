package steadystate

import (
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

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
	return g.lag.Lag(baseline, fault, loadEnd)
}
