package suites

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/kafkasec"
	"github.com/kafkachaos/kafkachaos/loadagent"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Timeouts of the in-cluster agents.
const (
	agentsReadyTimeout = 5 * time.Minute
	agentsGoneTimeout  = 3 * time.Minute
	agentsPoll         = 2 * time.Second
)

// load is the steady state a story runs: in the suite's process, or in
// agent pods.
type load interface {
	// Mark starts a phase now.
	Mark(steadystate.Phase)
	// WarmUp returns once the load is past its start: at least min, and
	// acks flowing for warmAcking. The caller then marks the baseline.
	WarmUp(ctx context.Context, min time.Duration) error
	// Finish stops the load and returns its report, judged by h, once the
	// final flush and drain are done. The hypothesis comes last because
	// its bounds may depend on the victims, picked after the load started.
	Finish(ctx context.Context, h steadystate.Hypothesis) (*steadystate.Report, error)
}

// shape is who loads Kafka, and how hard.
type shape struct {
	// agents > 0 loads from that many agent pods, 0 from the suite's own
	// process.
	agents int
	// unlimited makes each agent send as fast as it can (throughput mode,
	// as kafka-producer-perf-test --throughput -1) instead of sharing the
	// config's rate.
	unlimited bool
	// round tells apart the agents' run IDs of several loads on one topic,
	// so each load checks only its own records.
	round string
}

// startLoad starts the steady state on topic: from the suite's own
// process, or from agent pods. Either way it is stopped when the spec
// ends, however it ends.
func startLoad(ctx context.Context, e *env, topic string, sh shape) load {
	GinkgoHelper()
	if sh.agents > 0 {
		return startAgents(ctx, e, topic, sh)
	}
	Expect(sh.unlimited).To(BeFalse(), "throughput mode needs agents")
	ss := e.cfg.SteadyState
	acks := &ackWatch{}
	r, err := steadystate.New(steadystate.Config{
		Observer:       acks,
		Bootstrap:      e.bootstrap,
		Topic:          topic,
		Rate:           ss.Rate,
		Partitions:     ss.Partitions,
		RecordSize:     ss.RecordSize,
		Producers:      ss.Producers,
		ClientOpts:     e.kgoOpts,
		RequestTimeout: ss.RequestTimeout.Duration,
	})
	Expect(err).NotTo(HaveOccurred())
	l := &localLoad{r: r, acks: acks, results: make(chan localResult, 1), done: make(chan struct{}), unfinished: &atomic.Pointer[steadystate.Runner]{}}
	l.unfinished.Store(r)
	// Warming up until runStory marks the baseline: not judged.
	r.Mark(steadystate.PhaseWarmup)
	go func() {
		defer GinkgoRecover()
		defer close(l.done)
		rep, err := r.Run(ctx)
		l.results <- localResult{rep, err}
	}()
	// If the spec fails early, stop the load and wait for it, so nothing
	// of it outlives the spec. It holds the runner only until Finish: a
	// spec of many stories (a game day, a soak) must not keep every
	// story's runner until its end.
	unfinished, done := l.unfinished, l.done // not l, which holds the runner
	DeferCleanup(func(ctx SpecContext) {
		r := unfinished.Load()
		if r == nil {
			return
		}
		r.Stop()
		select {
		case <-done:
		case <-ctx.Done():
		}
	}, NodeTimeout(runStopTimeout))
	return l
}

type localResult struct {
	rep *steadystate.Report
	err error
}

// localLoad runs in the suite's process.
type localLoad struct {
	r       *steadystate.Runner
	acks    *ackWatch
	results chan localResult
	done    chan struct{}
	// unfinished is what the spec's cleanup stops, emptied by Finish
	// (atomic: a cleanup may run while an interrupted story is still in
	// Finish).
	unfinished *atomic.Pointer[steadystate.Runner]
}

func (l *localLoad) Mark(p steadystate.Phase) { l.r.Mark(p) }

// Warm-up limits: acks must flow this long before the baseline, and start
// within warmTimeout. The first acks come seconds after the start (the
// idempotent producer's ID, the first metadata and elections), as a burst
// that would swell the baseline's throughput.
const (
	warmAcking  = 2 * time.Second
	warmTimeout = 2 * time.Minute
	warmPoll    = 100 * time.Millisecond
)

func (l *localLoad) WarmUp(ctx context.Context, min time.Duration) error {
	start := time.Now()
	hold(ctx, min)
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
		return fmt.Errorf("the load acked nothing for %s after its start (first ack: %v; %s)", time.Since(start).Round(time.Second), first, why)
	}
	return nil
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

func (l *localLoad) Finish(ctx context.Context, h steadystate.Hypothesis) (*steadystate.Report, error) {
	l.r.Stop()
	var res localResult
	Eventually(ctx, l.results).WithTimeout(runStopTimeout).Should(Receive(&res), "the steady state did not finish its flush and drain")
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

// agentLoad runs in agent pods; the suite keeps the phase marks.
type agentLoad struct {
	e     *env
	spec  loadagent.Spec
	uids  map[string]types.UID // the agent pods that started the load
	marks []steadystate.Mark
	// phases go to the agents, in order, from a goroutine of their own
	// (tellAgents), so that a mark never waits on a port-forward; told is
	// closed once it has told them all.
	phases   chan steadystate.Phase
	told     chan struct{}
	finished bool // Finish closed phases; Mark and Finish run on the spec's goroutine
}

// Telling the agents a phase: how long one try may take, and how long
// Finish waits for the phases still queued.
const (
	phaseTellTimeout = 10 * time.Second
	phaseTellDrain   = 30 * time.Second
)

// tellAgents tells the agents each phase marked, for their metrics
// (kafkachaos_phase), until phases is closed or ctx ends. A phase that
// cannot be told is logged and skipped: the merged report's phases are the
// suite's own marks either way.
func (a *agentLoad) tellAgents(ctx context.Context) {
	defer close(a.told)
	for {
		select {
		case <-ctx.Done():
			return
		case p, ok := <-a.phases:
			if !ok {
				return
			}
			tctx, cancel := context.WithTimeout(ctx, phaseTellTimeout)
			if err := loadagent.MarkPhase(tctx, a.e.csConfig, a.spec, p); err != nil {
				GinkgoWriter.Printf("could not tell the agents the %s phase (their metrics miss it): %v\n", p, err)
			}
			cancel()
		}
	}
}

// startAgents deploys sh.agents agents (as the cluster admin: it is
// setup, like deploying Kafka) that share the suite's rate, or each send as
// fast as it can, and waits until each is producing.
func startAgents(ctx context.Context, e *env, topic string, sh shape) load {
	GinkgoHelper()
	switch {
	case e.cfg.Target.InCluster:
		Skip("in-cluster agents: manifests/rbac's ServiceAccount may not create workloads; run the suite from outside the cluster")
	case e.cfg.Target.Security != (kafkasec.Settings{}):
		Skip("in-cluster agents reach PLAINTEXT brokers only, for now")
	}
	ss, n := e.cfg.SteadyState, sh.agents
	rate := max(ss.Rate/n, 1)
	if sh.unlimited {
		rate = steadystate.RateUnlimited
	}
	spec := loadagent.Spec{
		Namespace: e.namespace, Name: "kafkachaos-agent", Agents: int32(n), RunID: agentRunID(e.runID+sh.round, topic),
		Bootstrap: e.bootstrap, Topic: topic, Rate: rate,
		Producers: ss.Producers, Partitions: ss.Partitions, RecordSize: ss.RecordSize,
		MaxDuration: storyTimeout, // agents of a suite that died stop loading Kafka by themselves
	}
	deleteAgents := func(ctx context.Context) {
		Expect(loadagent.Delete(ctx, e.admin, spec)).To(Succeed())
		Eventually(ctx, func(ctx context.Context) (loadagent.AgentsSeen, error) { return loadagent.Observe(ctx, e.admin, spec) }).
			WithTimeout(agentsGoneTimeout).WithPolling(agentsPoll).Should(Satisfy(loadagent.AgentsSeen.Gone), "agents gone")
	}
	By("deleting agents an earlier run may have left")
	deleteAgents(ctx)

	each := fmt.Sprintf("%d records/s each", spec.Rate)
	if sh.unlimited {
		each = "each as fast as it can"
	}
	By(fmt.Sprintf("deploying %d steady-state agents (StatefulSet %s, %s, run %s)", n, spec.Name, each, spec.RunID))
	DeferCleanup(func(ctx SpecContext) {
		By("deleting the steady-state agents")
		deleteAgents(ctx)
	}, NodeTimeout(agentsGoneTimeout+time.Minute))
	deployed := time.Now()
	Expect(loadagent.Deploy(ctx, e.admin, spec)).To(Succeed())
	Eventually(ctx, func(ctx context.Context) (loadagent.AgentsSeen, error) { return loadagent.Observe(ctx, e.admin, spec) }).
		WithTimeout(agentsReadyTimeout).WithPolling(agentsPoll).Should(Satisfy(loadagent.AgentsSeen.AllReady), "agents producing (Ready)")
	uids, err := loadagent.PodUIDs(ctx, e.admin, spec)
	Expect(err).NotTo(HaveOccurred())
	// Until every agent produces, and WarmUp's time after that, the load is
	// warming up: not judged, and not the baseline.
	a := &agentLoad{e: e, spec: spec, uids: uids, marks: []steadystate.Mark{
		{Phase: steadystate.PhaseWarmup, At: deployed},
	}, phases: make(chan steadystate.Phase, len(steadystate.Phases)*2), told: make(chan struct{})}
	go a.tellAgents(ctx)
	a.phases <- steadystate.PhaseWarmup
	return a
}

// WarmUp holds min: every agent produces already (startAgents waited for
// them to be Ready, which an agent is once its load runs).
func (a *agentLoad) WarmUp(ctx context.Context, min time.Duration) error {
	hold(ctx, min)
	return nil
}

func (a *agentLoad) Mark(p steadystate.Phase) {
	a.marks = append(a.marks, steadystate.Mark{Phase: p, At: time.Now()})
	if a.finished {
		return
	}
	select {
	case a.phases <- p:
	default:
		GinkgoWriter.Printf("the agents' phase queue is full: their metrics miss the %s phase\n", p)
	}
}

// Finish stops the agents and merges their measurements, collected
// through the API server (pods/portforward) with the suite's own identity.
func (a *agentLoad) Finish(ctx context.Context, h steadystate.Hypothesis) (*steadystate.Report, error) {
	if !a.finished {
		a.finished = true
		close(a.phases)
		select {
		case <-a.told:
		case <-time.After(phaseTellDrain):
		}
	}
	By(fmt.Sprintf("stopping the %d agents and collecting their measurements through the API server (port-forward)", a.spec.Agents))
	// An agent pod replaced since the start (evicted, crashed) began a new
	// run: the records of its first run would go unchecked.
	uids, err := loadagent.PodUIDs(ctx, a.e.admin, a.spec)
	if err != nil {
		return nil, err
	}
	if !maps.Equal(uids, a.uids) {
		return nil, fmt.Errorf("agent pods were replaced during the run (%v, now %v): their first runs' records are unchecked", a.uids, uids)
	}
	// Stopping is idempotent: retry through a port-forward that failed.
	Eventually(ctx, func(ctx context.Context) error { return loadagent.Stop(ctx, a.e.csConfig, a.spec) }).
		WithTimeout(runStopTimeout).WithPolling(agentsPoll).Should(Succeed(), "agents told to stop")
	var ms []steadystate.Measurements
	Eventually(ctx, func(ctx context.Context) (err error) {
		ms, err = loadagent.Collect(ctx, a.e.csConfig, a.spec)
		return err
	}).WithTimeout(runStopTimeout).WithPolling(agentsPoll).Should(Succeed(), "agents finished their flush and drain")
	return steadystate.Merge(ms, a.marks, h)
}

// agentRunID derives the agents' shared run ID (hex) from the suite's run
// and the story's topic, so each story's agents check only their records.
func agentRunID(run, topic string) string {
	f := fnv.New64a()
	_, _ = f.Write([]byte(run + "/" + topic))
	return fmt.Sprintf("%016x", f.Sum64()|1) // never 0
}
