package steadystate

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkachaos/kafkachaos/steadystate/txn"
	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// The transactional workload's topics: the workload topic's name and
// these.
const (
	// TxnTopicSuffix names the transactional producers' topic.
	TxnTopicSuffix = "-txn"
	// CopyTopicSuffix names the copy job's output; its input is the
	// workload topic.
	CopyTopicSuffix = "-copy"
)

// txnDrainMargin is how much longer than StuckAfter the transactional
// drain waits.
const txnDrainMargin = 10 * time.Second

// startTransactions creates the transactional workload's topics, with the
// workload topic's settings, and starts it from their end offsets; its
// copy job reads the workload topic from inputStart, in a group whose
// offsets it commits there first.
func (r *Runner) startTransactions(ctx context.Context, adm *kadm.Client, inputStart []int64) (*txn.Workload, error) {
	c := r.cfg
	topic := c.Topic + TxnTopicSuffix
	parts, offs, err := r.topicAtEnd(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	cfg := txn.Config{Settings: c.Transactions, Topic: topic, Partitions: parts, StartOffsets: offs, RunID: c.RunID, Opts: r.baseOpts()}
	if c.Transactions.Copiers > 0 {
		out := c.Topic + CopyTopicSuffix
		outParts, outOffs, err := r.topicAtEnd(ctx, adm, out)
		if err != nil {
			return nil, err
		}
		if outParts != parts || int(parts) != len(inputStart) {
			return nil, fmt.Errorf("steadystate: the transactional topic %s and the copy job's output %s have %d and %d partitions, the copy's input %d; they must be equal",
				topic, out, parts, outParts, len(inputStart))
		}
		group := fmtGroup(c.RunID, c.ProducerBase) + CopyTopicSuffix
		if err := commitStart(ctx, adm, group, c.Topic, inputStart); err != nil {
			return nil, err
		}
		cfg.Copy = txn.CopyConfig{Input: c.Topic, InputStart: inputStart, Group: group, Output: out, OutputStart: outOffs}
	}
	w, err := txn.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("steadystate: transactions: %w", err)
	}
	return w, nil
}

// topicAtEnd ensures topic and returns its partition count and end
// offsets.
func (r *Runner) topicAtEnd(ctx context.Context, adm *kadm.Client, topic string) (int32, []int64, error) {
	parts, err := r.ensureTopic(ctx, adm, topic)
	if err != nil {
		return 0, nil, err
	}
	offs, err := endOffsets(ctx, adm, topic, parts)
	return parts, offs, err
}

// drainTransactions drains the stopped workload, its copy job up to the
// input's end offsets (nil when the run's own drain did not get that far),
// unless the run was aborted, and returns its verdict. It waits at least
// as long as an abandoned transaction may pin the readers (StuckAfter).
func drainTransactions(ctx context.Context, w *txn.Workload, s txn.Settings, timeout time.Duration, inputEnd []int64) *txncheck.Result {
	if ctx.Err() == nil {
		_ = w.Drain(ctx, max(timeout, s.StuckAfter()+txnDrainMargin), inputEnd) // its error is in the result
	}
	res := w.Result(ctx)
	w.Close()
	return &res
}
