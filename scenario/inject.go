package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// inject picks the victims, states the hypothesis, injects the fault (its
// Recover registered at once) and holds it, or runs the story's During.
func (r *run[E]) inject(ctx context.Context) error {
	env, st, o := r.env, r.st, r.o
	victims, err := st.Pick(ctx, r.e, r.topic, r.before)
	if err != nil {
		return fmt.Errorf("scenario: choosing the victims: %w", err)
	}
	r.victims = victims
	for _, v := range victims {
		o.Victims = append(o.Victims, v.ID)
	}
	r.hypothesis = r.hypothesize(ctx)
	fault := st.Fault(r.e, victims)
	r.fault, o.Fault = fault, fault.Name()
	env.By("injecting the fault: " + fault.Name())
	r.mark(steadystate.PhaseFault)
	r.faultAt = time.Now()
	// Registered before Inject, so that whatever Inject does (fails half
	// way: a drain whose evictions failed has still cordoned its node; or
	// panics) the fault is recovered. Recover is idempotent, and recovering
	// a fault never injected does nothing.
	env.Defer(func(ctx context.Context) error { return chaos.RecoverRetrying(ctx, fault, nil) }, FaultRecoverTime)
	injectErr := fault.Inject(ctx)
	if injectErr != nil {
		return fmt.Errorf("scenario: injecting the fault: %w", injectErr)
	}
	r.injectedAt = time.Now()

	if st.During != nil {
		o.Add(report.CheckFault, errText(st.During(ctx, r.e, victims))...)
	} else {
		env.By(fmt.Sprintf("holding the fault for %s", env.Timing.Hold.Duration))
		Hold(ctx, env.Timing.Hold.Duration)
	}
	return stopped(ctx)
}

// hypothesize is what the story's workloads are judged by, once the
// victims are known: the unavailability bound (on the times no partition
// got an ack, and on each partition's own longest stall), the p99 ack
// bound, the throughput after, and for a graceful operation the p99 ack
// against the baseline's. Each limit is written into the outcome's Limits
// with its reason.
func (r *run[E]) hypothesize(ctx context.Context) steadystate.Hypothesis {
	env, o := r.env, r.o
	b := env.Bounds
	maxUnavailable, why := unavailabilityBound(ctx, env, r.st, r.before, r.victims)
	o.Limits = append(o.Limits, fmt.Sprintf("maxUnavailable %s: %s", maxUnavailable, why))
	env.By(fmt.Sprintf("bounding the unavailability, and each partition's longest stall, at %s: %s", maxUnavailable, why))
	h := steadystate.Hypothesis{
		All:               steadystate.Bounds{MaxUnavailable: maxUnavailable, MaxP99Ack: b.MaxP99Ack.Duration},
		Phases:            map[steadystate.Phase]steadystate.Bounds{steadystate.PhaseAfter: {MinThroughputRatio: b.MinThroughputRatioAfter}},
		MaxPartitionStall: maxUnavailable,
	}
	if ratio, floor := b.GracefulP99AckRatio, b.GracefulP99AckFloor.Duration; r.st.Kind == Graceful && ratio > 0 {
		// A graceful operation must not slow the clients down much either.
		pb := steadystate.Bounds{MaxP99AckRatio: ratio, P99AckFloor: floor}
		h.Phases[steadystate.PhaseFault], h.Phases[steadystate.PhaseRecovery] = pb, pb
		o.Limits = append(o.Limits, fmt.Sprintf("p99 ack in the fault and recovery phases at most %g× the baseline's, at least %s: a graceful operation (bounds.gracefulP99AckRatio, bounds.gracefulP99AckFloor)", ratio, floor))
	}
	return h
}

// recover recovers the fault, runs the story's Settle, waits for the
// victims' pods and for health, and runs the after phase.
func (r *run[E]) recover(ctx context.Context) error {
	env, st, o := r.env, r.st, r.o
	env.By("recovering: " + r.fault.Name())
	r.mark(steadystate.PhaseRecovery)
	if err := r.recoverThroughOutages(ctx); err != nil {
		return err
	}
	r.recoveredAt = time.Now()
	if st.Settle != nil {
		o.Add(report.CheckRolledOut, errText(st.Settle(ctx, r.e, r.victims))...)
	}

	env.By(fmt.Sprintf("waiting until brokers %v are back as Ready pods", o.Victims))
	podsErr := env.WaitPodsBack(ctx, r.victims, st.NewPods)
	if podsErr == nil && st.PodsBack != nil {
		podsErr = st.PodsBack(ctx, r.e)
	}
	o.Add(report.CheckPodsBack, errText(podsErr)...)
	o.Recovery.ToPodsReady = sinceUnless(r.recoveredAt, podsErr)

	env.By("waiting until every broker is registered, every ISR is full, " + env.MetadataHealth())
	healthErr := env.WaitHealthy(ctx, BrokerIDs(r.before))
	o.Add(report.CheckHealth, errText(healthErr)...)
	o.Recovery.ToHealthy = sinceUnless(r.recoveredAt, healthErr)
	o.Recovery.InjectToHealthy = sinceUnless(r.injectedAt, healthErr)
	if err := stopped(ctx); err != nil {
		return err
	}
	r.mark(steadystate.PhaseAfter)
	env.By(fmt.Sprintf("running the after phase for %s", env.Timing.After.Duration))
	Hold(ctx, env.Timing.After.Duration)
	return nil
}

// recoverThroughOutages recovers the fault, retrying while the Kubernetes
// API cannot be reached or cannot serve (chaos.RecoverRetrying), up to
// FaultRecoverTime. A wait for the API is an observation of the outcome,
// named as the API's outage and not charged to Kafka.
func (r *run[E]) recoverThroughOutages(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, FaultRecoverTime)
	defer cancel()
	start := time.Now()
	var failed int
	var last error
	err := chaos.RecoverRetrying(ctx, r.fault, func(err error, next time.Duration) {
		failed, last = failed+1, err
		r.env.Logf("recovering: the Kubernetes API did not serve the recovery (%v); trying again in %s\n", err, next.Round(time.Millisecond))
	})
	if failed > 0 {
		r.o.Observations = append(r.o.Observations, fmt.Sprintf("the Kubernetes API could not serve the recovery for %s (%d attempts failed, the last with: %v); recovered: %t",
			time.Since(start).Round(100*time.Millisecond), failed, last, err == nil))
	}
	if err != nil {
		return fmt.Errorf("scenario: recovering the fault: %w", err)
	}
	return nil
}
