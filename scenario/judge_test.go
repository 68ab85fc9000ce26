package scenario

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestRecordProblems(t *testing.T) {
	tests := []struct {
		name     string
		records  steadystate.Records
		expected float64
		want     []string // one problem each, in order
	}{
		{"clean", steadystate.Records{Acked: 1000}, 1000, nil},
		{"lost", steadystate.Records{Acked: 1000, Lost: 3}, 1000, []string{"3 acknowledged records lost"}},
		{"duplicates and reordered", steadystate.Records{Acked: 1000, Duplicates: 2, Reordered: 1}, 1000, []string{"2 duplicates", "1 reordered"}},
		{"inconsistent offsets", steadystate.Records{Acked: 1000, InconsistentOffsets: 2}, 1000, []string{"2 consumed at another offset than the one acknowledged"}},
		{"barely ran", steadystate.Records{Acked: 499}, 1000, []string{"only 499 records acknowledged of about 1000"}},
		{"half is enough", steadystate.Records{Acked: 500}, 1000, nil},
		{"no schedule to expect a count from", steadystate.Records{}, 0, nil},
		{"drain cut short", steadystate.Records{Acked: 10, DrainIncomplete: true}, 0, []string{"did not read up to every acknowledged offset"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RecordProblems(&steadystate.Report{Records: tt.records}, tt.expected)
			if len(got) != len(tt.want) {
				t.Fatalf("%q, want %d problems %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d: %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}

func TestIdentityProblems(t *testing.T) {
	vol := func(claim, uid, pv string) brokers.Volume {
		return brokers.Volume{Claim: claim, ClaimUID: types.UID(uid), PV: pv, PVUID: types.UID(pv + "-uid")}
	}
	b := func(id int32, pod, podUID string, v brokers.Volume) brokers.Server {
		return brokers.Server{ID: id, Pod: pod, PodUID: types.UID(podUID), Broker: true, Volumes: []brokers.Volume{v}}
	}
	before := []brokers.Server{
		b(0, "kafka-0", "p0", vol("data-kafka-0", "c0", "pv0")),
		b(1, "kafka-1", "p1", vol("data-kafka-1", "c1", "pv1")),
	}
	tests := []struct {
		name      string
		after     []brokers.Server
		victims   []int32
		newPods   bool
		newVolume string
		want      []string // substrings, one problem each
	}{
		{"a victim replaced, the bystander untouched", []brokers.Server{before[0],
			b(1, "kafka-1", "p1b", vol("data-kafka-1", "c1", "pv1"))}, []int32{1}, true, "", nil},
		{"a victim that kept its pod", before, []int32{1}, true, "", []string{"broker 1: new pod"}},
		{"a bystander replaced is no problem of identity", []brokers.Server{b(0, "kafka-0", "p0b", vol("data-kafka-0", "c0", "pv0")),
			b(1, "kafka-1", "p1b", vol("data-kafka-1", "c1", "pv1"))}, []int32{1}, true, "", nil},
		{"a bystander on another volume", []brokers.Server{b(0, "kafka-0", "p0", vol("data-kafka-0", "c0", "pvX")),
			b(1, "kafka-1", "p1b", vol("data-kafka-1", "c1", "pv1"))}, []int32{1}, true, "", []string{"broker 0: same PV for claim data-kafka-0"}},
		{"a disk loss: a new claim on a new volume", []brokers.Server{before[0],
			b(1, "kafka-1", "p1b", vol("data-kafka-1", "c1b", "pv1b"))}, []int32{1}, true, "data", nil},
		{"a disk loss that kept its volume", []brokers.Server{before[0],
			b(1, "kafka-1", "p1b", vol("data-kafka-1", "c1", "pv1"))}, []int32{1}, true, "data", []string{"broker 1: new claim data-kafka-1", "broker 1: new PV for claim data-kafka-1"}},
		{"a broker gone", before[:1], []int32{1}, true, "", []string{"broker 1: no pod carries this broker ID any more (was kafka-1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := identityProblems(before, tt.after, tt.victims, tt.newPods, tt.newVolume)
			if len(got) != len(tt.want) {
				t.Fatalf("%q, want %d problems %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d: %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}
