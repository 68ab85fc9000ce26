package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafkachaos/kafkachaos/report"
)

// newReportCmd renders a run report as one HTML page.
func newReportCmd() *cobra.Command {
	var output string
	var failures bool
	cmd := &cobra.Command{
		Use:   "report REPORT.json",
		Short: "Render a run report as one self-contained HTML page",
		Long: `report renders a report.json (reports/ of make chaos) as one HTML page: the
overall verdict, the run's environment, a summary table, and per spec its throughput and latency
timelines with the fault window shaded and the bounds drawn, then its
hypothesis verdicts, anomalies, checks and recovery times.

The page needs nothing else: no script, font or image from anywhere, so it
can be archived or mailed as it is. It goes to report.html next to the
input unless -o says otherwise; report prints the path it wrote.

With --failures it writes no page: it prints, as text, why each failed spec
failed (its failed checks, their limits, the failure reason), as make test
does after a failed suite.

Exit codes: 0 written (with --failures: printed, whatever the specs'
verdicts); 1 the page could not be written; 2 bad input.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s wants one report, got %d arguments", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			in := args[0]
			run, err := report.Read(in)
			if err != nil {
				return usageError{err}
			}
			if len(run.Specs) == 0 {
				return usageError{fmt.Errorf("%s holds no specs", in)}
			}
			if failures {
				_, err := report.WriteFailures(cmd.OutOrStdout(), run)
				return err
			}
			out := output
			if out == "" {
				out = filepath.Join(filepath.Dir(in), "report.html")
			}
			var page bytes.Buffer
			if err := report.WriteHTML(&page, run, report.HTMLOptions{Source: in, Generated: time.Now()}); err != nil {
				return err
			}
			if err := os.WriteFile(out, page.Bytes(), 0o644); err != nil {
				return fmt.Errorf("writing the page: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&failures, "failures", false, "print why each failed spec failed, as text, instead of writing the page")
	cmd.Flags().StringVarP(&output, "output", "o", "", "the HTML file to write (default report.html next to REPORT.json)")
	return cmd
}
