package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafkachaos/kafkachaos/loadagent"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/metrics"
	"github.com/kafkachaos/kafkachaos/steadystate/txn"
)

// progressEvery is how often the live progress view refreshes.
const progressEvery = time.Second

type steadyFlags struct {
	bootstrap      string
	topic          string
	partitions     int32
	rf             int16
	minISR         int
	acks           string
	idempotence    bool
	rate           int
	groupMembers   int
	groupProtocol  string
	txn            txn.Settings
	java           steadystate.JavaConfig
	recordSize     int
	numRecords     int64
	duration       time.Duration
	producers      int
	drainTimeout   time.Duration
	produceTimeout time.Duration
	requestTimeout time.Duration
	report         string
	runID          string
	sec            securityFlags
	agent          agentFlags
	metrics        metricsFlags

	maxP99Ack      time.Duration
	maxP99E2E      time.Duration
	maxUnavailable time.Duration
	minThroughput  float64
}

func newSteadyStateCmd(ctx context.Context, intr *interrupts, cancel context.CancelFunc) *cobra.Command {
	var f steadyFlags
	cmd := &cobra.Command{
		Use:   "steadystate --bootstrap host:port[,...]",
		Short: "Run the steady-state load and verifier against any Kafka cluster",
		Long: `Runs open-loop producers and a consumer group against a dedicated topic,
prints a live progress line, then kafka-producer-perf-test's summary line and
the verdict of each bound. Every acknowledged record must be consumed exactly
once, in order within its partition.

With --agent it runs as one of N in-cluster agents that share a run
(--run-id, required) and add up their load, as kafka-producer-perf-test run
from several client pods does; --rate and --producers are each agent's.
Agent i (--agent-index, else $` + loadagent.IndexEnv + `, else 0) uses producer
IDs [i*producers, (i+1)*producers), consumes every partition in a consumer
group of its own, and verifies its own producers' records. It starts the
load at once, runs until stopped unless --duration is given, and serves HTTP
on --listen:
  GET  /healthz  200 "ok" once producing, 503 before (or when the run failed)
  GET  /status   JSON: state (starting, running, stopping, done, failed),
                 runId, producerBase, producers, sent, acked, failed,
                 consumed, elapsedSeconds, error
  POST /stop     202: ends the load gracefully (flush, then drain); idempotent
  GET  /raw      200: the run's measurements (JSON of steadystate.Measurements,
                 gzip when asked), for steadystate.Merge; 409 with the status
                 while running, 500 when the run failed
  GET  /report   200: this agent's own report; 409 or 500 as /raw
  GET  /metrics  the run's Prometheus metrics, live and then final
The load also stops after --max-duration, or on SIGTERM/SIGINT, after which
the agent exits once the run has ended. Otherwise it keeps serving /raw after
the run until SIGTERM, and exits 0. An agent's exit code does not reflect its
verdict: the merged run is judged.

With --txn-producers N it also runs a transactional workload on the topic
named after --topic with "-txn": N transactional IDs, each transaction over
--txn-records partitions, every --txn-abort-every-th aborted on purpose, read
by a read_committed reader and by a read_uncommitted control. Aborted reads,
torn transactions, lost commits, duplicates, reads before the commit was sent
and a stuck last stable offset fail the bound "transaction anomalies"; so do a
run whose control saw no aborted record or that acknowledged no commit
(inconclusive), and a drain that did not read to the end. --txn-copiers M adds
a copy job: M group members copy --topic to its "-copy" sibling, one
transaction per poll with the input offsets committed in it; an input copied
twice or not at all fails the same bound.

With --metrics-addr HOST:PORT a standalone run serves its live Prometheus
metrics on http://HOST:PORT/metrics (records sent, acked, failed, consumed,
lost, duplicated, reordered; ack and end-to-end latency histograms; the
current unavailability; the phase), and with --metrics-linger keeps serving
the final values that long after the run.

Exit codes: 0 every bound held, 1 a bound was violated or the run failed,
2 bad flags (nothing was touched).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			cfg, err := f.config(fl.Changed("duration"))
			if err != nil {
				return err
			}
			if err := f.agent.apply(fl, &cfg, f.runID != ""); err != nil {
				return err
			}
			if err := f.metrics.check(fl, f.agent.enabled); err != nil {
				return err
			}
			if f.agent.enabled && (f.groupMembers > 0 || f.txn.Producers > 0 || f.java.Members > 0) {
				// A merge of several agents' reports keeps one group verdict.
				return usageError{fmt.Errorf("--group-members, --txn-producers and --java-members run in a standalone steady state, not with --agent")}
			}
			if f.java.Members > 0 {
				f.java.Stderr = cmd.ErrOrStderr()
				cfg.Java = f.java
			}
			if f.agent.enabled && !fl.Changed("duration") {
				cfg.Duration = 0 // until stopped, at most --max-duration
			}
			var m *metrics.Metrics
			if f.agent.enabled || f.metrics.addr != "" {
				m = metrics.New()
				cfg.Observer = m
			}
			r, err := steadystate.New(cfg)
			if err != nil {
				return err
			}
			if cfg.Java.Members > 0 {
				if _, err := exec.LookPath("java"); err != nil {
					return fmt.Errorf("--java-members needs Java 17 or later on PATH: %w", err)
				}
			}
			if !f.agent.enabled {
				if m != nil {
					stop, err := f.metrics.serve(ctx, m, intr, cmd.ErrOrStderr())
					if err != nil {
						return err
					}
					defer stop()
				}
				return runSteadyState(ctx, r, f.report, intr, cancel, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			ln, err := net.Listen("tcp", f.agent.listen)
			if err != nil {
				return fmt.Errorf("steady state agent: %w", err)
			}
			return runAgent(ctx, r, ln, m.Handler(), f.agent.maxDuration, f.report, intr, cancel, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.bootstrap, "bootstrap", "", "comma-separated host:port of seed brokers (required)")
	fl.StringVar(&f.topic, "topic", steadystate.DefaultTopic, "workload topic, created if missing")
	fl.Int32Var(&f.partitions, "partitions", steadystate.DefaultPartitions, "partitions when the topic is created")
	fl.Int16Var(&f.rf, "replication-factor", steadystate.DefaultReplicationFactor, "replication factor when the topic is created")
	fl.IntVar(&f.minISR, "min-insync-replicas", steadystate.DefaultMinInsyncReplicas, "min.insync.replicas when the topic is created")
	fl.StringVar(&f.acks, "acks", "all", "producer acks: all (-1), 1 or 0")
	fl.BoolVar(&f.idempotence, "enable-idempotence", true, "idempotent producer (requires acks=all)")
	fl.IntVar(&f.rate, "rate", steadystate.DefaultRate, "records/s across all producers, open-loop; -1 for as fast as possible")
	fl.IntVar(&f.recordSize, "record-size", steadystate.DefaultRecordSize, fmt.Sprintf("record value size in bytes (at least %d)", steadystate.HeaderSize))
	fl.Int64Var(&f.numRecords, "num-records", 0, "stop after this many records (0: no limit)")
	fl.DurationVar(&f.duration, "duration", 60*time.Second, "how long to run the load (0 with --num-records 0: until Ctrl-C)")
	fl.IntVar(&f.producers, "producers", 1, "producer clients")
	fl.DurationVar(&f.drainTimeout, "drain-timeout", steadystate.DefaultDrainTimeout, "how long the consumer may take to read every acked record at the end")
	fl.DurationVar(&f.produceTimeout, "delivery-timeout", steadystate.DefaultProduceTimeout, "how long a record may wait for its ack (delivery.timeout.ms)")
	fl.DurationVar(&f.requestTimeout, "request-timeout", 0, "how long a producer waits for a broker's answer before it drops the connection and retries (request.timeout.ms; 0: franz-go's 10s+10s)")
	fl.IntVar(&f.groupMembers, "group-members", 0, "also run an application's consumer group of this many members on the topic, polling and committing after processing, and check its history (0: none)")
	fl.StringVar(&f.groupProtocol, "group-protocol", steadystate.GroupProtocolClassic, "the group's protocol: classic, or consumer (KIP-848; Kafka 4.0+, advised from 4.3)")
	fl.IntVar(&f.txn.Producers, "txn-producers", 0, "also run a transactional workload of this many transactional IDs on the topic's -txn sibling, read at read_committed and read_uncommitted, and check its history (0: none)")
	fl.IntVar(&f.txn.Copiers, "txn-copiers", 0, "with --txn-producers, also run a copy job of this many group members: consume-transform-produce from --topic to its -copy sibling, offsets committed in each transaction, checked exactly once (0: none)")
	fl.IntVar(&f.txn.Rate, "txn-rate", txn.DefaultRate, "transactions/s across the transactional producers")
	fl.IntVar(&f.txn.Records, "txn-records", txn.DefaultRecords, "records per transaction, one per partition from a random one")
	fl.IntVar(&f.txn.AbortEvery, "txn-abort-every", txn.DefaultAbortEvery, "abort every Nth transaction of each producer on purpose (at least 2)")
	fl.DurationVar(&f.txn.Timeout, "txn-timeout", txn.DefaultTimeout, "the producers' transaction timeout (transaction.timeout.ms)")
	fl.IntVar(&f.java.Members, "java-members", 0, "also run Kafka's own Java clients as processes of this machine: a VerifiableProducer and a group of this many VerifiableConsumers (or VerifiableShareConsumers) on the topic's -java sibling, and check every record (0: none)")
	fl.StringVar(&f.java.Protocol, "java-protocol", steadystate.GroupProtocolClassic, "the Java group's protocol: classic, consumer (KIP-848) or share (a share group, KIP-932, Kafka 4.2 and later)")
	fl.IntVar(&f.java.Rate, "java-rate", steadystate.DefaultJavaRate, "the Java producer's records/s")
	fl.StringVar(&f.java.Libs, "kafka-libs", javaLibsDefault(), "with --java-members: a Kafka distribution's libs directory, with its tools jar (default: $KAFKA_HOME/libs)")
	fl.StringVar(&f.report, "report", "", "write the JSON run report to this file")
	fl.StringVar(&f.runID, "run-id", "", "the run ID in hex, as reports print it (default: random; required with --agent)")
	fl.DurationVar(&f.maxP99Ack, "max-p99-ack", 0, "bound: p99 send->ack latency in every phase (0: off)")
	fl.DurationVar(&f.maxP99E2E, "max-p99-e2e", 0, "bound: p99 end-to-end latency in every phase (0: off)")
	fl.DurationVar(&f.maxUnavailable, "max-unavailable", 0, "bound: longest time with no successful ack (0: off)")
	fl.Float64Var(&f.minThroughput, "min-throughput", 0, "bound: least acked records/s in every phase (0: off)")
	f.sec.register(fl)
	f.agent.register(fl)
	f.metrics.register(fl)
	return cmd
}

// config turns the flags into a steadystate.Config.
func (f *steadyFlags) config(durationGiven bool) (steadystate.Config, error) {
	// Zero would silently mean "the default" in steadystate.Config.
	switch {
	case f.partitions < 1:
		return steadystate.Config{}, usageError{fmt.Errorf("--partitions %d: need at least 1", f.partitions)}
	case f.rf < 1:
		return steadystate.Config{}, usageError{fmt.Errorf("--replication-factor %d: need at least 1", f.rf)}
	case f.minISR < 1:
		return steadystate.Config{}, usageError{fmt.Errorf("--min-insync-replicas %d: need at least 1", f.minISR)}
	case f.producers < 1:
		return steadystate.Config{}, usageError{fmt.Errorf("--producers %d: need at least 1", f.producers)}
	case f.recordSize < steadystate.HeaderSize:
		return steadystate.Config{}, usageError{fmt.Errorf("--record-size %d is too small to carry the %d-byte header", f.recordSize, steadystate.HeaderSize)}
	case f.drainTimeout <= 0 || f.produceTimeout <= 0:
		return steadystate.Config{}, usageError{fmt.Errorf("--drain-timeout and --delivery-timeout must be positive")}
	case f.groupMembers < 0:
		return steadystate.Config{}, usageError{fmt.Errorf("--group-members %d: need 0 or more", f.groupMembers)}
	case f.groupProtocol != steadystate.GroupProtocolClassic && f.groupProtocol != steadystate.GroupProtocolConsumer:
		return steadystate.Config{}, usageError{fmt.Errorf("--group-protocol %q: want %s or %s", f.groupProtocol, steadystate.GroupProtocolClassic, steadystate.GroupProtocolConsumer)}
	}
	acks, err := steadystate.ParseAcks(f.acks)
	if err != nil {
		return steadystate.Config{}, err
	}
	var boot []string
	for _, b := range strings.Split(f.bootstrap, ",") {
		if b = strings.TrimSpace(b); b != "" {
			boot = append(boot, b)
		}
	}
	h := steadystate.DefaultHypothesis()
	h.All = steadystate.Bounds{
		MinThroughput:  f.minThroughput,
		MaxP99Ack:      f.maxP99Ack,
		MaxP99E2E:      f.maxP99E2E,
		MaxUnavailable: f.maxUnavailable,
	}
	cfg := steadystate.Config{
		Bootstrap:         boot,
		Topic:             f.topic,
		Partitions:        f.partitions,
		ReplicationFactor: f.rf,
		MinInsyncReplicas: f.minISR,
		Acks:              acks,
		NoIdempotence:     !f.idempotence,
		Rate:              f.rate,
		RecordSize:        f.recordSize,
		Producers:         f.producers,
		Duration:          f.duration,
		NumRecords:        f.numRecords,
		DrainTimeout:      f.drainTimeout,
		ProduceTimeout:    f.produceTimeout,
		RequestTimeout:    f.requestTimeout,
		Hypothesis:        &h,
		Group:             steadystate.GroupConfig{Members: f.groupMembers, Protocol: f.groupProtocol},
	}
	if f.txn.Producers != 0 || f.txn.Copiers != 0 {
		if err := f.txn.Validate(); err != nil {
			return steadystate.Config{}, usageError{fmt.Errorf("--txn-*: %w", err)}
		}
		cfg.Transactions = f.txn
	}
	if f.runID != "" {
		if cfg.RunID, err = parseRunID(f.runID); err != nil {
			return steadystate.Config{}, err
		}
	}
	if f.numRecords > 0 && !durationGiven {
		cfg.Duration = 0 // --num-records alone runs until the count, as the Kafka tool does
	}
	if err := f.sec.apply(&cfg); err != nil {
		return steadystate.Config{}, err
	}
	return cfg, nil
}

// javaLibsDefault is $KAFKA_HOME/libs, where a Kafka distribution keeps
// its jars, or empty.
func javaLibsDefault() string {
	if home := os.Getenv("KAFKA_HOME"); home != "" {
		return filepath.Join(home, "libs")
	}
	return ""
}

// runSteadyState runs r with a live progress view and prints the outcome.
func runSteadyState(ctx context.Context, r *steadystate.Runner, reportPath string, intr *interrupts, cancel context.CancelFunc, stdout, stderr io.Writer) error {
	cfg := r.Config()
	fmt.Fprintf(stderr, "steady state: topic %s, %s, %d-byte records, acks=%s, idempotent=%t, %d producer(s); Ctrl-C ends the load gracefully, twice aborts\n",
		cfg.Topic, rateText(cfg.Rate), cfg.RecordSize, cfg.Acks, !cfg.NoIdempotence, cfg.Producers)

	var interrupted atomic.Int32
	intr.set(func() {
		if interrupted.Add(1) == 1 {
			fmt.Fprintln(stderr, "\ninterrupted: stopping the load, flushing and draining (Ctrl-C again to abort)")
			r.Stop()
			return
		}
		cancel()
	})
	done := make(chan struct{})
	progDone := make(chan struct{})
	go func() {
		defer close(progDone)
		showProgress(r, stderr, done)
	}()

	rep, runErr := r.Run(ctx)
	close(done)
	<-progDone
	if rep == nil {
		return fmt.Errorf("steady state: %w", runErr)
	}
	printReport(stdout, rep)
	if reportPath != "" {
		if err := writeJSON(reportPath, rep); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "report: %s\n", reportPath)
	}
	if runErr != nil {
		return fmt.Errorf("steady state: %w", runErr)
	}
	if !rep.Passed() {
		return errVerdictFailed
	}
	return nil
}

func rateText(rate int) string {
	if rate == steadystate.RateUnlimited {
		return "unlimited rate"
	}
	return fmt.Sprintf("%d records/s", rate)
}

// showProgress prints a live line until done is closed: redrawn in place on a
// terminal, one line every ten seconds otherwise (CI logs).
func showProgress(r *steadystate.Runner, w io.Writer, done <-chan struct{}) {
	tty := isTerminal(w)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	var last steadystate.Progress
	for i := 1; ; i++ {
		select {
		case <-done:
			if tty {
				fmt.Fprintln(w)
			}
			return
		case <-tick.C:
		}
		p := r.Progress()
		line := fmt.Sprintf("%6.0fs  sent %d  acked %d (%d/s)  failed %d  consumed %d  lag %d",
			p.Elapsed.Seconds(), p.Sent, p.Acked, p.Acked-last.Acked, p.Failed, p.Consumed, p.Acked-p.Consumed)
		last = p
		switch {
		case tty:
			fmt.Fprintf(w, "\r%-100s", line)
		case i%10 == 0:
			fmt.Fprintln(w, line)
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func writeJSON(path string, v any) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
