package steadystate

// Merge of the measurements of real runs, against kfake.

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// agentsPoll is how often a test looks at the runners' progress.
const agentsPoll = 20 * time.Millisecond

// runAgents runs cfgs at once against one cluster, stops them all once each
// has acked at least minAcked, and returns their reports and measurements.
func runAgents(t *testing.T, minAcked int64, cfgs ...Config) ([]*Report, []Measurements) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), fakeRunTimeout)
	defer cancel()
	runners := make([]*Runner, len(cfgs))
	for i, cfg := range cfgs {
		r, err := New(cfg)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		runners[i] = r
	}
	type result struct {
		rep *Report
		err error
	}
	results := make([]chan result, len(runners))
	for i, r := range runners {
		results[i] = make(chan result, 1)
		go func() {
			rep, err := r.Run(ctx)
			results[i] <- result{rep, err}
		}()
	}
	tick := time.NewTicker(agentsPoll)
	defer tick.Stop()
	for ready := false; !ready; {
		select {
		case <-ctx.Done():
			t.Fatalf("the runners did not all ack %d records: %v", minAcked, ctx.Err())
		case <-tick.C:
		}
		ready = true
		for _, r := range runners {
			ready = ready && r.Progress().Acked >= minAcked
		}
	}
	for _, r := range runners {
		r.Stop()
	}
	reps := make([]*Report, len(runners))
	ms := make([]Measurements, len(runners))
	for i, r := range runners {
		res := <-results[i]
		if res.err != nil {
			t.Fatalf("runner %d: %v", i, res.err)
		}
		m, ok := r.Measurements()
		if !ok {
			t.Fatalf("runner %d has a report but no measurements", i)
		}
		reps[i], ms[i] = res.rep, m
	}
	return reps, ms
}

// A runner's report is Merge of its own measurements, and survives a JSON
// round trip of the measurements.
func TestMergeOfOneRunnerIsItsReport(t *testing.T) {
	c := newFake(t)
	cfg := fakeConfig(c)
	cfg.NumRecords = 0
	cfg.Hypothesis = &Hypothesis{All: Bounds{MaxP99Ack: time.Minute}}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Measurements(); ok {
		t.Errorf("measurements before Run")
	}
	ctx, cancel := context.WithTimeout(t.Context(), fakeRunTimeout)
	defer cancel()
	go func() {
		select {
		case <-r.Started():
			r.Mark(PhaseFault)
		case <-ctx.Done():
			return
		}
		tick := time.NewTicker(agentsPoll)
		defer tick.Stop()
		for r.Progress().Acked < 1500 {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
		}
		r.Mark(PhaseAfter)
		r.Stop()
	}()
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	m, ok := r.Measurements()
	if !ok {
		t.Fatal("no measurements after Run")
	}
	got, err := Merge([]Measurements{m}, nil, *r.Config().Hypothesis)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	if !reflect.DeepEqual(got, rep) {
		t.Errorf("Merge of the runner's measurements differs from its report\ngot  %+v\nwant %+v", got, rep)
	}
	if len(rep.Marks) != 2 || len(rep.Phases) < 2 {
		t.Errorf("marks %v, phases %d; want the fault and after marks", rep.Marks, len(rep.Phases))
	}

	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var decoded Measurements
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(decoded); !bytes.Equal(b, b2) {
		t.Errorf("measurements changed in a JSON round trip")
	}
	fromJSON, err := Merge([]Measurements{decoded}, nil, *r.Config().Hypothesis)
	if err != nil {
		t.Fatalf("Merge of decoded measurements: %v", err)
	}
	want, _ := json.Marshal(rep)
	if gotJSON, _ := json.Marshal(fromJSON); !bytes.Equal(gotJSON, want) {
		t.Errorf("report from decoded measurements differs:\n%s\nwant\n%s", gotJSON, want)
	}
	t.Logf("%d seconds measured, %d bytes of JSON", len(m.Seconds), len(b))
}

// Two agents share a run with producer bases 0 and 1 on one cluster: each
// verifies its own producer, sees the other's records, and their merged
// report adds up.
func TestMergeTwoAgentsOnOneCluster(t *testing.T) {
	c := newFake(t)
	cfgs := make([]Config, 2)
	for i := range cfgs {
		cfgs[i] = fakeConfig(c)
		cfgs[i].NumRecords = 0
		cfgs[i].Rate = 1000
		cfgs[i].RunID = 0xaa
		cfgs[i].ProducerBase = uint32(i)
	}
	reps, ms := runAgents(t, 500, cfgs...)
	merged, err := Merge(ms, nil, DefaultHypothesis())
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	var acked uint64
	var ackCount int64
	for i, rep := range reps {
		t.Logf("agent %d: %s; records %+v", i, rep.SummaryLine, rep.Records)
		if !rep.Records.Clean() || rep.Records.Acked == 0 {
			t.Errorf("agent %d records %+v; want acks and no anomaly", i, rep.Records)
		}
		if rep.Records.OtherProducers == 0 {
			t.Errorf("agent %d saw none of the other agent's records", i)
		}
		acked += rep.Records.Acked
		ackCount += rep.Latency[AckLatency.String()].Count
	}
	t.Logf("merged: %s; records %+v", merged.SummaryLine, merged.Records)
	if merged.Records.Acked != acked || merged.Summary.Records != int64(acked) {
		t.Errorf("merged acked %d, summary %d; want the sum %d", merged.Records.Acked, merged.Summary.Records, acked)
	}
	if got := merged.Latency[AckLatency.String()].Count; got != ackCount {
		t.Errorf("merged ack histogram holds %d values, want the sum %d", got, ackCount)
	}
	if !merged.Records.Clean() || !merged.Passed() || merged.Producers != 2 || merged.RunID != testRunID {
		t.Errorf("merged: records %+v, violations %v, producers %d, run %s", merged.Records, merged.Violations, merged.Producers, merged.RunID)
	}
}
