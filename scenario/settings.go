package scenario

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SteadyStateConfig shapes the load that runs during every fault.
type SteadyStateConfig struct {
	Rate       int   `json:"rate,omitempty"`       // records/s; default 1000; -1 with agents: each agent as fast as it can
	Partitions int32 `json:"partitions,omitempty"` // default 6
	RecordSize int   `json:"recordSize,omitempty"` // default 100
	Producers  int   `json:"producers,omitempty"`  // default 1 (per agent with agents)
	// Agents > 0 runs the load from that many in-cluster agent pods
	// (kafkachaos steadystate --agent) sharing Rate, instead of from the
	// suite's own process.
	Agents int `json:"agents,omitempty"`
	// RequestTimeout is how long the suite's producers wait for a broker's
	// answer before they drop the connection and retry
	// (request.timeout.ms); default: franz-go's 10s + 10s. A frozen leader
	// stalls its partitions for about this long (see the README's
	// findings).
	RequestTimeout metav1.Duration `json:"requestTimeout,omitempty"`
}

// TimingConfig sets how long each phase of a story lasts.
type TimingConfig struct {
	// Warmup is the load's start before the baseline (topic creation,
	// the first leader elections, the JVM's first seconds): not judged,
	// not the baseline. Default 5s; the in-cluster agents warm up until
	// all of them produce instead.
	Warmup   metav1.Duration `json:"warmup,omitempty"`
	Baseline metav1.Duration `json:"baseline,omitempty"` // default 15s
	Hold     metav1.Duration `json:"hold,omitempty"`     // how long a fault is held; default 10s
	After    metav1.Duration `json:"after,omitempty"`    // load after health is back; default 15s
}

// BoundsConfig is the steady-state hypothesis.
type BoundsConfig struct {
	// MaxUnavailable bounds the longest window without any ack, and each
	// partition's own longest window without one. 0 (the default): by the
	// kind of fault (see unavailabilityBound): 5s for a graceful operation,
	// the brokers' broker.session.timeout.ms plus 5s for a hard one (kill,
	// pause, isolation), plus a controller failover when the victim is the
	// active KRaft controller too, 30s for the others.
	MaxUnavailable metav1.Duration `json:"maxUnavailable,omitempty"`
	// MaxP99Ack bounds p99 ack latency in every phase; 0: not bounded.
	MaxP99Ack metav1.Duration `json:"maxP99Ack,omitempty"`
	// GracefulP99AckRatio bounds a graceful operation's p99 ack latency
	// in the fault and recovery phases as a multiple of the baseline's
	// p99, never below GracefulP99AckFloor. A negative ratio turns the
	// bound off.
	GracefulP99AckRatio float64         `json:"gracefulP99AckRatio,omitempty"`
	GracefulP99AckFloor metav1.Duration `json:"gracefulP99AckFloor,omitempty"`
	// MinThroughputRatioAfter is the least throughput after recovery, as
	// a fraction of the baseline.
	MinThroughputRatioAfter float64 `json:"minThroughputRatioAfter,omitempty"`
}

// Unavailability bounds by kind of fault, when neither the config nor the
// story sets one.
const (
	// DefaultMaxUnavailable bounds a fault of no known kind.
	DefaultMaxUnavailable = 30 * time.Second
	// GracefulMaxUnavailable bounds a graceful operation (a roll, a
	// drain): a healthy one stalls the load for well under a second.
	GracefulMaxUnavailable = 5 * time.Second
	// HardMargin is added to broker.session.timeout.ms for a hard fault:
	// the fencing itself, a metadata refresh and an election.
	HardMargin = 5 * time.Second
)

// Timeouts and polls of one story.
const (
	// StoryTimeout is how long one story may take; the in-cluster agents
	// stop loading Kafka by themselves after it.
	StoryTimeout = 20 * time.Minute
	// PodBackTimeout and PodBackPoll: the wait for the victims' pods.
	PodBackTimeout = 5 * time.Minute
	PodBackPoll    = time.Second
	// HealthTimeout and HealthPoll: the wait for Kafka's health.
	HealthTimeout = 4 * time.Minute
	HealthPoll    = time.Second
	// FaultRecoverTime bounds a fault's Recover, retried through the
	// Kubernetes API's outages.
	FaultRecoverTime = 5 * time.Minute
	// RunStopTimeout bounds the steady state's final flush and drain.
	RunStopTimeout = 3 * time.Minute
	// minAckedOfExpected: a run that acked less than half its records
	// barely ran.
	minAckedOfExpected = 0.5
)
