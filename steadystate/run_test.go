package steadystate

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
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

func runFake(t *testing.T, cfg Config) *Report {
	t.Helper()
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
}
