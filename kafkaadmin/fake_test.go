package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeKafka is a cluster with canned answers. Its metadata is served by a
// kfake cluster told to answer with it (kadm needs a *kgo.Client); the
// requests kadm has no call for, DescribeQuorum and metadata requests to one
// broker alone, fakeKafka answers itself as the Client's requester. A
// metadata request to one broker alone is answered with the cluster's
// metadata, unless down names that broker.
type fakeKafka struct {
	metadata    *kmsg.MetadataResponse
	unreachable bool // no broker answers: the client cannot dial
	quorum      *kmsg.DescribeQuorumResponse
	quorumErr   error
	cluster     *kmsg.DescribeClusterResponse    // nil: DescribeCluster v2 unsupported
	clusterErr  error                            // DescribeCluster fails so
	down        map[int32]error                  // brokers that do not answer alone
	views       map[int32]*kmsg.MetadataResponse // brokers that answer alone with other metadata
}

// client returns a Client to f.
func (f fakeKafka) client(t *testing.T) *Client {
	t.Helper()
	seeds := []string{refusingAddr(t)}
	if !f.unreachable {
		c := newKfake(t, kfake.NumBrokers(3), kfake.ClusterID(testCluster))
		seeds = c.ListenAddrs()
		c.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			return f.answer(req.(*kmsg.MetadataRequest), seeds), nil, true
		})
	}
	cl := newKgo(t, seeds, kgo.RequestRetries(0))
	return &Client{adm: kadm.NewClient(cl), raw: f}
}

// answer is f.metadata at req's version, for the topics req asks for,
// with the brokers kfake runs at the addresses it listens on, so that the
// kgo client can reach them.
func (f fakeKafka) answer(req *kmsg.MetadataRequest, addrs []string) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	if f.metadata == nil {
		return resp
	}
	resp.ClusterID, resp.ControllerID = f.metadata.ClusterID, f.metadata.ControllerID
	resp.Topics = f.metadata.Topics // nil: all topics
	if req.Topics != nil {
		resp.Topics = nil
		for _, rt := range req.Topics {
			i := slices.IndexFunc(f.metadata.Topics, func(t kmsg.MetadataResponseTopic) bool { return *t.Topic == *rt.Topic })
			if i < 0 {
				t := kmsg.NewMetadataResponseTopic()
				t.Topic, t.ErrorCode = rt.Topic, kerr.UnknownTopicOrPartition.Code
				resp.Topics = append(resp.Topics, t)
				continue
			}
			resp.Topics = append(resp.Topics, f.metadata.Topics[i])
		}
	}
	for _, b := range f.metadata.Brokers {
		if int(b.NodeID) < len(addrs) {
			host, port, _ := net.SplitHostPort(addrs[b.NodeID])
			p, _ := strconv.Atoi(port)
			b.Host, b.Port = host, int32(p)
		}
		resp.Brokers = append(resp.Brokers, b)
	}
	return resp
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
	return f.metadata, nil
}

func (f fakeKafka) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	switch req.(type) {
	case *kmsg.DescribeQuorumRequest:
		return f.quorum, f.quorumErr
	case *kmsg.DescribeClusterRequest:
		if f.clusterErr != nil {
			return nil, f.clusterErr
		}
		if f.cluster == nil {
			return nil, fmt.Errorf("fakeKafka: DescribeCluster v2: %w", kerr.UnsupportedVersion)
		}
		return f.cluster, nil
	}
	return nil, errors.New("fakeKafka: unexpected request")
}

// refusingAddr returns an address on which nothing listens.
func refusingAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func newKfake(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func newKgo(t *testing.T, seeds []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// fakeCluster starts a kfake cluster of n brokers with topic "t" of
// partitions partitions, and returns it with a Client to it.
func fakeCluster(t *testing.T, n int, partitions int32, opts ...kfake.Opt) (*kfake.Cluster, *Client) {
	t.Helper()
	c := newKfake(t, append([]kfake.Opt{kfake.NumBrokers(n), kfake.SeedTopics(partitions, "t")}, opts...)...)
	return c, New(newKgo(t, c.ListenAddrs()))
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
