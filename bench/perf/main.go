package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/localkafka"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Timeouts of the benchmark's steps.
const (
	clusterTimeout = 5 * time.Minute
	toolTimeout    = 15 * time.Minute
)

// warmupRecords is what our warm-up run sends before anything is measured.
const warmupRecords = 100_000

func main() {
	o, err := parseOptions(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "perf:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "perf:", err)
		os.Exit(1)
	}
}

// bench is one benchmark's cluster and tools.
type bench struct {
	o        options
	dist     kafkadist.Dist
	toolsLog string
	boot     []string
	rf       int16
	minISR   int
	// startupCPU is the CPU time of Kafka's tool sending one record: its
	// JVM's start-up, inside every run of it.
	startupCPU float64
}

func run(ctx context.Context, o options) error {
	dist, err := kafkadist.Find(o.version)
	if err != nil {
		return fmt.Errorf("find the Kafka %s jars (make kafka-dist fetches them): %w", o.version, err)
	}
	toolsLog := filepath.Join(os.TempDir(), fmt.Sprintf("kafkachaos-tools-log4j2-%d.properties", os.Getpid()))
	if err := os.WriteFile(toolsLog, []byte(kafkadist.ToolsLog4j2()), 0o644); err != nil {
		return fmt.Errorf("tools log config: %w", err)
	}
	defer os.Remove(toolsLog)

	fmt.Printf("starting a local %d-broker KRaft cluster...\n", o.brokers)
	k, err := localkafka.New(localkafka.WithVersion(o.version), localkafka.WithNodes(o.brokers))
	if err != nil {
		return fmt.Errorf("local cluster: %w", err)
	}
	defer k.Close()
	startCtx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	if err := k.Start(startCtx); err != nil {
		return fmt.Errorf("start the local cluster: %w", err)
	}
	if err := k.WaitHealthy(startCtx); err != nil {
		return fmt.Errorf("the local cluster did not become healthy: %w", err)
	}
	b := &bench{o: o, dist: dist, toolsLog: toolsLog, boot: k.Bootstrap()}
	b.rf, b.minISR = o.replication()
	if err := b.createTopics(ctx); err != nil {
		return err
	}
	smallest := slices.Min(o.recordSizes)

	fmt.Printf("warming up the brokers (%d records)...\n", min(o.records, warmupRecords))
	if _, _, err := b.ours(ctx, "perf-warmup", min(o.records, warmupRecords), smallest, steadystate.RateUnlimited); err != nil {
		return err
	}
	fmt.Println("kafka-producer-perf-test sending one record, for the JVM's start-up CPU...")
	startup, err := b.kafka(ctx, "perf-kafka-startup", 1, smallest, javaDefaults())
	if err != nil {
		return err
	}
	b.startupCPU = startup.CPU.Seconds

	res := Result{
		Schema: ResultSchema, Date: time.Now().UTC(), KafkaVersion: o.version, GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
		Brokers: o.brokers, Partitions: o.partitions, Replication: b.rf, MinInsyncReplicas: b.minISR,
		KafkaStartupCPUSeconds: startup.CPU.Seconds,
	}
	for _, size := range o.recordSizes {
		sr, err := b.compareAt(ctx, size)
		if err != nil {
			return err
		}
		res.Sizes = append(res.Sizes, sr)
	}

	fmt.Printf("EndToEndLatency: %d messages of %d bytes, acks=all...\n", o.e2eCount, smallest)
	eout, err := b.java(ctx, kafkadist.EndToEndLatencyClass,
		strings.Join(b.boot, ","), "perf-e2e-kafka", fmt.Sprint(o.e2eCount), "all", fmt.Sprint(smallest))
	if err != nil {
		return err
	}
	fmt.Printf("kafkachaos steadystate end-to-end: %d records at %d/s...\n", o.e2eCount, o.e2eRate)
	erep, _, err := b.ours(ctx, "perf-e2e-ours", int64(o.e2eCount), smallest, o.e2eRate)
	if err != nil {
		return err
	}
	e := erep.Latency[steadystate.EndToEnd.String()]
	res.E2ERecordSize, res.E2EOursRate, res.E2EKafkaCount = smallest, o.e2eRate, o.e2eCount
	res.E2EKafka = strings.TrimSpace(lastLineWith(eout.out, "Avg latency") + " " + lastLineWith(eout.out, "Percentiles"))
	res.E2EOurs = fmt.Sprintf("Avg latency: %.4f ms Percentiles: 50th = %d, 99th = %d, 99.9th = %d",
		e.Mean/1000, e.P50/1000, e.P99/1000, e.P999/1000)

	printResult(os.Stdout, res)
	path, err := writeResult(o.out, res)
	if err != nil {
		return err
	}
	fmt.Println("result:", path)
	return nil
}

// Modes of a comparison, in topic names.
const (
	modeIdentical = "identical"
	modeDefaults  = "defaults"
)

func topicName(size int, mode, client string) string {
	return fmt.Sprintf("perf-%d-%s-%s", size, mode, client)
}

// createTopics creates every topic of the benchmark up front, with the
// same settings.
func (b *bench) createTopics(ctx context.Context) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.boot...))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics := map[string]int32{"perf-warmup": b.o.partitions, "perf-kafka-startup": b.o.partitions, "perf-e2e-kafka": 1, "perf-e2e-ours": 1}
	for _, size := range b.o.recordSizes {
		for _, mode := range []string{modeIdentical, modeDefaults} {
			topics[topicName(size, mode, "kafka")] = b.o.partitions
			topics[topicName(size, mode, "ours")] = b.o.partitions
		}
	}
	minISR := fmt.Sprint(b.minISR)
	for name, partitions := range topics {
		resp, err := adm.CreateTopic(ctx, partitions, b.rf, map[string]*string{"min.insync.replicas": &minISR}, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("create topic %s: %w", name, err)
		}
	}
	return nil
}

// compareAt runs both comparisons at one record size. Who goes first
// alternates (identical: Kafka's tool, defaults: ours), so that neither
// always runs right after the other, on brokers still busy with its load.
func (b *bench) compareAt(ctx context.Context, size int) (SizeResult, error) {
	records := b.o.recordsAt(size)
	sr := SizeResult{RecordSize: size, Records: records}
	ours := oursSettings()

	fmt.Printf("\n%d-byte records, %d per run: identical settings, Kafka's tool first...\n", size, records)
	ki, err := b.kafka(ctx, topicName(size, modeIdentical, "kafka"), records, size, javaIdentical(ours))
	if err != nil {
		return sr, err
	}
	oi, err := b.oursRun(ctx, topicName(size, modeIdentical, "ours"), records, size, ours)
	if err != nil {
		return sr, err
	}
	sr.Identical = newComparison(ki, oi, b.startupCPU)

	fmt.Printf("%d-byte records: each with its own defaults, ours first...\n", size)
	od, err := b.oursRun(ctx, topicName(size, modeDefaults, "ours"), records, size, ours)
	if err != nil {
		return sr, err
	}
	kd, err := b.kafka(ctx, topicName(size, modeDefaults, "kafka"), records, size, javaDefaults())
	if err != nil {
		return sr, err
	}
	sr.Defaults = newComparison(kd, od, b.startupCPU)
	return sr, nil
}

// kafka runs ProducerPerformance with settings s and returns its run, with
// the CPU time of the whole JVM.
func (b *bench) kafka(ctx context.Context, topic string, records int64, size int, s ProducerSettings) (ClientRun, error) {
	args := []string{"--topic", topic, "--num-records", fmt.Sprint(records), "--throughput", "-1"}
	switch s.Payload {
	case PayloadRandomLetters:
		args = append(args, "--record-size", fmt.Sprint(size))
	case PayloadHeaderZerosFile:
		path, err := writePayloadFile(size)
		if err != nil {
			return ClientRun{}, err
		}
		defer os.Remove(path)
		args = append(args, "--payload-file", path)
	default:
		return ClientRun{}, fmt.Errorf("no way to give Kafka's tool payload %q", s.Payload)
	}
	// --producer-props takes every argument after it: it goes last.
	args = append(append(args, "--producer-props"), javaProps(strings.Join(b.boot, ","), s)...)
	fmt.Printf("  kafka-producer-perf-test: batch.size=%d linger.ms=%d compression=%s partitioner=%s\n",
		s.BatchBytes, s.LingerMs, s.Compression, s.Partitioner)
	out, err := b.java(ctx, kafkadist.ProducerPerfClass, args...)
	if err != nil {
		return ClientRun{}, err
	}
	line := lastLineWith(out.out, "records sent,")
	n, rate, err := parsePerfLine(line)
	if err != nil {
		return ClientRun{}, fmt.Errorf("%w; ProducerPerformance printed:\n%s", err, out.out)
	}
	if n != records {
		return ClientRun{}, fmt.Errorf("ProducerPerformance had %d of %d records acknowledged:\n%s", n, records, out.out)
	}
	fmt.Println("   ", line)
	return newClientRun(s, line, n, rate, out.cpu, 0), nil
}

// oursRun runs the steady state at an unlimited rate and returns its run.
func (b *bench) oursRun(ctx context.Context, topic string, records int64, size int, s ProducerSettings) (ClientRun, error) {
	fmt.Println("  kafkachaos steadystate")
	rep, cpu, err := b.ours(ctx, topic, records, size, steadystate.RateUnlimited)
	if err != nil {
		return ClientRun{}, err
	}
	if rep.Summary.Records != records {
		return ClientRun{}, fmt.Errorf("steadystate on %s had %d of %d records acknowledged: %s", topic, rep.Summary.Records, records, rep.SummaryLine)
	}
	fmt.Println("   ", rep.SummaryLine)
	return newClientRun(s, rep.SummaryLine, rep.Summary.Records, rep.Summary.RecordsPerSec, cpu, int64(rep.Records.Consumed)), nil
}

// ours runs the steady state on topic and returns its report, and the CPU
// time this process spent in the run. That is the producer's, and also the
// consumer's that reads every record back and the verifier's that checks
// it, which Kafka's tool does not do; and the Go runtime's (GC) for all
// three. A GC before the run leaves earlier runs' garbage out of it.
func (b *bench) ours(ctx context.Context, topic string, records int64, size, rate int) (*steadystate.Report, cpuTime, error) {
	r, err := steadystate.New(steadystate.Config{
		Bootstrap: b.boot, Topic: topic, Partitions: b.o.partitions, ReplicationFactor: b.rf, MinInsyncReplicas: b.minISR,
		NumRecords: records, Rate: rate, RecordSize: size,
	})
	if err != nil {
		return nil, cpuTime{}, fmt.Errorf("steadystate on %s: %w", topic, err)
	}
	runtime.GC()
	before, err := selfCPU()
	if err != nil {
		return nil, cpuTime{}, err
	}
	rep, err := r.Run(ctx)
	if err != nil {
		return nil, cpuTime{}, fmt.Errorf("steadystate on %s: %w", topic, err)
	}
	after, err := selfCPU()
	if err != nil {
		return nil, cpuTime{}, err
	}
	if !rep.Records.Clean() {
		return nil, cpuTime{}, fmt.Errorf("the verifier found anomalies on %s: %+v", topic, rep.Records)
	}
	return rep, after.sub(before), nil
}

// javaRun is what one of Kafka's tools printed and the CPU it used.
type javaRun struct {
	out string
	cpu cpuTime
}

// java runs one of Kafka's tools to its end.
func (b *bench) java(ctx context.Context, class string, args ...string) (javaRun, error) {
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-Xmx512m", "-cp", b.dist.Classpath(), "-Dlog4j2.configurationFile=" + b.toolsLog, class}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return javaRun{}, fmt.Errorf("%s: %w\n%s%s", class, err, out.String(), errb.String())
	}
	return javaRun{out: out.String(), cpu: childCPU(cmd.ProcessState)}, nil
}

// writePayloadFile writes the identical run's payload file for size and
// returns its path; the caller removes it.
func writePayloadFile(size int) (string, error) {
	f, err := os.CreateTemp("", fmt.Sprintf("kafkachaos-perf-payload-%d-*.txt", size))
	if err != nil {
		return "", fmt.Errorf("payload file: %w", err)
	}
	_, werr := f.Write(payloadFile(size, payloadCount, uint64(size)))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("payload file: %w", werr)
	}
	return f.Name(), nil
}
