package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestJavaProps(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    ProducerSettings
		want []string
	}{
		{"identical", javaIdentical(oursSettings()), []string{
			"bootstrap.servers=b0:9092,b1:9092", "acks=all", "enable.idempotence=true",
			"max.in.flight.requests.per.connection=5", "batch.size=1000012", "linger.ms=10",
			"compression.type=snappy", "max.request.size=104857600", "buffer.memory=33554432",
			"partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner",
		}},
		{"defaults", javaDefaults(), []string{
			"bootstrap.servers=b0:9092,b1:9092", "acks=all", "enable.idempotence=true",
			"max.in.flight.requests.per.connection=5", "batch.size=16384", "linger.ms=5",
			"compression.type=none", "max.request.size=1048576", "buffer.memory=33554432",
		}},
		{"no buffer bound, sticky", ProducerSettings{Acks: steadystate.AcksLeader, MaxInFlight: 1, BatchBytes: 512, Compression: "zstd", MaxRequestBytes: 1024, Partitioner: PartitionerSticky}, []string{
			"bootstrap.servers=b0:9092,b1:9092", "acks=1", "enable.idempotence=false",
			"max.in.flight.requests.per.connection=1", "batch.size=512", "linger.ms=0",
			"compression.type=zstd", "max.request.size=1024",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := javaProps("b0:9092,b1:9092", tt.s)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("javaProps:\n got %q\nwant %q", got, tt.want)
			}
			for _, p := range got {
				// ProducerPerformance.readProps refuses a prop that does not
				// split on "=" into exactly two pieces.
				if n := len(strings.Split(p, "=")); n != 2 {
					t.Errorf("prop %q splits into %d pieces on =", p, n)
				}
			}
		})
	}
}

// TestIdenticalSettings checks that Kafka's tool gets every setting of ours
// but the ones the Java producer has no equal of: a bound on records, and
// the payload (shaped like ours, from a file).
func TestIdenticalSettings(t *testing.T) {
	ours := oursSettings()
	java := javaIdentical(ours)
	if java.MaxBufferedRecords != 0 || java.BufferMemoryBytes != ours.BufferMemoryBytes || java.Payload != PayloadHeaderZerosFile {
		t.Fatalf("javaIdentical buffers and payload: %+v", java)
	}
	java.MaxBufferedRecords, java.Payload = ours.MaxBufferedRecords, ours.Payload
	if java != ours {
		t.Fatalf("javaIdentical differs from ours beyond buffers and payload:\n java %+v\n ours %+v", java, ours)
	}
}

// TestFranzDefaults reads back from kgo the defaults that oursSettings
// writes down, so that a franz-go upgrade that changes one fails here.
func TestFranzDefaults(t *testing.T) {
	cl, err := kgo.NewClient(kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ours := oursSettings()
	for _, tt := range []struct {
		opt  any
		want any
	}{
		{kgo.ProducerLinger, time.Duration(ours.LingerMs) * time.Millisecond},
		{kgo.ProducerBatchMaxBytes, int32(ours.BatchBytes)},
		{kgo.BrokerMaxWriteBytes, int32(ours.MaxRequestBytes)},
		{kgo.RequiredAcks, kgo.AllISRAcks()},
		{kgo.DisableIdempotentWrite, !ours.Idempotence},
		{kgo.ProducerBatchCompression, []kgo.CompressionCodec{kgo.SnappyCompression(), kgo.NoCompression()}},
	} {
		if got := cl.OptValue(tt.opt); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%T default: got %v, oursSettings says %v", tt.opt, got, tt.want)
		}
	}
	if ours.Compression != "snappy" || ours.MaxInFlight != 5 || ours.Acks != steadystate.AcksAll {
		t.Errorf("oursSettings: %+v", ours)
	}
}

func TestPayloadFile(t *testing.T) {
	for _, size := range []int{steadystate.HeaderSize, 100, 1024, 10240} {
		t.Run("", func(t *testing.T) {
			raw := payloadFile(size, 50, 7)
			if !bytes.Equal(raw, payloadFile(size, 50, 7)) {
				t.Fatal("payloadFile is not deterministic for a seed")
			}
			lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
			if len(lines) != 50 {
				t.Fatalf("size %d: %d values, want 50", size, len(lines))
			}
			for i, l := range lines {
				if len(l) != size {
					t.Fatalf("size %d: value %d has %d bytes", size, i, len(l))
				}
				if !bytes.HasPrefix(l, []byte(payloadFixed)) {
					t.Fatalf("value %d does not start with %q", i, payloadFixed)
				}
				for _, c := range l[len(payloadFixed):steadystate.HeaderSize] {
					if c < 'A' || c > 'Z' {
						t.Fatalf("value %d: %q in the varying bytes", i, c)
					}
				}
				if bytes.ContainsFunc(l[steadystate.HeaderSize:], func(r rune) bool { return r != 0 }) {
					t.Fatalf("value %d: padding is not zeros", i)
				}
			}
		})
	}
}
