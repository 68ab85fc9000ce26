package kafkaadmin

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func cluster(fenced map[int32]bool) *kmsg.DescribeClusterResponse {
	resp := kmsg.NewPtrDescribeClusterResponse()
	for _, id := range []int32{0, 1, 2} {
		f, ok := fenced[id]
		if !ok {
			continue
		}
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.IsFenced = id, f
		resp.Brokers = append(resp.Brokers, b)
	}
	return resp
}

func TestState(t *testing.T) {
	md := metadata([]int32{0, 1}, [2][]int32{{0, 1, 2}, {0, 1}}, [2][]int32{{1, 2, 0}, {1, 0}})
	tests := []struct {
		name           string
		fake           fakeKafka
		wantBrokers    map[int32]bool
		wantController int32
		wantKnown      bool
	}{
		{
			name:        "fenced broker from DescribeCluster",
			fake:        fakeKafka{metadata: md, quorum: quorum(1, nil), cluster: cluster(map[int32]bool{0: false, 1: false, 2: true})},
			wantBrokers: map[int32]bool{0: false, 1: false, 2: true}, wantController: 1, wantKnown: true,
		},
		{
			name:        "no DescribeCluster v2: the metadata's brokers, unfenced",
			fake:        fakeKafka{metadata: md, quorum: quorum(0, nil)},
			wantBrokers: map[int32]bool{0: false, 1: false}, wantController: 0, wantKnown: true,
		},
		{
			name:        "DescribeCluster timed out: brokers unknown, not gone",
			fake:        fakeKafka{metadata: md, quorum: quorum(0, nil), clusterErr: context.DeadlineExceeded},
			wantBrokers: nil, wantController: 0, wantKnown: true,
		},
		{
			// kgo's words for an API the broker does not list, as a
			// ZooKeeper-mode broker does not list DescribeQuorum.
			name:        "ZooKeeper mode: the controller broker that metadata names",
			fake:        fakeKafka{metadata: controlledBy(1, md), quorumErr: errors.New("broker is too old; the broker has already indicated it will not know how to handle the request")},
			wantBrokers: map[int32]bool{0: false, 1: false}, wantController: 1, wantKnown: true,
		},
		{
			name:        "quorum unknown",
			fake:        fakeKafka{metadata: md, quorumErr: errors.New("timed out"), cluster: cluster(map[int32]bool{0: false})},
			wantBrokers: map[int32]bool{0: false}, wantController: -1, wantKnown: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.fake.client(t).State(context.Background(), "t")
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(s.Brokers, tt.wantBrokers) || s.Controller != tt.wantController || s.ControllerKnown != tt.wantKnown {
				t.Errorf("State = brokers %v controller %d known %t, want %v %d %t", s.Brokers, s.Controller, s.ControllerKnown, tt.wantBrokers, tt.wantController, tt.wantKnown)
			}
			// The quorum's answer is dated apart, after the rest, and only
			// when there is one.
			if s.At.IsZero() || tt.wantKnown == s.ControllerAt.IsZero() || (tt.wantKnown && s.ControllerAt.Before(s.At)) {
				t.Errorf("State dated at %v, its controller at %v; want both, the controller's not before (known: %t)", s.At, s.ControllerAt, tt.wantKnown)
			}
			want := map[int32]PartitionView{0: {Leader: 0, LeaderEpoch: -1, Replicas: []int32{0, 1, 2}, ISR: []int32{0, 1}}, 1: {Leader: 1, LeaderEpoch: -1, Replicas: []int32{1, 2, 0}, ISR: []int32{0, 1}}}
			if !reflect.DeepEqual(s.Partitions, want) {
				t.Errorf("partitions = %+v, want %+v (ISR sorted)", s.Partitions, want)
			}
		})
	}
	if _, err := (fakeKafka{unreachable: true, quorumErr: errors.New("no broker")}).client(t).State(context.Background(), "t"); err == nil {
		t.Error("State of an unreachable cluster: no error")
	}
}

func TestStateConditions(t *testing.T) {
	full := map[int32]PartitionView{0: {Leader: 0, Replicas: []int32{0, 1, 2}, ISR: []int32{0, 1, 2}}}
	moved := map[int32]PartitionView{0: {Leader: 1, Replicas: []int32{0, 1, 2}, ISR: []int32{0, 1, 2}}}
	short := map[int32]PartitionView{0: {Leader: 0, Replicas: []int32{0, 1, 2}, ISR: []int32{0, 1}}}
	tests := []struct {
		name                   string
		s                      State
		isrFull, preferred, r2 bool
	}{
		{"healthy", State{Partitions: full, Brokers: map[int32]bool{0: false, 1: false, 2: false}}, true, true, true},
		{"leader moved", State{Partitions: moved, Brokers: map[int32]bool{2: false}}, true, false, true},
		{"ISR short, broker 2 fenced", State{Partitions: short, Brokers: map[int32]bool{2: true}}, false, true, false},
		{"unknown", State{}, false, false, false},
	}
	for _, tt := range tests {
		if got := [3]bool{tt.s.ISRFull(), tt.s.PreferredLeaders(), tt.s.Registered(2)}; got != [3]bool{tt.isrFull, tt.preferred, tt.r2} {
			t.Errorf("%s: ISRFull, PreferredLeaders, Registered(2) = %v, want %v", tt.name, got, [3]bool{tt.isrFull, tt.preferred, tt.r2})
		}
	}
}

func TestLaggingVoters(t *testing.T) {
	tests := []struct {
		name   string
		leader int32
		voters []Replica
		want   []string
	}{
		{"unknown", 0, nil, nil},
		{"caught up", 0, []Replica{{ID: 0, Lag: 0}, {ID: 1, Lag: 10, LagTime: 2 * time.Second}}, nil},
		{"records behind", 0, []Replica{{ID: 0}, {ID: 1, Lag: 11}}, []string{"voter 1 (11 records behind leader 0)"}},
		{"too long ago", 0, []Replica{{ID: 0}, {ID: 2, LagTime: 3 * time.Second}}, []string{"voter 2 (last caught up with leader 0 3s before it)"}},
		{"never caught up", 0, []Replica{{ID: 0}, {ID: 2, LagTime: -1}}, []string{"voter 2 (last caught up with leader 0 an unknown time before it)"}},
		{"the leader is never behind itself", 0, []Replica{{ID: 0, Lag: 99, LagTime: -1}}, nil},
		{"no leader", -1, []Replica{{ID: 0, LagTime: -1}, {ID: 1, LagTime: -1}}, []string{"no quorum leader"}},
	}
	for _, tt := range tests {
		s := State{Controller: tt.leader, ControllerKnown: true, Voters: tt.voters}
		if got := s.LaggingVoters(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
