package txn

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// reader reads the workload's topic at one isolation level and tells the
// checker what it saw, until it has seen the end marker on every
// partition.
type reader struct {
	level  txncheck.Level
	cl     *kgo.Client
	chk    *txncheck.Checker
	runID  uint64
	parts  int32
	done   chan struct{} // closed when every partition's end marker is read
	exited chan struct{}
	// onCopy, on the copy job's output, takes each copy of the run.
	onCopy func(in int32, inOff int64, rec *kgo.Record, at time.Time)
}

func levelOf(l txncheck.Level) (kgo.IsolationLevel, string) {
	if l == txncheck.ReadUncommitted {
		return kgo.ReadUncommitted(), "read_uncommitted"
	}
	return kgo.ReadCommitted(), "read_committed"
}

func newReader(cfg Config, level txncheck.Level, chk *txncheck.Checker) (*reader, error) {
	iso, _ := levelOf(level)
	offs := map[int32]kgo.Offset{}
	for p, o := range cfg.StartOffsets {
		offs[int32(p)] = kgo.NewOffset().At(o)
	}
	cl, err := kgo.NewClient(append(cfg.Opts, kgo.FetchIsolationLevel(iso),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: offs}), kgo.FetchMaxWait(500*time.Millisecond))...)
	if err != nil {
		return nil, err
	}
	return &reader{level: level, cl: cl, chk: chk, runID: cfg.RunID, parts: cfg.Partitions, done: make(chan struct{}), exited: make(chan struct{})}, nil
}

func (r *reader) String() string { _, n := levelOf(r.level); return n }

func (r *reader) run(ctx context.Context) {
	defer close(r.exited)
	ended := map[int32]bool{}
	for ctx.Err() == nil && len(ended) < int(r.parts) {
		fs := r.cl.PollFetches(ctx)
		now := time.Now()
		fs.EachRecord(func(rec *kgo.Record) {
			if run, in, inOff, ok := decodeCopy(rec.Value); ok {
				if run == r.runID && r.onCopy != nil {
					r.onCopy(in, inOff, rec, now)
				}
				return
			}
			id, err := decode(rec.Value)
			if err != nil || id.run != r.runID {
				return
			}
			if id.txn.Producer == endProducer {
				ended[rec.Partition] = true
				return
			}
			r.chk.Read(r.level, id.txn, id.index, rec.Partition, rec.Offset, now)
		})
	}
	if len(ended) == int(r.parts) {
		close(r.done)
	}
}
