package steadystate

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkachaos/kafkachaos/steadystate/txn"
	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// TxnTopicSuffix names the transactional workload's topic: the workload
// topic's name and this.
const TxnTopicSuffix = "-txn"

// startTransactions creates the transactional workload's topic, with the
// workload topic's settings, and starts the workload from its end offsets.
func (r *Runner) startTransactions(ctx context.Context, adm *kadm.Client) (*txn.Workload, error) {
	c := r.cfg
	topic := c.Topic + TxnTopicSuffix
	parts, err := r.ensureTopic(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	offs, err := endOffsets(ctx, adm, topic, parts)
	if err != nil {
		return nil, err
	}
	w, err := txn.Start(ctx, txn.Config{Settings: c.Transactions, Topic: topic, Partitions: parts, StartOffsets: offs,
		RunID: c.RunID, Opts: r.baseOpts()})
	if err != nil {
		return nil, fmt.Errorf("steadystate: transactions: %w", err)
	}
	return w, nil
}

// drainTransactions drains the stopped workload, unless the run was
// aborted, and returns its verdict.
func drainTransactions(ctx context.Context, w *txn.Workload, timeout time.Duration) *txncheck.Result {
	drained := false
	if ctx.Err() == nil {
		drained = w.Drain(ctx, timeout) == nil
	}
	res := w.Result(drained)
	w.Close()
	return &res
}
