package scenario

import (
	"context"
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// The checks a story makes are report.Checks()'s, in its order.
func TestChecksInReportOrder(t *testing.T) {
	all := report.Checks()
	last := -1
	for _, c := range Checks() {
		i := slices.Index(all, c)
		if i <= last {
			t.Errorf("check %q is at %d of report.Checks(), not after %d: %v", c, i, last, all)
		}
		last = i
	}
}

// pickBroker1 picks broker 1.
func pickBroker1(_ context.Context, _ *testing.T, _ string, snap []brokers.Server) ([]brokers.Server, error) {
	b, ok := brokers.ByID(snap, 1)
	if !ok {
		return nil, errors.New("no broker 1")
	}
	return []brokers.Server{b}, nil
}

// A whole story against fakes: the checks come in report.Checks()'s order,
// each workload's checks reach the outcome, the measured workload's report
// is the steady state, the fault is injected once and recovered (by the
// story, then by its cleanup, idempotently), and the outcome is recorded
// from a cleanup.
func TestRunFillsChecksInOrder(t *testing.T) {
	env, caller := testEnv(t)
	steady := &fakeWorkload{rep: &steadystate.Report{SummaryLine: "the fake steady state"}, checks: []report.Check{
		{Name: report.CheckRecords}, {Name: report.CheckBounds, Problems: []string{"p99 ack too high"}}, {Name: report.CheckGroup}, {Name: report.CheckTransactions},
	}}
	const echoes report.CheckName = "fake workload: every request echoed"
	second := &fakeWorkload{checks: []report.Check{{Name: echoes, Problems: []string{"request 7 unanswered"}}}}
	f := &fakeFault{}
	var during, settled, finally bool
	st := Story[*testing.T]{
		Label: "fake", Kind: Graceful, Round: "round 1",
		Pick:   pickBroker1,
		Fault:  func(*testing.T, []brokers.Server) chaos.Fault { return f },
		During: func(context.Context, *testing.T, []brokers.Server) error { during = true; return nil },
		Settle: func(context.Context, *testing.T, []brokers.Server) error { settled = true; return nil },
		Finally: func(_ context.Context, _ *testing.T, _ []brokers.Server, o *Outcome) {
			finally = true
			o.Observations = append(o.Observations, "seen")
		},
		Workloads: []StartWorkload{start(measuredWorkload{steady}), start(second)},
	}
	o, err := Run(t.Context(), env, t, st)
	if err != nil {
		t.Fatalf("Run: %v\nsteps: %q", err, caller.steps)
	}

	var names []report.CheckName
	for _, c := range o.Checks {
		if c.Name != echoes {
			names = append(names, c.Name)
		}
	}
	if !slices.Equal(names, Checks()) {
		t.Errorf("checks %v,\nwant %v", names, Checks())
	}
	if got := o.Problems(echoes); !slices.Equal(got, []string{"request 7 unanswered"}) {
		t.Errorf("the second workload's check: %q", got)
	}
	if got := o.Problems(report.CheckBounds); len(got) != 1 {
		t.Errorf("the steady state's bounds check: %q", got)
	}
	if i, j := slices.IndexFunc(o.Checks, func(c report.Check) bool { return c.Name == echoes }), slices.Index(names, report.CheckPacing); i != j {
		t.Errorf("the second workload's check at %d, want it after the steady state's, before pacing: %v", i, o.Checks)
	}
	if o.SteadyState != steady.rep {
		t.Errorf("steady state %v, want the measured workload's report", o.SteadyState)
	}
	for _, w := range []*fakeWorkload{steady, second} {
		want := []steadystate.Phase{steadystate.PhaseBaseline, steadystate.PhaseFault, steadystate.PhaseRecovery, steadystate.PhaseAfter}
		if !w.warmed || !slices.Equal(w.marks, want) || w.hypothesis == nil {
			t.Errorf("workload warmed %t, marks %v, hypothesis %v; want warmed, %v, a hypothesis", w.warmed, w.marks, w.hypothesis, want)
		}
	}
	if h := steady.hypothesis; h != nil && (h.All.MaxUnavailable != GracefulMaxUnavailable || h.Phases[steadystate.PhaseFault].MaxP99AckRatio != 20) {
		t.Errorf("hypothesis of a graceful story: %+v", *h)
	}
	if !during || !settled || !finally || f.injected != 1 || f.recovered != 1 {
		t.Errorf("during %t, settle %t, finally %t, injected %d, recovered %d", during, settled, finally, f.injected, f.recovered)
	}
	if o.Spec != "the fake spec (round 1)" || o.Fault != "fake fault" || !slices.Equal(o.Victims, []int32{1}) {
		t.Errorf("outcome %q, fault %q, victims %v", o.Spec, o.Fault, o.Victims)
	}
	if !caller.said("observed: seen") || !caller.said("injecting the fault: fake fault") {
		t.Errorf("narration: %q", caller.steps)
	}
	if errs := caller.runCleanups(t); len(errs) > 0 {
		t.Errorf("cleanups: %v", errs)
	}
	if f.recovered != 2 || len(caller.recorded) != 1 || caller.recorded[0].Spec != o.Spec {
		t.Errorf("after the cleanups: recovered %d times, recorded %d outcomes", f.recovered, len(caller.recorded))
	}
}

// A fault whose Inject fails is still recovered: its Recover is
// registered, with its timeout, before the story returns the error; and
// the outcome is recorded with what it saw so far.
func TestRunRecoversAFailedInject(t *testing.T) {
	env, caller := testEnv(t)
	f := &fakeFault{injectErr: errors.New("evictions refused")}
	st := Story[*testing.T]{
		Label: "fake", Pick: pickBroker1,
		Fault:     func(*testing.T, []brokers.Server) chaos.Fault { return f },
		Workloads: []StartWorkload{start(&fakeWorkload{})},
	}
	_, err := Run(t.Context(), env, t, st)
	if err == nil || !errors.Is(err, f.injectErr) {
		t.Fatalf("Run: %v, want the Inject's error", err)
	}
	var timeouts []string
	for _, c := range caller.cleanups {
		timeouts = append(timeouts, c.timeout.String())
	}
	if last := caller.cleanups[len(caller.cleanups)-1]; last.timeout != FaultRecoverTime {
		t.Errorf("the last cleanup has timeout %s, want the fault's Recover with %s (all: %v)", last.timeout, FaultRecoverTime, timeouts)
	}
	caller.runCleanups(t)
	if f.recovered != 1 || len(caller.recorded) != 1 || caller.recorded[0].Fault != "fake fault" {
		t.Errorf("recovered %d, recorded %+v", f.recovered, caller.recorded)
	}
}

// A dry run plans the fault and stops with a *SkipError: no workload
// starts, nothing is injected (the pod a real fault would delete is still
// there), no Recover is registered.
func TestRunDryRunSkips(t *testing.T) {
	env, caller := testEnv(t)
	env.DryRun = true
	started := false
	var fault *chaos.PodDelete
	st := Story[*testing.T]{
		Label: "fake", Pick: pickBroker1,
		Fault: func(_ *testing.T, v []brokers.Server) chaos.Fault {
			fault = &chaos.PodDelete{Scope: env.FaultScope(), Pod: v[0].Pod, Force: true}
			return fault
		},
		Workloads: []StartWorkload{func(context.Context, *Env, string) (Workload, error) {
			started = true
			return &fakeWorkload{}, nil
		}},
	}
	_, err := Run(t.Context(), env, t, st)
	var skip *SkipError
	if !errors.As(err, &skip) || !errors.Is(err, ErrSkipped) || skip.Reason != "dry-run: "+fault.Name() {
		t.Fatalf("Run: %v, want a *SkipError for the dry run", err)
	}
	if started {
		t.Error("a workload started in a dry run")
	}
	if _, err := env.Kube.CoreV1().Pods(testNS).Get(t.Context(), "kafka-1", metav1.GetOptions{}); err != nil {
		t.Errorf("the dry run deleted the pod: %v", err)
	}
	if len(caller.cleanups) != 1 || caller.cleanups[0].timeout == FaultRecoverTime {
		t.Errorf("cleanups %d: want only the outcome's", len(caller.cleanups))
	}
	if !caller.said("dry-run") {
		t.Errorf("the plan was not narrated: %q", caller.log.String())
	}
}

// Without a cluster (a dry run of the local target) a story skips at once.
func TestRunWithoutCluster(t *testing.T) {
	caller := &fakeCaller{}
	_, err := Run(t.Context(), &Env{Narrator: caller, DryRun: true}, t, Story[*testing.T]{Label: "fake"})
	if !errors.Is(err, ErrSkipped) || !caller.said("dry-run: would run the fake story against the local cluster") {
		t.Errorf("Run: %v, steps %q", err, caller.steps)
	}
}

// Without Cleanups a story refuses to begin: its fault's Recover would
// have nowhere to go.
func TestRunNeedsCleanups(t *testing.T) {
	env, _ := testEnv(t)
	env.Cleanups = nil
	f := &fakeFault{}
	st := Story[*testing.T]{Label: "fake", Pick: pickBroker1, Fault: func(*testing.T, []brokers.Server) chaos.Fault { return f }}
	if _, err := Run(t.Context(), env, t, st); err == nil || f.injected != 0 {
		t.Errorf("Run: %v, injected %d times", err, f.injected)
	}
}

// A story whose agents cannot run here skips, naming why, before it
// deploys anything.
func TestRunAgentsRefused(t *testing.T) {
	env, _ := testEnv(t)
	env.NoAgents = "in-cluster agents reach PLAINTEXT brokers only, for now"
	st := Story[*testing.T]{Label: "fake", Agents: 3, Pick: pickBroker1,
		Fault: func(*testing.T, []brokers.Server) chaos.Fault { return &fakeFault{} }}
	_, err := Run(t.Context(), env, t, st)
	var skip *SkipError
	if !errors.As(err, &skip) || skip.Reason != env.NoAgents {
		t.Errorf("Run: %v, want a skip naming why", err)
	}
	for _, a := range env.Kube.(*fake.Clientset).Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("a story whose agents cannot run made a %s of %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}
