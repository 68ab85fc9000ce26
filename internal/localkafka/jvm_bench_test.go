package localkafka

import (
	"context"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// BenchmarkImageJVMSettings measures what the official apache/kafka image's
// JVM settings cost against kafka-run-class.sh's defaults: the image's
// launch script appends its class-data-sharing archive to
// KAFKA_JVM_PERFORMANCE_OPTS, so the script's G1 defaults
// (-XX:MaxGCPauseMillis=20, -XX:InitiatingHeapOccupancyPercent=35, ...)
// never apply unless the user sets them. Each sub-benchmark runs a fresh
// 3-node cluster and the steady state at a fixed rate, and reports its p99
// and p99.9 ack latency and throughput after a warm-up. Run it once per setting, several
// times, alternating:
//
//	go test -run '^$' -bench ImageJVMSettings -benchtime 1x -count 3 ./internal/localkafka/
func BenchmarkImageJVMSettings(b *testing.B) {
	settings := []struct {
		name string
		opts func(jsa string) string
	}{
		{"kafka-run-class-defaults", func(jsa string) string {
			return kafkaconfig.DefaultJVMPerformanceOpts + " -XX:SharedArchiveFile=" + jsa
		}},
		{"image-launch", func(jsa string) string { return "-XX:SharedArchiveFile=" + jsa }},
	}
	const (
		rate     = 20_000
		warmup   = 10 * time.Second
		duration = 60 * time.Second // measured, after the warm-up
	)
	for _, s := range settings {
		b.Run(s.name, func(b *testing.B) {
			probe, err := New(WithDir(b.TempDir()))
			if err != nil {
				b.Skipf("no Kafka: %v", err)
			}
			jsa := probe.dist.SharedArchive()
			if jsa == "" {
				b.Skip("no kafka.jsa: run make kafka-dist")
			}
			c, err := New(WithDir(b.TempDir()), WithEnv("KAFKA_JVM_PERFORMANCE_OPTS", s.opts(jsa)))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = c.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), warmup+duration+3*time.Minute)
			defer cancel()
			if err := c.Start(ctx); err != nil {
				b.Fatal(err)
			}
			if err := c.WaitHealthy(ctx); err != nil {
				b.Fatal(err)
			}
			for range b.N {
				r, err := steadystate.New(steadystate.Config{Bootstrap: c.Bootstrap(), Topic: "jvm-bench", Rate: rate, Duration: warmup + duration})
				if err != nil {
					b.Fatal(err)
				}
				// The first seconds (topic creation, the first elections,
				// the JIT) are not measured: the baseline starts after them.
				r.Mark(steadystate.PhaseWarmup)
				marked := time.AfterFunc(warmup, func() { r.Mark(steadystate.PhaseBaseline) })
				rep, err := r.Run(ctx)
				marked.Stop()
				if err != nil {
					b.Fatal(err)
				}
				for _, ps := range rep.Phases {
					if ps.Phase == steadystate.PhaseBaseline {
						b.ReportMetric(float64(ps.Ack.P99)/1000, "p99-ack-ms")
						b.ReportMetric(float64(ps.Ack.P999)/1000, "p99.9-ack-ms")
						b.ReportMetric(float64(ps.Ack.Max)/1000, "max-ack-ms")
						b.ReportMetric(ps.Throughput, "records/s")
					}
				}
				if !rep.Records.Clean() {
					b.Errorf("records %+v", rep.Records)
				}
			}
		})
	}
}
