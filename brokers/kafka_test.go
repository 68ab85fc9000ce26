package brokers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeCluster starts a kfake cluster of n brokers with topic "t" of
// partitions partitions, and returns it with a Client to it.
func fakeCluster(t *testing.T, n int, partitions int32, opts ...kfake.Opt) (*kfake.Cluster, Client) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(n), kfake.SeedTopics(partitions, "t")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, FromKgo(cl)
}

// replicasOf returns the replicas of each partition of topic t.
func replicasOf(t *testing.T, cl Client) map[int32][]int32 {
	t.Helper()
	meta, err := metadataOf(t.Context(), cl, "t")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32][]int32{}
	for _, p := range meta.Topics[0].Partitions {
		out[p.Partition] = p.Replicas
	}
	return out
}

func TestPartitionLeader(t *testing.T) {
	c, cl := fakeCluster(t, 3, 4)
	check := func() {
		t.Helper()
		for p := range int32(4) {
			got, err := PartitionLeader(t.Context(), cl, "t", p)
			if want := c.LeaderFor("t", p); err != nil || got != want {
				t.Errorf("PartitionLeader(t, %d) = %d, %v; want %d", p, got, err, want)
			}
		}
	}
	check()
	c.ShufflePartitionLeaders()
	check() // fresh metadata, not the client's cache

	errTests := []struct {
		name      string
		cl        Client
		topic     string
		partition int32
		want      string
		is        error
	}{
		{name: "unknown topic", cl: cl, topic: "nope", want: "brokers: leader of nope-0: topic nope: UNKNOWN_TOPIC_OR_PARTITION", is: kerr.UnknownTopicOrPartition},
		{name: "no such partition", cl: cl, topic: "t", partition: 9, want: "brokers: leader of t-9: topic has 4 partitions"},
		{
			name:  "no leader",
			cl:    fakeKafka{metadata: metadata([]int32{0, 1, 2}, [2][]int32{{1}, {}})},
			topic: "t", want: "brokers: leader of t-0: no leader (LEADER_NOT_AVAILABLE", is: ErrNoLeader,
		},
		{name: "request fails", cl: fakeKafka{metadataErr: context.DeadlineExceeded}, topic: "t", want: "metadata request: context deadline exceeded", is: context.DeadlineExceeded},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PartitionLeader(t.Context(), tt.cl, tt.topic, tt.partition)
			if err == nil || !strings.Contains(err.Error(), tt.want) || got != -1 {
				t.Fatalf("PartitionLeader() = %d, %v; want -1 and an error containing %q", got, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("PartitionLeader() error = %v; want it to wrap %v", err, tt.is)
			}
		})
	}
}

func TestClusterID(t *testing.T) {
	_, cl := fakeCluster(t, 3, 1, kfake.ClusterID("kafkachaos-test"))
	tests := []struct {
		name    string
		cl      Client
		want    string
		wantErr string
	}{
		{name: "kfake", cl: cl, want: "kafkachaos-test"},
		{name: "canned", cl: fakeKafka{metadata: metadata([]int32{0})}, want: testCluster},
		{name: "none", cl: fakeKafka{metadata: kmsg.NewPtrMetadataResponse()}, wantErr: "the metadata answer carries none"},
		{name: "request fails", cl: fakeKafka{metadataErr: errors.New("boom")}, wantErr: "brokers: cluster ID: metadata request: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClusterID(t.Context(), tt.cl)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ClusterID() = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ClusterID() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// kfake does not implement DescribeQuorum: ActiveController is tested
// against canned answers.
func TestActiveController(t *testing.T) {
	caughtUp := map[int32][2]int64{0: {100, 1}, 1: {100, 1}, 2: {100, 1}}
	tests := []struct {
		name    string
		kafka   fakeKafka
		want    int32
		wantErr string
		is      error
	}{
		{name: "leader", kafka: fakeKafka{quorum: quorum(2, caughtUp)}, want: 2},
		{name: "no leader", kafka: fakeKafka{quorum: quorum(-1, caughtUp)}, want: -1, wantErr: "brokers: active controller: quorum at epoch 3: no leader", is: ErrNoLeader},
		{
			name: "error code",
			kafka: fakeKafka{quorum: func() *kmsg.DescribeQuorumResponse {
				r := quorum(0, caughtUp)
				r.Topics[0].Partitions[0].ErrorCode = kerr.NotLeaderForPartition.Code
				return r
			}()},
			want: -1, wantErr: "describe quorum: __cluster_metadata partition 0: NOT_LEADER_FOR_PARTITION", is: kerr.NotLeaderForPartition,
		},
		{name: "request fails", kafka: fakeKafka{quorumErr: errors.New("boom")}, want: -1, wantErr: "describe quorum request: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ActiveController(t.Context(), tt.kafka)
			if got != tt.want {
				t.Errorf("ActiveController() = %d; want %d", got, tt.want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("ActiveController() error = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("ActiveController() error = %v; want one containing %q", err, tt.wantErr)
			case tt.is != nil && !errors.Is(err, tt.is):
				t.Errorf("ActiveController() error = %v; want it to wrap %v", err, tt.is)
			}
		})
	}
}

func TestCheckLogDirs(t *testing.T) {
	const dir = "/mem/kfake" // kfake's one log dir
	// dropPartitions makes the next DescribeLogDirs answer lack partitions
	// drop of topic t.
	dropPartitions := func(c *kfake.Cluster, drop ...int32) {
		c.ControlKey(int16(kmsg.DescribeLogDirs), func(req kmsg.Request) (kmsg.Response, error, bool) {
			resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
			d := kmsg.NewDescribeLogDirsResponseDir()
			d.Dir = dir
			for _, rt := range req.(*kmsg.DescribeLogDirsRequest).Topics {
				dt := kmsg.NewDescribeLogDirsResponseDirTopic()
				dt.Topic = rt.Topic
				for _, p := range rt.Partitions {
					if !slices.Contains(drop, p) {
						dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
						dp.Partition = p
						dt.Partitions = append(dt.Partitions, dp)
					}
				}
				d.Topics = append(d.Topics, dt)
			}
			resp.Dirs = append(resp.Dirs, d)
			return resp, nil, true
		})
	}

	// want returns the problems expected of broker id, which replicates
	// partitions mine.
	tests := []struct {
		name    string
		topic   string
		setup   func(c *kfake.Cluster) int32 // returns the broker to check
		want    func(id int32, mine []int32) []string
		wantErr string
	}{
		{
			name:  "holds every partition it replicates",
			topic: "t",
			setup: func(*kfake.Cluster) int32 { return 1 },
			want:  func(int32, []int32) []string { return nil },
		},
		{
			name:  "lacks partitions",
			topic: "t",
			setup: func(c *kfake.Cluster) int32 {
				dropPartitions(c, 0, 1, 2, 3) // whichever of them broker 2 replicates
				return 2
			},
			want: func(id int32, mine []int32) []string {
				var out []string
				for _, p := range mine {
					if p <= 3 {
						out = append(out, fmt.Sprintf("broker 2: log dir holds its partitions: want t-%d in a log dir, got absent from its log dirs [/mem/kfake]", p))
					}
				}
				return out
			},
		},
		{
			name:  "log dir offline",
			topic: "t",
			setup: func(c *kfake.Cluster) int32 {
				c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeLogDirs}, Resource: dir, Err: kerr.KafkaStorageError})
				return 0
			},
			want: func(id int32, mine []int32) []string {
				out := []string{"broker 0: log dir holds its partitions: want log dir /mem/kfake online, got KAFKA_STORAGE_ERROR: Disk error when trying to access log file on the disk."}
				for _, p := range mine {
					out = append(out, fmt.Sprintf("broker 0: log dir holds its partitions: want t-%d in a log dir, got no log dir online", p))
				}
				return out
			},
		},
		{
			name:  "not registered",
			topic: "t",
			setup: func(c *kfake.Cluster) int32 {
				if err := c.RemoveNode(3); err != nil {
					t.Fatal(err)
				}
				return 3
			},
			want: func(int32, []int32) []string {
				return []string{"broker 3: registered: want broker 3 registered, got registered brokers [0 1 2]"}
			},
		},
		{
			name:    "unknown topic",
			topic:   "nope",
			setup:   func(*kfake.Cluster) int32 { return 0 },
			wantErr: "brokers: log dirs of broker 0: topic nope: UNKNOWN_TOPIC_OR_PARTITION",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// 4 brokers and replication factor 3: each broker replicates
			// some partitions, not all.
			c, cl := fakeCluster(t, 4, 8)
			replicas := replicasOf(t, cl)
			id := tt.setup(c)
			problems, err := CheckLogDirs(t.Context(), cl, id, tt.topic)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("CheckLogDirs() = %v, %v; want an error containing %q", problems, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckLogDirs() error = %v", err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			var mine []int32
			for p, rs := range replicas {
				if slices.Contains(rs, id) {
					mine = append(mine, p)
				}
			}
			slices.Sort(mine)
			if want := tt.want(id, mine); !slices.Equal(got, want) {
				t.Fatalf("CheckLogDirs(%d) problems:\n  %q\nwant\n  %q", id, got, want)
			}
		})
	}
}

// Broker 3 of 4 replicates none of a 1-partition topic's partitions when the
// partition's replicas are the other three.
func TestCheckLogDirsNotAReplica(t *testing.T) {
	_, cl := fakeCluster(t, 4, 1)
	rs := replicasOf(t, cl)[0]
	var id int32
	for id = range 4 {
		if !slices.Contains(rs, id) {
			break
		}
	}
	problems, err := CheckLogDirs(t.Context(), cl, id, "t")
	if err != nil {
		t.Fatal(err)
	}
	want := Problem{Broker: id, Check: "log dir holds its partitions", Want: fmt.Sprintf("a partition of t with broker %d as a replica", id), Got: "none of its 1 partitions"}
	if len(problems) != 1 || problems[0] != want {
		t.Fatalf("CheckLogDirs(%d) = %+v; want [%+v] (replicas %v)", id, problems, want, rs)
	}
}
