package suites

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/soak"
)

// The soak watches the suite's own process while it repeats faults.
const (
	soakEvery = 10 * time.Second
	// soakWarmup is the start of a soak that memory is not judged on (the
	// first stories fill caches and connection pools), and the window
	// each median is taken over; a soak shorter than 6 of them uses a
	// sixth of its length.
	soakWarmup = 10 * time.Minute
	// soakMaxGrowth bounds the median RSS of the last window against the
	// window after the warm-up.
	soakMaxGrowth = 0.10
	// soakFirstSlack goroutines may outlive the first story for good
	// (connection pools, caches made on first use); soakSlack more than
	// what the first left may outlive each later one for a while (a
	// connection about to close, a timer about to fire). A leak of one
	// story's load, timeline or resource sampler is dozens; a leak of one
	// goroutine a story passes soakSlack within a few stories.
	soakFirstSlack = 10
	soakSlack      = 5
	soakSettle     = time.Minute
	soakSettlePoll = time.Second
)

// writeHeap writes the suite's heap profile to path; a profile that cannot
// be written is said, and fails nothing.
func writeHeap(path string) {
	if err := soak.WriteHeapProfile(path); err != nil {
		By(fmt.Sprintf("no heap profile: %v", err))
		return
	}
	By("the suite's heap profile: " + path)
}

// soakFault is a fault a soak repeats, given its round's label (its
// topic is kafkachaos-<label>).
type soakFault struct {
	name  string
	story func(label string) story
}

// soakFaults are the soak's faults, taken in turn: the gate's kill and
// drain, a graceful delete, and the short pause and peers-only partition
// of `make test`.
func soakFaults() []soakFault {
	relabel := func(make func() story) func(string) story {
		return func(label string) story {
			st := make()
			st.Label = label
			return st
		}
	}
	return []soakFault{
		{"pod-kill", relabel(podKill)},
		{"pause-5s", func(l string) story { return pauseStory(l, followerOf(0), 5*time.Second) }},
		{"pod-delete", relabel(podDelete)},
		{"node-drain", relabel(nodeDrain)},
		{"partition-peers-only-10s", func(l string) story {
			return partitionStory(l, leaderOf(0), chaos.PartitionPeersOnly, 10*time.Second)
		}},
	}
}

var _ = Describe("Soak: the suite repeats its faults for timing.soak", Label("soak"), Serial, func() {
	It("keeps its own memory flat and its goroutines bounded, and loses no acknowledged record in any round", func(sctx SpecContext) {
		skipWithoutCluster(suite, "soak")
		d := suite.cfg.Timing.Soak.Duration
		ctx, cancel := context.WithTimeout(sctx, d+storyTimeout)
		defer cancel()
		window := min(soakWarmup, d/6)
		o := &outcome{Spec: CurrentSpecReport().FullText()}
		DeferCleanup(func() { AddReportEntry(reportEntryName, *o, ReportEntryVisibilityNever) })
		faults := soakFaults()
		var names []string
		for _, f := range faults {
			names = append(names, f.name)
		}
		o.Fault = fmt.Sprintf("soak of %s: %s in turn", d, strings.Join(names, ", "))

		before := runtime.NumGoroutine()
		By(fmt.Sprintf("sampling the suite's own RSS and goroutines every %s (%d goroutines before the first story)", soakEvery, before))
		rep := &soak.Report{Every: soakEvery, GoroutinesBefore: before}
		o.Soak = rep
		sampler := soak.Start(ctx, soakEvery)
		// Runs before the report entry's cleanup: a soak cut short still
		// has its curve.
		DeferCleanup(func() { rep.Samples, _ = sampler.Stop() })
		baseline, slack := before, soakFirstSlack

		var failedRounds, recordProblems, goroutineProblems []string
		var verified uint64
		start := time.Now()
		end := start.Add(d)
		// Heap profiles, at the first round's end past the warm-up and at
		// the end, show where memory grew (go tool pprof -diff_base).
		warmHeap, endHeap := filepath.Join(reportDir(), "soak-heap-warm.pprof"), filepath.Join(reportDir(), "soak-heap-end.pprof")
		warmProfiled := false
		rounds := 0
		for ; time.Now().Before(end); rounds++ {
			f := faults[rounds%len(faults)]
			st := f.story(fmt.Sprintf("soak-%d", rounds+1))
			st.Round = fmt.Sprintf("round %d: %s", rounds+1, f.name)
			By(fmt.Sprintf("%s, %s into the soak of %s", st.Round, time.Since(start).Round(time.Second), d))
			so := tell(ctx, suite, st)
			if failed := so.FailedChecks(); len(failed) > 0 {
				failedRounds = append(failedRounds, fmt.Sprintf("%s: %v", st.Round, failed))
			}
			if r := so.SteadyState; r != nil {
				verified += r.Records.Acked - r.Records.Lost
				if p := so.Problems(report.CheckRecords); len(p) > 0 {
					recordProblems = append(recordProblems, fmt.Sprintf("%s: %s", st.Round, strings.Join(p, "; ")))
				}
			}
			By("deleting the round's topic, so that Kafka does not grow by a topic a round")
			Expect(suite.WithKafka(func(cl *kafkaadmin.Client) error { return cl.DeleteTopic(ctx, "kafkachaos-"+st.Label) })).To(Succeed())
			n, err := soak.SettleGoroutines(ctx, baseline, slack, soakSettlePoll, soakSettle)
			rep.GoroutinesAfter = append(rep.GoroutinesAfter, n)
			By(fmt.Sprintf("the suite runs %d goroutines after %s (at most %d+%d)", n, st.Round, baseline, slack))
			if err != nil {
				goroutineProblems = append(goroutineProblems, fmt.Sprintf("%s: %v", st.Round, err))
			}
			// The baseline is the fewest seen after a round since the first:
			// a count that settled high once does not loosen the check.
			if rounds == 0 || n < baseline {
				baseline, slack = n, soakSlack
				rep.BaselineGoroutines = baseline
			}
			if !warmProfiled && time.Since(start) >= window {
				warmProfiled = true
				writeHeap(warmHeap)
			}
		}
		writeHeap(endHeap)

		samples, sampleErr := sampler.Stop()
		mem, memErr := soak.JudgeMemory(samples, window, window, soakMaxGrowth)
		rep.Memory = mem
		var memProblems []string
		for _, err := range []error{sampleErr, memErr} {
			if err != nil {
				memProblems = append(memProblems, err.Error())
			}
		}
		o.Add(report.CheckMemory, memProblems...)
		o.Add(report.CheckGoroutines, goroutineProblems...)
		o.Add(report.CheckRecords, recordProblems...)
		o.Observations = append(o.Observations,
			fmt.Sprintf("%d rounds in %s; %d acknowledged records verified", rounds, time.Since(start).Round(time.Second), verified),
			fmt.Sprintf("suite memory: %s (the warm-up and each window %s)", mem, window),
			fmt.Sprintf("suite goroutines: %d before the first story, after each story %v", before, rep.GoroutinesAfter))
		for _, ob := range o.Observations {
			By("observed: " + ob)
		}
		expectPassed(*o)
		Expect(failedRounds).To(BeEmpty(), "rounds whose checks failed (each has its row in the report)")
	})
})
