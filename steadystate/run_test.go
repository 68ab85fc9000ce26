package steadystate

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Timeouts for runs against the fake.
const (
	fakeRunTimeout = 2 * time.Minute
)

func newFake(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func fakeConfig(c *kfake.Cluster) Config {
	return Config{
		Bootstrap:    c.ListenAddrs(),
		Rate:         2000,
		NumRecords:   3000,
		Partitions:   3,
		DrainTimeout: 30 * time.Second,
	}
}

// runFake runs cfg against the fake and checks that its Observer was told
// what the report says.
func runFake(t *testing.T, cfg Config) *Report {
	t.Helper()
	obs := &countingObserver{}
	cfg.Observer = obs
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), fakeRunTimeout)
	defer cancel()
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("%s", rep.SummaryLine)
	t.Logf("records: %+v", rep.Records)
	obs.check(t, rep)
	return rep
}

func TestRunCleanHasNoAnomalies(t *testing.T) {
	c := newFake(t)
	rep := runFake(t, fakeConfig(c))
	rec := rep.Records
	if rec.Acked != 3000 || rec.Consumed != 3000 {
		t.Errorf("acked %d, consumed %d; want 3000 and 3000", rec.Acked, rec.Consumed)
	}
	if !rec.Clean() || rec.UnackedSeen != 0 {
		t.Errorf("anomalies in a clean run: %+v", rec)
	}
	if !rep.Passed() {
		t.Errorf("violations in a clean run: %v", rep.Violations)
	}
	if rep.Summary.Records != 3000 {
		t.Errorf("summary counts %d records, want 3000", rep.Summary.Records)
	}
	if len(rep.Partitions) != 3 {
		t.Fatalf("per-partition stalls %+v, want one for each of 3 partitions", rep.Partitions)
	}
	for i, p := range rep.Partitions {
		if p.Partition != int32(i) || p.Longest >= time.Second {
			t.Errorf("partition %d: %+v; a clean run stalls no partition for a second", i, p)
		}
	}
}

// batchRecords counts the records in a produce request's partition.
func batchRecords(t *testing.T, raw []byte) int {
	t.Helper()
	n := 0
	for len(raw) > 0 {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			t.Errorf("decode record batch: %v", err)
			return n
		}
		n += int(b.NumRecords)
		raw = raw[12+int(b.Length):]
	}
	return n
}

// ackWithoutStoring answers a produce request with success for every
// partition, storing nothing: the broker lies.
func ackWithoutStoring(req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		st.TopicID = rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset = 0
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func TestRunDroppedProduceShowsExactLoss(t *testing.T) {
	c := newFake(t)
	var seen, dropped atomic.Int64
	c.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.ProduceRequest)
		// Drop every 7th request after the first ten.
		if n := seen.Add(1); n <= 10 || n%7 != 0 {
			return nil, nil, false
		}
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				dropped.Add(int64(batchRecords(t, rp.Records)))
			}
		}
		return ackWithoutStoring(req), nil, true
	})
	cfg := fakeConfig(c)
	// Without idempotence, so that the next batch after a dropped one is
	// not refused with OUT_OF_ORDER_SEQUENCE_NUMBER: the loss stays silent.
	cfg.NoIdempotence = true
	rep := runFake(t, cfg)
	rec := rep.Records
	if dropped.Load() == 0 {
		t.Fatalf("the fake dropped nothing (%d produce requests seen); the test cannot tell anything", seen.Load())
	}
	if rec.Lost != uint64(dropped.Load()) {
		t.Errorf("lost = %d, want exactly the %d records the fake dropped", rec.Lost, dropped.Load())
	}
	if rec.Acked != 3000 || rec.Consumed != 3000-uint64(dropped.Load()) {
		t.Errorf("acked %d consumed %d; want 3000 acked and %d consumed", rec.Acked, rec.Consumed, 3000-dropped.Load())
	}
	if rec.Duplicates != 0 || rec.Reordered != 0 {
		t.Errorf("dropping records must not show as duplicates or reorders: %+v", rec)
	}
	if len(rec.LostExamples) == 0 {
		t.Errorf("no lost examples reported")
	}
	if rep.Passed() {
		t.Errorf("report passed despite %d lost records", rec.Lost)
	}
}

func TestRunReplayedProduceShowsDuplicates(t *testing.T) {
	c := newFake(t)
	type captured struct {
		node int32
		req  *kmsg.ProduceRequest
		recs int
	}
	capCh := make(chan captured, 1)
	var seen atomic.Int64
	c.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		if seen.Add(1) < 20 {
			return nil, nil, false // not handled: the control stays
		}
		// Capture one request (a deep copy), let the fake store it, and
		// remove this control.
		c.DropControl()
		req := kr.(*kmsg.ProduceRequest)
		cp := kmsg.NewPtrProduceRequest()
		cp.Acks, cp.TimeoutMillis = req.Acks, req.TimeoutMillis
		cp.SetVersion(req.GetVersion())
		n := 0
		for _, rt := range req.Topics {
			ct := rt
			ct.Partitions = nil
			for _, rp := range rt.Partitions {
				cpart := rp
				cpart.Records = append([]byte(nil), rp.Records...)
				n += batchRecords(t, rp.Records)
				ct.Partitions = append(ct.Partitions, cpart)
			}
			cp.Topics = append(cp.Topics, ct)
		}
		capCh <- captured{c.CurrentNode(), cp, n}
		return nil, nil, false
	})

	cfg := fakeConfig(c)
	cfg.NoIdempotence = true // an idempotent broker would refuse the replay
	obs := &countingObserver{}
	cfg.Observer = obs
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), fakeRunTimeout)
	defer cancel()

	replayed := make(chan int, 1)
	go func() {
		defer close(replayed)
		var cp captured
		select {
		case cp = <-capCh:
		case <-ctx.Done():
			return
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
		if err != nil {
			t.Errorf("replay client: %v", err)
			return
		}
		defer cl.Close()
		kr, err := cl.Broker(int(cp.node)).Request(ctx, cp.req)
		if err != nil {
			t.Errorf("replay: %v", err)
			return
		}
		for _, rt := range kr.(*kmsg.ProduceResponse).Topics {
			for _, rp := range rt.Partitions {
				if rp.ErrorCode != 0 {
					t.Errorf("replay refused on partition %d: code %d", rp.Partition, rp.ErrorCode)
					return
				}
			}
		}
		replayed <- cp.recs
	}()

	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	n, ok := <-replayed
	if !ok || n == 0 {
		t.Fatalf("nothing was replayed")
	}
	rec := rep.Records
	t.Logf("replayed %d records; %+v", n, rec)
	obs.check(t, rep)
	if rec.Duplicates != uint64(n) {
		t.Errorf("duplicates = %d, want the %d records replayed", rec.Duplicates, n)
	}
	if rec.Lost != 0 {
		t.Errorf("lost = %d, want 0", rec.Lost)
	}
	if len(rec.DuplicateExamples) == 0 {
		t.Errorf("no duplicate examples")
	}
	// Duplicates are only a violation for an idempotent producer.
	for _, v := range rep.Verdicts {
		if v.Kind == BoundDuplicateRecords {
			t.Errorf("non-idempotent run checked duplicates: %+v", v)
		}
	}
	if !rep.Passed() {
		t.Errorf("non-idempotent run with replayed records failed: %v", rep.Violations)
	}
}

func TestRunLeaderShufflesLoseNothing(t *testing.T) {
	c := newFake(t)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var shuffles atomic.Int64
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				c.ShufflePartitionLeaders()
				shuffles.Add(1)
			}
		}
	})
	cfg := fakeConfig(c)
	cfg.NumRecords = 6000
	rep := runFake(t, cfg)
	cancel()
	wg.Wait()
	if shuffles.Load() < 5 {
		t.Fatalf("only %d leader shuffles happened during the run", shuffles.Load())
	}
	rec := rep.Records
	if rec.Acked != 6000 || !rec.Clean() {
		t.Errorf("after %d leader shuffles: %+v; want 6000 acked and no anomalies", shuffles.Load(), rec)
	}
}
