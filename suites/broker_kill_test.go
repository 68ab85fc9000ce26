package suites

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// The broker-kill story's timing, as in the Kafka-on-Kubernetes write-ups:
// 60 s of load at 2,000 records/s, the broker killed at 20 s and restarted
// at 30 s.
const (
	killRate        = 2000
	killBaseline    = 20 * time.Second
	killHold        = 10 * time.Second
	killTotal       = 60 * time.Second
	killMinAfter    = 15 * time.Second
	killSpecTimeout = 8 * time.Minute
	faultTimeout    = 2 * time.Minute
	runStopTimeout  = 3 * time.Minute
)

var _ = Describe("A broker process is killed under load", Label("broker-kill", "gate"), Serial, func() {
	It("loses no acknowledged record, and the broker rejoins with its ID and its data", func(ctx SpecContext) {
		const victim int32 = 1
		topic := "kafkachaos-broker-kill"

		By("recording broker 1's identity: node ID, log dir ID, cluster ID, process")
		before, err := identityOf(victim)
		Expect(err).NotTo(HaveOccurred())

		By(fmt.Sprintf("starting the steady state: %d records/s, acks=all, idempotent, RF 3, min ISR 2", killRate))
		h := steadystate.Hypothesis{
			All:    steadystate.Bounds{MaxUnavailable: 15 * time.Second},
			Phases: map[steadystate.Phase]steadystate.Bounds{steadystate.PhaseAfter: {MinThroughputRatio: 0.9}},
		}
		r, err := steadystate.New(steadystate.Config{
			Bootstrap:  tgt.kafka.Bootstrap(),
			Topic:      topic,
			Rate:       killRate,
			Hypothesis: &h,
		})
		Expect(err).NotTo(HaveOccurred())
		reports := make(chan runResult, 1)
		runDone := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(runDone)
			rep, err := r.Run(ctx)
			reports <- runResult{rep, err}
		}()
		// If the spec fails early, stop the load and wait for the run to
		// end, so nothing of it outlives the spec.
		DeferCleanup(func(ctx SpecContext) {
			r.Stop()
			select {
			case <-runDone:
			case <-ctx.Done():
			}
		}, NodeTimeout(runStopTimeout))
		start := time.Now()

		By(fmt.Sprintf("holding the baseline for %s", killBaseline))
		hold(ctx, killBaseline)

		fault := &chaos.ProcessKill{Nodes: tgt.kafka, ID: victim}
		By("injecting the fault: " + fault.Name())
		r.Mark(steadystate.PhaseFault)
		Expect(fault.Inject(ctx)).To(Succeed())
		DeferCleanup(fault.Recover, NodeTimeout(faultTimeout))
		killedAt := time.Now()

		By(fmt.Sprintf("holding the fault for %s", killHold))
		hold(ctx, killHold)

		By("restarting broker 1 with the same node ID and data dir")
		r.Mark(steadystate.PhaseRecovery)
		Expect(fault.Recover(ctx)).To(Succeed())
		restartedAt := time.Now()

		By("waiting until broker 1 is back in every ISR and the quorum is caught up")
		waitHealthy(ctx)
		healthyAt := time.Now()
		r.Mark(steadystate.PhaseAfter)

		By("running the after phase until the load has run its course")
		hold(ctx, max(killTotal-time.Since(start), killMinAfter))
		r.Stop()
		var res runResult
		Eventually(ctx, reports).WithTimeout(runStopTimeout).Should(Receive(&res), "the steady state did not finish its flush and drain")
		Expect(res.err).NotTo(HaveOccurred())
		rep := res.rep

		back, ok := rep.ThroughputBackAfter(restartedAt, 0.9)
		recovery := map[string]string{
			"restartToHealthy": healthyAt.Sub(restartedAt).Round(time.Millisecond).String(),
			"killToHealthy":    healthyAt.Sub(killedAt).Round(time.Millisecond).String(),
			"throughputBack":   "never",
		}
		if ok {
			recovery["throughputBack"] = back.String()
		}
		GinkgoWriter.Printf("%s\nunavailability: %s from %s; restart -> healthy %s; throughput back at baseline %s after restart\n",
			rep.SummaryLine, rep.Unavailable.Round(time.Millisecond), rep.UnavailableFrom.Format(time.TimeOnly),
			recovery["restartToHealthy"], recovery["throughputBack"])

		after, idErr := identityOf(victim)
		problems := identityProblems(before, after, idErr)
		recordOutcome(fault.Name(), rep, problems, recovery)

		By("checking the records: none lost, duplicated or reordered")
		Expect(rep.Records.Lost).To(BeZero(), "lost records, e.g. %+v", rep.Records.LostExamples)
		Expect(rep.Records.Duplicates).To(BeZero(), "duplicates, e.g. %+v", rep.Records.DuplicateExamples)
		Expect(rep.Records.Reordered).To(BeZero(), "reordered, e.g. %+v", rep.Records.ReorderExamples)
		Expect(rep.Records.Acked).To(BeNumerically(">", killRate*int(killTotal/time.Second)/2), "the load barely ran")

		By("checking the steady-state bounds in every phase")
		Expect(rep.Violations).To(BeEmpty())

		By("checking broker 1's identity: same node ID, same log dir, same cluster, new process")
		Expect(problems).To(BeEmpty())

		By("checking that broker 1 is registered and its log dir holds its partitions")
		Expect(logDirHoldsReplicas(ctx, victim, topic)).To(Succeed())
	}, SpecTimeout(killSpecTimeout))
})

type runResult struct {
	rep *steadystate.Report
	err error
}

// hold keeps a fault (or a phase) in place for d; it returns early when ctx
// ends.
func hold(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// recordOutcome attaches the spec's outcome for report.json.
func recordOutcome(fault string, rep *steadystate.Report, identity []string, recovery map[string]string) {
	AddReportEntry(reportEntryName, specOutcome{Fault: fault, Report: rep, Identity: identity, Recovery: recovery}, ReportEntryVisibilityNever)
}

// logDirHoldsReplicas checks with DescribeLogDirs that broker id is
// registered and holds every partition of topic that has it as a replica.
func logDirHoldsReplicas(ctx context.Context, id int32, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(tgt.kafka.Bootstrap()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	meta, err := adm.Metadata(ctx, topic)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	registered := false
	for _, b := range meta.Brokers {
		registered = registered || b.NodeID == id
	}
	if !registered {
		return fmt.Errorf("broker %d is not registered; registered: %v", id, meta.Brokers.NodeIDs())
	}
	var want []int32
	for _, p := range meta.Topics[topic].Partitions {
		for _, rep := range p.Replicas {
			if rep == id {
				want = append(want, p.Partition)
			}
		}
	}
	dirs, err := adm.DescribeBrokerLogDirs(ctx, id, nil)
	if err != nil {
		return fmt.Errorf("describe log dirs of broker %d: %w", id, err)
	}
	held := map[int32]bool{}
	for _, d := range dirs {
		if d.Err != nil {
			return fmt.Errorf("log dir %s of broker %d: %w", d.Dir, id, d.Err)
		}
		for _, p := range d.Topics[topic] {
			held[p.Partition] = true
		}
	}
	var missing []int32
	for _, p := range want {
		if !held[p] {
			missing = append(missing, p)
		}
	}
	if len(want) == 0 || len(missing) > 0 {
		return fmt.Errorf("broker %d should hold partitions %v of %s; its log dirs lack %v", id, want, topic, missing)
	}
	return nil
}
