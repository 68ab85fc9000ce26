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
// replicas, the deletion is a violation, named with the pod, the time
// since from, and the partitions. Kafka's and Strimzi's own rollers refuse
// to restart a broker then. A deletion with no look before it is not
// judged. (A lagging KRaft voter is not judged yet: the looks do not carry
// the quorum's lag.)
func (t Timeline) Pacing(pods []string, from, to time.Time) []string {
	var out []string
	for _, e := range t.Events {
		name, ok := strings.CutPrefix(e.Subject, "pod ")
		if e.Kind != PodDeleting || !ok || !slices.Contains(pods, name) || e.At.Before(from) || e.At.After(to) {
			continue
		}
		s, ok := t.lastBefore(e.At)
		if !ok || s.ISRFull() {
			continue
		}
		out = append(out, fmt.Sprintf("pod %s was taken down at +%s while partitions were under-replicated: %s (looked at %s before)",
			name, e.At.Sub(from).Round(100*time.Millisecond), underReplicated(s), e.At.Sub(s.At).Round(10*time.Millisecond)))
	}
	return out
}

// lastBefore returns the last look at or before at that knew the
// partitions.
func (t Timeline) lastBefore(at time.Time) (kafkaadmin.State, bool) {
	for i := len(t.States) - 1; i >= 0; i-- {
		if s := t.States[i]; !s.At.After(at) && s.Partitions != nil {
			return s, true
		}
	}
	return kafkaadmin.State{}, false
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
