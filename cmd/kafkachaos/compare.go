package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kafkachaos/kafkachaos/report"
)

// errRegressed is compare's verdict when a metric regressed (exit 1).
var errRegressed = errors.New("regression beyond the threshold")

func newCompareCmd() *cobra.Command {
	var threshold float64
	cmd := &cobra.Command{
		Use:   "compare A.json B.json",
		Short: "Compare two run reports side by side; exit 1 when B regressed from A",
		Long: `compare matches the specs of two report.json files (reports/ of make chaos;
any schema, old bare lists of specs too), says what each ran against (Kafka,
Kubernetes, kafkachaos), and prints, per spec, throughput, p50/p99 ack latency, p99 end-to-end latency,
unavailability and recovery times of run A and run B, with the relative
change. B regresses when a figure is worse than A's by more than --threshold
percent and by more than a noise floor (5 ms of latency, 1 s of time, 10
records/s). Use it as an upgrade gate: A before, B after.

Exit codes: 0 no regression; 1 a regression; 2 bad input.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError{fmt.Errorf("%s wants two reports, got %d arguments", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if threshold < 0 || threshold > 1000 {
				return usageError{fmt.Errorf("--threshold %g: want 0 to 1000 (percent)", threshold)}
			}
			var runs [2]report.Run
			for i, path := range args {
				run, err := report.Read(path)
				if err != nil {
					return usageError{err}
				}
				if len(run.Specs) == 0 {
					return usageError{fmt.Errorf("%s holds no specs", path)}
				}
				runs[i] = run
			}
			c := report.Compare(runs[0].Specs, runs[1].Specs, threshold/100)
			for i, name := range []string{"A", "B"} {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", name, args[i])
				if env := runs[i].Environment; env != nil {
					fmt.Fprintf(cmd.OutOrStdout(), "   %s\n", env)
				}
			}
			fmt.Fprintln(cmd.OutOrStdout())
			if err := c.Write(cmd.OutOrStdout()); err != nil {
				return err
			}
			if len(c.Rows) == 0 {
				return usageError{errors.New("the two reports have no spec in common")}
			}
			if rs := c.Regressions(); len(rs) > 0 {
				return fmt.Errorf("%d figure(s): %w", len(rs), errRegressed)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\nno regression beyond %g%%\n", threshold)
			return nil
		},
	}
	cmd.Flags().Float64Var(&threshold, "threshold", 20, "percent by which a figure may worsen from A to B")
	return cmd
}
