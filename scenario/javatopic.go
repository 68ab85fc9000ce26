package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// prepareJavaTopic creates topic (RF 3, min ISR 2) if it is missing and
// commits its end offsets as group's start, so that the group reads only
// this run's records; it returns them. A share group (share) has no
// committed offsets: its members start it at the earliest record, and
// the records before the ends are not the run's.
func prepareJavaTopic(ctx context.Context, env *Env, topic, group string, share bool) ([]int64, error) {
	cl, err := env.KafkaClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	minISR := "2"
	resp, err := adm.CreateTopic(ctx, cmp.Or(env.SteadyState.Partitions, 6), 3, map[string]*string{"min.insync.replicas": &minISR}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return nil, fmt.Errorf("scenario: create topic %s: %w", topic, err)
	}
	var start []int64
	err = Poll(ctx, javaPoll, javaGroupTimeout, "the end offsets of "+topic+" committed as the Java group's start", func(ctx context.Context) error {
		var err error
		if start, err = javaclients.EndOffsets(ctx, adm, topic); err != nil || share {
			return err
		}
		var offs kadm.Offsets
		for p, o := range start {
			offs.Add(kadm.Offset{Topic: topic, Partition: int32(p), At: o, LeaderEpoch: -1})
		}
		committed, err := adm.CommitOffsets(ctx, group, offs)
		if err == nil {
			err = committed.Error()
		}
		return err
	})
	return start, err
}

// endOffsets lists the Java topic's end offsets.
func (j *javaClients) endOffsets(ctx context.Context) ([]int64, error) {
	cl, err := j.env.KafkaClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var end []int64
	err = Poll(ctx, javaPoll, javaGroupTimeout, "the end offsets of "+j.spec.Topic, func(ctx context.Context) error {
		end, err = javaclients.EndOffsets(ctx, kadm.NewClient(cl), j.spec.Topic)
		return err
	})
	return end, err
}
