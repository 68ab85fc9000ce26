package scenario

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// judge finishes the workloads, stops the timeline and the sampler, and
// fills the rest of the verdict in the order of Checks: each workload's
// checks, pacing, identity (with data survival), log dirs and the cluster
// ID; then the story's Finally, and the observations narrated.
func (r *run[E]) judge(ctx context.Context) error {
	env, st, o := r.env, r.st, r.o
	for _, w := range r.workloads {
		if err := w.Finish(ctx, r.hypothesis); err != nil {
			return err
		}
	}
	tl := r.stopTimeline()
	end := time.Now()
	o.Events = tl.Events
	usage := r.stopResources()
	o.Resources = &usage
	r.watchers.Store(nil)
	env.Logf("what the pods used: %s\n", usage)
	r.milestones(tl)
	env.Logf("what Kafka and Kubernetes did:\n%s", timeline.Summary(tl.Events))
	r.steadyState()

	for _, w := range r.workloads {
		o.Checks = append(o.Checks, w.Checks()...)
		if rw, ok := w.(Recorded); ok {
			rw.Record(o)
		}
	}
	if st.Kind == Graceful {
		var pods []string
		for _, b := range r.before {
			pods = append(pods, b.Pod)
		}
		o.Add(report.CheckPacing, tl.Pacing(pods, r.faultAt, end)...)
	}
	after, err := env.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("scenario: the brokers after the fault: %w", err)
	}
	o.Add(report.CheckIdentity, append(identityProblems(r.before, after, o.Victims, st.NewPods, st.NewVolume),
		env.dataSurvivalProblems(ctx, r.dirs, after, lostOnPurpose(st.DataLost, o.Victims))...)...)
	o.Add(report.CheckLogDirs, env.logDirProblems(ctx, BrokerIDs(r.victims), r.topic)...) // controllers have no log dirs for the topic
	o.Add(report.CheckCluster, r.clusterProblems(ctx)...)
	if st.Finally != nil {
		st.Finally(ctx, r.e, r.victims, o)
	}
	for _, ob := range o.Observations {
		env.By("observed: " + ob)
	}
	return nil
}

// milestones are the recovery's times read from the timeline's looks.
func (r *run[E]) milestones(tl timeline.Timeline) {
	ids := BrokerIDs(r.before)
	rec := &r.o.Recovery
	rec.ToBrokersRegistered = milestone(tl, r.recoveredAt, func(s kafkaadmin.State) bool { return s.Registered(ids...) })
	rec.ToISRFull = milestone(tl, r.recoveredAt, kafkaadmin.State.ISRFull)
	rec.ToPreferredLeaders = milestone(tl, r.recoveredAt, kafkaadmin.State.PreferredLeaders)
}

// steadyState makes the first measured workload's report the story's
// steady state, and logs its summary.
func (r *run[E]) steadyState() {
	for _, w := range r.workloads {
		m, ok := w.(Measured)
		if !ok || m.Report() == nil {
			continue
		}
		rep, o := m.Report(), r.o
		o.SteadyState = rep
		o.Recovery.ThroughputBack = report.ThroughputBack(rep, r.recoveredAt, r.env.Bounds.MinThroughputRatioAfter)
		r.env.Logf("%s\nunavailability %s; partitions stalled over 1s: %v; recovery: %v\n",
			rep.SummaryLine, rep.Unavailable.Round(time.Millisecond), rep.Stalled(time.Second), o.Recovery)
		return
	}
}

// clusterProblems says whether the cluster ID is the one of before.
func (r *run[E]) clusterProblems(ctx context.Context) []string {
	switch now, err := r.env.clusterID(ctx); {
	case err != nil:
		return []string{fmt.Sprintf("cluster ID: want %q, could not read it: %v", r.clusterID, err)}
	case now != r.clusterID:
		return []string{fmt.Sprintf("cluster ID: want %q, got %q", r.clusterID, now)}
	}
	return nil
}

// identityProblems compares each broker before and after: victims must be
// new pods when newPods, and on a new claim from template newVolume when
// set; the others keep their claims and volumes.
func identityProblems(before, after []brokers.Server, victims []int32, newPods bool, newVolume string) []string {
	var p []string
	for _, b := range before {
		a, ok := brokers.ByID(after, b.ID)
		if !ok {
			p = append(p, fmt.Sprintf("broker %d: no pod carries this broker ID any more (was %s)", b.ID, b.Pod))
			continue
		}
		var w brokers.Rejoin // a bystander keeps everything
		if slices.Contains(victims, b.ID) {
			w.NewPod = newPods
			if newVolume != "" {
				w.NewClaim = newVolume + "-" + b.Pod
			}
		}
		for _, pr := range brokers.CompareIdentity(b, a, w) {
			p = append(p, pr.String())
		}
	}
	return p
}

// logDirProblems checks with DescribeLogDirs that each victim's log dirs
// still hold the workload topic's partitions it replicates.
func (e *Env) logDirProblems(ctx context.Context, ids []int32, topic string) []string {
	var p []string
	err := e.WithKafka(func(cl *kafkaadmin.Client) error {
		for _, id := range ids {
			probs, err := cl.CheckLogDirs(ctx, id, topic)
			if err != nil {
				p = append(p, fmt.Sprintf("broker %d: %v", id, err))
			}
			for _, pr := range probs {
				p = append(p, pr.String())
			}
		}
		return nil
	})
	if err != nil {
		return []string{err.Error()}
	}
	return p
}

// sinceUnless is the time since t, or never when the wait for it failed.
func sinceUnless(t time.Time, err error) report.Duration {
	if err != nil {
		return report.Never()
	}
	return report.Reached(time.Since(t))
}

// errText is err's message as a check's problems: none for nil.
func errText(err error) []string {
	if err == nil {
		return nil
	}
	return []string{err.Error()}
}
