package txn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// startOn starts a workload of settings s on a fresh kfake cluster with a
// topic of 3 partitions.
func startOn(t *testing.T, s Settings, opts ...kgo.Opt) (*Workload, []kgo.Opt) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "txn"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	base := append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)
	w, err := Start(t.Context(), Config{Settings: s.WithDefaults(), Topic: "txn", Partitions: 3, StartOffsets: []int64{0, 0, 0}, RunID: 42, Opts: base})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w, base
}

// TestWorkloadOnKfake runs the workload for a second and drains it: every
// transaction is judged, the control saw the aborted ones, nothing is
// wrong.
func TestWorkloadOnKfake(t *testing.T) {
	w, _ := startOn(t, Settings{Producers: 2, Rate: 40, Records: 3, AbortEvery: 3, Timeout: 10 * time.Second})
	time.Sleep(time.Second) // the load's length, not a wait for a condition
	if err := w.Drain(context.Background(), 30*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	r := w.Result(t.Context())
	t.Logf("%+v", r)
	if !r.Clean() || r.Committed == 0 || r.Aborted == 0 || r.ControlAbortedReads != 3*r.Aborted {
		t.Errorf("result %+v: want clean, commits and aborts, the control seeing every aborted record; problems %q", r, r.Problems())
	}
}

// TestUncommittedReaderCaught is the negative test: a "read_committed"
// reader that really reads uncommitted is caught with aborted reads.
func TestUncommittedReaderCaught(t *testing.T) {
	w, _ := startOn(t, Settings{Producers: 1, Rate: 40, Records: 2, AbortEvery: 2, Timeout: 10 * time.Second})
	// The committed reader's client, replaced by one at read_uncommitted.
	rd := w.readers[0]
	if rd.level != txncheck.ReadCommitted {
		t.Fatalf("reader 0 is %s", rd)
	}
	lying, err := newReader(w.cfg, txncheck.ReadUncommitted, w.chk)
	if err != nil {
		t.Fatal(err)
	}
	lying.level = txncheck.ReadCommitted
	go lying.run(t.Context())
	t.Cleanup(func() { <-lying.exited; lying.cl.Close() })
	time.Sleep(time.Second) // the load's length
	if err := w.Drain(context.Background(), 30*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lying.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the lying reader did not reach the end marker")
	}
	r := w.Result(t.Context())
	if r.Counts[txncheck.CheckAbortedRead] == 0 {
		t.Errorf("a read_uncommitted reader posing as read_committed was not caught: %+v", r)
	}
}
