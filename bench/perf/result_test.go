package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewClientRun(t *testing.T) {
	for _, tt := range []struct {
		name     string
		records  int64
		cpu      cpuTime
		verified int64
		want     ClientRun
	}{
		{"kafka", 1_000_000, cpuTime{user: 2 * time.Second, system: 500 * time.Millisecond}, 0, ClientRun{
			Records: 1_000_000, CPU: CPU{UserSeconds: 2, SystemSeconds: 0.5, Seconds: 2.5, SecondsPerMillionRecords: 2.5},
			RecordsSentPerCPUSecond: 400_000,
		}},
		{"ours", 250_000, cpuTime{user: 4 * time.Second, system: time.Second}, 250_000, ClientRun{
			Records: 250_000, CPU: CPU{UserSeconds: 4, SystemSeconds: 1, Seconds: 5, SecondsPerMillionRecords: 20},
			RecordsSentPerCPUSecond: 50_000, RecordsVerified: 250_000, RecordsVerifiedPerCPUSecond: 50_000,
		}},
		{"no CPU measured", 1000, cpuTime{}, 1000, ClientRun{Records: 1000, RecordsVerified: 1000}},
		{"no records", 0, cpuTime{user: time.Second}, 0, ClientRun{CPU: CPU{UserSeconds: 1, Seconds: 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := newClientRun(ProducerSettings{}, "", tt.records, 0, tt.cpu, tt.verified)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestNewComparison(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		kafka, ours          ClientRun
		startup              float64
		ratio, cpuRatio, net float64
	}{
		{"ours faster, cheaper", ClientRun{Records: 100_000, RecordsPerSec: 40_000, RecordsSentPerCPUSecond: 100_000, CPU: CPU{Seconds: 1}},
			ClientRun{RecordsPerSec: 120_000, RecordsSentPerCPUSecond: 150_000, RecordsVerifiedPerCPUSecond: 150_000}, 0.5, 3, 1.5, 0.75},
		{"ours slower", ClientRun{Records: 400_000, RecordsPerSec: 100_000, RecordsSentPerCPUSecond: 200_000, CPU: CPU{Seconds: 2}},
			ClientRun{RecordsPerSec: 80_000, RecordsVerifiedPerCPUSecond: 50_000}, 0, 0.8, 0.25, 0.25},
		{"Kafka's run no more than its start-up", ClientRun{Records: 1, RecordsPerSec: 1, RecordsSentPerCPUSecond: 1, CPU: CPU{Seconds: 1}},
			ClientRun{RecordsPerSec: 1, RecordsVerifiedPerCPUSecond: 1}, 1.5, 1, 1, 0},
		{"Kafka's run empty", ClientRun{}, ClientRun{RecordsPerSec: 1, RecordsVerifiedPerCPUSecond: 1}, 0, 0, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newComparison(tt.kafka, tt.ours, tt.startup)
			if math.Abs(c.Ratio-tt.ratio) > 1e-9 || math.Abs(c.CPURatio-tt.cpuRatio) > 1e-9 || math.Abs(c.CPURatioNetOfStartup-tt.net) > 1e-9 {
				t.Fatalf("ratio %v, CPU ratio %v, net %v; want %v, %v, %v", c.Ratio, c.CPURatio, c.CPURatioNetOfStartup, tt.ratio, tt.cpuRatio, tt.net)
			}
		})
	}
}

func TestParsePerfLine(t *testing.T) {
	for _, tt := range []struct {
		name    string
		line    string
		records int64
		rate    float64
		wantErr bool
	}{
		{"Kafka's total", "1000000 records sent, 36071.132273 records/sec (3.44 MB/sec), 4706.95 ms avg latency, 7274.00 ms max latency, 5456 ms 50th, 7005 ms 95th, 7140 ms 99th, 7245 ms 99.9th.", 1_000_000, 36071.132273, false},
		{"ours", "  97656 records sent, 125965.120568 records/sec (12.01 MB/sec), 63.64 ms avg latency, 247.55 ms max latency, 56 ms 50th, 124 ms 95th, 153 ms 99th, 206 ms 99.9th.\n", 97_656, 125965.120568, false},
		{"Kafka's window", "171256 records sent, 34244.3 records/sec (3.27 MB/sec), 500.1 ms avg latency, 900.0 ms max latency.", 171_256, 34244.3, false},
		{"steady-state total", "900 steady state records sent, 10.0 records/sec", 0, 0, true},
		{"empty", "", 0, 0, true},
		{"other", "Avg latency: 8.6588 ms", 0, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, rate, err := parsePerfLine(tt.line)
			if (err != nil) != tt.wantErr || n != tt.records || rate != tt.rate {
				t.Fatalf("parsePerfLine = %d, %v, %v; want %d, %v, error %t", n, rate, err, tt.records, tt.rate, tt.wantErr)
			}
		})
	}
}

func TestLastLineWith(t *testing.T) {
	out := "Reading payloads from: /tmp/p\n10 records sent, 1.0 records/sec (window)\n20 records sent, 2.0 records/sec (total)  \n"
	if got := lastLineWith(out, "records sent,"); got != "20 records sent, 2.0 records/sec (total)" {
		t.Fatalf("lastLineWith = %q", got)
	}
	if got := lastLineWith(out, "Percentiles"); got != "" {
		t.Fatalf("lastLineWith of a missing string = %q", got)
	}
}

// TestResultJSON pins the result's layout (schema 2): the keys readers of
// bench/results/ rely on.
func TestResultJSON(t *testing.T) {
	ours := oursSettings()
	kafka := newClientRun(javaIdentical(ours), "l", 1000, 500, cpuTime{user: time.Second}, 0)
	us := newClientRun(ours, "l", 1000, 900, cpuTime{user: time.Second}, 1000)
	r := Result{
		Schema: ResultSchema, Date: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC), Brokers: 3,
		Sizes: []SizeResult{{RecordSize: 100, Records: 1000, Identical: newComparison(kafka, us, 0), Defaults: newComparison(kafka, us, 0)}},
	}
	dir := t.TempDir()
	path, err := writeResult(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "2026-12-07T100000Z.json"); path != want {
		t.Fatalf("path %s, want %s", path, want)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	keys := func(v any) string {
		obj, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%v is not an object", v)
		}
		var k []string
		for key := range obj {
			k = append(k, key)
		}
		slices.Sort(k)
		return strings.Join(k, " ")
	}
	size := m["sizes"].([]any)[0].(map[string]any)
	identical := size["identical"].(map[string]any)
	for _, tt := range []struct {
		at   string
		v    any
		want string
	}{
		{"top", m, "brokers cpus date e2eRecordSize goVersion kafkaE2EMessages kafkaEndToEndLatency kafkaStartupCpuSeconds kafkaVersion kafkachaosE2ERate kafkachaosEndToEndLatency minInsyncReplicas partitions replicationFactor schema sizes"},
		{"sizes[0]", size, "defaults identical recordSize records"},
		{"identical", identical, "cpuRatio cpuRatioNetOfStartup kafka kafkachaos ratio"},
		{"identical.kafka", identical["kafka"], "cpu line records recordsPerSec recordsSentPerCpuSecond settings"},
		{"identical.kafkachaos", identical["kafkachaos"], "cpu line records recordsPerSec recordsSentPerCpuSecond recordsVerified recordsVerifiedPerCpuSecond settings"},
		{"identical.kafka.cpu", identical["kafka"].(map[string]any)["cpu"], "seconds secondsPerMillionRecords systemSeconds userSeconds"},
		{"identical.kafka.settings", identical["kafka"].(map[string]any)["settings"], "acks batchBytes bufferMemoryBytes compression enableIdempotence lingerMs maxInFlightPerBroker maxRequestBytes partitioner payload"},
		{"identical.kafkachaos.settings", identical["kafkachaos"].(map[string]any)["settings"], "acks batchBytes bufferMemoryBytes compression enableIdempotence lingerMs maxBufferedRecords maxInFlightPerBroker maxRequestBytes partitioner payload"},
	} {
		if got := keys(tt.v); got != tt.want {
			t.Errorf("%s keys:\n got %s\nwant %s", tt.at, got, tt.want)
		}
	}
	var back Result
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, r)
	}
}

func TestPrintResult(t *testing.T) {
	kafka := ClientRun{RecordsPerSec: 40_000, RecordsSentPerCPUSecond: 100_000, CPU: CPU{SecondsPerMillionRecords: 10}}
	ours := ClientRun{RecordsPerSec: 120_000, RecordsVerifiedPerCPUSecond: 150_000, CPU: CPU{SecondsPerMillionRecords: 6.67}}
	r := Result{Brokers: 3, Sizes: []SizeResult{{RecordSize: 1024, Identical: newComparison(kafka, ours, 0), Defaults: newComparison(kafka, ours, 0)}}}
	var b strings.Builder
	printResult(&b, r)
	for _, want := range []string{"1024", "identical", "defaults", "3.000", "1.500", "150000", "6.67"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
