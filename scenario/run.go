package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/resources"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// run is one telling of a story: what each phase leaves the next.
type run[E any] struct {
	env   *Env
	e     E
	st    Story[E]
	topic string
	o     *Outcome

	// prepare
	before    []brokers.Server
	clusterID string
	dirs      dirIDs
	// load
	workloads     []Workload
	stopTimeline  func() timeline.Timeline
	stopResources func() resources.Usage
	// watchers stops the timeline and the sampler from a cleanup if the
	// story fails before it does, and is emptied once it has: a spec of
	// many stories (a game day, a soak) must not hold every story's looks
	// until its end. A pointer of its own, so the cleanup holds nothing
	// else of the run; atomic, as the cleanup may run while an interrupted
	// story still does.
	watchers *atomic.Pointer[func()]
	// inject
	victims    []brokers.Server
	hypothesis steadystate.Hypothesis
	fault      chaos.Fault
	faultAt    time.Time // before Inject: a drain's evictions happen inside it
	injectedAt time.Time
	// recover
	recoveredAt time.Time
}

// Run tells st against env, handing e to the story's steps: the baseline
// checks, the workloads (the steady state by default), warm-up and
// baseline, inject and hold, recover, wait for health, the after phase;
// then it checks records, bounds, pacing, identity, log dirs and the
// cluster ID, in the order of Checks. It returns what it saw; a failed
// check is no error, so the caller decides (a negative story inspects
// it). An error means the story could not be told to its end: a
// *SkipError (ErrSkipped) for a dry run, which plans the fault and stops,
// or for a story env cannot run. The fault's Recover is registered with
// env's Cleanups right after Inject, whatever Inject returned.
func Run[E any](ctx context.Context, env *Env, e E, st Story[E]) (Outcome, error) {
	r := &run[E]{env: env, e: e, st: st, topic: Topic(st.Label), o: &Outcome{}, watchers: &atomic.Pointer[func()]{}}
	for _, phase := range []func(context.Context) error{r.prepare, r.load, r.inject, r.recover, r.judge} {
		if err := phase(ctx); err != nil {
			return *r.o, err
		}
	}
	return *r.o, nil
}

// prepare checks that the story can begin: the brokers' identities, Kafka
// healthy, the cluster ID, the deployment's audit, and every broker's log
// dirs' directory IDs. In a dry run it plans the fault and stops.
func (r *run[E]) prepare(ctx context.Context) error {
	env, st := r.env, r.st
	if err := env.NeedCluster(st.Label); err != nil {
		return err
	}
	if env.Cleanups == nil {
		return errors.New("scenario: no Cleanups: a fault's Recover and the workloads' ends would have nowhere to go")
	}
	env.By("recording every broker's identity: ID, pod, node, claims and volumes")
	before, err := env.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("scenario: the brokers before the fault: %w", err)
	}
	if len(BrokerIDs(before)) == 0 {
		return fmt.Errorf("scenario: no broker pods found in %s", env.Namespace)
	}
	r.before = before
	env.By("checking that Kafka is healthy before the fault")
	if err := env.WaitHealthy(ctx, BrokerIDs(before)); err != nil {
		return fmt.Errorf("scenario: Kafka was not healthy before the fault: the fault would be charged with an earlier one's damage: %w", err)
	}
	if r.clusterID, err = env.clusterID(ctx); err != nil {
		return fmt.Errorf("scenario: the cluster ID before the fault: %w", err)
	}
	o := r.o
	if env.Recorder != nil {
		o.Spec = env.Recorder.Spec()
	}
	o.ExpectFailures = st.ExpectFailures
	if st.Round != "" {
		o.Spec += " (" + st.Round + ")"
	}
	// The outcome goes into the report however the story ends, so a story
	// that fails half-way still has its row.
	env.Defer(func(context.Context) error {
		if env.Recorder != nil {
			env.Recorder.Record(*o)
		}
		return nil
	}, 0)
	env.By("auditing the deployment: PVCs, PodDisruptionBudget, spread, replication settings, stable node IDs")
	o.Add(report.CheckAudit, env.AuditProblems(ctx, before)...)
	if env.DryRun {
		return r.dryRun(ctx)
	}
	// Not in a dry run: pods/exec is a create, which a dry run never makes.
	env.By("reading every broker's log dirs' directory IDs, to tell afterwards whether its data survived")
	r.dirs = env.readDirIDsOrSay(ctx, before, o)
	return nil
}

// dryRun plans the fault (a dry run's Inject reads and prints, and
// changes nothing) and returns the *SkipError that ends the story.
func (r *run[E]) dryRun(ctx context.Context) error {
	victims, err := r.st.Pick(ctx, r.e, r.topic, r.before)
	if err != nil {
		victims = r.before[:1] // the topic may not exist yet: show the plan for the first broker
	}
	f := r.st.Fault(r.e, victims)
	if err := f.Inject(ctx); err != nil {
		return fmt.Errorf("scenario: planning the fault %s: %w", f.Name(), err)
	}
	return &SkipError{Reason: "dry-run: " + f.Name()}
}

// load starts the workloads, the event timeline and the resource sampler,
// warms up and holds the baseline.
func (r *run[E]) load(ctx context.Context) error {
	env, st := r.env, r.st
	starts := st.Workloads
	if len(starts) == 0 {
		starts = []StartWorkload{SteadyStateOf(Shape{Agents: cmp.Or(st.Agents, env.SteadyState.Agents),
			Unlimited: env.SteadyState.Rate == steadystate.RateUnlimited, Round: st.Round})}
	}
	for _, start := range starts {
		w, err := start(ctx, env, r.topic)
		if err != nil {
			return err
		}
		r.workloads = append(r.workloads, w)
	}
	env.By("watching what Kafka and Kubernetes do: leaders, ISRs, fencing, the controller, pods and nodes")
	stopTimeline, err := env.watchTimeline(ctx, r.topic)
	if err != nil {
		return err
	}
	stopResources := env.SampleResources(ctx)
	r.stopTimeline, r.stopResources = stopTimeline, stopResources
	stopWatchers := func() { stopTimeline(); stopResources() }
	watchers := r.watchers
	watchers.Store(&stopWatchers)
	env.Defer(func(context.Context) error {
		if stop := watchers.Load(); stop != nil {
			(*stop)()
		}
		return nil
	}, 0)

	warmup := env.Timing.Warmup.Duration
	env.By(fmt.Sprintf("warming up: at least %s, and until acks flow (topic creation, the first leader elections, the JVM's first seconds)", warmup))
	if err := r.warmUp(ctx, warmup); err != nil {
		return err
	}
	if err := stopped(ctx); err != nil {
		return err
	}
	r.mark(steadystate.PhaseBaseline)
	env.By(fmt.Sprintf("holding the baseline for %s", env.Timing.Baseline.Duration))
	Hold(ctx, env.Timing.Baseline.Duration)
	return stopped(ctx)
}

// warmUp warms the workloads up side by side.
func (r *run[E]) warmUp(ctx context.Context, min time.Duration) error {
	errs := make([]error, len(r.workloads))
	var wg sync.WaitGroup
	for i, w := range r.workloads {
		wg.Go(func() { errs[i] = w.WarmUp(ctx, min) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// mark starts phase p in every workload.
func (r *run[E]) mark(p steadystate.Phase) {
	for _, w := range r.workloads {
		w.Mark(p)
	}
}

// stopped ends the story when it was interrupted (Ctrl-C, SIGTERM) or
// timed out, instead of going on with a dead context; the cleanups then
// recover the fault with a fresh one.
func stopped(ctx context.Context) error {
	if ctx.Err() != nil {
		return fmt.Errorf("scenario: stopped: %w; the cleanups recover the fault", context.Cause(ctx))
	}
	return nil
}
