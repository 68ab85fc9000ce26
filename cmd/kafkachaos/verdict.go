package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// printReport prints the summary line, the record verdict and every bound.
func printReport(w io.Writer, rep *steadystate.Report) {
	fmt.Fprintln(w, rep.SummaryLine)
	e2e := rep.Latency[steadystate.EndToEnd.String()]
	fmt.Fprintf(w, "end-to-end latency: %.2f ms avg, %d ms 50th, %d ms 99th, %d ms 99.9th, %.2f ms max\n",
		e2e.Mean/1000, e2e.P50/1000, e2e.P99/1000, e2e.P999/1000, float64(e2e.Max)/1000)
	rec := rep.Records
	fmt.Fprintf(w, "records: acked %d, consumed %d, lost %d, duplicates %d, reordered %d, inconsistent offsets %d, unacked-but-seen %d\n",
		rec.Acked, rec.Consumed, rec.Lost, rec.Duplicates, rec.Reordered, rec.InconsistentOffsets, rec.UnackedSeen)
	fmt.Fprintf(w, "longest unavailability: %s\n", rep.Unavailable.Round(time.Millisecond))
	for _, l := range rec.LostExamples {
		fmt.Fprintf(w, "  lost: partition %d producer %d seq %d..%d (%d records)\n", l.Partition, l.Producer, l.FirstSeq, l.LastSeq, l.Count)
	}
	for _, a := range rec.DuplicateExamples {
		fmt.Fprintf(w, "  duplicate: partition %d offset %d producer %d seq %d\n", a.Partition, a.Offset, a.Producer, a.Seq)
	}
	for _, a := range rec.ReorderExamples {
		fmt.Fprintf(w, "  reordered: partition %d offset %d producer %d seq %d after seq %d\n", a.Partition, a.Offset, a.Producer, a.Seq, a.PrevSeq)
	}
	for _, m := range rec.InconsistentOffsetExamples {
		fmt.Fprintf(w, "  inconsistent offset: %s\n", m)
	}
	printWorkloads(w, rep)
	printVerdicts(w, rep)
}

// printWorkloads prints the verdicts of the workloads beside the load: the
// application's consumer group, the transactions and the Java clients.
func printWorkloads(w io.Writer, rep *steadystate.Report) {
	if j := rep.Java; j != nil {
		printJava(w, *j)
	}
	if g := rep.Group; g != nil {
		fmt.Fprintf(w, "consumer group: acked %d, consumed %d, redelivered %d (allowed), resets %d, %d assignments, %d revocations\n",
			g.Acked, g.Consumed, g.Redelivered, g.Resets, g.Assignments, g.Revocations)
		for _, p := range g.Problems() {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	if t := rep.Transactions; t != nil {
		fmt.Fprintf(w, "transactions (transaction.version %d): begun %d, committed %d, aborted %d (%d not asked for), unknown %d; commit p99 %s, longest transaction %s; control read %d aborted records\n",
			t.TransactionVersion, t.Begun, t.Committed, t.Aborted, t.AbortedUnasked, t.Unknown, t.CommitP99.Round(time.Millisecond), t.LongestTxn.Round(time.Millisecond), t.ControlAbortedReads)
		for _, p := range t.Problems() {
			fmt.Fprintf(w, "  %s\n", p)
		}
		for _, x := range t.Witnesses {
			fmt.Fprintf(w, "  %s\n", x)
		}
		if c := t.Copy; c != nil {
			fmt.Fprintf(w, "copy job: %d inputs, %d copied\n", c.Inputs, c.Copied)
			for _, x := range c.Witnesses {
				fmt.Fprintf(w, "  %s\n", x)
			}
		}
	}
}

// printVerdicts prints every bound's verdict, as a table.
func printVerdicts(w io.Writer, rep *steadystate.Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERDICT\tPHASE\tBOUND\tLIMIT\tOBSERVED")
	for _, v := range rep.Verdicts {
		verdict := "pass"
		if !v.Passed {
			verdict = "FAIL"
		}
		phase := string(v.Phase)
		if phase == "" {
			phase = "run"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", verdict, phase, v.Bound, v.Limit, v.Observed)
	}
	for _, v := range rep.Violations {
		if v.Bound == "final drain" {
			fmt.Fprintf(tw, "FAIL\trun\t%s\t%s\t%s\n", v.Bound, v.Limit, v.Observed)
		}
	}
	tw.Flush()
	if rep.Passed() {
		fmt.Fprintln(w, "PASS: every bound held")
	} else {
		fmt.Fprintf(w, "FAIL: %d bound(s) violated\n", len(rep.Violations))
	}
}

// printJava prints the Java clients' figures and what their checks found.
func printJava(w io.Writer, j javaclients.Result) {
	if s := j.Share; s != nil {
		fmt.Fprintf(w, "Java share group: acked %d, delivered %d (%d deliveries, %d redelivered), accepted %d, %d acknowledgements failed, %d unseen\n",
			s.Acked, s.Delivered, s.Deliveries, s.Redelivered, s.Accepted, s.FailedAcks, s.Unseen)
	} else {
		g := j.Group
		fmt.Fprintf(w, "Java group: acked %d, consumed %d, redelivered %d (allowed), %d assignments, %d revocations\n",
			g.Acked, g.Consumed, g.Redelivered, g.Assignments, g.Revocations)
	}
	for _, p := range j.Problems() {
		fmt.Fprintf(w, "  %s\n", p)
	}
}
