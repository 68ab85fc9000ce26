package txn

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// The copy job, consume-transform-produce as Kafka's own
// TransactionalMessageCopier runs it: members of one consumer group read
// the input topic at read_committed, write one output record per input
// record to the same partition of the output topic, and commit the input
// offsets in the same transaction (franz-go's GroupTransactSession, which
// aborts a transaction the group rebalanced under and rewinds to the last
// commit). A read_committed reader of the output checks that every input
// offset is there once.

// CopyConfig is where the copy job runs.
type CopyConfig struct {
	// Input is the topic copied, from InputStart (one offset per
	// partition), in the consumer group Group, whose offsets the caller
	// committed at InputStart before Start.
	Input      string
	InputStart []int64
	Group      string
	// Output is the copies' topic, with as many partitions as Input, read
	// from OutputStart.
	Output      string
	OutputStart []int64
}

// A copy's value: its magic, the run ID, and the input partition and
// offset, big-endian.
const (
	copyMagic = "kccp"
	copySize  = len(copyMagic) + 8 + 4 + 8
)

func encodeCopy(run uint64, partition int32, offset int64) []byte {
	b := make([]byte, 0, copySize)
	b = append(b, copyMagic...)
	b = binary.BigEndian.AppendUint64(b, run)
	b = binary.BigEndian.AppendUint32(b, uint32(partition))
	return binary.BigEndian.AppendUint64(b, uint64(offset))
}

func decodeCopy(b []byte) (run uint64, partition int32, offset int64, ok bool) {
	if len(b) != copySize || string(b[:len(copyMagic)]) != copyMagic {
		return 0, 0, 0, false
	}
	b = b[len(copyMagic):]
	return binary.BigEndian.Uint64(b), int32(binary.BigEndian.Uint32(b[8:])), int64(binary.BigEndian.Uint64(b[12:])), true
}

// copier is one member of the copy group.
type copier struct {
	cfg  Config
	id   int
	sess *kgo.GroupTransactSession
}

func (c *copier) newSession() error {
	cc := c.cfg.Copy
	sess, err := kgo.NewGroupTransactSession(append(c.cfg.Opts,
		kgo.TransactionalID(fmt.Sprintf("%s-copier-%d", cc.Output, c.id)), kgo.TransactionTimeout(c.cfg.Timeout),
		kgo.ConsumerGroup(cc.Group), kgo.ConsumeTopics(cc.Input), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return err
	}
	if c.sess != nil {
		c.sess.Close()
	}
	c.sess = sess
	return nil
}

// run copies until stop is closed or ctx ends. Only a session that cannot
// be made is an error; after a failed End it starts a new one with the
// same transactional ID, which fences the old.
func (c *copier) run(ctx context.Context, stop <-chan struct{}) error {
	if err := c.newSession(); err != nil {
		return err
	}
	defer func() { c.sess.Close() }()
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return nil
		default:
		}
		pollCtx, cancel := context.WithTimeout(ctx, time.Second)
		fs := c.sess.PollFetches(pollCtx)
		cancel()
		var out []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, &kgo.Record{Topic: c.cfg.Copy.Output, Partition: r.Partition, Value: encodeCopy(c.cfg.RunID, r.Partition, r.Offset)})
		})
		if len(out) == 0 || ctx.Err() != nil {
			continue
		}
		if !c.one(ctx, out) {
			if err := c.newSession(); err != nil {
				return err
			}
		}
	}
}

// one writes out in a transaction with the polled offsets, and reports
// whether the session is fit for the next.
func (c *copier) one(ctx context.Context, out []*kgo.Record) bool {
	opCtx, cancel := context.WithTimeout(ctx, opTimeout) // ctx ends only when shutting down
	defer cancel()
	if err := c.sess.Begin(); err != nil {
		return false
	}
	commit := kgo.TryCommit
	if err := c.sess.ProduceSync(opCtx, out...).FirstErr(); err != nil {
		commit = kgo.TryAbort
	}
	_, err := c.sess.End(opCtx, commit)
	return err == nil
}

// copyReader reads the output at read_committed until the end marker is on
// every partition, telling the copy checker what it saw.
func copyReader(cfg Config, chk *txncheck.CopyChecker) (*reader, error) {
	rd, err := newReader(Config{Topic: cfg.Copy.Output, Partitions: cfg.Partitions, StartOffsets: cfg.Copy.OutputStart, RunID: cfg.RunID, Opts: cfg.Opts},
		txncheck.ReadCommitted, nil)
	if err != nil {
		return nil, err
	}
	rd.onCopy = func(in int32, inOff int64, rec *kgo.Record, at time.Time) {
		chk.Output(in, inOff, rec.Partition, rec.Offset, at)
	}
	return rd, nil
}

// copyJob is the running copy job: its members and its reader.
type copyJob struct {
	chk     *txncheck.CopyChecker
	rd      *reader
	members sync.WaitGroup
	stop    chan struct{}
	once    sync.Once
}

// copyPoll is how often the drain looks whether the copy is complete.
const copyPoll = 200 * time.Millisecond

// startCopy starts the copy job's reader, then its members.
func (w *Workload) startCopy(ctx context.Context) error {
	cc := w.cfg.Copy
	if len(cc.InputStart) != int(w.cfg.Partitions) || len(cc.OutputStart) != int(w.cfg.Partitions) {
		return fmt.Errorf("txn: the copy job needs %d start offsets of its input and its output", w.cfg.Partitions)
	}
	job := &copyJob{chk: txncheck.NewCopyChecker(cc.InputStart), stop: make(chan struct{})}
	rd, err := copyReader(w.cfg, job.chk)
	if err != nil {
		return err
	}
	job.rd, w.copy = rd, job
	go rd.run(ctx)
	for i := range w.cfg.Copiers {
		c := &copier{cfg: w.cfg, id: i}
		job.members.Go(func() {
			if err := c.run(ctx, job.stop); err != nil {
				w.errs <- err
			}
		})
	}
	return nil
}

// stopMembers stops the copiers after their transaction in progress, and
// waits for them.
func (j *copyJob) stopMembers() {
	j.once.Do(func() { close(j.stop) })
	j.members.Wait()
}

// drain waits until every input offset below inputEnd is copied, stops
// the members, and waits until the reader read the output's end marker.
func (j *copyJob) drain(ctx context.Context, cfg Config, inputEnd []int64) error {
	tick := time.NewTicker(copyPoll)
	defer tick.Stop()
	for !j.chk.Copied(inputEnd) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("txn: the copy job did not copy its input up to %v: %w", inputEnd, ctx.Err())
		case <-tick.C:
		}
	}
	j.stopMembers()
	return awaitEnd(ctx, cfg.Opts, cfg.Copy.Output, cfg.Partitions, cfg.RunID, cfg.Timeout, j.rd)
}
