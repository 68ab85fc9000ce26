package steadystate

import (
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate/txn"
)

// TestRunWithTransactions runs the load with the transactional workload
// beside it on the fake: the report carries its verdict, and passes.
func TestRunWithTransactions(t *testing.T) {
	c := newFake(t)
	cfg := fakeConfig(c)
	cfg.NumRecords, cfg.Rate = 2000, 1000 // two seconds of load
	cfg.Transactions = txn.Settings{Producers: 2, Rate: 20, Timeout: 10 * time.Second}
	rep := runFake(t, cfg)
	tr := rep.Transactions
	if tr == nil {
		t.Fatal("no transactional verdict in the report")
	}
	t.Logf("transactions: %+v", *tr)
	if !tr.Clean() || tr.Committed == 0 || tr.Aborted == 0 {
		t.Errorf("transactions %+v: want clean, with commits and aborts", *tr)
	}
	found := false
	for _, v := range rep.Verdicts {
		if v.Figures.Kind == BoundTransactionAnomalies {
			found = v.Passed
		}
	}
	if !found || !rep.Passed() {
		t.Errorf("the transaction verdict is missing or failed: %v", rep.Violations)
	}
}
