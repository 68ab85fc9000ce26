package steadystate

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// producer is one producer client and the goroutine that schedules its sends.
type producer struct {
	id         uint32
	runID      uint64
	cl         *kgo.Client
	partitions int32
	size       int
	start      time.Time
	interval   time.Duration // 0 for an unlimited rate

	rec    *recorder // owned by the sending goroutine
	ackRec *recorder // owned by the promise (franz-go runs promises serially)
	acks   *ackLog   // owned by the promise
	// match checks acked offsets against consumed ones; base is the
	// runner's first producer ID, which turns id into match's index.
	match *offsetMatcher
	base  uint32
	// group, when the run has an application group, is told of each ack.
	group *groupcheck.Checker
	// partGaps are the ack gaps of each partition, owned by the promise.
	partGaps []*gapTracker

	ackedCtr, failedCtr *atomic.Int64
	obs                 Observer

	// inflight counts records handed to franz-go whose promise has not
	// finished, so the report waits for every promise even when a flush
	// was cut short.
	inflight sync.WaitGroup
}

// What a producer may hold unacknowledged. At a fixed rate, 10 s of its
// share of the rate (at least 10,000 records), so that an outage of that
// long fails no record for want of room. As fast as possible, as the Java
// producer's buffer.memory (32 MiB): a record bound alone would cap the
// throughput at records per round trip (10,000 records of 100 B over a
// 100 ms acks=all round trip is 100,000 records/s, the bound bench-perf
// measured with it).
const (
	UnlimitedRateBufferedBytes   = 32 << 20
	UnlimitedRateBufferedRecords = 1 << 20
)

func (r *Runner) newProducer(id uint32, start time.Time, partitions int32, gapMin time.Duration) (*producer, error) {
	c := r.cfg
	opts := append(r.baseOpts(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(c.ProduceTimeout),
	)
	if c.Rate == RateUnlimited {
		opts = append(opts, kgo.MaxBufferedRecords(UnlimitedRateBufferedRecords), kgo.MaxBufferedBytes(UnlimitedRateBufferedBytes))
	} else {
		opts = append(opts, kgo.MaxBufferedRecords(max(10_000, c.Rate*10/c.Producers)))
	}
	switch c.Acks {
	case AcksAll:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case AcksLeader:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	case AcksNone:
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	}
	if c.RequestTimeout > 0 {
		opts = append(opts, kgo.ProduceRequestTimeout(c.RequestTimeout/2), kgo.RequestTimeoutOverhead(c.RequestTimeout-c.RequestTimeout/2))
	}
	if c.NoIdempotence {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("steadystate: producer %d client: %w", id, err)
	}
	p := &producer{
		id: id, runID: c.RunID, cl: cl, partitions: partitions, size: c.RecordSize, start: start,
		rec:      newRecorder(start, 0),
		ackRec:   newRecorder(start, gapMin),
		acks:     newAckLog(int(partitions)),
		ackedCtr: &r.acked, failedCtr: &r.failed, obs: r.obs,
	}
	if c.Rate > 0 {
		p.interval = time.Duration(float64(time.Second) * float64(c.Producers) / float64(c.Rate))
	}
	// A partition gets one in partitions of the producer's records: a gap
	// on it is five of its own send intervals, and at least gapMin.
	partMin := gapMin
	if p.interval > 0 {
		partMin = max(gapMin, 5*p.interval*time.Duration(partitions))
	}
	for range partitions {
		p.partGaps = append(p.partGaps, newGapTracker(start, partMin))
	}
	return p, nil
}

// run sends records on the open-loop schedule until the runner stops, the
// record budget is spent, or ctx ends. The schedule never waits for acks:
// when sending falls behind, the next records are sent at once, and their
// latency still counts from their intended time.
func (p *producer) run(ctx context.Context, r *Runner) {
	seqs := make([]uint64, p.partitions)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	limit := r.cfg.NumRecords
	for i := int64(0); ; i++ {
		select {
		case <-r.stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		if limit > 0 && r.reserved.Add(1) > limit {
			return
		}
		intended := time.Now()
		if p.interval > 0 {
			intended = p.start.Add(time.Duration(i) * p.interval)
			if wait := time.Until(intended); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-r.stop:
					return
				case <-ctx.Done():
					return
				}
			}
		}
		part := int32((i + int64(p.id)) % int64(p.partitions))
		h := header{RunID: p.runID, Producer: p.id, Seq: seqs[part], Intended: intended.UnixNano()}
		seqs[part]++
		val := make([]byte, p.size)
		h.encode(val)
		sent := time.Now()
		rec := &kgo.Record{Topic: r.cfg.Topic, Partition: part, Value: val, Timestamp: sent}
		p.rec.sent(intended, sent)
		r.sent.Add(1)
		p.obs.Sent(sent)
		p.inflight.Add(1)
		p.cl.Produce(ctx, rec, p.promise)
	}
}

// promise runs once per record, serially, on franz-go's promise goroutine.
func (p *producer) promise(rec *kgo.Record, err error) {
	defer p.inflight.Done()
	now := time.Now()
	if err != nil {
		name, kind := classify(err)
		p.ackRec.failed(name, now)
		p.failedCtr.Add(1)
		p.obs.Failed(now, kind)
		return
	}
	h, herr := decodeHeader(rec.Value)
	if herr != nil {
		return // cannot happen: we wrote the value
	}
	p.acks.ack(rec.Partition, h.Seq, rec.Offset)
	if rec.Offset >= 0 { // franz-go's -1: acknowledged at an offset it does not know
		p.match.acked(rec.Partition, int(h.Producer-p.base), h.Seq, rec.Offset)
		if p.group != nil {
			p.group.Acked(rec.Partition, rec.Offset)
		}
	}
	if int(rec.Partition) < len(p.partGaps) {
		p.partGaps[rec.Partition].ack(now)
	}
	p.ackRec.acked(time.Unix(0, h.Intended), rec.Timestamp, now, len(rec.Value))
	p.ackedCtr.Add(1)
	p.obs.Acked(now, now.Sub(rec.Timestamp))
}
