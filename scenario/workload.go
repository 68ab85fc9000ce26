package scenario

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/txn"
)

// Workload is what a story runs on Kafka while it is told, judged at its
// end. A story runs a list of them side by side.
type Workload interface {
	// Mark starts a phase of the story now.
	Mark(steadystate.Phase)
	// WarmUp returns once the workload is past its start: at least min.
	// The story then marks the baseline.
	WarmUp(ctx context.Context, min time.Duration) error
	// Finish stops the workload and judges what it saw by h, the story's
	// hypothesis, which comes last because its bounds may depend on the
	// victims, picked after the workload started. An error means the
	// workload could not say what it saw.
	Finish(ctx context.Context, h steadystate.Hypothesis) error
	// Checks are the workload's points of the verdict, once it finished,
	// in order.
	Checks() []report.Check
}

// Measured is a workload whose measurements are the story's steady state
// (report.json's steadyState): the first of a story's workloads that is
// one gives the story its figures.
type Measured interface {
	Workload
	Report() *steadystate.Report
}

// Recorded is a workload with figures of its own for the report, put
// into the outcome once it finished.
type Recorded interface {
	Workload
	Record(o *Outcome)
}

// StartWorkload starts one of a story's workloads on the story's topic,
// after the baseline checks; it registers its own cleanups with env.
type StartWorkload func(ctx context.Context, env *Env, topic string) (Workload, error)

// Shape is who loads Kafka in a steady state, and how hard.
type Shape struct {
	// Agents > 0 loads from that many agent pods, 0 from this process.
	Agents int
	// Unlimited makes each agent send as fast as it can (throughput mode,
	// as kafka-producer-perf-test --throughput -1) instead of sharing
	// SteadyState.Rate.
	Unlimited bool
	// Round tells apart the agents' run IDs of several loads on one topic,
	// so each load checks only its own records.
	Round string
	// Group, with members, runs an application's consumer group beside
	// the verifying consumer (in this process only), checked by
	// steadystate/groupcheck: report.CheckGroup.
	Group steadystate.GroupConfig
	// Transactions, with producers, runs the transactional workload beside
	// the load (in this process only), checked by steadystate/txncheck:
	// report.CheckTransactions.
	Transactions txn.Settings
}

// runner is the steady state's load: in this process, or in agent pods.
type runner interface {
	Mark(steadystate.Phase)
	WarmUp(ctx context.Context, min time.Duration) error
	Finish(ctx context.Context, h steadystate.Hypothesis) (*steadystate.Report, error)
}

// SteadyState is the workload of every story: idempotent acks=all
// producers and a consumer that checks each record, in this process or in
// agent pods. It is a Measured workload whose checks are
// report.CheckRecords and report.CheckBounds.
type SteadyState struct {
	r        runner
	rate     int       // the configured records/s, what the run should have sent
	started  time.Time // once the load ran
	loadTime time.Duration
	rep      *steadystate.Report
}

var _ Measured = (*SteadyState)(nil)

// SteadyStateOf is the story's default workload: the steady state of sh,
// narrated as it starts.
func SteadyStateOf(sh Shape) StartWorkload {
	return func(ctx context.Context, env *Env, topic string) (Workload, error) {
		rate := fmt.Sprintf("%d records/s", env.SteadyState.Rate)
		if sh.Unlimited {
			rate = "as fast as each agent can"
		}
		env.By(fmt.Sprintf("starting the steady state on %s: %s, acks=all, idempotent, RF 3, min ISR 2", topic, rate))
		if g := sh.Group; g.Members > 0 {
			env.By(fmt.Sprintf("with an application's consumer group beside it: %d members, group protocol %s, committing after processing", g.Members, cmp.Or(g.Protocol, steadystate.GroupProtocolClassic)))
		}
		if t := sh.Transactions.WithDefaults(); t.Producers > 0 {
			env.By(fmt.Sprintf("with transactions beside it on %s%s: %d transactional IDs, %d/s, %d partitions each, every %dth aborted, read at read_committed and read_uncommitted",
				topic, steadystate.TxnTopicSuffix, t.Producers, t.Rate, t.Records, t.AbortEvery))
			if t.Copiers > 0 {
				env.By(fmt.Sprintf("with a copy job: a group of %d copying %s to %s%s exactly once, one transaction per poll, offsets committed inside it",
					t.Copiers, topic, topic, steadystate.CopyTopicSuffix))
			}
		}
		return StartSteadyState(ctx, env, topic, sh)
	}
}

// StartSteadyState starts the steady state on topic: from this process,
// or from agent pods. Either way it is stopped when env's caller ends,
// however it ends. It returns a *SkipError when the agents cannot run in
// env (Env.NoAgents).
func StartSteadyState(ctx context.Context, env *Env, topic string, sh Shape) (*SteadyState, error) {
	var r runner
	var err error
	switch {
	case sh.Agents > 0 && (sh.Group.Members > 0 || sh.Transactions.Producers > 0):
		err = fmt.Errorf("scenario: an application's consumer group and transactions run in this process only, not with agents")
	case sh.Agents > 0:
		r, err = startAgents(ctx, env, topic, sh)
	case sh.Unlimited:
		err = fmt.Errorf("scenario: throughput mode needs agents")
	default:
		r, err = startLocal(ctx, env, topic, sh)
	}
	if err != nil {
		return nil, err
	}
	return &SteadyState{r: r, rate: env.SteadyState.Rate, started: time.Now()}, nil
}

// Mark starts a phase now.
func (s *SteadyState) Mark(p steadystate.Phase) { s.r.Mark(p) }

// WarmUp returns once the load is past its start: at least min, and in
// this process acks flowing for a while (the in-cluster agents produce
// already once they started).
func (s *SteadyState) WarmUp(ctx context.Context, min time.Duration) error {
	return s.r.WarmUp(ctx, min)
}

// Finish stops the load and keeps its report, judged by h, once the final
// flush and drain are done.
func (s *SteadyState) Finish(ctx context.Context, h steadystate.Hypothesis) error {
	s.loadTime = time.Since(s.started)
	rep, err := s.r.Finish(ctx, h)
	s.rep = rep
	if err != nil {
		return fmt.Errorf("scenario: steady state: %w", err)
	}
	return nil
}

var _ Recorded = (*SteadyState)(nil)

// Record adds what the application's consumer group's lag did, if the
// load ran one, to the outcome's observations.
func (s *SteadyState) Record(o *Outcome) {
	if s.rep == nil || s.rep.Group == nil || s.rep.Group.Lag == nil {
		return
	}
	o.Observations = append(o.Observations, LagObservation("the consumer group", *s.rep.Group.Lag))
}

// LagObservation says what group's lag did around the fault.
func LagObservation(group string, l groupcheck.Lag) string {
	line := fmt.Sprintf("%s's lag: %d records in the baseline (median; at most %d)", group, l.Baseline, l.BaselineMax)
	switch {
	case l.Samples == 0 || l.PeakAt.IsZero():
		return line + "; not sampled after the fault"
	case l.Peak <= 2*l.Baseline:
		return line + fmt.Sprintf(", and never more than twice that after the fault (%d samples)", l.Samples)
	case l.NeverBack:
		return line + fmt.Sprintf("; peak %d records at %s UTC, not back within twice the baseline's by the end of the run", l.Peak, l.PeakAt.UTC().Format("15:04:05.000"))
	}
	return line + fmt.Sprintf("; peak %d records at %s UTC; back within twice the baseline's %s after the fault began",
		l.Peak, l.PeakAt.UTC().Format("15:04:05.000"), l.Back.Round(100*time.Millisecond))
}

// Report is the load's report, once it finished.
func (s *SteadyState) Report() *steadystate.Report { return s.rep }

// Checks are the verifier's verdict on the records (against what the
// configured rate should have sent while the load ran) and the
// hypothesis' bounds.
func (s *SteadyState) Checks() []report.Check {
	if s.rep == nil {
		return nil
	}
	expected := float64(s.rate) * s.loadTime.Seconds()
	var bounds []string
	for _, v := range s.rep.Violations {
		bounds = append(bounds, fmt.Sprint(v))
	}
	checks := []report.Check{
		{Name: report.CheckRecords, Problems: RecordProblems(s.rep, expected)},
		{Name: report.CheckBounds, Problems: bounds},
	}
	if g := s.rep.Group; g != nil {
		checks = append(checks, report.Check{Name: report.CheckGroup, Problems: g.Problems()})
	}
	if t := s.rep.Transactions; t != nil {
		p := t.Problems()
		for _, w := range t.Witnesses {
			p = append(p, w.String())
		}
		if t.Copy != nil {
			for _, w := range t.Copy.Witnesses {
				p = append(p, "copy job: "+w.String())
			}
		}
		checks = append(checks, report.Check{Name: report.CheckTransactions, Problems: p})
	}
	return checks
}

// RecordProblems reads the verifier's verdict: records lost, duplicated,
// reordered or consumed at another offset than acknowledged, fewer acked than half of expected, a drain cut short.
func RecordProblems(rep *steadystate.Report, expected float64) []string {
	var p []string
	if n := rep.Records.Lost; n > 0 {
		p = append(p, fmt.Sprintf("%d acknowledged records lost, e.g. %+v", n, rep.Records.LostExamples))
	}
	if n := rep.Records.Duplicates; n > 0 {
		p = append(p, fmt.Sprintf("%d duplicates, e.g. %+v", n, rep.Records.DuplicateExamples))
	}
	if n := rep.Records.Reordered; n > 0 {
		p = append(p, fmt.Sprintf("%d reordered, e.g. %+v", n, rep.Records.ReorderExamples))
	}
	if n := rep.Records.InconsistentOffsets; n > 0 {
		p = append(p, fmt.Sprintf("%d consumed at another offset than the one acknowledged (inconsistent offsets), e.g. %v", n, rep.Records.InconsistentOffsetExamples))
	}
	if float64(rep.Records.Acked) < minAckedOfExpected*expected {
		p = append(p, fmt.Sprintf("only %d records acknowledged of about %.0f sent on schedule: the load barely ran", rep.Records.Acked, expected))
	}
	if rep.Records.DrainIncomplete {
		p = append(p, "the consumer did not read up to every acknowledged offset before the drain timeout")
	}
	return p
}
