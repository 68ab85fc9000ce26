package timeline

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func look(at int, leaders [2]int32, isr [2][]int32, brokers map[int32]bool, controller int32) kafkaadmin.State {
	s := kafkaadmin.State{At: t0.Add(time.Duration(at) * time.Second), Brokers: brokers, Controller: controller, ControllerKnown: controller >= -1}
	if s.ControllerKnown {
		s.ControllerAt = s.At // the quorum answered with the rest
	}
	s.Partitions = map[int32]kafkaadmin.PartitionView{}
	for p := range 2 {
		s.Partitions[int32(p)] = kafkaadmin.PartitionView{Leader: leaders[p], Replicas: []int32{int32(p), 1 - int32(p), 2}, ISR: isr[p]}
	}
	return s
}

// A recorded pod-kill of broker 0, the leader of partition 0: fenced, its
// leadership moves, it leaves the ISRs, comes back, rejoins.
func TestKafkaEventsOfAKill(t *testing.T) {
	up := map[int32]bool{0: false, 1: false, 2: false}
	seq := []kafkaadmin.State{
		look(0, [2]int32{0, 1}, [2][]int32{{0, 1, 2}, {0, 1, 2}}, up, 0),
		look(9, [2]int32{1, 1}, [2][]int32{{1, 2}, {1, 2}}, map[int32]bool{0: true, 1: false, 2: false}, 1),
		look(10, [2]int32{1, 1}, [2][]int32{{1, 2}, {1, 2}}, map[int32]bool{1: false, 2: false}, 1),
		look(20, [2]int32{1, 1}, [2][]int32{{1, 2}, {1, 2}}, up, 1),
		look(22, [2]int32{1, 1}, [2][]int32{{0, 1, 2}, {0, 1, 2}}, up, 1),
	}
	var got []string
	for i := 1; i < len(seq); i++ {
		for _, e := range KafkaEvents(seq[i-1], seq[i]) {
			got = append(got, fmt.Sprintf("%.0f %s %s %s>%s", e.At.Sub(t0).Seconds(), e.Kind, e.Subject, e.From, e.To))
		}
	}
	want := []string{
		"9 leader-changed partition 0 0>1",
		"9 isr-shrunk partition 0 [0 1 2]>[1 2]",
		"9 isr-shrunk partition 1 [0 1 2]>[1 2]",
		"9 broker-fenced broker 0 >",
		"9 controller-changed controller 0>1",
		"10 broker-gone broker 0 >",
		"20 broker-registered broker 0 >",
		"22 isr-expanded partition 0 [1 2]>[0 1 2]",
		"22 isr-expanded partition 1 [1 2]>[0 1 2]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
}

// A look whose DescribeQuorum a broker held until a new quorum leader was
// elected dates the controller change when that answer came, not when the
// look began (which once made takeovers look seconds early).
func TestKafkaEventsDateTheControllerByItsAnswer(t *testing.T) {
	up := map[int32]bool{0: false, 1: false, 2: false}
	prev := look(0, [2]int32{0, 1}, [2][]int32{{0, 1, 2}, {0, 1, 2}}, up, 0)
	cur := look(1, [2]int32{1, 1}, [2][]int32{{0, 1, 2}, {0, 1, 2}}, up, 1)
	cur.ControllerAt = cur.At.Add(1500 * time.Millisecond)
	var got []string
	for _, e := range KafkaEvents(prev, cur) {
		got = append(got, fmt.Sprintf("%.1f %s", e.At.Sub(t0).Seconds(), e.Kind))
	}
	want := []string{"1.0 leader-changed", "2.5 controller-changed"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events: %q, want %q", got, want)
	}
}

func TestKafkaEventsIgnoreUnknownParts(t *testing.T) {
	a := look(0, [2]int32{0, 1}, [2][]int32{{0, 1, 2}, {0, 1, 2}}, map[int32]bool{0: false}, 0)
	b := kafkaadmin.State{At: t0.Add(time.Second), Controller: -1} // every request failed
	if evs := KafkaEvents(a, b); len(evs) != 0 {
		t.Errorf("a failed look read as changes: %v", evs)
	}
	if evs := KafkaEvents(b, a); len(evs) != 0 {
		t.Errorf("a look after a failed one read as changes: %v", evs)
	}
	// merge keeps the last known parts, so the change after a gap is one.
	c := look(2, [2]int32{1, 1}, [2][]int32{{0, 1, 2}, {0, 1, 2}}, map[int32]bool{0: false}, 0)
	if evs := KafkaEvents(merge(a, b), c); len(evs) != 1 || evs[0].Kind != LeaderChanged {
		t.Errorf("after a gap: %v, want one leader change", evs)
	}
}

func pod(uid string, node string, running, ready, deleting bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kafka-0", UID: types.UID("u" + uid)}, Spec: corev1.PodSpec{NodeName: node}}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{Time: t0}
	}
	cs := corev1.ContainerStatus{Name: "kafka"}
	if running {
		cs.State.Running = &corev1.ContainerStateRunning{}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	return p
}

func TestPodEvents(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur *corev1.Pod
		want      []Kind
	}{
		{"deleted", pod("1", "n", true, true, false), pod("1", "n", true, true, true), []Kind{PodDeleting}},
		{"gone", pod("1", "n", true, true, true), nil, []Kind{PodGone}},
		{"new pod, pending", nil, pod("2", "", false, false, false), []Kind{PodCreated}},
		{"new UID replaces the old", pod("1", "n", true, true, false), pod("2", "", false, false, false), []Kind{PodCreated}},
		{"scheduled", pod("2", "", false, false, false), pod("2", "n", false, false, false), []Kind{PodScheduled}},
		{"started", pod("2", "n", false, false, false), pod("2", "n", true, false, false), []Kind{PodStarted}},
		{"ready", pod("2", "n", true, false, false), pod("2", "n", true, true, false), []Kind{PodReady}},
		{"not ready", pod("2", "n", true, true, false), pod("2", "n", true, false, false), []Kind{PodNotReady}},
		{"no change", pod("2", "n", true, true, false), pod("2", "n", true, true, false), nil},
	}
	for _, tt := range tests {
		var got []Kind
		for _, e := range PodEvents(t0, tt.prev, tt.cur) {
			got = append(got, e.Kind)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNodeEvents(t *testing.T) {
	n := func(cordoned bool) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{Unschedulable: cordoned}}
	}
	if e := NodeEvents(t0, n(false), n(true)); len(e) != 1 || e[0].Kind != NodeCordoned {
		t.Errorf("cordon: %v", e)
	}
	if e := NodeEvents(t0, n(true), n(false)); len(e) != 1 || e[0].Kind != NodeUncordoned {
		t.Errorf("uncordon: %v", e)
	}
	if e := NodeEvents(t0, n(true), n(true)); len(e) != 0 {
		t.Errorf("no change: %v", e)
	}
}

func TestGroupEvents(t *testing.T) {
	var evs []Event
	for p := range 6 {
		evs = append(evs, Event{At: t0.Add(time.Duration(p) * 100 * time.Millisecond), Lane: LaneKafka, Kind: LeaderChanged, Subject: fmt.Sprintf("partition %d", p)})
	}
	evs = append(evs,
		Event{At: t0.Add(200 * time.Millisecond), Lane: LaneKafka, Kind: BrokerFenced, Subject: "broker 0"},
		Event{At: t0.Add(10 * time.Second), Lane: LaneKafka, Kind: LeaderChanged, Subject: "partition 0"})
	got := GroupEvents(evs, time.Second)
	var labels []string
	for _, g := range got {
		labels = append(labels, g.Label())
	}
	want := []string{"leader-changed ×6", "broker-fenced broker 0", "leader-changed partition 0"}
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("groups %q, want %q", labels, want)
	}
}

func TestFirstAfter(t *testing.T) {
	full := [2][]int32{{0, 1, 2}, {0, 1, 2}}
	short := [2][]int32{{1, 2}, {1, 2}}
	up := map[int32]bool{0: false, 1: false, 2: false}
	tl := Timeline{States: []kafkaadmin.State{
		look(0, [2]int32{0, 1}, full, up, 0),
		look(5, [2]int32{1, 1}, short, up, 1),
		look(8, [2]int32{1, 1}, full, up, 1),
		look(12, [2]int32{0, 1}, full, up, 1),
	}}
	since := t0.Add(4 * time.Second)
	if d, ok := tl.FirstAfter(since, kafkaadmin.State.ISRFull); !ok || d != 4*time.Second {
		t.Errorf("ISR full after 4s: %s %t, want 4s", d, ok)
	}
	if d, ok := tl.FirstAfter(since, kafkaadmin.State.PreferredLeaders); !ok || d != 8*time.Second {
		t.Errorf("preferred leaders after 4s: %s %t, want 8s", d, ok)
	}
	if _, ok := tl.FirstAfter(t0.Add(13*time.Second), kafkaadmin.State.ISRFull); ok {
		t.Error("a milestone after the last look")
	}
}
