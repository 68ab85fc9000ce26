package scenario

import (
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Mark keeps when the baseline and the fault began, for the group's lag
// (the Java clients' verdict is the whole run's).
func (j *javaClients) Mark(p steadystate.Phase) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case p == steadystate.PhaseBaseline && j.baseline.IsZero():
		j.baseline = time.Now()
	case p == steadystate.PhaseFault && j.fault.IsZero():
		j.fault = time.Now()
	}
}

// stopSampling stops the lag's sampler, once.
func (j *javaClients) stopSampling() {
	j.mu.Lock()
	defer j.mu.Unlock()
	select {
	case <-j.stopLag:
	default:
		close(j.stopLag)
	}
}
