package txn

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// producer is one transactional ID's loop: begin, write Records records to
// consecutive partitions from a random one, then commit, or abort every
// AbortEvery-th. After an error it aborts, and if even that fails it
// starts a new client with the same ID, which fences the old epoch.
type producer struct {
	cfg Config
	id  uint32
	chk *txncheck.Checker
	cl  *kgo.Client
}

func (p *producer) newClient() error {
	cl, err := kgo.NewClient(append(p.cfg.Opts, kgo.TransactionalID(transactionalID(p.cfg.Topic, p.id)),
		kgo.TransactionTimeout(p.cfg.Timeout), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return err
	}
	if p.cl != nil {
		p.cl.Close()
	}
	p.cl = cl
	return nil
}

// run writes transactions at the producer's share of the rate until stop
// is closed or ctx ends. Only a client that cannot be made is an error.
func (p *producer) run(ctx context.Context, stop <-chan struct{}) error {
	if err := p.newClient(); err != nil {
		return err
	}
	defer func() { p.cl.Close() }()
	tick := time.NewTicker(time.Duration(float64(time.Second) * float64(p.cfg.Producers) / float64(p.cfg.Rate)))
	defer tick.Stop()
	for seq := uint64(1); ; seq++ {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if ok := p.one(ctx, txncheck.Txn{Producer: p.id, Seq: seq}); !ok {
			if err := p.newClient(); err != nil {
				return err
			}
		}
	}
}

// one runs transaction t, and reports whether the client is still fit for
// the next. Each call is bounded by opTimeout; ctx (which Close cancels)
// ends them all, as franz-go allows when shutting down.
func (p *producer) one(ctx context.Context, t txncheck.Txn) bool {
	if err := p.cl.BeginTransaction(); err != nil {
		return false
	}
	p.chk.Begin(t, p.cfg.Records, time.Now())
	first := rand.Int32N(p.cfg.Partitions)
	recs := make([]*kgo.Record, p.cfg.Records)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: p.cfg.Topic, Partition: (first + int32(i)) % p.cfg.Partitions,
			Value: encode(ident{run: p.cfg.RunID, txn: t, index: i, count: len(recs)})}
	}
	produceCtx, cancel := context.WithTimeout(ctx, opTimeout)
	produceErr := p.cl.ProduceSync(produceCtx, recs...).FirstErr()
	cancel()
	if ctx.Err() != nil {
		// The run was aborted: the transaction is left to its timeout
		// (judged aborted, as no commit was sent), the client closed.
		return false
	}
	if produceErr != nil || t.Seq%uint64(p.cfg.AbortEvery) == 0 {
		endCtx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		err := p.cl.EndTransaction(endCtx, kgo.TryAbort)
		p.chk.Ended(t, txncheck.Aborted, produceErr != nil, time.Now())
		return err == nil
	}
	stalled := p.id == 0 && p.cfg.Stall > 0 && t.Seq%uint64(p.cfg.StallEvery) == 0
	if stalled {
		p.chk.Stalled(t)
		select { // a zombie: alive, its transaction open, past its timeout
		case <-ctx.Done():
			return false
		case <-time.After(p.cfg.Stall):
		}
	}
	return p.commit(ctx, t, stalled)
}

// commit ends t with a commit and records how it ended; a commit refused
// as fenced leaves a client that must be replaced, and any other failure
// is retried as an abort, as franz-go documents.
func (p *producer) commit(ctx context.Context, t txncheck.Txn, stalled bool) bool {
	endCtx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	p.chk.CommitSent(t, time.Now())
	err := p.cl.EndTransaction(endCtx, kgo.TryCommit)
	switch {
	case err == nil:
		p.chk.Ended(t, txncheck.Committed, false, time.Now())
		return true
	case stalled && fenced(err):
		// The coordinator aborted it on its timeout and bumped the epoch.
		p.chk.Ended(t, txncheck.Aborted, true, time.Now())
		return false
	case fenced(err):
		p.chk.Ended(t, txncheck.Unknown, false, time.Now())
		return false
	case errors.Is(err, kerr.OperationNotAttempted):
		// Refused before it was sent (a record had failed): abort.
		p.chk.Ended(t, txncheck.Aborted, true, time.Now())
	default:
		p.chk.Ended(t, txncheck.Unknown, false, time.Now())
	}
	return p.cl.EndTransaction(endCtx, kgo.TryAbort) == nil
}

// fenced reports whether err refuses a commit for a newer epoch: the
// transaction was aborted by its coordinator.
func fenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.TransactionAbortable) ||
		errors.Is(err, kerr.InvalidTxnState)
}
