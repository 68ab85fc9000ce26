package scenario

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kafkachaos/kafkachaos/loadagent"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Timeouts of the in-cluster agents.
const (
	agentsReadyTimeout = 5 * time.Minute
	agentsGoneTimeout  = 3 * time.Minute
	agentsPoll         = 2 * time.Second
)

// Telling the agents a phase: how long one try may take, and how long
// Finish waits for the phases still queued.
const (
	phaseTellTimeout = 10 * time.Second
	phaseTellDrain   = 30 * time.Second
)

// agentLoad runs in agent pods; the story keeps the phase marks.
type agentLoad struct {
	env   *Env
	spec  loadagent.Spec
	uids  map[string]types.UID // the agent pods that started the load
	marks []steadystate.Mark
	// phases go to the agents, in order, from a goroutine of their own
	// (tellAgents), so that a mark never waits on a port-forward; told is
	// closed once it has told them all.
	phases   chan steadystate.Phase
	told     chan struct{}
	finished bool // Finish closed phases; Mark and Finish run on the story's goroutine
}

// startAgents deploys sh.Agents agents (as env's admin: it is setup, like
// deploying Kafka) that share the configured rate, or each send as fast
// as they can, and waits until each is producing.
func startAgents(ctx context.Context, env *Env, topic string, sh Shape) (*agentLoad, error) {
	if env.NoAgents != "" {
		return nil, &SkipError{Reason: env.NoAgents}
	}
	ss, n := env.SteadyState, sh.Agents
	rate := max(ss.Rate/n, 1)
	if sh.Unlimited {
		rate = steadystate.RateUnlimited
	}
	spec := loadagent.Spec{
		Namespace: env.Namespace, Name: "kafkachaos-agent", Agents: int32(n), RunID: agentRunID(env.RunID+sh.Round, topic),
		Bootstrap: env.Bootstrap, Topic: topic, Rate: rate,
		Producers: ss.Producers, Partitions: ss.Partitions, RecordSize: ss.RecordSize,
		MaxDuration: StoryTimeout, // agents of a suite that died stop loading Kafka by themselves
	}
	env.By("deleting agents an earlier run may have left")
	if err := deleteAgents(ctx, env, spec); err != nil {
		return nil, err
	}
	each := fmt.Sprintf("%d records/s each", spec.Rate)
	if sh.Unlimited {
		each = "each as fast as it can"
	}
	env.By(fmt.Sprintf("deploying %d steady-state agents (StatefulSet %s, %s, run %s)", n, spec.Name, each, spec.RunID))
	env.Defer(func(ctx context.Context) error {
		env.By("deleting the steady-state agents")
		return deleteAgents(ctx, env, spec)
	}, agentsGoneTimeout+time.Minute)
	deployed := time.Now()
	if err := loadagent.Deploy(ctx, env.admin(), spec); err != nil {
		return nil, fmt.Errorf("scenario: deploying the agents: %w", err)
	}
	if err := awaitAgents(ctx, env, spec, agentsReadyTimeout, "agents producing (Ready)", loadagent.AgentsSeen.AllReady); err != nil {
		return nil, err
	}
	uids, err := loadagent.PodUIDs(ctx, env.admin(), spec)
	if err != nil {
		return nil, fmt.Errorf("scenario: the agents' pods: %w", err)
	}
	// Until every agent produces, and WarmUp's time after that, the load is
	// warming up: not judged, and not the baseline.
	a := &agentLoad{env: env, spec: spec, uids: uids, marks: []steadystate.Mark{
		{Phase: steadystate.PhaseWarmup, At: deployed},
	}, phases: make(chan steadystate.Phase, len(steadystate.Phases)*2), told: make(chan struct{})}
	go a.tellAgents(ctx)
	a.phases <- steadystate.PhaseWarmup
	return a, nil
}

// deleteAgents deletes spec's agents and waits until they are gone.
func deleteAgents(ctx context.Context, env *Env, spec loadagent.Spec) error {
	if err := loadagent.Delete(ctx, env.admin(), spec); err != nil {
		return fmt.Errorf("scenario: deleting the agents: %w", err)
	}
	return awaitAgents(ctx, env, spec, agentsGoneTimeout, "agents gone", loadagent.AgentsSeen.Gone)
}

// awaitAgents waits up to timeout until the agents seen satisfy cond, and
// says what it last saw when they never did.
func awaitAgents(ctx context.Context, env *Env, spec loadagent.Spec, timeout time.Duration, what string, cond func(loadagent.AgentsSeen) bool) error {
	return Poll(ctx, agentsPoll, timeout, what, func(ctx context.Context) error {
		seen, err := loadagent.Observe(ctx, env.admin(), spec)
		switch {
		case err != nil:
			return err
		case !cond(seen):
			return fmt.Errorf("seen %s", seen)
		}
		return nil
	})
}

// tellAgents tells the agents each phase marked, for their metrics
// (kafkachaos_phase), until phases is closed or ctx ends. A phase that
// cannot be told is logged and skipped: the merged report's phases are the
// story's own marks either way.
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
			if err := loadagent.MarkPhase(tctx, a.env.KubeConfig, a.spec, p); err != nil {
				a.env.Logf("could not tell the agents the %s phase (their metrics miss it): %v\n", p, err)
			}
			cancel()
		}
	}
}

// WarmUp holds min: every agent produces already (startAgents waited for
// them to be Ready, which an agent is once its load runs).
func (a *agentLoad) WarmUp(ctx context.Context, min time.Duration) error {
	Hold(ctx, min)
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
		a.env.Logf("the agents' phase queue is full: their metrics miss the %s phase\n", p)
	}
}

// Finish stops the agents and merges their measurements, collected
// through the API server (pods/portforward) with the story's own identity.
func (a *agentLoad) Finish(ctx context.Context, h steadystate.Hypothesis) (*steadystate.Report, error) {
	if !a.finished {
		a.finished = true
		close(a.phases)
		select {
		case <-a.told:
		case <-time.After(phaseTellDrain):
		}
	}
	a.env.By(fmt.Sprintf("stopping the %d agents and collecting their measurements through the API server (port-forward)", a.spec.Agents))
	// An agent pod replaced since the start (evicted, crashed) began a new
	// run: the records of its first run would go unchecked.
	uids, err := loadagent.PodUIDs(ctx, a.env.admin(), a.spec)
	if err != nil {
		return nil, err
	}
	if !maps.Equal(uids, a.uids) {
		return nil, fmt.Errorf("agent pods were replaced during the run (%v, now %v): their first runs' records are unchecked", a.uids, uids)
	}
	// Stopping is idempotent: retry through a port-forward that failed.
	if err := Poll(ctx, agentsPoll, RunStopTimeout, "agents told to stop", func(ctx context.Context) error {
		return loadagent.Stop(ctx, a.env.KubeConfig, a.spec)
	}); err != nil {
		return nil, err
	}
	var ms []steadystate.Measurements
	if err := Poll(ctx, agentsPoll, RunStopTimeout, "agents finished their flush and drain", func(ctx context.Context) (err error) {
		ms, err = loadagent.Collect(ctx, a.env.KubeConfig, a.spec)
		return err
	}); err != nil {
		return nil, err
	}
	return steadystate.Merge(ms, a.marks, h)
}

// agentRunID derives the agents' shared run ID (hex) from the suite's run
// and the story's topic, so each story's agents check only their records.
func agentRunID(run, topic string) string {
	f := fnv.New64a()
	_, _ = f.Write([]byte(run + "/" + topic))
	return fmt.Sprintf("%016x", f.Sum64()|1) // never 0
}
