package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
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
		ends, err := listEnds(ctx, adm, topic)
		if err == nil {
			start, err = endsOf(ends, topic)
		}
		if err != nil || share {
			return err
		}
		committed, err := adm.CommitOffsets(ctx, group, ends.Offsets())
		if err == nil {
			err = committed.Error()
		}
		return err
	})
	return start, err
}

// listEnds lists topic's end offsets; an error in any partition's is the
// call's.
func listEnds(ctx context.Context, adm *kadm.Client, topic string) (kadm.ListedOffsets, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	return ends, err
}

// endsOf is topic's end offsets by partition, from a listing that must
// hold partitions 0 to n-1.
func endsOf(ends kadm.ListedOffsets, topic string) ([]int64, error) {
	out := make([]int64, len(ends[topic]))
	for p, o := range ends[topic] {
		if int(p) >= len(out) {
			return nil, fmt.Errorf("partition %d of %d listed", p, len(out))
		}
		out[p] = o.Offset
	}
	return out, nil
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
		ends, err := listEnds(ctx, kadm.NewClient(cl), j.spec.Topic)
		if err == nil {
			end, err = endsOf(ends, j.spec.Topic)
		}
		return err
	})
	return end, err
}
