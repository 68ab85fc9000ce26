package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/resources"
	"github.com/kafkachaos/kafkachaos/scenario"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// The scaling runs of the Kafka-on-Kubernetes write-up this suite
// automates: load from 3, 5 and 7 agents, each as fast as it can, against
// the brokers there are, then against two brokers more once the topic's
// partitions are spread over them. Every load checks its records.
var (
	scalingAgents = []int{3, 5, 7}
	scalingAdded  = 2 // brokers added
)

// How long each measurement holds after its warm-up.
const scalingHold = 20 * time.Second

// scalingRow is one measurement: agents against brokers.
type scalingRow struct {
	brokers, agents int
	recordsSec      float64 // acked, over the measured phase
	mbSec           float64
	p99AckMs        float64
	// CPU in cores over the measured phase: Kafka's pods, the agents.
	kafkaCPU, agentCPU float64
	cpuProblem         string              // why the CPU figures are missing
	records            steadystate.Records // of the whole load
	problems           []string            // what the records check found
	summary            string              // the merged kafka-producer-perf-test line of the whole load
}

var _ = Describe("Throughput against more agents and more brokers", Label("scaling"), Serial, func() {
	It("measures 3, 5 and 7 agents against the brokers, spreads the topic over two brokers more, measures again, and loses no record", func(ctx SpecContext) {
		skipWithoutCluster(suite, "scaling")
		e := suite
		pods := brokersApartFromControllers(ctx, e)
		const topic = "kafkachaos-scaling"
		var rows []scalingRow
		measureAll := func(nBrokers int) {
			for _, n := range scalingAgents {
				rows = append(rows, measureThroughput(ctx, e, topic, nBrokers, n))
			}
		}
		By(fmt.Sprintf("measuring against the %d brokers", len(pods)))
		measureAll(len(pods))

		sc := &chaos.Scale{Scope: e.FaultScope(), StatefulSet: e.cfg.Target.StatefulSet, Replicas: int32(len(pods) + scalingAdded),
			Kafka: e.Mover(), Topics: []string{topic}, Throttle: reassignThrottle}
		var added []brokers.Server
		By("scaling out: " + sc.Name())
		Expect(sc.Inject(ctx)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			By("emptying " + topic + ", then moving its partitions back and scaling in: " + sc.Name())
			Expect(e.WithKafka(func(cl *kafkaadmin.Client) error { return cl.Truncate(ctx, topic) })).To(Succeed())
			Expect(sc.Recover(ctx)).To(Succeed())
			for i := range scalingAdded {
				pod := fmt.Sprintf("%s-%d", e.cfg.Target.StatefulSet, len(pods)+i)
				id := int32(-1)
				for _, b := range added {
					if b.Pod == pod {
						id = b.ID
					}
				}
				Expect(removeAdded(ctx, e, pod, id)).To(Succeed())
			}
		}, NodeTimeout(faultRecoverTime+2*podBackTimeout))
		ids := scenario.BrokerIDs(pods)
		for i := range scalingAdded {
			pod := fmt.Sprintf("%s-%d", e.cfg.Target.StatefulSet, len(pods)+i)
			By("waiting until the new broker " + pod + " is Ready and registered")
			nb, err := waitAdded(ctx, e, pod)
			Expect(err).NotTo(HaveOccurred())
			added = append(added, nb)
			ids = append(ids, nb.ID)
		}
		Expect(e.WaitHealthy(ctx, ids)).To(Succeed())

		By(fmt.Sprintf("spreading %s over brokers %v under the suite's own load (%d records/s, checked)", topic, ids, e.cfg.SteadyState.Rate))
		Expect(e.WithKafka(func(cl *kafkaadmin.Client) error { return cl.Truncate(ctx, topic) })).To(Succeed())
		l, err := scenario.StartSteadyState(ctx, e.Env, topic, scenario.Shape{Round: "/spread"})
		skipOn(err)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.WarmUp(ctx, e.cfg.Timing.Warmup.Duration)).To(Succeed())
		l.Mark(steadystate.PhaseFault)
		rctx, cancel := context.WithTimeout(ctx, reassignTimeout)
		moved, err := sc.Spread(rctx, ids)
		cancel()
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Finish(ctx, steadystate.Hypothesis{})).To(Succeed())
		rep := l.Report()
		Expect(scenario.RecordProblems(rep, float64(e.cfg.SteadyState.Rate)*rep.LoadEnd.Sub(rep.Start).Seconds())).To(BeEmpty(), "records of the load during the spread (%s)", rep.SummaryLine)
		GinkgoWriter.Printf("spread %d partitions: %s; load meanwhile: %s; longest stall %s\n", moved.Partitions(), moved, rep.SummaryLine, rep.Unavailable)
		for _, b := range added {
			Expect(movedProblems(moved, b.ID)).To(Succeed())
		}

		By(fmt.Sprintf("measuring against the %d brokers", len(ids)))
		measureAll(len(ids))

		table := scalingTable(rows)
		GinkgoWriter.Println(table)
		AddReportEntry("scaling", table)
		if d := reportDir(); d != "" {
			Expect(os.MkdirAll(d, 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(d, "scaling.md"), []byte(table), 0o644)).To(Succeed())
		}
		for _, r := range rows {
			Expect(r.problems).To(BeEmpty(), "records of %d agents against %d brokers", r.agents, r.brokers)
		}
	}, SpecTimeout(storyTimeout+reassignTimeout))
})

// measureThroughput runs n agents, each as fast as it can, on topic
// (emptied first, so each load's consumers read only its records), and
// returns what the measured phase after the warm-up saw.
func measureThroughput(ctx context.Context, e *env, topic string, nBrokers, n int) scalingRow {
	GinkgoHelper()
	By(fmt.Sprintf("%d agents against %d brokers, as fast as they can, for %s after the warm-up", n, nBrokers, scalingHold))
	Expect(e.WithKafka(func(cl *kafkaadmin.Client) error { return cl.Truncate(ctx, topic) })).To(Succeed())
	l, err := scenario.StartSteadyState(ctx, e.Env, topic, scenario.Shape{Agents: n, Unlimited: true, Round: fmt.Sprintf("/%db%da", nBrokers, n)})
	skipOn(err)
	Expect(err).NotTo(HaveOccurred())
	Expect(l.WarmUp(ctx, e.cfg.Timing.Warmup.Duration)).To(Succeed())
	l.Mark(steadystate.PhaseBaseline)
	stop := e.SampleResources(ctx)
	scenario.Hold(ctx, scalingHold)
	usage := stop()
	Expect(l.Finish(ctx, steadystate.Hypothesis{})).To(Succeed())
	rep := l.Report()
	// As fast as they can: there is no schedule to expect a count from.
	row := scalingRow{brokers: nBrokers, agents: n, records: rep.Records, summary: rep.SummaryLine, problems: scenario.RecordProblems(rep, 0)}
	if rep.Records.Acked == 0 {
		row.problems = append(row.problems, "no record acknowledged")
	}
	row.kafkaCPU, row.agentCPU, row.cpuProblem = cpuSplit(usage)
	for _, ps := range rep.Phases {
		if ps.Phase == steadystate.PhaseBaseline && ps.Seconds > 0 {
			row.recordsSec = ps.Throughput
			row.mbSec = ps.Throughput * float64(rep.Record) / (1 << 20)
			row.p99AckMs = float64(ps.Ack.P99) / 1000
		}
	}
	GinkgoWriter.Printf("%d agents, %d brokers: %.0f records/s, %.2f MB/s, p99 ack %.1f ms, CPU %.2f cores Kafka + %.2f agents%s; whole load: %s\n",
		n, nBrokers, row.recordsSec, row.mbSec, row.p99AckMs, row.kafkaCPU, row.agentCPU, row.cpuProblem, rep.SummaryLine)
	return row
}

// cpuSplit is the cores the Kafka pods and the agents used over u's
// window, and u's problem, if any.
func cpuSplit(u resources.Usage) (kafka, agents float64, problem string) {
	w := u.To.Sub(u.From).Seconds()
	if w <= 0 {
		return 0, 0, " (no CPU window)"
	}
	for _, p := range u.Pods {
		if strings.HasPrefix(p.Pod, "kafkachaos-agent-") {
			agents += p.CPUSeconds / w
		} else {
			kafka += p.CPUSeconds / w
		}
	}
	if u.Problem != "" {
		problem = " (" + u.Problem + ")"
	}
	return kafka, agents, problem
}

// scalingTable is the rows as a Markdown table.
func scalingTable(rows []scalingRow) string {
	var b strings.Builder
	b.WriteString("| brokers | agents | records/s | MB/s | p99 ack (ms) | CPU Kafka (cores) | CPU agents (cores) | acked | lost | dup | reordered |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %d | %.0f | %.2f | %.1f | %.2f | %.2f%s | %d | %d | %d | %d |\n",
			r.brokers, r.agents, r.recordsSec, r.mbSec, r.p99AckMs, r.kafkaCPU, r.agentCPU, r.cpuProblem,
			r.records.Acked, r.records.Lost, r.records.Duplicates, r.records.Reordered)
	}
	b.WriteString("\nThe merged kafka-producer-perf-test line of each whole load (warm-up and drain included):\n\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "- %d brokers, %d agents: `%s`\n", r.brokers, r.agents, r.summary)
	}
	return b.String()
}
