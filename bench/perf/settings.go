package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// ProducerSettings are the producer settings that decide a producer's
// throughput, in Kafka's words. Each side of a comparison has its own, as
// it ran: Kafka's tool got exactly these as --producer-props (javaProps).
type ProducerSettings struct {
	// Acks is acks: all, 1 or 0.
	Acks steadystate.Acks `json:"acks"`
	// Idempotence is enable.idempotence.
	Idempotence bool `json:"enableIdempotence"`
	// MaxInFlight is max.in.flight.requests.per.connection: produce
	// requests in flight to one broker.
	MaxInFlight int `json:"maxInFlightPerBroker"`
	// BatchBytes is batch.size (franz-go: ProducerBatchMaxBytes).
	BatchBytes int `json:"batchBytes"`
	// LingerMs is linger.ms (franz-go: ProducerLinger).
	LingerMs int `json:"lingerMs"`
	// Compression is compression.type (franz-go: ProducerBatchCompression).
	Compression string `json:"compression"`
	// MaxRequestBytes is max.request.size (franz-go: BrokerMaxWriteBytes).
	MaxRequestBytes int `json:"maxRequestBytes"`
	// Partitioner is how records without a key are spread.
	Partitioner Partitioner `json:"partitioner"`
	// BufferMemoryBytes is buffer.memory: the bytes a producer may hold
	// unacknowledged (franz-go: MaxBufferedBytes).
	BufferMemoryBytes int64 `json:"bufferMemoryBytes,omitempty"`
	// MaxBufferedRecords is franz-go's bound on records buffered and in
	// flight, which the Java producer does not have.
	MaxBufferedRecords int `json:"maxBufferedRecords,omitempty"`
	// Payload is what each record's value holds.
	Payload Payload `json:"payload"`
}

// Partitioner names how records without a key are spread over partitions.
type Partitioner string

// Partitioners.
const (
	// PartitionerRoundRobin puts each record on the next partition:
	// steadystate's producer (kgo.ManualPartitioner, record i on partition
	// i mod partitions), and Kafka's RoundRobinPartitioner.
	PartitionerRoundRobin Partitioner = "round-robin"
	// PartitionerSticky is the Java producer's built-in partitioner: one
	// partition until batch.size bytes went to it, then another, favouring
	// brokers that answer faster (partitioner.adaptive.partitioning.enable).
	PartitionerSticky Partitioner = "sticky"
)

// javaRoundRobin is the class of Kafka's round-robin partitioner.
const javaRoundRobin = "org.apache.kafka.clients.producer.RoundRobinPartitioner"

// Payload names what a record's value holds. It matters under compression:
// zero padding compresses to almost nothing, random letters hardly at all.
type Payload string

// Payloads.
const (
	// PayloadRandomLetters is ProducerPerformance's --record-size payload:
	// random letters A-Z, drawn afresh for every record.
	PayloadRandomLetters Payload = "random letters A-Z, drawn for each record (--record-size)"
	// PayloadHeaderZeros is steadystate's record: its 31-byte header (magic,
	// run, producer, sequence, send time), then zeros.
	PayloadHeaderZeros Payload = "31-byte kafkachaos header, then zeros"
	// PayloadHeaderZerosFile is what Kafka's tool sends in the identical
	// run, shaped like steadystate's record (payloadFile): 15 fixed bytes
	// and 16 random letters where the header has its fixed and varying
	// fields, then zeros; one of payloadCount such values per record.
	PayloadHeaderZerosFile Payload = "15 fixed bytes, 16 random letters, then zeros; one of 1000 values from --payload-file"
)

// franz-go v1.22.3's defaults for what steadystate's producer leaves
// unset, from $(go env GOMODCACHE)/github.com/twmb/franz-go@v1.22.3/pkg/kgo:
// config.go defaultCfg (linger 10ms, maxRecordBatchBytes 1000012,
// compression [snappy, none], maxBrokerWriteBytes 100<<20) and sink.go
// newSink (an idempotent producer keeps 5 produce requests in flight per
// broker; MaxProduceRequestsInflightPerBroker applies only without
// idempotence). TestFranzDefaults reads them back from kgo.
const (
	franzLinger          = 10 // ms
	franzBatchMaxBytes   = 1_000_012
	franzMaxWriteBytes   = 100 << 20
	franzIdempotentInFly = 5
	// franzCompression is the first codec of franz-go's default preference;
	// it compresses a batch only when that makes it smaller.
	franzCompression = "snappy"
)

// oursSettings are steadystate's producer settings as bench-perf runs it
// (Config defaults, unlimited rate): acks and idempotence from
// steadystate.Config, the rest from franz-go's defaults.
func oursSettings() ProducerSettings {
	c := steadystate.Config{}.WithDefaults()
	return ProducerSettings{
		Acks:               c.Acks,
		Idempotence:        !c.NoIdempotence,
		MaxInFlight:        franzIdempotentInFly,
		BatchBytes:         franzBatchMaxBytes,
		LingerMs:           franzLinger,
		Compression:        franzCompression,
		MaxRequestBytes:    franzMaxWriteBytes,
		Partitioner:        PartitionerRoundRobin,
		MaxBufferedRecords: steadystate.UnlimitedRateBufferedRecords,
		BufferMemoryBytes:  steadystate.UnlimitedRateBufferedBytes,
		Payload:            PayloadHeaderZeros,
	}
}

// javaDefaultBufferMemory is buffer.memory's default, 32 MiB.
const javaDefaultBufferMemory = 32 << 20

// javaDefaults are the Java producer's defaults since Kafka 4.0 (linger.ms
// was 0 before), from ProducerConfig, with ProducerPerformance's
// --record-size payload.
func javaDefaults() ProducerSettings {
	return ProducerSettings{
		Acks:              steadystate.AcksAll,
		Idempotence:       true,
		MaxInFlight:       5,
		BatchBytes:        16_384,
		LingerMs:          5,
		Compression:       "none",
		MaxRequestBytes:   1 << 20,
		Partitioner:       PartitionerSticky,
		BufferMemoryBytes: javaDefaultBufferMemory,
		Payload:           PayloadRandomLetters,
	}
}

// javaIdentical is ours for Kafka's tool: every setting the Java producer
// can take as ours has it (buffer.memory as ours bounds bytes; it has no
// bound on records), and a payload shaped like ours.
func javaIdentical(ours ProducerSettings) ProducerSettings {
	s := ours
	s.MaxBufferedRecords = 0
	s.Payload = PayloadHeaderZerosFile
	return s
}

// javaProps returns s as ProducerPerformance's --producer-props values,
// every setting spelled out, so the tool runs with what the result says
// even where that is its default. The tool splits each on "=".
func javaProps(bootstrap string, s ProducerSettings) []string {
	props := []string{
		"bootstrap.servers=" + bootstrap,
		"acks=" + string(s.Acks),
		fmt.Sprintf("enable.idempotence=%t", s.Idempotence),
		fmt.Sprintf("max.in.flight.requests.per.connection=%d", s.MaxInFlight),
		fmt.Sprintf("batch.size=%d", s.BatchBytes),
		fmt.Sprintf("linger.ms=%d", s.LingerMs),
		"compression.type=" + s.Compression,
		fmt.Sprintf("max.request.size=%d", s.MaxRequestBytes),
	}
	if s.BufferMemoryBytes > 0 {
		props = append(props, fmt.Sprintf("buffer.memory=%d", s.BufferMemoryBytes))
	}
	if s.Partitioner == PartitionerRoundRobin {
		props = append(props, "partitioner.class="+javaRoundRobin)
	}
	return props
}

// payloadCount is how many values the identical run's payload file holds;
// the tool picks one at random for each record.
const payloadCount = 1000

// payloadFixed stands for the header's fixed fields (magic, version, run
// and producer IDs: 15 bytes); 16 random letters stand for its sequence and
// send time.
const payloadFixed = "KC1kafkachaos01"

// payloadFile returns the identical run's --payload-file: n values of size
// bytes shaped like steadystate's records (PayloadHeaderZerosFile), one a
// line. The tool reads it as UTF-8, where a zero byte is U+0000, and sends
// each value's bytes as they are. size must be at least HeaderSize.
func payloadFile(size, n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	var b bytes.Buffer
	b.Grow(n * (size + 1))
	varying := steadystate.HeaderSize - len(payloadFixed)
	for range n {
		b.WriteString(payloadFixed)
		for range varying {
			b.WriteByte(byte('A' + rng.IntN(26)))
		}
		b.Write(make([]byte, size-steadystate.HeaderSize))
		b.WriteByte('\n')
	}
	return b.Bytes()
}
