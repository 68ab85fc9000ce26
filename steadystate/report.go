package steadystate

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// Report is the outcome of one run. It is JSON-serialisable.
type Report struct {
	RunID      string    `json:"runId"`
	Topic      string    `json:"topic"`
	Start      time.Time `json:"start"`
	LoadEnd    time.Time `json:"loadEnd"`
	End        time.Time `json:"end"`
	Rate       int       `json:"rate"`
	Record     int       `json:"recordSize"`
	Producers  int       `json:"producers"`
	Acks       Acks      `json:"acks"`
	Idempotent bool      `json:"idempotent"`

	Summary     Summary                 `json:"summary"`
	SummaryLine string                  `json:"summaryLine"`
	Latency     map[string]LatencyStats `json:"latency"`
	Records     Records                 `json:"records"`
	// Group is the verdict on the application's consumer group, when the
	// run had one.
	Group *groupcheck.Result `json:"group,omitempty"`
	// Transactions is the verdict on the transactional workload, when the
	// run had one.
	Transactions *txncheck.Result `json:"transactions,omitempty"`
	// Java is the verdict on Kafka's own Java clients beside the load,
	// when the run had them (Config.Java).
	Java   *javaclients.Result `json:"java,omitempty"`
	Errors map[string]int64    `json:"errors,omitempty"`

	// Unavailable is the longest time with no successful ack, from
	// UnavailableFrom.
	Unavailable     time.Duration `json:"unavailable"`
	UnavailableFrom time.Time     `json:"unavailableFrom"`
	// Partitions is each partition's own longest time with no ack, in
	// partition order: a fault that stalls some partitions and not others
	// shows here, where Unavailable only sees the run-wide stall.
	Partitions []PartitionStall `json:"partitions,omitempty"`

	Marks      []Mark       `json:"marks"`
	Phases     []PhaseStats `json:"phases"`
	Series     []Second     `json:"series"`
	Verdicts   []Verdict    `json:"verdicts"`
	Violations []Violation  `json:"violations,omitempty"`
}

// Passed reports whether every bound held.
func (r *Report) Passed() bool { return len(r.Violations) == 0 }

// Mark is the start of a phase.
type Mark struct {
	Phase Phase     `json:"phase"`
	At    time.Time `json:"at"`
}

// Summary holds the figures of kafka-producer-perf-test's final line.
// Latencies are intended send -> ack (Response), which for an unlimited rate
// is what the Kafka tool measures.
type Summary struct {
	Records       int64   `json:"records"`
	RecordsPerSec float64 `json:"recordsPerSec"`
	MBPerSec      float64 `json:"mbPerSec"`
	AvgMs         float64 `json:"avgMs"`
	MaxMs         float64 `json:"maxMs"`
	P50Ms         int64   `json:"p50Ms"`
	P95Ms         int64   `json:"p95Ms"`
	P99Ms         int64   `json:"p99Ms"`
	P999Ms        int64   `json:"p999Ms"`
}

// Line formats s exactly as kafka-producer-perf-test prints its total.
func (s Summary) Line() string {
	return fmt.Sprintf("%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
		s.Records, s.RecordsPerSec, s.MBPerSec, s.AvgMs, s.MaxMs, s.P50Ms, s.P95Ms, s.P99Ms, s.P999Ms)
}

// Second is one point of the per-second time series.
type Second struct {
	T        int64            `json:"t"` // seconds since Start
	Phase    Phase            `json:"phase"`
	Sent     int64            `json:"sent"`
	Acked    int64            `json:"acked"`
	Consumed int64            `json:"consumed"`
	MBPerSec float64          `json:"mbPerSec"`
	AckP50Us int64            `json:"ackP50Us"`
	AckP99Us int64            `json:"ackP99Us"`
	E2EP50Us int64            `json:"e2eP50Us"`
	E2EP99Us int64            `json:"e2eP99Us"`
	Errors   map[string]int64 `json:"errors,omitempty"`
}

// PhaseStats are the figures of one phase interval.
type PhaseStats struct {
	Phase      Phase        `json:"phase"`
	From       time.Time    `json:"from"`
	To         time.Time    `json:"to"`
	Acked      int64        `json:"acked"`
	Seconds    int          `json:"seconds"`    // whole seconds measured
	Throughput float64      `json:"throughput"` // acked records/s over Seconds
	Ack        LatencyStats `json:"ack"`
	E2E        LatencyStats `json:"e2e"`
	// WorstAckAt and WorstE2EAt are the start of the second with the
	// highest p99 in the phase.
	WorstAckAt time.Time `json:"worstAckAt"`
	WorstE2EAt time.Time `json:"worstE2eAt"`
	// Unavailable is the longest time with no ack of those the phase holds
	// most of, whole: it may begin in an earlier phase or run on into a
	// later one. UnavailableFrom is when it began.
	Unavailable     time.Duration `json:"unavailable"`
	UnavailableFrom time.Time     `json:"unavailableFrom"`
	// StalledThrough, in a phase with no ack, is the length of the one
	// stall that spans all its measured seconds (0: none did), and
	// StalledFrom when it began.
	StalledThrough time.Duration `json:"stalledThrough,omitempty"`
	StalledFrom    time.Time     `json:"stalledFrom,omitzero"`
}

// Duration of the phase interval.
func (p PhaseStats) Duration() time.Duration { return p.To.Sub(p.From) }

// PartitionStall is one partition's longest time with no ack from any
// producer, after the warm-up.
type PartitionStall struct {
	Partition int32         `json:"partition"`
	Longest   time.Duration `json:"longest"`
	From      time.Time     `json:"from"`
}

// WorstPartition returns the partition with the longest stall, as "p3
// 9.1s"; "-" when the report has no per-partition figures.
func (r *Report) WorstPartition() string {
	if s := r.Stalled(0); len(s) > 0 {
		return s[0]
	}
	return "-"
}

// Stalled returns the partitions whose longest stall is at least min,
// longest first, as "p3 9.1s" for a summary line.
func (r *Report) Stalled(min time.Duration) []string {
	ps := slices.Clone(r.Partitions)
	slices.SortStableFunc(ps, func(a, b PartitionStall) int { return cmp.Compare(b.Longest, a.Longest) })
	var out []string
	for _, p := range ps {
		if p.Longest >= min {
			out = append(out, fmt.Sprintf("p%d %s", p.Partition, p.Longest.Round(100*time.Millisecond)))
		}
	}
	return out
}
