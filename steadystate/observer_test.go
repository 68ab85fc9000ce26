package steadystate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// countingObserver counts what a run tells its Observer.
type countingObserver struct {
	sent, acked, consumed, duplicates, reordered atomic.Int64
	lost, lostCalls                              atomic.Int64
	negative                                     atomic.Int64 // latencies below zero

	mu       sync.Mutex
	failures map[string]int64
	phases   []Phase
}

func (o *countingObserver) Sent(time.Time) { o.sent.Add(1) }

func (o *countingObserver) Acked(_ time.Time, d time.Duration) {
	o.acked.Add(1)
	if d < 0 {
		o.negative.Add(1)
	}
}

func (o *countingObserver) Failed(_ time.Time, kind string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failures == nil {
		o.failures = make(map[string]int64)
	}
	o.failures[kind]++
}

func (o *countingObserver) Consumed(d time.Duration) {
	o.consumed.Add(1)
	if d < 0 {
		o.negative.Add(1)
	}
}

func (o *countingObserver) Duplicate() { o.duplicates.Add(1) }
func (o *countingObserver) Reordered() { o.reordered.Add(1) }

func (o *countingObserver) Lost(n uint64) {
	o.lost.Add(int64(n))
	o.lostCalls.Add(1)
}

func (o *countingObserver) Phase(p Phase) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.phases = append(o.phases, p)
}

// check compares what o was told with the run's report.
func (o *countingObserver) check(t *testing.T, rep *Report) {
	t.Helper()
	rec := rep.Records
	o.mu.Lock()
	defer o.mu.Unlock()
	var failed, produceErrors int64
	for kind, n := range o.failures {
		failed += n
		if !slices.Contains(FailureKinds(), kind) {
			t.Errorf("failure kind %q is not one of %v", kind, FailureKinds())
		}
	}
	for name, n := range rep.Errors {
		if !strings.HasPrefix(name, "consume: ") {
			produceErrors += n
		}
	}
	got := []int64{o.acked.Load(), o.consumed.Load(), o.duplicates.Load(), o.reordered.Load(), o.lost.Load(), failed}
	want := []int64{int64(rec.Acked), int64(rec.Consumed), int64(rec.Duplicates), int64(rec.Reordered), int64(rec.Lost), produceErrors}
	if !slices.Equal(got, want) {
		t.Errorf("observed acked, consumed, duplicates, reordered, lost, failed = %v; the report says %v", got, want)
	}
	if sent := o.sent.Load(); sent != o.acked.Load()+failed {
		t.Errorf("observed %d sent, %d acked and %d failed: every record sent must end acked or failed", sent, o.acked.Load(), failed)
	}
	if n := o.lostCalls.Load(); n != 1 {
		t.Errorf("Lost called %d times, want once", n)
	}
	if n := o.negative.Load(); n != 0 {
		t.Errorf("%d negative latencies observed", n)
	}
	if len(rep.Marks) == 0 && !slices.Equal(o.phases, []Phase{PhaseBaseline}) {
		t.Errorf("phases observed %v; a run with no marks is all %s", o.phases, PhaseBaseline)
	}
}

func TestClassify(t *testing.T) {
	long := errors.New(strings.Repeat("x", 100))
	tests := []struct {
		err        error
		name, kind string
	}{
		{kerr.NotEnoughReplicas, "NOT_ENOUGH_REPLICAS", FailureKafka},
		{fmt.Errorf("produce: %w", kerr.MessageTooLarge), "MESSAGE_TOO_LARGE", FailureKafka},
		{fmt.Errorf("wrapped: %w", kgo.ErrRecordTimeout), "RECORD_TIMEOUT", FailureRecordTimeout},
		{kgo.ErrRecordRetries, "RECORD_RETRIES", FailureRecordRetries},
		{kgo.ErrMaxBuffered, "MAX_BUFFERED", FailureMaxBuffered},
		{kgo.ErrClientClosed, "CLIENT_CLOSED", FailureClientClosed},
		{fmt.Errorf("flush: %w", context.Canceled), "CANCELLED", FailureCancelled},
		{context.DeadlineExceeded, "CANCELLED", FailureCancelled},
		{long, strings.Repeat("x", 60), FailureOther},
	}
	for _, tt := range tests {
		name, kind := classify(tt.err)
		if name != tt.name || kind != tt.kind {
			t.Errorf("classify(%v) = %q, %q; want %q, %q", tt.err, name, kind, tt.name, tt.kind)
		}
		if !slices.Contains(FailureKinds(), kind) {
			t.Errorf("kind %q of %v is not in FailureKinds", kind, tt.err)
		}
	}
}
