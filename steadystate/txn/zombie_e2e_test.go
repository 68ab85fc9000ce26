package txn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/internal/localkafka"
	"github.com/kafkachaos/kafkachaos/internal/localkafka/localkafkatest"
	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// Limits of the zombie's run on one real broker.
const (
	zombieClusterTimeout = 3 * time.Minute
	zombieRunTimeout     = 2 * time.Minute
	zombiePoll           = 500 * time.Millisecond
)

// TestZombieFencedOnRealBroker runs the workload on a real broker with a
// zombie: producer 0 holds its second transaction open past its 5 s
// timeout and Kafka's 10 s abort interval, then tries to commit. Kafka
// must have aborted it and must refuse the commit; nothing of it may be
// read at read_committed; the other producer's commits behind it become
// visible within the stuck-LSO bound.
func TestZombieFencedOnRealBroker(t *testing.T) {
	c, _ := localkafkatest.Start(t, zombieClusterTimeout, localkafka.WithNodes(1))
	ctx, cancel := context.WithTimeout(t.Context(), zombieRunTimeout)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(c.Bootstrap()...)}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, "zombie"); err != nil {
		t.Fatal(err)
	}
	s := Settings{Producers: 2, Rate: 10, Records: 3, AbortEvery: 3, Timeout: 5 * time.Second, Stall: 16 * time.Second, StallEvery: 2}.WithDefaults()
	w, err := Start(ctx, Config{Settings: s, Topic: "zombie", Partitions: 3, StartOffsets: []int64{0, 0, 0}, RunID: 9, Opts: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	err = wait.PollUntilContextTimeout(ctx, zombiePoll, zombieRunTimeout, true, func(context.Context) (bool, error) {
		r := w.chk.Result(false)
		return r.Stalled > 0 && r.Stalled == r.StalledFenced+r.Counts[txncheck.CheckZombieCommitted], nil
	})
	if err != nil {
		t.Fatalf("the zombie's commit did not end: %v", err)
	}
	if err := w.Drain(ctx, zombieRunTimeout, nil); err != nil {
		t.Fatal(err)
	}
	r := w.Result(ctx)
	t.Logf("transaction.version %d: begun %d, committed %d, aborted %d (%d not asked), stalled %d, fenced %d; commit to visible %s; problems %q",
		r.TransactionVersion, r.Begun, r.Committed, r.Aborted, r.AbortedUnasked, r.Stalled, r.StalledFenced, r.CommitToVisible, r.Problems())
	if !r.Clean() || r.StalledFenced == 0 {
		t.Errorf("the zombie was not fenced cleanly: %+v", r)
	}
}
