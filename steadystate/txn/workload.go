package txn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// Config is a running workload's: the user's Settings, and where it runs.
type Config struct {
	Settings
	// Topic the transactions write, with Partitions partitions, read by
	// the readers from StartOffsets (one per partition).
	Topic        string
	Partitions   int32
	StartOffsets []int64
	// RunID marks the records; records of other runs are not judged.
	RunID uint64
	// Opts are every client's options (seeds, TLS, SASL).
	Opts []kgo.Opt
	// Copy is where the copy job runs, with Copiers.
	Copy CopyConfig
}

// opTimeout bounds one transactional call (produce, end). Their contexts
// end early only when the workload shuts down, the one time franz-go
// allows an EndTxn to be cancelled.
const opTimeout = 2 * time.Minute

// Workload is the running transactional workload.
type Workload struct {
	cfg     Config
	chk     *txncheck.Checker
	stop    chan struct{}
	once    sync.Once
	prods   sync.WaitGroup
	readers []*reader
	cancel  context.CancelFunc
	errs    chan error
	copy    *copyJob // nil without copiers
	// version is the cluster's transaction.version at the start.
	version int16
	// drainErr is why Drain gave up, if it did.
	drainErr string
	// Drain's findings: the input's end, and whether each part drained.
	inputEnd             []int64
	drained, copyDrained bool
}

// Start starts the readers, then the producers. ctx ends everything.
func Start(ctx context.Context, cfg Config) (*Workload, error) {
	if int(cfg.Partitions) != len(cfg.StartOffsets) {
		return nil, fmt.Errorf("txn: %d start offsets for %d partitions", len(cfg.StartOffsets), cfg.Partitions)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Workload{cfg: cfg, chk: txncheck.New(txncheck.Config{StuckAfter: cfg.StuckAfter()}), stop: make(chan struct{}),
		cancel: cancel, errs: make(chan error, cfg.Producers+cfg.Copiers)}
	for _, level := range []txncheck.Level{txncheck.ReadCommitted, txncheck.ReadUncommitted} {
		rd, err := newReader(cfg, level, w.chk)
		if err != nil {
			w.Close()
			return nil, err
		}
		w.readers = append(w.readers, rd)
		go rd.run(ctx)
	}
	w.version = transactionVersion(ctx, w.readers[0].cl)
	if cfg.Copiers > 0 {
		if err := w.startCopy(ctx); err != nil {
			w.Close()
			return nil, err
		}
	}
	for i := range cfg.Producers {
		p := &producer{cfg: cfg, id: uint32(i), chk: w.chk}
		w.prods.Go(func() {
			if err := p.run(ctx, w.stop); err != nil {
				w.errs <- err
			}
		})
	}
	return w, nil
}

// TransactionalID is the transactional ID of producer i of the workload on
// topic. It does not change between runs, so that a run's first
// transaction fences what an aborted run left open (the records carry
// their run's ID, so each run judges only its own).
func TransactionalID(topic string, i int) string { return transactionalID(topic, uint32(i)) }

func transactionalID(topic string, id uint32) string {
	if id == endProducer {
		return topic + "-end"
	}
	return fmt.Sprintf("%s-%d", topic, id)
}

// Stop asks the producers to stop after their transaction in progress; it
// does not wait for them (Drain and Close do).
func (w *Workload) Stop() { w.once.Do(func() { close(w.stop) }) }

// Drain stops the producers and waits for them, commits the end marker,
// and waits until both readers have read it on every partition; then,
// with a copy job and the input's end offsets (inputEnd; nil: not known,
// so the copy is not drained), waits until it copied the input up to
// them, stops it, and waits until its reader read its end marker: each
// within timeout. Its error is also in Result.
func (w *Workload) Drain(ctx context.Context, timeout time.Duration, inputEnd []int64) error {
	err := w.drain(ctx, timeout, inputEnd)
	if err != nil {
		w.drainErr = err.Error()
	}
	return err
}

func (w *Workload) drain(ctx context.Context, timeout time.Duration, inputEnd []int64) error {
	w.Stop()
	w.prods.Wait()
	w.inputEnd = inputEnd
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := awaitEnd(dctx, w.cfg.Opts, w.cfg.Topic, w.cfg.Partitions, w.cfg.RunID, w.cfg.Timeout, w.readers...); err != nil {
		return err
	}
	w.drained = true
	if w.copy == nil {
		return nil
	}
	if inputEnd == nil {
		return errors.New("txn: the copy job's input end is not known: its copy is not drained")
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := w.copy.drain(cctx, w.cfg, inputEnd); err != nil {
		return err
	}
	w.copyDrained = true
	return nil
}

// Result is the checker's verdict, as far as Drain got; after a drain that
// gave up, with the transactions still open on the workload's topics.
func (w *Workload) Result(ctx context.Context) txncheck.Result {
	r := w.chk.Result(w.drained)
	r.TransactionVersion, r.DrainError = w.version, w.drainErr
	for err := w.Err(); err != nil; err = w.Err() {
		r.Errors = append(r.Errors, err.Error())
	}
	topics := []string{w.cfg.Topic}
	if w.copy != nil {
		cr := w.copy.chk.Result(w.inputEnd, w.copyDrained)
		r.Copy = &cr
		topics = append(topics, w.cfg.Copy.Output)
	}
	if !w.drained || (w.copy != nil && !w.copyDrained) {
		r.Open = openTransactions(ctx, w.cfg.Opts, topics...)
	}
	return r
}

// awaitEnd commits the end marker on topic and waits until readers have
// read it on every partition.
func awaitEnd(ctx context.Context, opts []kgo.Opt, topic string, partitions int32, run uint64, timeout time.Duration, readers ...*reader) error {
	if err := writeEnd(ctx, opts, topic, partitions, run, timeout); err != nil {
		return fmt.Errorf("txn: the end marker on %s: %w", topic, err)
	}
	for _, rd := range readers {
		select {
		case <-rd.done:
		case <-ctx.Done():
			return fmt.Errorf("txn: the %s reader of %s did not reach the end marker: %w", rd, topic, ctx.Err())
		}
	}
	return nil
}

// Err is an error that ended a producer or a copier (a client that could
// not be made), if any is left to tell.
func (w *Workload) Err() error {
	select {
	case err := <-w.errs:
		return err
	default:
		return nil
	}
}

// Close ends the readers and producers and closes their clients.
func (w *Workload) Close() {
	w.cancel()
	w.once.Do(func() { close(w.stop) })
	w.prods.Wait()
	readers := w.readers
	if w.copy != nil {
		w.copy.stopMembers()
		readers = append(readers, w.copy.rd)
	}
	for _, rd := range readers {
		<-rd.exited
		rd.cl.Close()
	}
}

// WriteEndMarker commits run's end marker on topic's partitions, one
// record each, retrying until ctx ends: a reader that has read it on a
// partition has read everything written there before it (IsEndMarker
// tells it apart). Other tools' output (the Java copier's) is drained with
// it.
func WriteEndMarker(ctx context.Context, opts []kgo.Opt, topic string, partitions int32, run uint64) error {
	return writeEnd(ctx, opts, topic, partitions, run, DefaultTimeout)
}

// IsEndMarker reports whether value is run's end marker.
func IsEndMarker(value []byte, run uint64) bool {
	id, err := decode(value)
	return err == nil && id.run == run && id.txn.Producer == endProducer
}

// writeEnd commits the end marker on topic, one record on each partition,
// retrying a failed transaction with a fresh client until ctx ends.
func writeEnd(ctx context.Context, opts []kgo.Opt, topic string, partitions int32, run uint64, timeout time.Duration) error {
	var last error
	for ctx.Err() == nil {
		if last = endOnce(ctx, opts, topic, partitions, run, timeout); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return errors.Join(ctx.Err(), last)
}

func endOnce(ctx context.Context, opts []kgo.Opt, topic string, partitions int32, run uint64, timeout time.Duration) error {
	cl, err := kgo.NewClient(append(opts, kgo.TransactionalID(transactionalID(topic, endProducer)),
		kgo.TransactionTimeout(timeout), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	t := txncheck.Txn{Producer: endProducer}
	recs := make([]*kgo.Record, partitions)
	for p := range recs {
		recs[p] = &kgo.Record{Topic: topic, Partition: int32(p), Value: encode(ident{run: run, txn: t, index: p, count: len(recs)})}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		_ = cl.EndTransaction(ctx, kgo.TryAbort)
		return err
	}
	return cl.EndTransaction(ctx, kgo.TryCommit)
}
