package suites

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/scenario"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/txn"
)

// The transactional specs' workload: transactional IDs, and members of the
// copy job's group.
const (
	txnProducers = 3
	txnCopiers   = 2
)

// What applications that use transactions see: transactional producers
// over several partitions, a fifth of their transactions aborted on
// purpose, read at read_committed and at read_uncommitted (the control),
// beside the steady state, while the coordinator of the first
// transactional ID fails. Each transaction must be all or nothing, no
// aborted record may be read at read_committed, no commit lost; and a copy
// job (consume-transform-produce in a group of txnCopiers) must copy every
// record of the workload topic exactly once (steadystate/txncheck).
var _ = Describe("The transaction coordinator fails under transactional load", Label("transactions"), Serial, func() {
	storySpec("its pod force-deleted: every transaction all or nothing, no aborted read, no commit lost", Label("txn-coordinator-kill"),
		func(SpecContext, *env) story {
			return withTransactions(story{Label: "txn-coordinator-kill", Kind: scenario.Hard, Pick: txnCoordinatorOf(0), Fault: forceDelete, NewPods: true})
		})
	storySpec("paused for 20s: every transaction all or nothing, no aborted read, no commit lost", Label("txn-coordinator-pause"),
		func(SpecContext, *env) story {
			return withTransactions(pauseStory("txn-coordinator-pause-20s", txnCoordinatorOf(0), 20*time.Second))
		})
	storySpec("isolated for 20s: every transaction all or nothing, no aborted read, no commit lost", Label("txn-coordinator-isolate"),
		func(SpecContext, *env) story {
			return withTransactions(partitionStory("txn-coordinator-isolate", txnCoordinatorOf(0), chaos.PartitionIsolate, 20*time.Second))
		})
})

// Every coordinator moves in a rolling restart, one broker at a time, as
// in users' upgrades and config changes.
var _ = Describe("The brokers roll under transactional load", Label("transactions"), Serial, func() {
	storySpec("every transaction all or nothing, no aborted read, no commit lost, the copy exactly once", Label("txn-rolling-restart"),
		func(_ SpecContext, e *env) story {
			st := rollingRestart(e)
			st.Label = "txn-rolling-restart"
			return withTransactions(st)
		})
})

// The upgrade under transactions: KAFKA-19925's shape (transactions timed
// out during a broker upgrade). Every node rolls from upgrade.from to
// upgrade.to under the transactional workload and the copy job, then
// metadata.version is raised, then transaction.version (which raising
// metadata.version does not raise): franz-go takes it up at its next
// EndTxn, mid-load.
var _ = Describe("Kafka is upgraded under transactional load", Label("transactions"), Serial, func() {
	It("rolls every node, raises metadata.version and then transaction.version: every transaction all or nothing, the copy exactly once", Label("txn-upgrade"), func(ctx SpecContext) {
		expectPassed(tell(ctx, upgradeKafka(ctx), withTransactions(raisingTransactionVersion(upgradeStory(true)))))
	}, SpecTimeout(storyTimeout))
})

// raisingTransactionVersion raises transaction.version after st's During,
// and says what it did in the outcome.
func raisingTransactionVersion(st story) story {
	st.Label = "txn-upgrade"
	during, finally := st.During, st.Finally
	var observed string
	st.During = func(ctx context.Context, e *env, v []brokers.Server) error {
		if err := during(ctx, e, v); err != nil {
			return err
		}
		var err error
		observed, err = raiseTransactionVersion(ctx, e)
		return err
	}
	st.Finally = func(ctx context.Context, e *env, v []brokers.Server, o *outcome) {
		finally(ctx, e, v, o)
		o.Observations = append(o.Observations, observed)
	}
	return st
}

// withTransactions runs st's steady state with the transactional workload
// beside it.
func withTransactions(st story) story {
	st.Workloads = []scenario.StartWorkload{scenario.SteadyStateOf(scenario.Shape{Transactions: txn.Settings{Producers: txnProducers, Copiers: txnCopiers}})}
	return st
}

// txnCoordinatorOf picks the transaction coordinator of the workload's
// transactional producer i: the leader of its __transaction_state
// partition, as FindCoordinator names it.
func txnCoordinatorOf(i int) func(context.Context, *env, string, []brokers.Server) ([]brokers.Server, error) {
	return coordinatorOf("the transactions of", func(_ *env, topic string) string {
		return txn.TransactionalID(topic+steadystate.TxnTopicSuffix, i)
	}, (*kadm.Client).FindTxnCoordinators)
}
