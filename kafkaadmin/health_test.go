package kafkaadmin

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCheckHealth(t *testing.T) {
	all := []int32{0, 1, 2}
	full := [2][]int32{all, all}
	caughtUp := map[int32][2]int64{0: {100, 50_000}, 1: {100, 50_000}, 2: {99, 49_900}}
	expect := []HealthOption{WithBrokers(0, 1, 2), WithVoters(2, 1, 0), WithClusterID(testCluster)}

	tests := []struct {
		name  string
		kafka fakeKafka
		opts  []HealthOption
		want  []string // problems, each matched as a substring, in order
	}{
		{
			name:  "healthy",
			kafka: fakeKafka{metadata: metadata(all, full, full), quorum: quorum(0, caughtUp)},
			opts:  expect,
		},
		{
			name:  "healthy without expectations",
			kafka: fakeKafka{metadata: metadata([]int32{5}, [2][]int32{{5}, {5}}), quorum: quorum(0, caughtUp)},
		},
		{
			name:  "broker missing and partitions under-replicated",
			kafka: fakeKafka{metadata: metadata([]int32{0, 2}, [2][]int32{all, {0, 2}}, full, [2][]int32{{1, 2, 0}, {2, 0}}), quorum: quorum(0, caughtUp)},
			opts:  expect,
			want: []string{
				"brokers [1] not registered (registered: [0 2])",
				"under-replicated: t-0: ISR [0 2] of replicas [0 1 2], missing [1]",
				"under-replicated: t-2: ISR [0 2] of replicas [0 1 2], missing [1]",
			},
		},
		{
			name: "restarted broker not serving yet",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: quorum(0, caughtUp),
				down: map[int32]error{1: errors.New("unable to dial: dial tcp 127.0.0.1:9093: connect: connection refused")}},
			opts: expect,
			want: []string{"broker 1: unable to dial: dial tcp 127.0.0.1:9093: connect: connection refused"},
		},
		{
			name: "broker that does not list itself",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: quorum(0, caughtUp),
				views: map[int32]*kmsg.MetadataResponse{2: metadata([]int32{0, 1})}},
			want: []string{"broker 2: answers, but does not list itself as registered"},
		},
		{
			name:  "offline partition",
			kafka: fakeKafka{metadata: metadata(all, [2][]int32{{1}, {}}), quorum: quorum(0, caughtUp)},
			opts:  expect,
			want: []string{
				"offline: t-0: no leader; replicas [1], ISR [], offline replicas []",
				"under-replicated: t-0: ISR [] of replicas [1], missing [1]",
			},
		},
		{
			name:  "wrong cluster",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: quorum(0, caughtUp)},
			opts:  []HealthOption{WithClusterID("AAAAAAAAAAAAAAAAAAAAAA")},
			want:  []string{`cluster ID is "5L6g3nShT-eMCtK--X86sw", want "AAAAAAAAAAAAAAAAAAAAAA"`},
		},
		{
			name:  "no broker",
			kafka: fakeKafka{metadata: metadata(nil), quorum: quorum(0, caughtUp)},
			want:  []string{"no broker registered"},
		},
		{
			name:  "metadata fails",
			kafka: fakeKafka{unreachable: true, quorum: quorum(0, caughtUp)},
			opts:  expect,
			want:  []string{"metadata: metadata request: unable to dial: dial tcp 127.0.0.1:"},
		},
		{
			name:  "voter behind in records",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: quorum(1, map[int32][2]int64{0: {40, 50_000}, 1: {100, 50_000}, 2: {100, 50_000}})},
			opts:  expect,
			want:  []string{"quorum: voter 0 is 60 records behind leader 1 (max 10)"},
		},
		{
			name:  "voter behind in time",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: quorum(1, map[int32][2]int64{0: {95, 40_000}, 1: {100, 50_000}, 2: {100, 50_000}})},
			opts:  expect,
			want:  []string{"quorum: voter 0 was last caught up with leader 1 10s before it (max 2s)"},
		},
		{
			name:  "voter never caught up",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: quorum(1, map[int32][2]int64{0: {100, -1}, 1: {100, 50_000}, 2: {100, 50_000}})},
			opts:  expect,
			want:  []string{"quorum: voter 0 was last caught up with leader 1 an unknown time before it (max 2s)"},
		},
		{
			name:  "lag limits are options",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: quorum(1, map[int32][2]int64{0: {40, 40_000}, 1: {100, 50_000}, 2: {100, 50_000}})},
			opts:  append([]HealthOption{WithMaxQuorumLag(100), WithMaxQuorumLagTime(time.Minute)}, expect...),
		},
		{
			name:  "other voters",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: quorum(0, map[int32][2]int64{0: {100, 50_000}, 1: {100, 50_000}})},
			opts:  expect,
			want:  []string{"quorum: voters are [0 1], want [0 1 2]"},
		},
		{
			name:  "no quorum leader",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: quorum(-1, caughtUp)},
			opts:  expect,
			want:  []string{"quorum: no leader (epoch 3)"},
		},
		{
			name: "quorum error code",
			kafka: fakeKafka{metadata: metadata(all, full), quorum: func() *kmsg.DescribeQuorumResponse {
				r := quorum(0, caughtUp)
				r.Topics[0].Partitions[0].ErrorCode = kerr.NotLeaderForPartition.Code
				return r
			}()},
			opts: expect,
			want: []string{"quorum: describe quorum: __cluster_metadata partition 0: NOT_LEADER_FOR_PARTITION"},
		},
		{
			name:  "quorum request fails",
			kafka: fakeKafka{metadata: metadata(all, full), quorumErr: errors.New("boom")},
			opts:  expect,
			want:  []string{"quorum: describe quorum request: boom"},
		},
	}
	zkMode := append([]HealthOption{WithZooKeeperMode()}, expect[0], expect[2])
	tests = append(tests, []struct {
		name  string
		kafka fakeKafka
		opts  []HealthOption
		want  []string
	}{
		{
			name:  "ZooKeeper mode: healthy, whatever DescribeQuorum would say",
			kafka: fakeKafka{metadata: controlledBy(1, metadata(all, full)), quorumErr: errors.New("a ZooKeeper-mode broker has no quorum")},
			opts:  zkMode,
		},
		{
			name:  "ZooKeeper mode: no controller broker",
			kafka: fakeKafka{metadata: controlledBy(-1, metadata(all, full))},
			opts:  zkMode,
			want:  []string{"no controller broker (metadata names -1; registered: [0 1 2])"},
		},
		{
			name:  "ZooKeeper mode: a controller that is not registered",
			kafka: fakeKafka{metadata: controlledBy(2, metadata([]int32{0, 1}, [2][]int32{all, {0, 1}}))},
			opts:  zkMode,
			want: []string{
				"brokers [2] not registered (registered: [0 1])",
				"under-replicated: t-0: ISR [0 1] of replicas [0 1 2], missing [2]",
				"no controller broker (metadata names 2; registered: [0 1])",
			},
		},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := tt.kafka.client(t).CheckHealth(t.Context(), tt.opts...)
			if err != nil {
				t.Fatalf("CheckHealth() error = %v", err)
			}
			got := h.Problems()
			if len(got) != len(tt.want) {
				t.Fatalf("Problems() =\n  %s\nwant %d problems:\n  %s", strings.Join(got, "\n  "), len(tt.want), strings.Join(tt.want, "\n  "))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q; want it to contain %q", i, got[i], tt.want[i])
				}
			}
			if h.Healthy() != (len(tt.want) == 0) {
				t.Errorf("Healthy() = %v with problems %q", h.Healthy(), got)
			}
		})
	}
}

func TestHealthObserved(t *testing.T) {
	kafka := fakeKafka{metadata: metadata([]int32{2, 0, 1}, [2][]int32{{2, 0, 1}, {1, 2, 0}}), quorum: quorum(0, map[int32][2]int64{0: {100, 50_000}, 1: {97, 49_000}, 2: {100, 50_000}})}
	h, err := kafka.client(t).CheckHealth(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"brokers sorted", h.Brokers, []int32{0, 1, 2}},
		{"cluster", h.ClusterID, testCluster},
		{"partitions", h.Partitions, 1},
		{"quorum leader", h.Quorum.LeaderID, int32(0)},
		{"voters", h.Quorum.VoterIDs(), []int32{0, 1, 2}},
		{"voter 1", h.Quorum.Voters[1], Replica{ID: 1, LogEndOffset: 97, Lag: 3, LagTime: time.Second}},
		{"summary", h.String(), "healthy: cluster 5L6g3nShT-eMCtK--X86sw, brokers [0 1 2], 1 partitions with full ISRs, quorum leader 0 (epoch 3), voters [0 1 2] caught up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v; want %#v", tt.got, tt.want)
			}
		})
	}
}

func TestProblemsCapsPartitionList(t *testing.T) {
	var parts [][2][]int32
	for range 25 {
		parts = append(parts, [2][]int32{{0, 1, 2}, {0, 2}})
	}
	h, err := fakeKafka{metadata: metadata([]int32{0, 1, 2}, parts...), quorum: quorum(0, map[int32][2]int64{0: {1, 1}, 1: {1, 1}, 2: {1, 1}})}.client(t).CheckHealth(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := h.Problems()
	if len(p) != maxListed+1 || p[maxListed] != "... and 15 more under-replicated partitions" {
		t.Fatalf("Problems() = %q; want %d partitions named and a count of the rest", p, maxListed)
	}
}

func TestCheckHealthCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := fakeKafka{unreachable: true, quorumErr: context.Canceled}.client(t).CheckHealth(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CheckHealth() error = %v; want context.Canceled", err)
	}
}

// controlledBy sets the controller that a metadata answer names.
func controlledBy(id int32, m *kmsg.MetadataResponse) *kmsg.MetadataResponse {
	m.ControllerID = id
	return m
}
