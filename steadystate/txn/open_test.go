package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A transaction left open is listed with its partition and start offset;
// one that ended is not.
func TestOpenTransactions(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	base := []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}
	cl, err := kgo.NewClient(append(base, kgo.TransactionalID("left-open"), kgo.TransactionTimeout(time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := openTransactions(t.Context(), base, "t"); len(got) != 0 {
		t.Fatalf("open before any transaction: %v", got)
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "t", Partition: 1, Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := openTransactions(t.Context(), base, "t")
	if len(got) != 1 || got[0].Partition != 1 || got[0].StartOffset != 0 {
		t.Fatalf("open transactions %v, want one on partition 1 from offset 0", got)
	}
	t.Logf("%s", got[0])
	if err := cl.EndTransaction(t.Context(), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := openTransactions(t.Context(), base, "t"); len(got) != 0 {
		t.Errorf("open after the commit: %v", got)
	}
}
