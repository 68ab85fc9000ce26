package report

import (
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Names of the recovery times in Spec.Recovery, as runStory records them.
const (
	// RecoveryToPodsReady: from the fault's recovery until the victims are
	// Ready pods again.
	RecoveryToPodsReady = "toPodsReady"
	// RecoveryToHealthy: from the fault's recovery until the cluster is
	// healthy.
	RecoveryToHealthy = "toHealthy"
	// RecoveryInjectToHealthy: from the fault's injection until the cluster
	// is healthy.
	RecoveryInjectToHealthy = "injectToHealthy"
	// RecoveryThroughputBack: from the fault's recovery until throughput is
	// back to the baseline's (ThroughputBack).
	RecoveryThroughputBack = "throughputBack"
)

// Never is the recovery time of what did not happen.
const Never = "never"

// ThroughputBack is Recovery[RecoveryThroughputBack]: how long after since
// the acked records/s got back to ratio times the baseline's, to the
// millisecond, or Never.
func ThroughputBack(rep *steadystate.Report, since time.Time, ratio float64) string {
	if d, ok := rep.ThroughputBackAfter(since, ratio); ok {
		return d.Round(time.Millisecond).String()
	}
	return Never
}
