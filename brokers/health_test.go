package brokers

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

// fakeKafka answers Metadata and DescribeQuorum requests with canned answers.
// A metadata request to one broker alone is answered with the cluster's
// metadata, unless down names that broker.
type fakeKafka struct {
	metadata    *kmsg.MetadataResponse
	metadataErr error
	quorum      *kmsg.DescribeQuorumResponse
	quorumErr   error
	down        map[int32]error                  // brokers that do not answer alone
	views       map[int32]*kmsg.MetadataResponse // brokers that answer alone with other metadata
}

func (f fakeKafka) RequestBroker(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	if err := f.down[id]; err != nil {
		return nil, err
	}
	if _, ok := req.(*kmsg.MetadataRequest); !ok {
		return nil, errors.New("fakeKafka: unexpected request to one broker")
	}
	if v, ok := f.views[id]; ok {
		return v, nil
	}
	return f.Request(ctx, req)
}

func (f fakeKafka) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	switch req.(type) {
	case *kmsg.MetadataRequest:
		return f.metadata, f.metadataErr
	case *kmsg.DescribeQuorumRequest:
		return f.quorum, f.quorumErr
	}
	return nil, errors.New("fakeKafka: unexpected request")
}

const testCluster = "5L6g3nShT-eMCtK--X86sw"

// metadata describes brokers and, per partition of topic "t", its replicas
// and ISR (leader: the first ISR member, or -1 for an empty ISR).
func metadata(brokers []int32, partitions ...[2][]int32) *kmsg.MetadataResponse {
	resp := kmsg.NewPtrMetadataResponse()
	resp.ClusterID = kmsg.StringPtr(testCluster)
	for _, id := range brokers {
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = id, "127.0.0.1", 9092+id
		resp.Brokers = append(resp.Brokers, b)
	}
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = kmsg.StringPtr("t")
	for i, p := range partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = int32(i)
		mp.Replicas, mp.ISR = p[0], p[1]
		mp.Leader = -1
		if len(p[1]) > 0 {
			mp.Leader = p[1][0]
		} else {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		t.Partitions = append(t.Partitions, mp)
	}
	resp.Topics = append(resp.Topics, t)
	return resp
}

// quorum describes a quorum led by leader whose voters have the given log
// end offsets and caught-up times (ms); the leader is at leo and now.
func quorum(leader int32, voters map[int32][2]int64) *kmsg.DescribeQuorumResponse {
	resp := kmsg.NewPtrDescribeQuorumResponse()
	t := kmsg.NewDescribeQuorumResponseTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	p.LeaderID, p.LeaderEpoch, p.HighWatermark = leader, 3, 100
	for _, id := range []int32{0, 1, 2} {
		s, ok := voters[id]
		if !ok {
			continue
		}
		r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		r.ReplicaID, r.LogEndOffset, r.LastCaughtUpTimestamp = id, s[0], s[1]
		p.CurrentVoters = append(p.CurrentVoters, r)
	}
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

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
			kafka: fakeKafka{metadataErr: errors.New("dial tcp 127.0.0.1:9092: connection refused"), quorum: quorum(0, caughtUp)},
			opts:  expect,
			want:  []string{"metadata: metadata request: dial tcp 127.0.0.1:9092: connection refused"},
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := CheckHealth(t.Context(), tt.kafka, tt.opts...)
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
	h, err := CheckHealth(t.Context(), kafka)
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
	h, err := CheckHealth(t.Context(), fakeKafka{metadata: metadata([]int32{0, 1, 2}, parts...), quorum: quorum(0, map[int32][2]int64{0: {1, 1}, 1: {1, 1}, 2: {1, 1}})})
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
	_, err := CheckHealth(ctx, fakeKafka{metadataErr: context.Canceled, quorumErr: context.Canceled})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CheckHealth() error = %v; want context.Canceled", err)
	}
}
