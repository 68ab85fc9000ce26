package timeline

import (
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
}
