package txn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// TestCopyJobOnKfake runs the copy job, two members, over an input written
// before and while it runs: every input offset is in the output once.
func TestCopyJobOnKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "txn", "in", "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	base := []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}
	in, err := kgo.NewClient(append(base, kgo.DefaultProduceTopic("in"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	write := func(n int) {
		t.Helper()
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Value: []byte("input")}
		}
		if err := in.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	write(300)
	adm := kadm.NewClient(in)
	var start kadm.Offsets
	for p := range int32(3) {
		start.Add(kadm.Offset{Topic: "in", Partition: p, At: 0, LeaderEpoch: -1})
	}
	if _, err := adm.CommitOffsets(t.Context(), "copy", start); err != nil {
		t.Fatal(err)
	}
	zero := []int64{0, 0, 0}
	w, err := Start(t.Context(), Config{Settings: Settings{Producers: 1, Copiers: 2, Timeout: 10 * time.Second}.WithDefaults(),
		Topic: "txn", Partitions: 3, StartOffsets: zero, RunID: 7, Opts: base,
		Copy: CopyConfig{Input: "in", InputStart: zero, Group: "copy", Output: "out", OutputStart: zero}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	write(300)
	ends, err := adm.ListEndOffsets(t.Context(), "in")
	if err != nil {
		t.Fatal(err)
	}
	end := make([]int64, 3)
	ends.Each(func(o kadm.ListedOffset) { end[o.Partition] = o.Offset })
	if err := w.Drain(context.Background(), time.Minute, end); err != nil {
		t.Fatal(err)
	}
	r := w.Result(t.Context())
	if r.Copy == nil || !r.Copy.Clean() || r.Copy.Inputs != 600 || r.Copy.Copied != 600 {
		t.Fatalf("copy %+v: want 600 inputs, each copied once", r.Copy)
	}
	t.Logf("copy: %+v", *r.Copy)
	if r.Copy.Counts[txncheck.CheckCopiedTwice] != 0 {
		t.Errorf("copied twice: %v", r.Copy.Witnesses)
	}
}
