package timeline

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

func deleting(at int, pod string) Event {
	return Event{At: t0.Add(time.Duration(at) * time.Second), Lane: LaneKubernetes, Kind: PodDeleting, Subject: "pod " + pod}
}

func TestPacing(t *testing.T) {
	full := [2][]int32{{0, 1, 2}, {0, 1, 2}}
	short := [2][]int32{{0, 2}, {0, 1, 2}}
	up := map[int32]bool{0: false, 1: false, 2: false}
	paced := Timeline{
		States: []kafkaadmin.State{look(0, [2]int32{0, 1}, full, up, 0), look(10, [2]int32{0, 1}, short, up, 0), look(20, [2]int32{0, 1}, full, up, 0)},
		Events: []Event{deleting(1, "kafka-2"), deleting(21, "kafka-1")},
	}
	hasty := Timeline{
		States: paced.States,
		Events: []Event{deleting(1, "kafka-2"), deleting(12, "kafka-1"), deleting(13, "zookeeper-0")},
	}
	pods := []string{"kafka-0", "kafka-1", "kafka-2"}
	if v := paced.Pacing(pods, t0, t0.Add(time.Minute)); len(v) != 0 {
		t.Errorf("a roll that waited for full ISRs: %v", v)
	}
	v := hasty.Pacing(pods, t0, t0.Add(time.Minute))
	if len(v) != 1 || !strings.Contains(v[0], "pod kafka-1 was taken down at +12s") || !strings.Contains(v[0], "0 (ISR [0 2] of [0 1 2])") {
		t.Errorf("a roll that went on while partition 0 was short: %q, want one violation naming kafka-1, +12s and partition 0", v)
	}
	if v := hasty.Pacing(pods, t0, t0.Add(11*time.Second)); len(v) != 0 {
		t.Errorf("a deletion after the window was judged: %v", v)
	}

	// The quorum: voter 1 came back 40 records behind at 10 s, caught up
	// by 20 s. A look that failed DescribeQuorum (no voters) is skipped.
	caughtUp := []kafkaadmin.Replica{{ID: 0}, {ID: 1}, {ID: 2}}
	behind := []kafkaadmin.Replica{{ID: 0}, {ID: 1, Lag: 40}, {ID: 2}}
	quorum := Timeline{
		States: []kafkaadmin.State{withVoters(look(0, [2]int32{0, 1}, full, up, 0), caughtUp), withVoters(look(10, [2]int32{0, 1}, full, up, 0), behind),
			look(11, [2]int32{0, 1}, full, up, 0), withVoters(look(20, [2]int32{0, 1}, full, up, 0), caughtUp)},
		Events: []Event{deleting(1, "kafka-1"), deleting(12, "kafka-2"), deleting(21, "kafka-0")},
	}
	v = quorum.Pacing(pods, t0, t0.Add(time.Minute))
	if len(v) != 1 || !strings.Contains(v[0], "pod kafka-2 was taken down at +12s while KRaft voters were not caught up: voter 1 (40 records behind leader 0)") {
		t.Errorf("a roll that went on while voter 1 lagged: %q, want one violation naming kafka-2 and voter 1", v)
	}

	// The look begun at 20 s, whose quorum answer (a broker held the
	// forwarded DescribeQuorum) came only at 22 s, after kafka-0 went down
	// at 21 s: what kafka-0's deletion is judged by is the look of 10 s.
	late := Timeline{States: slices.Clone(quorum.States), Events: quorum.Events}
	late.States[3].ControllerAt = late.States[3].At.Add(2 * time.Second)
	v = late.Pacing(pods, t0, t0.Add(time.Minute))
	if len(v) != 2 || !strings.Contains(v[1], "pod kafka-0 was taken down at +21s while KRaft voters were not caught up: voter 1 (40 records behind leader 0) (looked at 11s before)") {
		t.Errorf("a deletion before the quorum's answer arrived: %q, want kafka-0 judged by the look of 10 s", v)
	}
}

// withVoters gives s the quorum's voters v.
func withVoters(s kafkaadmin.State, v []kafkaadmin.Replica) kafkaadmin.State {
	s.Voters = v
	return s
}
