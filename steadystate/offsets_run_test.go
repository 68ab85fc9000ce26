package steadystate

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// forwardedTimeout marks the produce requests misreportOffsets forwards to
// the fake itself, so that its control lets them through.
const forwardedTimeout = 12345

// misreportOffsets makes the fake lie about where it stored one produce
// request's batches: it stores them, then answers with each partition's
// base offset one too high, as a broker that acknowledges the wrong
// offset would. It returns the count of records so misreported, once the
// lie was told.
func misreportOffsets(t *testing.T, c *kfake.Cluster, after int64) (control func(kmsg.Request) (kmsg.Response, error, bool), lied *atomic.Int64, setClient func(*kgo.Client)) {
	var seen atomic.Int64
	var claimed atomic.Bool // one request only: others arrive while it is forwarded
	lied = &atomic.Int64{}
	var cl *kgo.Client
	setClient = func(fwd *kgo.Client) { cl = fwd }
	control = func(kr kmsg.Request) (kmsg.Response, error, bool) {
		req := kr.(*kmsg.ProduceRequest)
		if req.TimeoutMillis == forwardedTimeout || seen.Add(1) <= after || !claimed.CompareAndSwap(false, true) {
			return nil, nil, false // the fake stores it and answers truly
		}
		fwd := *req
		fwd.TimeoutMillis = forwardedTimeout
		var resp *kmsg.ProduceResponse
		var err error
		node := c.CurrentNode() // the partitions' leader
		c.SleepControl(func() { // let the fake serve the forwarded request meanwhile
			var kresp kmsg.Response
			kresp, err = cl.Broker(int(node)).Request(context.Background(), &fwd)
			if err == nil {
				resp = kresp.(*kmsg.ProduceResponse)
			}
		})
		if err != nil {
			t.Errorf("forwarding a produce request: %v", err)
			return nil, err, true
		}
		var n int64
		for i, rt := range resp.Topics {
			for j, rp := range rt.Partitions {
				if rp.ErrorCode != 0 {
					t.Errorf("the forwarded produce failed on partition %d: code %d", rp.Partition, rp.ErrorCode)
				}
				resp.Topics[i].Partitions[j].BaseOffset++
				n += int64(batchRecords(t, req.Topics[i].Partitions[j].Records))
			}
		}
		lied.Store(n)
		return resp, nil, true
	}
	return control, lied, setClient
}

func TestRunMisreportedOffsetsShowAsInconsistent(t *testing.T) {
	c := newFake(t)
	control, lied, setClient := misreportOffsets(t, c, 20)
	fwd, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer fwd.Close()
	setClient(fwd)
	c.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return control(kr)
	})
	cfg := fakeConfig(c)
	cfg.NoIdempotence = true // a forwarded copy of an idempotent batch would be a duplicate
	rep := runFake(t, cfg)
	rec := rep.Records
	n := uint64(lied.Load())
	if n == 0 {
		t.Fatal("the fake told no lie; the test cannot tell anything")
	}
	if rec.InconsistentOffsets != n {
		t.Errorf("inconsistent offsets = %d, want the %d records whose offsets the fake misreported", rec.InconsistentOffsets, n)
	}
	if rec.Lost != 0 || rec.Duplicates != 0 || rec.Reordered != 0 {
		t.Errorf("misreported offsets must show as nothing else: %+v", rec)
	}
	if len(rec.InconsistentOffsetExamples) == 0 {
		t.Fatal("no witness")
	}
	if w := rec.InconsistentOffsetExamples[0]; w.AckedOffset != w.ConsumedOffset+1 {
		t.Errorf("witness %s: want acknowledged one past where it was consumed", w)
	}
	if rep.Passed() {
		t.Error("a run whose broker misreported offsets passed")
	}
}

// With acks=0 the broker names no offset (franz-go reports each record's
// index in its batch): nothing may be judged inconsistent.
func TestRunAcksNoneJudgesNoOffset(t *testing.T) {
	c := newFake(t)
	cfg := fakeConfig(c)
	cfg.Acks, cfg.NoIdempotence = AcksNone, true
	rep := runFake(t, cfg)
	if n := rep.Records.InconsistentOffsets; n != 0 {
		t.Errorf("acks=0: %d inconsistent offsets, e.g. %v", n, rep.Records.InconsistentOffsetExamples)
	}
}
