package report

import (
	"cmp"
	"fmt"
	"io"
	"strings"
)

// maxFailureLines caps the lines of one spec's failure reason, so a long
// Gomega dump cannot push the other specs' reasons out of a log's tail.
const maxFailureLines = 12

// WriteFailures writes, as plain text, why each failed spec of run failed:
// its failed checks with their problems, the bounds' limits, and the spec's
// failure reason. It returns the number of failed specs. CI logs keep only
// their tail, so make test prints this last, after Ginkgo's summary, which
// names a failed spec but not why.
func WriteFailures(w io.Writer, run Run) (int, error) {
	var b strings.Builder
	failed := 0
	for _, s := range run.Specs {
		if s.Passed {
			continue
		}
		failed++
		fmt.Fprintf(&b, "FAILED %s (fault %s, victims %s)\n", s.Spec, cmp.Or(s.Fault, "-"), joinIDs(s.Victims))
		for _, c := range s.Checks {
			for _, p := range c.Problems {
				fmt.Fprintf(&b, "  %s: %s\n", c.Name, p)
			}
		}
		for _, l := range s.Limits {
			fmt.Fprintf(&b, "  limit: %s\n", l)
		}
		if s.FailureReason != "" {
			lines := strings.Split(strings.TrimSpace(s.FailureReason), "\n")
			if len(lines) > maxFailureLines {
				lines = append(lines[:maxFailureLines], fmt.Sprintf("(%d more lines in the report)", len(lines)-maxFailureLines))
			}
			fmt.Fprintf(&b, "  failure: %s\n", strings.Join(lines, "\n    "))
		}
	}
	if failed == 0 {
		b.WriteString("no spec failed: the run failed outside them (a BeforeSuite, a timeout, a build error); see the log above\n")
	}
	_, err := io.WriteString(w, b.String())
	return failed, err
}
