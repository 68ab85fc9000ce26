package kafkaadmin

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// replicasOf returns the replicas of each partition of topic t.
func replicasOf(t *testing.T, cl *Client) map[int32][]int32 {
	t.Helper()
	m, err := cl.metadata(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32][]int32{}
	for p, d := range m.Topics["t"].Partitions {
		out[p] = d.Replicas
	}
	return out
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
			wantErr: "kafkaadmin: log dirs of broker 0: topic nope: UNKNOWN_TOPIC_OR_PARTITION",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// 4 brokers and replication factor 3: each broker replicates
			// some partitions, not all.
			c, cl := fakeCluster(t, 4, 8)
			replicas := replicasOf(t, cl)
			id := tt.setup(c)
			problems, err := cl.CheckLogDirs(t.Context(), id, tt.topic)
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
	problems, err := cl.CheckLogDirs(t.Context(), id, "t")
	if err != nil {
		t.Fatal(err)
	}
	want := Problem{Broker: id, Check: "log dir holds its partitions", Want: fmt.Sprintf("a partition of t with broker %d as a replica", id), Got: "none of its 1 partitions"}
	if len(problems) != 1 || problems[0] != want {
		t.Fatalf("CheckLogDirs(%d) = %+v; want [%+v] (replicas %v)", id, problems, want, rs)
	}
}

func TestLogDirs(t *testing.T) {
	tests := []struct {
		name    string
		fault   *kfake.Fault
		want    []string
		wantErr string
	}{
		{name: "online", want: []string{"/mem/kfake"}},
		{name: "offline: left out", fault: &kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeLogDirs}, Resource: "/mem/kfake", Err: kerr.KafkaStorageError}},
		{name: "request refused", fault: &kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeLogDirs}, Err: kerr.ClusterAuthorizationFailed, TopLevel: true},
			wantErr: "kafkaadmin: log dirs of broker 1: CLUSTER_AUTHORIZATION_FAILED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, cl := fakeCluster(t, 3, 2)
			if tt.fault != nil {
				c.Fault(*tt.fault)
			}
			got, err := cl.LogDirs(t.Context(), 1)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LogDirs() = %v, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("LogDirs() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
