package txn

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// openTimeout bounds the look for open transactions after a failed drain.
const openTimeout = 15 * time.Second

// openTransactions lists the transactions the leaders of topics' partitions
// hold open (DescribeProducers, as kafka-transactions.sh find-hanging
// does). It is a diagnosis after a drain gave up, so what it cannot learn
// it leaves out.
func openTransactions(ctx context.Context, opts []kgo.Opt, topics ...string) []txncheck.OpenTxn {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), openTimeout)
	defer cancel()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tds, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil
	}
	described, _ := adm.DescribeProducers(ctx, tds.TopicsSet()) // a partial answer is still an answer
	var out []txncheck.OpenTxn
	for _, p := range described.SortedProducers() {
		if p.CurrentTxnStartOffset >= 0 {
			out = append(out, txncheck.OpenTxn{Topic: p.Topic, Partition: p.Partition, ProducerID: p.ProducerID, Epoch: p.ProducerEpoch,
				StartOffset: p.CurrentTxnStartOffset, LastWrite: p.LastTimestamp})
		}
	}
	return out
}
