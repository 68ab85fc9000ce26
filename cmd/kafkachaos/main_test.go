package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafkachaos/kafkachaos/kafkasec"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestSteadyStateBadInputExitsTwo(t *testing.T) {
	props := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(props, []byte("security.protocol=SSL\nssl.truststore.type=JKS\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"rate zero", []string{"--bootstrap", "127.0.0.1:1", "--rate", "0"}, "rate 0"},
		{"record too small", []string{"--bootstrap", "127.0.0.1:1", "--record-size", "10"}, "too small"},
		{"unknown acks", []string{"--bootstrap", "127.0.0.1:1", "--acks", "2"}, "unknown acks"},
		{"empty bootstrap", []string{"--rate", "10"}, "bootstrap is empty"},
		{"bootstrap without port", []string{"--bootstrap", "localhost"}, "not host:port"},
		{"idempotence needs acks all", []string{"--bootstrap", "127.0.0.1:1", "--acks", "1"}, "idempotence requires acks=all"},
		{"unknown flag", []string{"--bootstrap", "127.0.0.1:1", "--nope"}, "unknown flag"},
		{"unknown protocol", []string{"--bootstrap", "127.0.0.1:1", "--security-protocol", "TLS"}, "unknown security protocol"},
		{"scram without user", []string{"--bootstrap", "127.0.0.1:1", "--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-512"}, "needs a username"},
		{"JKS store", []string{"--bootstrap", "127.0.0.1:1", "--command-config", props}, "convert the store to PEM"},
		{"negative bound", []string{"--bootstrap", "127.0.0.1:1", "--max-p99-ack", "-1s"}, "must not be negative"},
		{"negative request timeout", []string{"--bootstrap", "127.0.0.1:1", "--request-timeout", "-1s"}, "timeouts must not be negative"},
		{"zero partitions", []string{"--bootstrap", "127.0.0.1:1", "--partitions", "0"}, "--partitions 0"},
		{"zero record size", []string{"--bootstrap", "127.0.0.1:1", "--record-size", "0"}, "too small"},
		{"unknown group protocol", []string{"--bootstrap", "127.0.0.1:1", "--group-members", "3", "--group-protocol", "eager"}, "--group-protocol \"eager\""},
		{"negative group members", []string{"--bootstrap", "127.0.0.1:1", "--group-members", "-1"}, "--group-members -1"},
		{"too many group members", []string{"--bootstrap", "127.0.0.1:1", "--group-members", "65"}, "group members 65"},
		{"every transaction aborted", []string{"--bootstrap", "127.0.0.1:1", "--txn-producers", "2", "--txn-abort-every", "1"}, "abort every 1"},
		{"negative transactional producers", []string{"--bootstrap", "127.0.0.1:1", "--txn-producers", "-2"}, "transactional producers -2"},
		{"Java clients without Kafka's libs", []string{"--bootstrap", "127.0.0.1:1", "--java-members", "3", "--kafka-libs", ""}, "java libs \"\""},
		{"Java clients with libs holding no tools jar", []string{"--bootstrap", "127.0.0.1:1", "--java-members", "3", "--kafka-libs", t.TempDir()}, "kafka-tools-<version>.jar"},
		{"an unknown Java group protocol", []string{"--bootstrap", "127.0.0.1:1", "--java-members", "3", "--java-protocol", "eager"}, "java group protocol \"eager\""},
		{"too many Java members", []string{"--bootstrap", "127.0.0.1:1", "--java-members", "17"}, "java members 17"},
		{"positional argument", []string{"--bootstrap", "127.0.0.1:1", "extra"}, "takes no arguments"},
		{"metrics address without port", []string{"--bootstrap", "127.0.0.1:1", "--metrics-addr", "localhost"}, "--metrics-addr"},
		{"linger without metrics", []string{"--bootstrap", "127.0.0.1:1", "--metrics-linger", "1s"}, "--metrics-linger needs --metrics-addr"},
		{"negative linger", []string{"--bootstrap", "127.0.0.1:1", "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "-1s"}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"steadystate"}, tt.args...), &stdout, &stderr)
			if code != exitBadInput {
				t.Errorf("exit code %d, want %d; stderr: %s", code, exitBadInput, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestUnknownCommandExitsTwo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"nope"}, &stdout, &stderr); code != exitBadInput {
		t.Errorf("exit %d, want %d; stderr %s", code, exitBadInput, stderr.String())
	}
}

func TestSteadyStateViolatedBoundExitsOne(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var stdout, stderr bytes.Buffer
	// No real ack takes under a nanosecond: the bound must fail.
	code := run([]string{"steadystate", "--bootstrap", strings.Join(c.ListenAddrs(), ","),
		"--rate", "1000", "--num-records", "500", "--max-p99-ack", "1ns"}, &stdout, &stderr)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitFailed, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "FAIL") || !strings.Contains(stdout.String(), "max p99 ack latency") {
		t.Errorf("no failed verdict for the ack bound in:\n%s", stdout.String())
	}
}

func TestCommandConfigSASL(t *testing.T) {
	props := filepath.Join(t.TempDir(), "client.properties")
	body := `# a Kafka client config
security.protocol=SASL_PLAINTEXT
sasl.mechanism=SCRAM-SHA-256
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cret";
`
	if err := os.WriteFile(props, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s := securityFlags{kafkasec.Settings{CommandConfig: props}}
	var cfg steadystate.Config
	if err := s.apply(&cfg); err != nil {
		t.Fatal(err)
	}
	want := steadystate.SASL{Mechanism: "SCRAM-SHA-256", Username: "alice", Password: "s3cret"}
	if cfg.SASL != want || cfg.TLS != nil {
		t.Errorf("SASL %+v TLS %v; want %+v and no TLS", cfg.SASL, cfg.TLS, want)
	}
}

var perfLine = regexp.MustCompile(`^\d+ records sent, \d+\.\d{6} records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{2} ms avg latency, \d+\.\d{2} ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$`)

func TestSteadyStateAgainstKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	report := filepath.Join(t.TempDir(), "out", "report.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"steadystate", "--bootstrap", strings.Join(c.ListenAddrs(), ","),
		"--rate", "2000", "--num-records", "2000", "--report", report}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	first := strings.SplitN(stdout.String(), "\n", 2)[0]
	if !perfLine.MatchString(first) || !strings.HasPrefix(first, "2000 records sent") {
		t.Errorf("first line %q is not kafka-producer-perf-test's summary of 2000 records", first)
	}
	if !strings.Contains(stdout.String(), "PASS: every bound held") {
		t.Errorf("no PASS verdict in:\n%s", stdout.String())
	}
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep steadystate.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report is not JSON: %v", err)
	}
	if rep.Records.Acked != 2000 || rep.Records.Consumed != 2000 || len(rep.Series) == 0 {
		t.Errorf("report records %+v, %d seconds of series", rep.Records, len(rep.Series))
	}
}
