package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// ResultSchema is the version of Result's layout; 1 was the single-size
// result without settings or CPU.
const ResultSchema = 2

// Result is what bench/results/<date>.json holds.
type Result struct {
	Schema            int       `json:"schema"`
	Date              time.Time `json:"date"`
	KafkaVersion      string    `json:"kafkaVersion"`
	GoVersion         string    `json:"goVersion"`
	CPUs              int       `json:"cpus"`
	Brokers           int       `json:"brokers"`
	Partitions        int32     `json:"partitions"`
	Replication       int16     `json:"replicationFactor"`
	MinInsyncReplicas int       `json:"minInsyncReplicas"`
	// KafkaStartupCPUSeconds is the CPU time of ProducerPerformance sending
	// one record: the JVM's start, the producer's set-up and its close. It
	// is inside every Kafka run's CPU; ours runs in this process and pays
	// no such start.
	KafkaStartupCPUSeconds float64 `json:"kafkaStartupCpuSeconds"`
	// Sizes has one entry per record size, in --record-sizes order.
	Sizes []SizeResult `json:"sizes"`

	E2ERecordSize int    `json:"e2eRecordSize"`
	E2EKafka      string `json:"kafkaEndToEndLatency"`
	E2EOurs       string `json:"kafkachaosEndToEndLatency"`
	E2EOursRate   int    `json:"kafkachaosE2ERate"`
	E2EKafkaCount int    `json:"kafkaE2EMessages"`
}

// SizeResult is the two comparisons at one record size.
type SizeResult struct {
	RecordSize int `json:"recordSize"`
	// Records is how many records each of the size's four runs sends.
	Records int64 `json:"records"`
	// Identical gives Kafka's tool ours settings: the ratio is the
	// clients'.
	Identical Comparison `json:"identical"`
	// Defaults runs each with its own defaults: the ratio is the clients'
	// and their defaults'.
	Defaults Comparison `json:"defaults"`
}

// Comparison is one run of each producer on the same brokers and topic
// settings.
type Comparison struct {
	Kafka ClientRun `json:"kafka"`
	Ours  ClientRun `json:"kafkachaos"`
	// Ratio is ours records/s over Kafka's.
	Ratio float64 `json:"ratio"`
	// CPURatio is ours records verified per CPU-second over Kafka's
	// records sent per CPU-second: above 1, ours produces, consumes and
	// checks a record on less CPU than Kafka's tool spends sending it.
	CPURatio float64 `json:"cpuRatio"`
	// CPURatioNetOfStartup is CPURatio with Kafka's run charged its CPU
	// less the JVM's start-up (KafkaStartupCPUSeconds): the fairer one for
	// runs of a few seconds, whose CPU the start-up is most of. 0 when the
	// run took no more CPU than the start-up.
	CPURatioNetOfStartup float64 `json:"cpuRatioNetOfStartup"`
}

// ClientRun is one producer's run.
type ClientRun struct {
	Settings ProducerSettings `json:"settings"`
	// Line is the run's kafka-producer-perf-test summary line.
	Line string `json:"line"`
	// Records is the records sent and acknowledged, per Line.
	Records       int64   `json:"records"`
	RecordsPerSec float64 `json:"recordsPerSec"`
	CPU           CPU     `json:"cpu"`
	// RecordsSentPerCPUSecond is Records over CPU.Seconds.
	RecordsSentPerCPUSecond float64 `json:"recordsSentPerCpuSecond"`
	// RecordsVerified is, for ours, the records its consumer read back and
	// its verifier checked; absent for Kafka's tool, which checks none.
	RecordsVerified int64 `json:"recordsVerified,omitempty"`
	// RecordsVerifiedPerCPUSecond is RecordsVerified over CPU.Seconds.
	RecordsVerifiedPerCPUSecond float64 `json:"recordsVerifiedPerCpuSecond,omitempty"`
}

// newClientRun fills in a run's CPU figures. verified is 0 for Kafka's
// tool.
func newClientRun(s ProducerSettings, line string, records int64, rate float64, cpu cpuTime, verified int64) ClientRun {
	c := newCPU(cpu, records)
	return ClientRun{
		Settings: s, Line: line, Records: records, RecordsPerSec: rate, CPU: c,
		RecordsSentPerCPUSecond:     ratio(float64(records), c.Seconds),
		RecordsVerified:             verified,
		RecordsVerifiedPerCPUSecond: ratio(float64(verified), c.Seconds),
	}
}

// newComparison returns the ratios of ours to Kafka's run, whose JVM took
// startupCPU seconds to start.
func newComparison(kafka, ours ClientRun, startupCPU float64) Comparison {
	var net float64
	if c := kafka.CPU.Seconds - startupCPU; c > 0 {
		net = ratio(ours.RecordsVerifiedPerCPUSecond, ratio(float64(kafka.Records), c))
	}
	return Comparison{
		Kafka: kafka, Ours: ours,
		Ratio:                ratio(ours.RecordsPerSec, kafka.RecordsPerSec),
		CPURatio:             ratio(ours.RecordsVerifiedPerCPUSecond, kafka.RecordsSentPerCPUSecond),
		CPURatioNetOfStartup: net,
	}
}

// perfLineRe matches ProducerPerformance's total line (and ours, which has
// its format).
var perfLineRe = regexp.MustCompile(`^(\d+) records sent, ([0-9.]+) records/sec`)

// parsePerfLine returns the records and records/s of a summary line.
func parsePerfLine(line string) (records int64, rate float64, err error) {
	m := perfLineRe.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return 0, 0, fmt.Errorf("not a producer summary line: %q", line)
	}
	if records, err = strconv.ParseInt(m[1], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("records in %q: %w", line, err)
	}
	if rate, err = strconv.ParseFloat(m[2], 64); err != nil {
		return 0, 0, fmt.Errorf("records/sec in %q: %w", line, err)
	}
	return records, rate, nil
}

// lastLineWith returns the last line of out that contains s, trimmed.
func lastLineWith(out, s string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

// writeResult writes r as dir/<date>.json and returns the path.
func writeResult(dir string, r Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("result dir: %w", err)
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode result: %w", err)
	}
	path := filepath.Join(dir, r.Date.Format("2006-01-02T150405Z")+".json")
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("write result: %w", err)
	}
	return path, nil
}

// printResult writes r's comparisons as a table, then the end-to-end
// latencies.
func printResult(w io.Writer, r Result) {
	fmt.Fprintf(w, "\n%d brokers, %d partitions, replication %d, min.insync.replicas %d; Kafka's tool starts on %.2f CPU-s\n",
		r.Brokers, r.Partitions, r.Replication, r.MinInsyncReplicas, r.KafkaStartupCPUSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tsettings\tKafka rec/s\tours rec/s\tratio\tKafka CPU-s/M rec\tours CPU-s/M rec\tKafka sent/CPU-s\tours verified/CPU-s\tCPU ratio\tnet of start-up\t")
	for _, s := range r.Sizes {
		for _, c := range []struct {
			mode string
			c    Comparison
		}{{modeIdentical, s.Identical}, {modeDefaults, s.Defaults}} {
			fmt.Fprintf(tw, "%d\t%s\t%.0f\t%.0f\t%.3f\t%.2f\t%.2f\t%.0f\t%.0f\t%.3f\t%.3f\t\n", s.RecordSize, c.mode,
				c.c.Kafka.RecordsPerSec, c.c.Ours.RecordsPerSec, c.c.Ratio,
				c.c.Kafka.CPU.SecondsPerMillionRecords, c.c.Ours.CPU.SecondsPerMillionRecords,
				c.c.Kafka.RecordsSentPerCPUSecond, c.c.Ours.RecordsVerifiedPerCPUSecond, c.c.CPURatio, c.c.CPURatioNetOfStartup)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\nEndToEndLatency (closed loop, %d B):      %s\nkafkachaos e2e (open loop, %d/s, %d B): %s\n",
		r.E2ERecordSize, r.E2EKafka, r.E2EOursRate, r.E2ERecordSize, r.E2EOurs)
}
