package steadystate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Timeouts of a run's set-up steps.
const (
	topicReadyTimeout = 60 * time.Second
	topicPollInterval = 200 * time.Millisecond
	offsetsTimeout    = 60 * time.Second
)

// ensureTopic creates topic, with the workload topic's settings, if it is
// missing, waits until its metadata is known, and returns its partition
// count.
func (r *Runner) ensureTopic(ctx context.Context, adm *kadm.Client, topic string) (int32, error) {
	c := r.cfg
	minISR := fmt.Sprint(c.MinInsyncReplicas)
	resp, err := adm.CreateTopic(ctx, c.Partitions, c.ReplicationFactor, map[string]*string{"min.insync.replicas": &minISR}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return 0, fmt.Errorf("steadystate: create topic %s: %w", topic, err)
	}
	var partitions int32
	var last error // why the topic was not ready when last listed
	err = wait.PollUntilContextTimeout(ctx, topicPollInterval, topicReadyTimeout, true, func(ctx context.Context) (bool, error) {
		partitions, last = topicReady(ctx, adm, topic)
		return last == nil, nil
	})
	if err != nil {
		return 0, pollError(fmt.Sprintf("topic %s not ready", topic), topicReadyTimeout, err, last)
	}
	return partitions, nil
}

// topicReady lists topic and returns its partition count when every
// partition has a leader, or else why the topic is not ready yet.
func topicReady(ctx context.Context, adm *kadm.Client, topic string) (int32, error) {
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, err
	}
	td := tds[topic]
	switch {
	case td.Err != nil:
		return 0, td.Err
	case len(td.Partitions) == 0:
		return 0, errors.New("no partitions in metadata yet")
	}
	leaderless := 0
	for _, p := range td.Partitions {
		if p.Leader < 0 {
			leaderless++
		}
	}
	if leaderless > 0 {
		return 0, fmt.Errorf("%d of %d partitions have no leader", leaderless, len(td.Partitions))
	}
	return int32(len(td.Partitions)), nil
}

// endOffsets lists the high watermark of every partition. Leaders move
// during chaos, so retriable errors (NOT_LEADER_FOR_PARTITION after a
// failover) are retried until offsetsTimeout; any other error is returned
// at once.
func endOffsets(ctx context.Context, adm *kadm.Client, topic string, partitions int32) ([]int64, error) {
	var out []int64
	var last, failed error // the last retriable error; the error that ended the poll
	err := wait.PollUntilContextTimeout(ctx, topicPollInterval, offsetsTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		out, err = listEndOffsets(ctx, adm, topic, partitions)
		switch {
		case err == nil:
			return true, nil
		case kerr.IsRetriable(err), errors.Is(err, errPartitionMissing):
			last = err
			return false, nil
		}
		failed = err
		return false, err
	})
	switch {
	case failed != nil:
		return nil, failed
	case err != nil:
		return nil, pollError(fmt.Sprintf("end offsets of topic %s not listed", topic), offsetsTimeout, err, last)
	}
	return out, nil
}

// pollError is the error of a poll for what that gave up after timeout:
// it wraps err, the wait's error, and last, the last state the poll saw
// (nil when it saw none).
func pollError(what string, timeout time.Duration, err, last error) error {
	if last == nil {
		return fmt.Errorf("steadystate: %s after %s: %w", what, timeout, err)
	}
	return fmt.Errorf("steadystate: %s after %s: %w; last seen: %w", what, timeout, err, last)
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
