package kafkaadmin

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ELRVersionFeature is the feature whose level turns eligible leader
// replicas on (eligible.leader.replicas.version, KIP-966): at 1 or more
// the controllers keep, for each partition whose ISR fell below
// min.insync.replicas, the replicas that left it holding every committed
// record, and elect one of them when the ISR is empty. Kafka 4.0 has it
// off; from 4.1 a new cluster has it on.
const ELRVersionFeature = "eligible.leader.replicas.version"

// Eligibility is one partition as the controllers' records give it for an
// election (DescribeTopicPartitions, KIP-966, answered by a broker from
// the metadata it replicates).
type Eligibility struct {
	Leader int32   // -1: none
	ISR    []int32 // sorted
	// ELR are the eligible leader replicas: out of the ISR, each holding
	// every record committed, electable when the ISR is empty. Sorted.
	ELR []int32
	// LastKnownELR are the ELR members last known before the ELR emptied,
	// which KIP-966's unclean recovery may elect from. Sorted.
	LastKnownELR []int32
}

// Eligibilities describes topic's partitions with DescribeTopicPartitions
// (Kafka 3.8 and later; an older broker's error says it is too old), by
// partition.
func (c *Client) Eligibilities(ctx context.Context, topic string) (map[int32]Eligibility, error) {
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	t := kmsg.NewDescribeTopicPartitionsRequestTopic()
	t.Topic = topic
	req.Topics = append(req.Topics, t)
	resp, err := c.raw.Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: describe the partitions of %s: %w", topic, err)
	}
	return eligibilities(resp.(*kmsg.DescribeTopicPartitionsResponse), topic)
}

// eligibilities reads topic's partitions out of resp.
func eligibilities(resp *kmsg.DescribeTopicPartitionsResponse, topic string) (map[int32]Eligibility, error) {
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("kafkaadmin: describe the partitions of %s: %w", topic, err)
		}
		out := make(map[int32]Eligibility, len(t.Partitions))
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil && p.ErrorCode != kerr.LeaderNotAvailable.Code {
				return nil, fmt.Errorf("kafkaadmin: describe %s/%d: %w", topic, p.Partition, err)
			}
			out[p.Partition] = Eligibility{Leader: p.LeaderID, ISR: sortedCopy(p.ISR), ELR: sortedCopy(p.EligibleLeaderReplicas), LastKnownELR: sortedCopy(p.LastKnownELR)}
		}
		return out, nil
	}
	return nil, fmt.Errorf("kafkaadmin: describe the partitions of %s: the answer has no such topic", topic)
}
