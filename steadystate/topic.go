package steadystate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Timeouts of a run's set-up steps.
const (
	topicReadyTimeout = 60 * time.Second
	topicPollInterval = 200 * time.Millisecond
	offsetsTimeout    = 60 * time.Second
)

// ensureTopic creates the workload topic if it is missing, waits until its
// metadata is known, and returns its partition count.
func (r *Runner) ensureTopic(ctx context.Context, adm *kadm.Client) (int32, error) {
	c := r.cfg
	minISR := fmt.Sprint(c.MinInsyncReplicas)
	resp, err := adm.CreateTopic(ctx, c.Partitions, c.ReplicationFactor, map[string]*string{"min.insync.replicas": &minISR}, c.Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return 0, fmt.Errorf("steadystate: create topic %s: %w", c.Topic, err)
	}
	ctx, cancel := context.WithTimeout(ctx, topicReadyTimeout)
	defer cancel()
	var last error
	for {
		tds, err := adm.ListTopics(ctx, c.Topic)
		if err == nil {
			td := tds[c.Topic]
			switch {
			case td.Err != nil:
				err = td.Err
			case len(td.Partitions) == 0:
				err = errors.New("no partitions in metadata yet")
			default:
				leaderless := 0
				for _, p := range td.Partitions {
					if p.Leader < 0 {
						leaderless++
					}
				}
				if leaderless == 0 {
					return int32(len(td.Partitions)), nil
				}
				err = fmt.Errorf("%d of %d partitions have no leader", leaderless, len(td.Partitions))
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("steadystate: topic %s not ready after %s: %w", c.Topic, topicReadyTimeout, last)
		case <-time.After(topicPollInterval):
		}
	}
}

// endOffsets lists the high watermark of every partition. Leaders move
// during chaos, so retriable errors (NOT_LEADER_FOR_PARTITION after a
// failover) are retried until offsetsTimeout.
func endOffsets(ctx context.Context, adm *kadm.Client, topic string, partitions int32) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, offsetsTimeout)
	defer cancel()
	for {
		out, err := listEndOffsets(ctx, adm, topic, partitions)
		if err == nil || !kerr.IsRetriable(err) && !errors.Is(err, errPartitionMissing) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (still failing after %s)", err, offsetsTimeout)
		case <-time.After(topicPollInterval):
		}
	}
}

// commitStart commits offsets for a new consumer group.
func commitStart(ctx context.Context, adm *kadm.Client, group, topic string, offsets []int64) error {
	var os kadm.Offsets
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: int32(p), At: o, LeaderEpoch: -1})
	}
	resp, err := adm.CommitOffsets(ctx, group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("steadystate: commit start offsets of group %s: %w", group, err)
	}
	return nil
}

var errPartitionMissing = errors.New("partition missing")

func listEndOffsets(ctx context.Context, adm *kadm.Client, topic string, partitions int32) ([]int64, error) {
	lo, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("steadystate: list end offsets: %w", err)
	}
	if err := lo.Error(); err != nil {
		return nil, fmt.Errorf("steadystate: list end offsets: %w", err)
	}
	out := make([]int64, partitions)
	for p := range partitions {
		o, ok := lo.Lookup(topic, p)
		if !ok {
			return nil, fmt.Errorf("steadystate: list end offsets of partition %d: %w", p, errPartitionMissing)
		}
		out[p] = o.Offset
	}
	return out, nil
}
