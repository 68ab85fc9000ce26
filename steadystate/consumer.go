package steadystate

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumer reads the workload topic in a consumer group of its own and feeds
// the verifier. With several runners on one run, each consumer reads every
// record of the run and verifies its own producers'.
type consumer struct {
	cl     *kgo.Client
	ver    *verifier // owned by run's goroutine
	rec    *recorder // owned by run's goroutine
	obs    Observer
	target chan []int64
}

func (r *Runner) newConsumer(start time.Time, partitions int32, startOffsets []int64) (*consumer, error) {
	c := r.cfg
	cl, err := kgo.NewClient(append(r.baseOpts(),
		kgo.ConsumerGroup(fmtGroup(c.RunID, c.ProducerBase)),
		kgo.ConsumeTopics(c.Topic),
		// Run commits the group's start offsets before it joins; the reset
		// applies only if they are gone, and then nothing may be skipped.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)...)
	if err != nil {
		return nil, err
	}
	v := newVerifier(c.RunID, int(partitions), c.Producers)
	v.base = c.ProducerBase
	v.obs = r.obs
	copy(v.nextOffset, startOffsets)
	return &consumer{cl: cl, ver: v, rec: newRecorder(start, 0), obs: r.obs, target: make(chan []int64, 1)}, nil
}

// fmtGroup names the consumer group of a runner. Runners that share a run
// (agents) each read every partition, so each has a group of its own: the
// name carries the producer base when it is not 0.
func fmtGroup(run uint64, base uint32) string {
	if base == 0 {
		return fmt.Sprintf("kafkachaos-%016x", run)
	}
	return fmt.Sprintf("kafkachaos-%016x-p%d", run, base)
}

// setTarget tells the consumer to stop once it has read every offset below
// end in each partition.
func (c *consumer) setTarget(end []int64) { c.target <- end }

// run consumes until the target is reached or ctx ends.
func (c *consumer) run(ctx context.Context, consumed *atomic.Int64) {
	var target []int64
	for {
		select {
		case target = <-c.target:
		default:
		}
		if target != nil && c.ver.consumedThrough(target) {
			return
		}
		if ctx.Err() != nil {
			return
		}
		pollCtx, cancel := context.WithTimeout(ctx, consumerPoll)
		fetches := c.cl.PollFetches(pollCtx)
		cancel()
		now := time.Now()
		fetches.EachError(func(_ string, _ int32, err error) {
			if pollCtx.Err() == nil || ctx.Err() != nil {
				c.rec.failed("consume: "+errKind(err), now)
			}
		})
		fetches.EachRecord(func(rec *kgo.Record) {
			h, err := decodeHeader(rec.Value)
			if err != nil {
				c.ver.foreign(rec.Partition, rec.Offset)
				return
			}
			if c.ver.consume(rec.Partition, rec.Offset, h) {
				intended := time.Unix(0, h.Intended)
				c.rec.consumed(intended, now)
				consumed.Add(1)
				c.obs.Consumed(now.Sub(intended))
			}
		})
	}
}
