package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/localkafka"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Result is what bench/results/<date>.json holds.
type Result struct {
	Date          time.Time `json:"date"`
	KafkaVersion  string    `json:"kafkaVersion"`
	GoVersion     string    `json:"goVersion"`
	CPUs          int       `json:"cpus"`
	Records       int64     `json:"records"`
	RecordSize    int       `json:"recordSize"`
	Acks          string    `json:"acks"`
	Partitions    int32     `json:"partitions"`
	Replication   int16     `json:"replicationFactor"`
	KafkaLine     string    `json:"kafkaProducerPerfLine"`
	OursLine      string    `json:"kafkachaosLine"`
	KafkaRate     float64   `json:"kafkaRecordsPerSec"`
	OursRate      float64   `json:"kafkachaosRecordsPerSec"`
	Ratio         float64   `json:"ratio"`
	E2EKafka      string    `json:"kafkaEndToEndLatency"`
	E2EOurs       string    `json:"kafkachaosEndToEndLatency"`
	E2EOursRate   int       `json:"kafkachaosE2ERate"`
	E2EKafkaCount int       `json:"kafkaE2EMessages"`
}

type options struct {
	records    int64
	recordSize int
	partitions int32
	e2eCount   int
	e2eRate    int
	out        string
	version    string
}

// Timeouts of the benchmark's steps.
const (
	clusterTimeout = 5 * time.Minute
	toolTimeout    = 15 * time.Minute
)

func main() {
	var o options
	flag.Int64Var(&o.records, "records", 1_000_000, "records for each producer benchmark")
	flag.IntVar(&o.recordSize, "record-size", 100, "record size in bytes")
	flag.Var(int32Flag{&o.partitions}, "partitions", "partitions of the benchmark topics (default 6)")
	flag.IntVar(&o.e2eCount, "e2e-messages", 2000, "messages for EndToEndLatency and for our low-rate e2e run")
	flag.IntVar(&o.e2eRate, "e2e-rate", 200, "records/s of our low-rate end-to-end run")
	flag.StringVar(&o.out, "out", "bench/results", "directory for the JSON result")
	flag.StringVar(&o.version, "kafka-version", kafkadist.DefaultVersion, "Kafka version of the fetched jars")
	flag.Parse()
	if o.partitions == 0 {
		o.partitions = 6
	}
	if o.records <= 0 || o.recordSize < steadystate.HeaderSize || o.e2eCount <= 0 || o.e2eRate <= 0 {
		fmt.Fprintf(os.Stderr, "perf: records, e2e-messages and e2e-rate must be > 0, record-size >= %d\n", steadystate.HeaderSize)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "perf:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	dist, err := kafkadist.Find(o.version)
	if err != nil {
		return err
	}
	toolsLog := filepath.Join(os.TempDir(), fmt.Sprintf("kafkachaos-tools-log4j2-%d.properties", os.Getpid()))
	if err := os.WriteFile(toolsLog, []byte(kafkadist.ToolsLog4j2()), 0o644); err != nil {
		return err
	}
	defer os.Remove(toolsLog)

	fmt.Println("starting a local 3-broker KRaft cluster...")
	k, err := localkafka.New(localkafka.WithVersion(o.version))
	if err != nil {
		return err
	}
	defer k.Close()
	startCtx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	if err := k.Start(startCtx); err != nil {
		return err
	}
	if err := k.WaitHealthy(startCtx); err != nil {
		return err
	}
	boot := strings.Join(k.Bootstrap(), ",")
	adm, closeAdm, err := admin(k.Bootstrap())
	if err != nil {
		return err
	}
	defer closeAdm()
	for _, t := range []struct {
		name       string
		partitions int32
	}{{"perf-warmup", o.partitions}, {"perf-kafka", o.partitions}, {"perf-ours", o.partitions}, {"perf-e2e-kafka", 1}, {"perf-e2e-ours", 1}} {
		if err := createTopic(ctx, adm, t.name, t.partitions); err != nil {
			return err
		}
	}

	fmt.Println("warming up the brokers (100,000 records)...")
	if _, err := ours(ctx, k.Bootstrap(), "perf-warmup", min(o.records, 100_000), steadystate.RateUnlimited, o); err != nil {
		return err
	}

	fmt.Printf("kafka-producer-perf-test: %d records of %d bytes, acks=all, throughput -1...\n", o.records, o.recordSize)
	kout, err := java(ctx, dist, toolsLog, kafkadist.ProducerPerfClass,
		"--topic", "perf-kafka", "--num-records", fmt.Sprint(o.records), "--record-size", fmt.Sprint(o.recordSize),
		"--throughput", "-1", "--producer-props", "bootstrap.servers="+boot, "acks=all", "enable.idempotence=true")
	if err != nil {
		return err
	}
	kafkaLine := lastLineWith(kout, "records sent,")
	if kafkaLine == "" {
		return fmt.Errorf("ProducerPerformance printed no summary line:\n%s", kout)
	}

	fmt.Println("kafkachaos steadystate: the same...")
	rep, err := ours(ctx, k.Bootstrap(), "perf-ours", o.records, steadystate.RateUnlimited, o)
	if err != nil {
		return err
	}

	fmt.Printf("EndToEndLatency: %d messages, acks=all...\n", o.e2eCount)
	eout, err := java(ctx, dist, toolsLog, kafkadist.EndToEndLatencyClass,
		boot, "perf-e2e-kafka", fmt.Sprint(o.e2eCount), "all", fmt.Sprint(o.recordSize))
	if err != nil {
		return err
	}
	kafkaE2E := strings.TrimSpace(lastLineWith(eout, "Avg latency") + " " + lastLineWith(eout, "Percentiles"))

	fmt.Printf("kafkachaos steadystate end-to-end: %d records at %d/s...\n", o.e2eCount, o.e2eRate)
	erep, err := ours(ctx, k.Bootstrap(), "perf-e2e-ours", int64(o.e2eCount), o.e2eRate, o)
	if err != nil {
		return err
	}
	e := erep.Latency[steadystate.EndToEnd.String()]
	oursE2E := fmt.Sprintf("Avg latency: %.4f ms Percentiles: 50th = %d, 99th = %d, 99.9th = %d",
		e.Mean/1000, e.P50/1000, e.P99/1000, e.P999/1000)

	kRate, err := perfRate(kafkaLine)
	if err != nil {
		return err
	}
	res := Result{
		Date: time.Now().UTC(), KafkaVersion: o.version, GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
		Records: o.records, RecordSize: o.recordSize, Acks: "all", Partitions: o.partitions, Replication: 3,
		KafkaLine: kafkaLine, OursLine: rep.SummaryLine, KafkaRate: kRate, OursRate: rep.Summary.RecordsPerSec,
		Ratio: rep.Summary.RecordsPerSec / kRate, E2EKafka: kafkaE2E, E2EOurs: oursE2E, E2EOursRate: o.e2eRate, E2EKafkaCount: o.e2eCount,
	}
	fmt.Printf("\nkafka-producer-perf-test: %s\nkafkachaos steadystate:   %s\nthroughput ratio (ours / Kafka's): %.3f\n", res.KafkaLine, res.OursLine, res.Ratio)
	fmt.Printf("\nEndToEndLatency (closed loop):     %s\nkafkachaos e2e (open loop, %d/s): %s\n", res.E2EKafka, o.e2eRate, res.E2EOurs)
	if !rep.Records.Clean() || !erep.Records.Clean() {
		return fmt.Errorf("the verifier found anomalies in a benchmark run: %+v / %+v", rep.Records, erep.Records)
	}
	return writeResult(o.out, res)
}

// ours runs the steady state on topic and returns its report.
func ours(ctx context.Context, boot []string, topic string, records int64, rate int, o options) (*steadystate.Report, error) {
	r, err := steadystate.New(steadystate.Config{
		Bootstrap: boot, Topic: topic, Partitions: o.partitions, NumRecords: records, Rate: rate, RecordSize: o.recordSize,
	})
	if err != nil {
		return nil, err
	}
	return r.Run(ctx)
}

// java runs one of Kafka's tools and returns its stdout.
func java(ctx context.Context, d kafkadist.Dist, log4j, class string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-Xmx512m", "-cp", d.Classpath(), "-Dlog4j2.configurationFile=" + log4j, class}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s%s", class, err, out.String(), errb.String())
	}
	return out.String(), nil
}

func lastLineWith(out, s string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

var perfRateRe = regexp.MustCompile(`records sent, ([0-9.]+) records/sec`)

func perfRate(line string) (float64, error) {
	m := perfRateRe.FindStringSubmatch(line)
	if m == nil {
		return 0, fmt.Errorf("no records/sec in %q", line)
	}
	return strconv.ParseFloat(m[1], 64)
}

func admin(boot []string) (*kadm.Client, func(), error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(boot...))
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

func createTopic(ctx context.Context, adm *kadm.Client, name string, partitions int32) error {
	minISR := "2"
	resp, err := adm.CreateTopic(ctx, partitions, 3, map[string]*string{"min.insync.replicas": &minISR}, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	return nil
}

func writeResult(dir string, r Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, r.Date.Format("2006-01-02T150405Z")+".json")
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Println("result:", path)
	return nil
}

type int32Flag struct{ p *int32 }

func (f int32Flag) String() string {
	if f.p == nil {
		return "0"
	}
	return fmt.Sprint(*f.p)
}

func (f int32Flag) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return errors.New("not an int32")
	}
	*f.p = int32(v)
	return nil
}
