package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kafkachaos/kafkachaos/localkafka"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Suite-level timeouts.
const (
	clusterStartTimeout = 5 * time.Minute
	clusterStopTimeout  = 2 * time.Minute
	healthTimeout       = 3 * time.Minute
	healthPoll          = time.Second
	logLinesOnFailure   = 80
)

// reportEntryName names the report entry that carries a spec's outcome.
const reportEntryName = "kafkachaos"

// target is what every spec runs against. It is set once in BeforeSuite and
// only read afterwards.
type target struct {
	kafka *localkafka.Cluster
}

var tgt target

func TestSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the suites run real Kafka brokers")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "kafkachaos resilience suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	By("starting three local KRaft brokers (JVM processes)")
	k, err := localkafka.New()
	Expect(err).NotTo(HaveOccurred(), "a local Kafka cluster needs the jars: run make kafka-dist")
	DeferCleanup(func(ctx SpecContext) {
		By("stopping the local brokers")
		Expect(k.Close()).To(Succeed())
	}, NodeTimeout(clusterStopTimeout))
	Expect(k.Start(ctx)).To(Succeed())
	By("waiting until every broker is registered and the quorum is caught up")
	Expect(k.WaitHealthy(ctx)).To(Succeed())
	tgt = target{kafka: k}
}, NodeTimeout(clusterStartTimeout))

// On failure, put what a person needs into the report: the brokers' logs.
var _ = JustAfterEach(func() {
	if !CurrentSpecReport().Failed() || tgt.kafka == nil {
		return
	}
	var b strings.Builder
	if err := tgt.kafka.DumpLogs(&b, logLinesOnFailure); err != nil {
		fmt.Fprintf(&b, "dump logs: %v\n", err)
	}
	AddReportEntry("broker logs", b.String(), ReportEntryVisibilityFailureOrVerbose)
})

// specOutcome is what each spec records for report.json.
type specOutcome struct {
	Spec          string              `json:"spec"`
	Fault         string              `json:"fault"`
	Passed        bool                `json:"passed"`
	Report        *steadystate.Report `json:"steadyState"`
	Identity      []string            `json:"identityProblems,omitempty"`
	Recovery      map[string]string   `json:"recovery"`
	FailureReason string              `json:"failure,omitempty"`
}

// ReportAfterSuite writes reports/report.json and prints the summary table.
var _ = ReportAfterSuite("kafkachaos summary", func(r Report) {
	var outcomes []specOutcome
	for _, sr := range r.SpecReports {
		for _, e := range sr.ReportEntries {
			if e.Name != reportEntryName {
				continue
			}
			// In-process the raw value is there; across parallel
			// processes only its JSON is.
			o, ok := e.Value.GetRawValue().(specOutcome)
			if !ok && json.Unmarshal([]byte(e.Value.AsJSON), &o) != nil {
				continue
			}
			o.Spec, o.Passed = sr.FullText(), !sr.Failed()
			if sr.Failed() {
				o.FailureReason = sr.FailureMessage()
			}
			outcomes = append(outcomes, o)
		}
	}
	if len(outcomes) == 0 {
		return
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERDICT\tFAULT\tRECORDS/S\tP99 ACK\tUNAVAILABLE\tLOST\tDUP\tREORDER\tRECOVERY")
	for _, o := range outcomes {
		v := "PASS"
		if !o.Passed {
			v = "FAIL"
		}
		rep := o.Report
		if rep == nil {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\t-\n", v, o.Fault)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f ms\t%s\t%d\t%d\t%d\t%s\n", v, o.Fault, rep.Summary.RecordsPerSec,
			float64(rep.Latency[steadystate.AckLatency.String()].P99)/1000, rep.Unavailable.Round(time.Millisecond),
			rep.Records.Lost, rep.Records.Duplicates, rep.Records.Reordered, o.Recovery["throughputBack"])
	}
	tw.Flush()
	fmt.Fprintf(GinkgoWriter, "\n%s", b.String())
	fmt.Fprintf(os.Stdout, "\nkafkachaos summary\n%s", b.String())

	dir := reportDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stdout, "reports: %v\n", err)
		return
	}
	raw, err := json.MarshalIndent(outcomes, "", "  ")
	if err == nil {
		path := filepath.Join(dir, "report.json")
		err = os.WriteFile(path, raw, 0o644)
		fmt.Fprintf(os.Stdout, "report: %s\n", path)
	}
	if err != nil {
		fmt.Fprintf(os.Stdout, "reports: %v\n", err)
	}
})

// reportDir is where report.json goes: $KAFKACHAOS_REPORT_DIR, or reports/
// at the repository's root.
func reportDir() string {
	if d := os.Getenv("KAFKACHAOS_REPORT_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "reports")
}

// waitHealthy waits until the cluster is healthy, failing with what was last
// observed.
func waitHealthy(ctx context.Context) {
	GinkgoHelper()
	Eventually(ctx, func(ctx context.Context) ([]string, error) {
		h, err := tgt.kafka.Health(ctx)
		return h.Problems(), err
	}).WithTimeout(healthTimeout).WithPolling(healthPoll).Should(BeEmpty(), "cluster health problems")
}
