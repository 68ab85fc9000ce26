package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoLeader is wrapped in the error of PartitionLeader when the partition
// has no leader, and of ActiveController when the quorum has none.
var ErrNoLeader = errors.New("no leader")

// PartitionLeader returns the leader broker of topic/partition, from fresh
// metadata. A partition without a leader is an error wrapping ErrNoLeader.
func (c *Client) PartitionLeader(ctx context.Context, topic string, partition int32) (int32, error) {
	fail := func(format string, args ...any) (int32, error) {
		return -1, fmt.Errorf("kafkaadmin: leader of %s-%d: "+format, append([]any{topic, partition}, args...)...)
	}
	m, err := c.metadata(ctx, topic)
	if err != nil {
		return fail("%w", err)
	}
	t, err := topicIn(m, topic)
	if err != nil {
		return fail("%w", err)
	}
	p, ok := t.Partitions[partition]
	switch {
	case !ok:
		return fail("topic has %d partitions", len(t.Partitions))
	case p.Leader >= 0:
		return p.Leader, nil
	case p.Err != nil:
		return fail("%w (%w)", ErrNoLeader, p.Err)
	}
	return fail("%w", ErrNoLeader)
}

// Leaders returns the leader of every partition of topic, from fresh
// metadata; a partition without a leader maps to -1.
func (c *Client) Leaders(ctx context.Context, topic string) (map[int32]int32, error) {
	m, err := c.metadata(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: leaders of %s: %w", topic, err)
	}
	t, err := topicIn(m, topic)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: leaders of %s: %w", topic, err)
	}
	out := make(map[int32]int32, len(t.Partitions))
	for id, p := range t.Partitions {
		out[id] = p.Leader
	}
	return out, nil
}

// ClusterID returns the cluster ID that a broker reports in its metadata.
func (c *Client) ClusterID(ctx context.Context) (string, error) {
	m, err := c.brokerMetadata(ctx)
	if err != nil {
		return "", fmt.Errorf("kafkaadmin: cluster ID: %w", err)
	}
	if m.Cluster == "" {
		return "", errors.New("kafkaadmin: cluster ID: the metadata answer carries none")
	}
	return m.Cluster, nil
}

// ControllerBroker returns the controller broker of a cluster in
// ZooKeeper mode, as a broker's metadata names it; ErrNoLeader if it names
// none. (In KRaft mode metadata names a random broker: use
// ActiveController.)
func (c *Client) ControllerBroker(ctx context.Context) (int32, error) {
	m, err := c.brokerMetadata(ctx)
	if err != nil {
		return -1, fmt.Errorf("kafkaadmin: controller broker: %w", err)
	}
	if m.Controller < 0 {
		return -1, fmt.Errorf("kafkaadmin: controller broker: %w", ErrNoLeader)
	}
	return m.Controller, nil
}
