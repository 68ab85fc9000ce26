package timeline

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// Pacing returns the moments a graceful operation took a Kafka pod down
// while the cluster was not fully replicated: for each pod of pods whose
// deletion began (PodDeleting) between from and to, the last look at
// Kafka before it; if that look had a partition with its ISR short of its
// replicas, or a KRaft voter not caught up with the quorum's leader, the
// deletion is a violation, named with the pod, the time since from, and
// the partitions or voters. Kafka's and Strimzi's own rollers refuse to
// restart a broker, or a controller, then. A deletion with no look before
// it is not judged.
func (t Timeline) Pacing(pods []string, from, to time.Time) []string {
	var out []string
	for _, e := range t.Events {
		name, ok := strings.CutPrefix(e.Subject, "pod ")
		if e.Kind != PodDeleting || !ok || !slices.Contains(pods, name) || e.At.Before(from) || e.At.After(to) {
			continue
		}
		at := e.At.Sub(from).Round(100 * time.Millisecond)
		if s, ok := t.lastBefore(e.At, partitionsAt); ok && !s.ISRFull() {
			out = append(out, fmt.Sprintf("pod %s was taken down at +%s while partitions were under-replicated: %s (looked at %s before)",
				name, at, underReplicated(s), e.At.Sub(s.At).Round(10*time.Millisecond)))
		}
		if s, ok := t.lastBefore(e.At, votersAt); ok {
			if lag := s.LaggingVoters(); len(lag) > 0 {
				out = append(out, fmt.Sprintf("pod %s was taken down at +%s while KRaft voters were not caught up: %s (looked at %s before)",
					name, at, strings.Join(lag, ", "), e.At.Sub(votersAt(s)).Round(10*time.Millisecond)))
			}
		}
	}
	return out
}

// lastBefore returns the last look whose answer about a part arrived at
// or before at; when says when that was, zero if the look does not know
// the part.
func (t Timeline) lastBefore(at time.Time, when func(kafkaadmin.State) time.Time) (kafkaadmin.State, bool) {
	for i := len(t.States) - 1; i >= 0; i-- {
		if s := t.States[i]; !when(s).IsZero() && !when(s).After(at) {
			return s, true
		}
	}
	return kafkaadmin.State{}, false
}

// partitionsAt is when s's answer about the partitions arrived.
func partitionsAt(s kafkaadmin.State) time.Time {
	if s.Partitions == nil {
		return time.Time{}
	}
	return s.At
}

// votersAt is when s's answer about the quorum's voters arrived.
func votersAt(s kafkaadmin.State) time.Time {
	if s.Voters == nil {
		return time.Time{}
	}
	return s.ControllerAt
}

// underReplicated lists the partitions whose ISR is short: "2 (ISR [0 2]
// of [0 1 2]), 5 (...)".
func underReplicated(s kafkaadmin.State) string {
	var parts []string
	for _, id := range sortedKeys(s.Partitions) {
		p := s.Partitions[id]
		if len(p.ISR) < len(p.Replicas) {
			parts = append(parts, fmt.Sprintf("%d (ISR %v of %v)", id, p.ISR, p.Replicas))
		}
	}
	return strings.Join(parts, ", ")
}
