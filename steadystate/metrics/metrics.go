// Package metrics exports a steady-state run's live figures as Prometheus
// metrics: a Metrics is the run's steadystate.Observer and serves them on
// /metrics from a registry of its own (no global state), for `kafkachaos
// steadystate --metrics-addr` and the in-cluster load agents.
//
// The counters and histograms count what the runner counts: after a run,
// kafkachaos_records_acked_total is the report's records.acked,
// kafkachaos_ack_latency_seconds holds the report's "ack" latencies, and so
// on. Latencies are native histograms (bucket factor 1.1) that also carry
// classic buckets, so a Prometheus without native histograms reads them too.
package metrics

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Metric names, for dashboards and tests.
const (
	RecordsSent        = "kafkachaos_records_sent_total"
	RecordsAcked       = "kafkachaos_records_acked_total"
	RecordsFailed      = "kafkachaos_records_failed_total" // label kind: one of steadystate.FailureKinds()
	RecordsConsumed    = "kafkachaos_records_consumed_total"
	RecordsLost        = "kafkachaos_records_lost_total"
	RecordsDuplicated  = "kafkachaos_records_duplicated_total"
	RecordsReordered   = "kafkachaos_records_reordered_total"
	AckLatency         = "kafkachaos_ack_latency_seconds"
	EndToEndLatency    = "kafkachaos_end_to_end_latency_seconds"
	UnavailableSeconds = "kafkachaos_unavailable_seconds"
	CurrentPhase       = "kafkachaos_phase" // label phase: 1 for the current phase
)

// The latency histograms' native buckets: each at most 10% wider than the
// one before (schema 3: 8 buckets a doubling), at most 160 of them (20
// doublings, 100 µs to 100 s); past that the histogram resets if its last
// reset is an hour old, or else halves its resolution.
const (
	nativeBucketFactor  = 1.1
	nativeMaxBuckets    = 160
	nativeResetInterval = time.Hour
)

// latencyBuckets returns the classic buckets of the latency histograms, in
// seconds: 1 ms to 5 minutes, the top of the report's histograms.
func latencyBuckets() []float64 {
	return []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
}

// Metrics is a run's Prometheus metrics. Use it as the run's
// steadystate.Config.Observer, and serve Handler. Its methods are safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	sent, acked, consumed       prometheus.Counter
	lost, duplicated, reordered prometheus.Counter
	failed                      *prometheus.CounterVec
	ackLatency, endToEnd        prometheus.Histogram

	phase   *prometheus.GaugeVec
	phaseMu sync.Mutex
	current steadystate.Phase // the phase set to 1; "" before the first

	// For the unavailability: records sent and neither acked nor failed,
	// and, in nanoseconds since epoch (which carries a monotonic reading),
	// when the latest ack came and when records last started waiting.
	epoch              time.Time
	outstanding        atomic.Int64
	lastAck, busySince atomic.Int64
}

var _ steadystate.Observer = (*Metrics)(nil)

// New returns the metrics of a run, registered in a registry of their own
// with the Go runtime's and the process's collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), epoch: time.Now()}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	latency := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: name, Help: help,
			Buckets:                         latencyBuckets(),
			NativeHistogramBucketFactor:     nativeBucketFactor,
			NativeHistogramMaxBucketNumber:  nativeMaxBuckets,
			NativeHistogramMinResetDuration: nativeResetInterval,
		})
	}
	m.sent = counter(RecordsSent, "Records handed to the producers.")
	m.acked = counter(RecordsAcked, "Records acknowledged by the brokers.")
	m.consumed = counter(RecordsConsumed, "Records of this runner's producers consumed for the first time.")
	m.lost = counter(RecordsLost, "Acknowledged records never consumed, counted by the verdict after the final drain.")
	m.duplicated = counter(RecordsDuplicated, "Records consumed again at another offset.")
	m.reordered = counter(RecordsReordered, "Records consumed after a later record of the same producer and partition.")
	m.failed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: RecordsFailed, Help: "Records whose produce failed, by kind of failure.",
	}, []string{"kind"})
	for _, k := range steadystate.FailureKinds() {
		m.failed.WithLabelValues(k) // every kind exported from the start, at 0
	}
	m.ackLatency = latency(AckLatency, "Time from a record's send to its acknowledgement.")
	m.endToEnd = latency(EndToEndLatency, "Time from a record's intended send time to its consumption.")
	m.phase = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: CurrentPhase, Help: "The run's phase: 1 for the current one, 0 for the phases before it.",
	}, []string{"phase"})
	unavailable := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: UnavailableSeconds,
		Help: "Time since the last acknowledgement while records wait for one (0 when none waits).",
	}, func() float64 { return m.Unavailable(time.Now()).Seconds() })

	m.reg.MustRegister(
		m.sent, m.acked, m.failed, m.consumed, m.lost, m.duplicated, m.reordered,
		m.ackLatency, m.endToEnd, unavailable, m.phase,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Gatherer returns the registry the metrics are in.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// Handler serves the metrics in the format the scraper asks for (the
// protobuf format carries the native histograms).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// since returns t as nanoseconds since m's epoch, on the monotonic clock.
func (m *Metrics) since(t time.Time) int64 { return int64(t.Sub(m.epoch)) }

// Unavailable returns how long, at now, records have waited with no
// acknowledgement: the time since the later of the last ack and the moment
// records started waiting; 0 while none waits.
func (m *Metrics) Unavailable(now time.Time) time.Duration {
	if m.outstanding.Load() <= 0 {
		return 0
	}
	from := max(m.lastAck.Load(), m.busySince.Load())
	return max(time.Duration(m.since(now)-from), 0)
}

// Sent counts a record sent at at.
func (m *Metrics) Sent(at time.Time) {
	m.sent.Inc()
	if m.outstanding.Load() == 0 {
		m.busySince.Store(m.since(at))
	}
	m.outstanding.Add(1)
}

// Acked counts a record acked at at, latency after it was sent.
func (m *Metrics) Acked(at time.Time, latency time.Duration) {
	m.acked.Inc()
	m.ackLatency.Observe(latency.Seconds())
	m.lastAck.Store(m.since(at))
	m.outstanding.Add(-1)
}

// Failed counts a record whose produce failed.
func (m *Metrics) Failed(_ time.Time, kind string) {
	m.failed.WithLabelValues(kind).Inc()
	m.outstanding.Add(-1)
}

// Consumed counts a record consumed latency after its intended send time.
func (m *Metrics) Consumed(latency time.Duration) {
	m.consumed.Inc()
	m.endToEnd.Observe(latency.Seconds())
}

// Duplicate counts a duplicated record.
func (m *Metrics) Duplicate() { m.duplicated.Inc() }

// Reordered counts a reordered record.
func (m *Metrics) Reordered() { m.reordered.Inc() }

// Lost counts the records the verdict found lost.
func (m *Metrics) Lost(n uint64) { m.lost.Add(float64(n)) }

// Phase sets phase p to 1 and the one before it to 0.
func (m *Metrics) Phase(p steadystate.Phase) {
	m.phaseMu.Lock()
	defer m.phaseMu.Unlock()
	if m.current != "" && m.current != p {
		m.phase.WithLabelValues(string(m.current)).Set(0)
	}
	m.phase.WithLabelValues(string(p)).Set(1)
	m.current = p
}
