package steadystate

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/kafkasec"
	"github.com/kafkachaos/kafkachaos/steadystate/txn"
)

// ErrInvalidConfig is wrapped by every error about a bad Config. The CLI
// exits with code 2 on it, before touching any cluster.
var ErrInvalidConfig = errors.New("invalid steady-state config")

// RateUnlimited as Config.Rate sends as fast as the producers can.
const RateUnlimited = -1

// Acks is the producer's required acknowledgements.
type Acks string

// Acks values, with the spellings Kafka users expect.
const (
	AcksAll    Acks = "all"
	AcksLeader Acks = "1"
	AcksNone   Acks = "0"
)

// ParseAcks accepts all, -1, 1 and 0.
func ParseAcks(s string) (Acks, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "all", "-1":
		return AcksAll, nil
	case "1":
		return AcksLeader, nil
	case "0":
		return AcksNone, nil
	}
	return "", fmt.Errorf("%w: unknown acks %q (want all, -1, 1 or 0)", ErrInvalidConfig, s)
}

// Config describes one steady-state run. Zero values take the defaults noted
// on each field; Validate reports every combination that cannot work.
type Config struct {
	// Bootstrap lists seed brokers as host:port. Required.
	Bootstrap []string
	// Topic is the dedicated workload topic, created if missing. Default
	// "kafkachaos-steadystate".
	Topic string
	// Partitions, ReplicationFactor and MinInsyncReplicas apply when the
	// topic is created. Defaults 6, 3 and 2.
	Partitions        int32
	ReplicationFactor int16
	MinInsyncReplicas int
	// Acks defaults to all. Idempotent defaults to true via NoIdempotence
	// being false; idempotence requires acks=all.
	Acks          Acks
	NoIdempotence bool
	// Rate is the total records/s across producers, scheduled open-loop;
	// RateUnlimited sends as fast as possible. Default 1000.
	Rate int
	// RecordSize is each record's value size in bytes. Default 100, as in
	// kafka-producer-perf-test; at least HeaderSize.
	RecordSize int
	// Producers is the number of producer clients. Default 1.
	Producers int
	// ProducerBase is the first producer ID: the producers are IDs
	// [ProducerBase, ProducerBase+Producers). Runners that share one RunID
	// (in-cluster agents, see Merge) must use disjoint ranges. Each runner
	// verifies its own producers' records only, in a consumer group of its
	// own, and counts the other runners' records in Records.OtherProducers.
	// Default 0.
	ProducerBase uint32
	// Duration of the load. 0 with NumRecords 0 runs until Stop.
	Duration time.Duration
	// NumRecords stops the load after this many sends; 0 means no limit.
	NumRecords int64
	// DrainTimeout bounds the final drain of the consumer. Default 60s.
	DrainTimeout time.Duration
	// ProduceTimeout is how long a record may wait for its ack before it
	// fails (franz-go's record delivery timeout). Default 2m.
	ProduceTimeout time.Duration
	// RequestTimeout is how long a producer waits for a broker to answer a
	// produce request before it drops the connection and retries, on
	// fresh metadata (the Java client's request.timeout.ms, default 30s).
	// It is split evenly between franz-go's ProduceRequestTimeout and
	// RequestTimeoutOverhead. Default 0: franz-go's own, 10s + 10s.
	RequestTimeout time.Duration
	// RunID identifies the run's records; default is random.
	RunID uint64
	// TLS, when non-nil, dials brokers with TLS.
	TLS *tls.Config
	// SASL mechanism and credentials; Mechanism "" means no SASL.
	SASL SASL
	// ClientOpts are extra franz-go options for every client (tests use them
	// for logging or custom dialers).
	ClientOpts []kgo.Opt
	// Hypothesis is evaluated on the report. Default: DefaultHypothesis().
	Hypothesis *Hypothesis
	// Observer, when non-nil, is told of the run's events as they happen
	// (live metrics); see Observer.
	Observer Observer
	// Group, when it has members, runs an application's consumer group
	// on the topic beside the verifying consumer, and checks its history.
	Group GroupConfig
	// Transactions, when it has producers, runs a transactional workload
	// on the topic Topic+TxnTopicSuffix beside the load, and checks its
	// history (package txn).
	Transactions txn.Settings
	// Java, when it has members, runs Kafka's own Java clients beside the
	// load, as processes of this machine, on the topic
	// Topic+JavaTopicSuffix, and checks every record.
	Java JavaConfig
}

// SASL carries SASL settings, with Kafka's mechanism names (PLAIN,
// SCRAM-SHA-256 or SCRAM-SHA-512).
type SASL = kafkasec.SASL

// Default values, exported for flags and docs.
const (
	DefaultTopic             = "kafkachaos-steadystate"
	DefaultPartitions        = 6
	DefaultReplicationFactor = 3
	DefaultMinInsyncReplicas = 2
	DefaultRate              = 1000
	DefaultRecordSize        = 100
	DefaultDrainTimeout      = 60 * time.Second
	DefaultProduceTimeout    = 2 * time.Minute
)

// WithDefaults returns c with zero values replaced by defaults, as New
// fills them: Validate judges a config after this.
func (c Config) WithDefaults() Config { return c.withDefaults() }

// MaxPartitions bounds the workload topic's partitions: a load test's topic,
// not a cluster's limit.
const MaxPartitions = 10000

// withDefaults returns c with zero values replaced by defaults.
func (c Config) withDefaults() Config {
	if c.Topic == "" {
		c.Topic = DefaultTopic
	}
	if c.Partitions == 0 {
		c.Partitions = DefaultPartitions
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = DefaultReplicationFactor
	}
	if c.MinInsyncReplicas == 0 {
		c.MinInsyncReplicas = DefaultMinInsyncReplicas
	}
	if c.Acks == "" {
		c.Acks = AcksAll
	}
	if c.RecordSize == 0 {
		c.RecordSize = DefaultRecordSize
	}
	if c.Producers == 0 {
		c.Producers = 1
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.ProduceTimeout == 0 {
		c.ProduceTimeout = DefaultProduceTimeout
	}
	if c.Group.Members > 0 && c.Group.Protocol == "" {
		c.Group.Protocol = GroupProtocolClassic
	}
	c.Transactions = c.Transactions.WithDefaults()
	c.Java = c.Java.withDefaults()
	if c.Hypothesis == nil {
		h := DefaultHypothesis()
		c.Hypothesis = &h
	}
	return c
}

// CheckAddress checks that addr is host:port with a port from 1 to 65535,
// without resolving the host.
func CheckAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port %q is not a number from 1 to 65535", addr, port)
	}
	return nil
}

// Validate reports the first problem with c (after defaults), wrapping
// ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, a...)...)
	}
	if len(c.Bootstrap) == 0 {
		return bad("bootstrap is empty: give at least one host:port")
	}
	for _, b := range c.Bootstrap {
		if err := CheckAddress(b); err != nil {
			return bad("bootstrap address %w", err)
		}
	}
	switch {
	case c.Rate == 0:
		return bad("rate 0 sends nothing: give records/s > 0, or -1 for as fast as possible")
	case c.Rate < RateUnlimited:
		return bad("rate %d is negative: give records/s > 0, or -1 for as fast as possible", c.Rate)
	case c.RecordSize < HeaderSize:
		return bad("record size %d is too small to carry the %d-byte header", c.RecordSize, HeaderSize)
	case c.RecordSize > 1<<20:
		return bad("record size %d is over 1 MiB, Kafka's default message.max.bytes", c.RecordSize)
	case c.Partitions < 1 || c.Partitions > MaxPartitions:
		return bad("partitions %d: need 1 to %d", c.Partitions, MaxPartitions)
	case c.ReplicationFactor < 1:
		return bad("replication factor %d: need at least 1", c.ReplicationFactor)
	case c.MinInsyncReplicas < 1 || c.MinInsyncReplicas > int(c.ReplicationFactor):
		return bad("min.insync.replicas %d must be between 1 and the replication factor %d", c.MinInsyncReplicas, c.ReplicationFactor)
	case c.Group.validate() != nil:
		return bad("%w", c.Group.validate())
	case c.Transactions.Validate() != nil:
		return bad("%w", c.Transactions.Validate())
	case c.Java.validate() != nil:
		return bad("%w", c.Java.validate())
	case c.Producers < 1 || c.Producers > 1024:
		return bad("producers %d: need 1 to 1024", c.Producers)
	case uint64(c.ProducerBase)+uint64(c.Producers) > 1<<32:
		return bad("producer IDs %d + %d producers overflow 32 bits", c.ProducerBase, c.Producers)
	case c.Duration < 0:
		return bad("duration %s is negative", c.Duration)
	case c.NumRecords < 0:
		return bad("num-records %d is negative", c.NumRecords)
	case c.DrainTimeout < 0 || c.ProduceTimeout < 0 || c.RequestTimeout < 0:
		return bad("timeouts must not be negative")
	}
	switch c.Acks {
	case AcksAll, AcksLeader, AcksNone:
	default:
		return bad("unknown acks %q (want all, 1 or 0)", c.Acks)
	}
	if !c.NoIdempotence && c.Acks != AcksAll {
		return bad("idempotence requires acks=all; set acks=all or disable idempotence")
	}
	switch c.SASL.Mechanism {
	case "":
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		if c.SASL.Username == "" {
			return bad("SASL %s needs a username", c.SASL.Mechanism)
		}
	default:
		return bad("unknown SASL mechanism %q (want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", c.SASL.Mechanism)
	}
	if c.Hypothesis != nil {
		if err := c.Hypothesis.validate(); err != nil {
			return err
		}
	}
	return nil
}
