package suites

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// reportEntryName names the report entry that carries a spec's outcome.
const reportEntryName = "kafkachaos"

// ReportAfterSuite writes reports/report.json and prints the summary table.
var _ = ReportAfterSuite("kafkachaos summary", func(r Report) {
	if r.SuiteConfig.DryRun {
		// Ginkgo's dry run ran no spec: there is nothing to report, only
		// the versions to fetch, when asked.
		if path := flagsIn.versionsFile; path != "" {
			if err := writeVersionsFile(path, r); err != nil {
				Fail(fmt.Sprintf("versions: %v", err))
			}
		}
		return
	}
	outcomes := []outcome{}
	var environment *report.Environment // BeforeSuite's
	for _, sr := range r.SpecReports {
		var entries []outcome
		for _, e := range sr.ReportEntries {
			switch e.Name {
			case reportEntryName:
				if o, ok := entryValue[outcome](e); ok {
					entries = append(entries, o)
				}
			case environmentEntryName:
				if env, ok := entryValue[report.Environment](e); ok {
					environment = &env
				}
			}
		}
		for i := range entries {
			o := &entries[i]
			if o.Spec == "" {
				o.Spec = sr.FullText()
			}
			// A story passes on its own checks; the spec's failure (an
			// assertion outside the checks, an interrupt) belongs to
			// its last story. A negative story passes when the spec does.
			last := i == len(entries)-1
			o.Passed = len(o.FailedChecks()) == 0 && !(last && sr.Failed())
			if o.ExpectFailures {
				o.Passed = !sr.Failed()
			}
			if last && sr.Failed() {
				o.FailureReason = sr.FailureMessage()
			}
		}
		outcomes = append(outcomes, entries...)
	}
	// Always written, so a run with no story never leaves an older
	// report.json behind for compare to read.
	if len(outcomes) > 0 {
		table := summaryTable(outcomes)
		fmt.Fprintf(GinkgoWriter, "\n%s", table)
		fmt.Fprintf(os.Stdout, "\nkafkachaos summary\n%s", table)
	}
	dir := reportDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stdout, "reports: %v\n", err)
		return
	}
	path := filepath.Join(dir, "report.json")
	if err := report.Write(path, report.Run{Environment: environment, Specs: outcomes}); err != nil {
		fmt.Fprintf(os.Stdout, "reports: %v\n", err)
		return
	}
	fmt.Fprintf(os.Stdout, "report: %s\n", path)
})

// entryValue reads the value of a report entry: in-process the raw value
// is there; across parallel processes only its JSON is.
func entryValue[T any](e types.ReportEntry) (T, bool) {
	if v, ok := e.Value.GetRawValue().(T); ok {
		return v, true
	}
	var v T
	return v, json.Unmarshal([]byte(e.Value.AsJSON), &v) == nil
}

// summaryTable is one line per spec: verdict, fault, load, latency,
// unavailability, records, recovery, and the checks that failed.
func summaryTable(outcomes []outcome) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERDICT\tFAULT\tRECORDS/S\tP99 ACK\tUNAVAILABLE\tWORST PARTITION\tLOST\tDUP\tREORDER\tHEALTHY AFTER\tTHROUGHPUT BACK\tFAILED CHECKS")
	for _, o := range outcomes {
		v := o.Verdict()
		var failed []string
		for _, c := range o.FailedChecks() {
			failed = append(failed, string(c))
		}
		rep := o.SteadyState
		if rep == nil {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n", v, o.Fault, strings.Join(failed, "; "))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f ms\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", v, o.Fault, rep.Summary.RecordsPerSec,
			float64(rep.Latency[steadystate.AckLatency.String()].P99)/1000, rep.Unavailable.Round(time.Millisecond), rep.WorstPartition(),
			rep.Records.Lost, rep.Records.Duplicates, rep.Records.Reordered, o.Recovery.ToHealthy, o.Recovery.ThroughputBack,
			strings.Join(failed, "; "))
	}
	tw.Flush()
	return b.String()
}

// reportDir is where report.json goes: $KAFKACHAOS_REPORT_DIR, or reports/
// at the repository's root.
func reportDir() string {
	if d := os.Getenv("KAFKACHAOS_REPORT_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "reports")
}
