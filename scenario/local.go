package scenario

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Warm-up limits: acks must flow this long before the baseline, and start
// within warmTimeout. The first acks come seconds after the start (the
// idempotent producer's ID, the first metadata and elections), as a burst
// that would swell the baseline's throughput.
const (
	warmAcking  = 2 * time.Second
	warmTimeout = 2 * time.Minute
	warmPoll    = 100 * time.Millisecond
)

type localResult struct {
	rep *steadystate.Report
	err error
}

// localLoad runs in this process.
type localLoad struct {
	r       *steadystate.Runner
	acks    *ackWatch
	results chan localResult
	done    chan struct{}
	// unfinished is what the cleanup stops, emptied by Finish (atomic: a
	// cleanup may run while an interrupted story is still in Finish).
	unfinished *atomic.Pointer[steadystate.Runner]
}

// startLocal starts the steady state on topic in this process, warming up
// until the story marks the baseline (not judged).
func startLocal(ctx context.Context, env *Env, topic string, sh Shape) (*localLoad, error) {
	ss := env.SteadyState
	acks := &ackWatch{}
	r, err := steadystate.New(steadystate.Config{
		Observer:       acks,
		Bootstrap:      env.Bootstrap,
		Topic:          topic,
		Rate:           ss.Rate,
		Partitions:     ss.Partitions,
		RecordSize:     ss.RecordSize,
		Producers:      ss.Producers,
		ClientOpts:     env.KafkaOpts,
		RequestTimeout: ss.RequestTimeout.Duration,
		Group:          sh.Group,
		Transactions:   sh.Transactions,
	})
	if err != nil {
		return nil, fmt.Errorf("scenario: steady state: %w", err)
	}
	l := &localLoad{r: r, acks: acks, results: make(chan localResult, 1), done: make(chan struct{}), unfinished: &atomic.Pointer[steadystate.Runner]{}}
	l.unfinished.Store(r)
	r.Mark(steadystate.PhaseWarmup)
	go func() {
		defer close(l.done)
		defer func() {
			// A panic in the load fails the story, as Ginkgo's
			// GinkgoRecover would fail a spec, instead of the process.
			if p := recover(); p != nil {
				l.results <- localResult{nil, fmt.Errorf("scenario: the steady state panicked: %v", p)}
			}
		}()
		rep, err := r.Run(ctx)
		l.results <- localResult{rep, err}
	}()
	// If the story fails early, stop the load and wait for it, so nothing
	// of it outlives the caller. It holds the runner only until Finish: a
	// spec of many stories (a game day, a soak) must not keep every
	// story's runner until its end.
	unfinished, done := l.unfinished, l.done // not l, which holds the runner
	env.Defer(func(ctx context.Context) error {
		r := unfinished.Load()
		if r == nil {
			return nil
		}
		r.Stop()
		select {
		case <-done:
		case <-ctx.Done():
		}
		return nil
	}, RunStopTimeout)
	return l, nil
}

func (l *localLoad) Mark(p steadystate.Phase) { l.r.Mark(p) }

func (l *localLoad) WarmUp(ctx context.Context, min time.Duration) error {
	start := time.Now()
	Hold(ctx, min)
	ctx, cancel := context.WithTimeout(ctx, warmTimeout)
	defer cancel()
	var first time.Time
	err := wait.PollUntilContextCancel(ctx, warmPoll, true, func(context.Context) (bool, error) {
		first = l.acks.first()
		return !first.IsZero() && time.Since(first) >= warmAcking, nil
	})
	if err != nil {
		why := "no produce failed"
		if n, last := l.acks.failures(); n > 0 {
			why = fmt.Sprintf("%d produces failed, the last with %s", n, last)
		}
		return fmt.Errorf("scenario: the load acked nothing for %s after its start (first ack: %v; %s)", time.Since(start).Round(time.Second), first, why)
	}
	return nil
}

func (l *localLoad) Finish(ctx context.Context, h steadystate.Hypothesis) (*steadystate.Report, error) {
	l.r.Stop()
	t := time.NewTimer(RunStopTimeout)
	defer t.Stop()
	var res localResult
	select {
	case res = <-l.results:
	case <-t.C:
		return nil, fmt.Errorf("scenario: the steady state did not finish its flush and drain within %s", RunStopTimeout)
	case <-ctx.Done():
		return nil, fmt.Errorf("scenario: the steady state's flush and drain: %w", context.Cause(ctx))
	}
	l.unfinished.Store(nil)
	m, ok := l.r.Measurements()
	if !ok {
		return res.rep, res.err
	}
	rep, err := steadystate.Merge([]steadystate.Measurements{m}, nil, h)
	if err != nil {
		return nil, err
	}
	return rep, res.err
}

// ackWatch is the local load's Observer: it keeps the time of the first
// ack, and the count and last kind of failed produces, which say why a
// warm-up never acked. The other events are the report's business.
type ackWatch struct {
	firstAck atomic.Int64
	failed   atomic.Int64
	lastKind atomic.Value // string
}

// failures returns how many produces failed and the last one's kind.
func (a *ackWatch) failures() (int64, string) {
	kind, _ := a.lastKind.Load().(string)
	return a.failed.Load(), kind
}

func (a *ackWatch) first() time.Time {
	if ns := a.firstAck.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}
func (a *ackWatch) Acked(at time.Time, _ time.Duration) { a.firstAck.CompareAndSwap(0, at.UnixNano()) }
func (*ackWatch) Sent(time.Time)                        {}
func (a *ackWatch) Failed(_ time.Time, kind string) {
	a.failed.Add(1)
	a.lastKind.Store(kind)
}
func (*ackWatch) Consumed(time.Duration)  {}
func (*ackWatch) Duplicate()              {}
func (*ackWatch) Reordered()              {}
func (*ackWatch) Lost(uint64)             {}
func (*ackWatch) Phase(steadystate.Phase) {}
