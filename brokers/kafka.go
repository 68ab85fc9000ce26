package brokers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrNoLeader is wrapped in the error of PartitionLeader when the partition
// has no leader, and of ActiveController when the quorum has none.
var ErrNoLeader = errors.New("no leader")

// PartitionLeader returns the leader broker of topic/partition, from fresh
// metadata. A partition without a leader is an error wrapping ErrNoLeader.
func PartitionLeader(ctx context.Context, cl Client, topic string, partition int32) (int32, error) {
	fail := func(format string, args ...any) (int32, error) {
		return -1, fmt.Errorf("brokers: leader of %s-%d: "+format, append([]any{topic, partition}, args...)...)
	}
	meta, err := metadataOf(ctx, cl, topic)
	if err != nil {
		return fail("%w", err)
	}
	t, err := topicIn(meta, topic)
	if err != nil {
		return fail("%w", err)
	}
	for _, p := range t.Partitions {
		if p.Partition != partition {
			continue
		}
		if p.Leader >= 0 {
			return p.Leader, nil
		}
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			return fail("%w (%w)", ErrNoLeader, err)
		}
		return fail("%w", ErrNoLeader)
	}
	return fail("topic has %d partitions", len(t.Partitions))
}

// ActiveController returns the ID of the KRaft quorum's leader, the active
// controller, as a DescribeQuorum request for the metadata log tells. A
// quorum without a leader is an error wrapping ErrNoLeader.
func ActiveController(ctx context.Context, cl Client) (int32, error) {
	q := describeQuorum(ctx, cl)
	if q.Err != nil {
		return -1, fmt.Errorf("brokers: active controller: %w", q.Err)
	}
	if q.LeaderID < 0 {
		return -1, fmt.Errorf("brokers: active controller: quorum at epoch %d: %w", q.LeaderEpoch, ErrNoLeader)
	}
	return q.LeaderID, nil
}

// ClusterID returns the cluster ID that a broker reports in its metadata.
func ClusterID(ctx context.Context, cl Client) (string, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return "", fmt.Errorf("brokers: cluster ID: metadata request: %w", err)
	}
	if resp.ClusterID == nil || *resp.ClusterID == "" {
		return "", errors.New("brokers: cluster ID: the metadata answer carries none")
	}
	return *resp.ClusterID, nil
}

// CheckLogDirs checks, after broker id rejoined, that it is registered and
// that its log dirs hold every partition of topic that has id as a replica,
// with a Metadata request and a DescribeLogDirs request to broker id alone.
// It returns a Problem (Check "registered") if id is not registered, and
// otherwise one (Check "log dir holds its partitions") per partition that
// its log dirs lack, per log dir in error, and if id is a replica of no
// partition of topic, which leaves nothing to check. The error is for
// requests that failed and a topic that the metadata answer errs on.
func CheckLogDirs(ctx context.Context, cl Client, id int32, topic string) ([]Problem, error) {
	const check = "log dir holds its partitions"
	fail := func(format string, args ...any) ([]Problem, error) {
		return nil, fmt.Errorf("brokers: log dirs of broker %d: "+format, append([]any{id}, args...)...)
	}
	meta, err := metadataOf(ctx, cl, topic)
	if err != nil {
		return fail("%w", err)
	}
	var registered []int32
	for _, b := range meta.Brokers {
		registered = append(registered, b.NodeID)
	}
	slices.Sort(registered)
	if !slices.Contains(registered, id) {
		return []Problem{{Broker: id, Check: "registered",
			Want: fmt.Sprintf("broker %d registered", id), Got: fmt.Sprintf("registered brokers %v", registered)}}, nil
	}
	t, err := topicIn(meta, topic)
	if err != nil {
		return fail("%w", err)
	}
	var want []int32
	for _, p := range t.Partitions {
		if slices.Contains(p.Replicas, id) {
			want = append(want, p.Partition)
		}
	}
	slices.Sort(want)
	if len(want) == 0 {
		return []Problem{{Broker: id, Check: check,
			Want: fmt.Sprintf("a partition of %s with broker %d as a replica", topic, id),
			Got:  fmt.Sprintf("none of its %d partitions", len(t.Partitions))}}, nil
	}

	dreq := kmsg.NewPtrDescribeLogDirsRequest()
	dt := kmsg.NewDescribeLogDirsRequestTopic()
	dt.Topic, dt.Partitions = topic, want
	dreq.Topics = append(dreq.Topics, dt)
	kresp, err := cl.RequestBroker(ctx, id, dreq)
	if err != nil {
		return fail("describe log dirs request: %w", err)
	}
	dirs, ok := kresp.(*kmsg.DescribeLogDirsResponse)
	if !ok {
		return fail("answered a describe log dirs request with %T", kresp)
	}
	if err := kerr.ErrorForCode(dirs.ErrorCode); err != nil {
		return []Problem{{Broker: id, Check: check, Want: "log dirs described", Got: err.Error()}}, nil
	}
	var out []Problem
	held := map[int32]string{}
	var healthy []string
	for _, d := range dirs.Dirs {
		if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
			out = append(out, Problem{Broker: id, Check: check, Want: "log dir " + d.Dir + " online", Got: err.Error()})
			continue
		}
		healthy = append(healthy, d.Dir)
		for _, dt := range d.Topics {
			if dt.Topic != topic {
				continue
			}
			for _, p := range dt.Partitions {
				held[p.Partition] = d.Dir
			}
		}
	}
	slices.Sort(healthy)
	absent := fmt.Sprintf("absent from its log dirs %v", healthy)
	if len(healthy) == 0 {
		absent = "no log dir online"
	}
	for _, p := range want {
		if _, ok := held[p]; !ok {
			out = append(out, Problem{Broker: id, Check: check, Want: fmt.Sprintf("%s-%d in a log dir", topic, p), Got: absent})
		}
	}
	return out, nil
}

// metadataOf asks for fresh metadata of topic alone.
func metadataOf(ctx context.Context, cl Client, topic string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("metadata request: %w", err)
	}
	return resp, nil
}

// topicIn returns topic from a metadata answer, or its error.
func topicIn(resp *kmsg.MetadataResponse, topic string) (kmsg.MetadataResponseTopic, error) {
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return t, fmt.Errorf("topic %s: %w", topic, err)
		}
		return t, nil
	}
	return kmsg.MetadataResponseTopic{}, fmt.Errorf("topic %s: not in the metadata answer", topic)
}
