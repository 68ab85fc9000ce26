package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/resources"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// spec builds a spec with the figures Compare reads.
func spec(name string, rate float64, p99AckMs int64, unavailable time.Duration, toHealthy, back Duration) Spec {
	return Spec{
		Spec: name,
		SteadyState: &steadystate.Report{
			Summary:     steadystate.Summary{RecordsPerSec: rate},
			Unavailable: unavailable,
			Latency: map[string]steadystate.LatencyStats{
				"ack": {Count: 100, P50: 50_000, P99: p99AckMs * 1000},
				"e2e": {Count: 100, P50: 80_000, P99: 200_000},
			},
		},
		Recovery:  Recovery{ToHealthy: toHealthy, ThroughputBack: back},
		Resources: usageOf(1, 1024),
	}
}

// usageOf is a minute's use of cores and MiB, by two pods.
func usageOf(cores float64, mib uint64) *resources.Usage {
	t0 := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	return &resources.Usage{From: t0, To: t0.Add(time.Minute), Pods: []resources.PodUsage{
		{Pod: "kafka-0", CPUSeconds: cores * 30, PeakMemoryBytes: mib << 19},
		{Pod: "kafka-1", CPUSeconds: cores * 30, PeakMemoryBytes: mib << 19},
	}}
}

// with returns s with other resources.
func with(s Spec, u *resources.Usage) Spec { s.Resources = u; return s }

func TestCompare(t *testing.T) {
	base := spec("pod-kill", 1000, 100, 5*time.Second, Reached(10*time.Second), Reached(time.Second))
	tests := []struct {
		name      string
		b         Spec
		regressed []string // metrics that must regress; none else may
	}{
		{"same", base, nil},
		{"better everywhere", spec("pod-kill", 1200, 50, time.Second, Reached(5*time.Second), Reached(500*time.Millisecond)), nil},
		{"throughput down 30%", spec("pod-kill", 700, 100, 5*time.Second, Reached(10*time.Second), Reached(time.Second)), []string{"throughput"}},
		{"throughput down 10%: within the threshold", spec("pod-kill", 900, 100, 5*time.Second, Reached(10*time.Second), Reached(time.Second)), nil},
		{"p99 ack doubled", spec("pod-kill", 1000, 200, 5*time.Second, Reached(10*time.Second), Reached(time.Second)), []string{"p99 ack"}},
		{"unavailability doubled", spec("pod-kill", 1000, 100, 10*time.Second, Reached(10*time.Second), Reached(time.Second)), []string{"unavailable"}},
		{"recovery slower", spec("pod-kill", 1000, 100, 5*time.Second, Reached(30*time.Second), Reached(time.Second)), []string{"recovery to healthy"}},
		{"throughput never back", spec("pod-kill", 1000, 100, 5*time.Second, Reached(10*time.Second), Never()), []string{"throughput back"}},
		{"+60% under the noise floor", spec("pod-kill", 1000, 100, 5*time.Second, Reached(10*time.Second), Reached(1600*time.Millisecond)), nil},
		{"CPU up 50%", with(base, usageOf(1.5, 1024)), []string{"CPU, all pods"}},
		{"CPU +0.08 cores: under the floor", with(base, usageOf(1.08, 1024)), nil},
		{"peak memory up 30%", with(base, usageOf(1, 1331)), []string{"peak memory, all pods"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare([]Spec{base}, []Spec{tt.b}, 0.2)
			if len(c.Rows) != len(Metrics()) {
				t.Fatalf("%d rows, want one per metric (%d)", len(c.Rows), len(Metrics()))
			}
			var got []string
			for _, r := range c.Regressions() {
				got = append(got, r.Metric)
			}
			if strings.Join(got, ",") != strings.Join(tt.regressed, ",") {
				t.Errorf("regressed %v, want %v", got, tt.regressed)
			}
		})
	}
}

func TestCompareUnmatchedAndTable(t *testing.T) {
	a := []Spec{spec("pod-kill", 1000, 100, time.Second, Reached(10*time.Second), Reached(time.Second)), spec("drain", 1000, 100, time.Second, Reached(10*time.Second), Reached(time.Second))}
	b := []Spec{spec("pod-kill", 500, 100, time.Second, Reached(10*time.Second), Never()), spec("scale", 1000, 100, time.Second, Reached(10*time.Second), Reached(time.Second))}
	c := Compare(a, b, 0.2)
	if strings.Join(c.OnlyInA, ",") != "drain" || strings.Join(c.OnlyInB, ",") != "scale" {
		t.Errorf("only in A %v, only in B %v", c.OnlyInA, c.OnlyInB)
	}
	var out bytes.Buffer
	if err := c.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"throughput", "1000 rec/s", "500 rec/s", "-50.0%", "REGRESSION (> 20%)", "never", "only in A: drain", "only in B: scale", "1.00 cores", "1024 MiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
