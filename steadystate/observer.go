package steadystate

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Observer is told of a run's events as they happen, for live metrics (the
// Prometheus metrics of package steadystate/metrics). The report does not
// depend on it: it is built from the runner's own recorders after the run.
//
// The runner calls it from its producer, promise and consumer goroutines at
// once, once per record, so its methods must be safe for concurrent use and
// quick.
type Observer interface {
	// Sent: a record was handed to its producer at at.
	Sent(at time.Time)
	// Acked: a record was acknowledged at at, latency after it was sent
	// (AckLatency).
	Acked(at time.Time, latency time.Duration)
	// Failed: a record's produce failed at at; kind is one of FailureKinds.
	Failed(at time.Time, kind string)
	// Consumed: a record of the runner's own producers was consumed for the
	// first time, latency after its intended send time (EndToEnd).
	Consumed(latency time.Duration)
	// Duplicate: a record was consumed again at another offset.
	Duplicate()
	// Reordered: a record was consumed after a later record of its
	// producer and partition.
	Reordered()
	// Lost: the verdict at the end of the run found n acknowledged records
	// that were never consumed (Records.Lost). It is called once, after
	// the final drain, also with 0.
	Lost(n uint64)
	// Phase: phase p starts now. A run that starts with no phase marked is
	// in PhaseBaseline, and says so when its load starts.
	Phase(p Phase)
}

// nopObserver is the Observer of a run that has none.
type nopObserver struct{}

func (nopObserver) Sent(time.Time)                 {}
func (nopObserver) Acked(time.Time, time.Duration) {}
func (nopObserver) Failed(time.Time, string)       {}
func (nopObserver) Consumed(time.Duration)         {}
func (nopObserver) Duplicate()                     {}
func (nopObserver) Reordered()                     {}
func (nopObserver) Lost(uint64)                    {}
func (nopObserver) Phase(Phase)                    {}

// Failure kinds, the small fixed set an Observer is told (where the report
// counts errors by their full name, as errKind gives it).
const (
	FailureRecordTimeout = "record_timeout" // the delivery timeout ran out
	FailureRecordRetries = "record_retries" // the retries ran out
	FailureMaxBuffered   = "max_buffered"   // the producer's buffer was full
	FailureClientClosed  = "client_closed"  // the producer was closed (end of run)
	FailureCancelled     = "cancelled"      // the run was aborted
	FailureKafka         = "kafka"          // the broker answered with an error code
	FailureOther         = "other"
)

// FailureKinds returns every failure kind an Observer can be told, so that
// a metric can export each from the start.
func FailureKinds() []string {
	return []string{
		FailureRecordTimeout, FailureRecordRetries, FailureMaxBuffered, FailureClientClosed,
		FailureCancelled, FailureKafka, FailureOther,
	}
}

// clientError is a client-side error a produce can fail with, with the name
// the report counts it under and its failure kind.
type clientError struct {
	err        error
	name, kind string
}

// clientErrors lists them.
func clientErrors() []clientError {
	return []clientError{
		{kgo.ErrRecordTimeout, "RECORD_TIMEOUT", FailureRecordTimeout},
		{kgo.ErrRecordRetries, "RECORD_RETRIES", FailureRecordRetries},
		{kgo.ErrMaxBuffered, "MAX_BUFFERED", FailureMaxBuffered},
		{kgo.ErrClientClosed, "CLIENT_CLOSED", FailureClientClosed},
		{context.Canceled, "CANCELLED", FailureCancelled},
		{context.DeadlineExceeded, "CANCELLED", FailureCancelled},
	}
}

// classify returns err's name for the report's error counts (a Kafka error
// code's name, a client error's name, or the start of the message) and its
// failure kind for an Observer.
func classify(err error) (name, kind string) {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message, FailureKafka
	}
	for _, c := range clientErrors() {
		if errors.Is(err, c.err) {
			return c.name, c.kind
		}
	}
	s := err.Error()
	if len(s) > 60 {
		s = s[:60]
	}
	return s, FailureOther
}

// errKind names an error for the per-second error counts.
func errKind(err error) string {
	name, _ := classify(err)
	return name
}
