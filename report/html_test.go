package report

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/resources"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// loadFixture reads testdata/report.json: a pod kill that passed, a
// negative spec that was caught, and a spec that failed before its load.
func loadFixture(t *testing.T) Run {
	t.Helper()
	run, err := Read(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Specs) != 3 {
		t.Fatalf("%s holds %d specs, want 3", fixturePath, len(run.Specs))
	}
	return run
}

func render(t *testing.T, specs []Spec) string {
	t.Helper()
	return renderRun(t, Run{Schema: SchemaVersion, Specs: specs})
}

func renderRun(t *testing.T, run Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, run, HTMLOptions{Source: "reports/report.json", Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The test run: 40 s of load at 1000 records/s; the fault from 10 s to
// 20 s, nothing acked from 12 s to 14 s; recovery to 25 s, then after.
func at(sec float64) time.Time {
	return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(sec * float64(time.Second)))
}

func testReport(verdicts ...steadystate.Verdict) *steadystate.Report {
	r := &steadystate.Report{
		Start: at(0), LoadEnd: at(40), End: at(41),
		Marks: []steadystate.Mark{
			{Phase: steadystate.PhaseFault, At: at(10)},
			{Phase: steadystate.PhaseRecovery, At: at(20)},
			{Phase: steadystate.PhaseAfter, At: at(25)},
		},
		Phases: []steadystate.PhaseStats{
			{Phase: steadystate.PhaseBaseline, From: at(0), To: at(10), Seconds: 10, Throughput: 1000},
		},
		Verdicts: verdicts,
		Latency:  map[string]steadystate.LatencyStats{"ack": {Count: 1, P99: 20_000}},
	}
	for s := range int64(40) {
		acked, p99 := int64(1000), int64(20_000)
		if s >= 12 && s < 14 {
			acked, p99 = 0, 0
		}
		r.Series = append(r.Series, steadystate.Second{T: s, Acked: acked, Consumed: acked, AckP99Us: p99, E2EP99Us: p99})
	}
	return r
}

// xAt is where second sec of testReport lies on a chart.
func xAt(sec float64) float64 { return plotLeft + sec/40*plotWidth }

func TestWriteHTMLBanner(t *testing.T) {
	pass := Spec{Spec: "a", Passed: true}
	caught := Spec{Spec: "b", Passed: true, ExpectFailures: true}
	fail := Spec{Spec: "c"}
	tests := []struct {
		name  string
		specs []Spec
		want  []string
	}{
		{"all passed", []Spec{pass, caught}, []string{`class="banner ok"`, "All 2 spec(s) passed", "1 PASS · 1 CAUGHT", "· 0 FAIL"}},
		{"one failed", []Spec{pass, caught, fail}, []string{`class="banner bad"`, "1 of 3 spec(s) failed", "· 1 FAIL"}},
		{"the fixture", nil, []string{"1 of 3 spec(s) failed", "1 PASS · 1 CAUGHT", ">CAUGHT<", ">PASS<", ">FAIL<", "Run: 2026-12-04"}},
		{"no spec", []Spec{}, []string{"The report holds no spec"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs := tt.specs
			if specs == nil {
				specs = loadFixture(t).Specs
			}
			out := render(t, specs)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("page lacks %q", w)
				}
			}
		})
	}
}

// TestWriteHTMLSelfContained checks that the page loads nothing: no
// script, no URL, every link an anchor in the page.
func TestWriteHTMLSelfContained(t *testing.T) {
	out := renderRun(t, loadFixture(t))
	for _, bad := range []string{"http://", "https://", "<script", "url(", "@import", "<link", "<img", "<iframe"} {
		if strings.Contains(strings.ToLower(out), bad) {
			t.Errorf("page holds %q", bad)
		}
	}
	refs := regexp.MustCompile(`(?i)\b(href|src|xlink:href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(out, -1)
	if len(refs) != 3 {
		t.Errorf("%d links, want one per spec (3)", len(refs))
	}
	for _, r := range refs {
		if r[1] != "href" || !strings.HasPrefix(r[2], "#spec-") {
			t.Errorf("%s=%q: want only links to the page's own sections", r[1], r[2])
		}
	}
}

func TestWriteHTMLEscapes(t *testing.T) {
	evil := `<script>alert("x")</script>`
	spec := Spec{
		Spec: evil, Fault: `"><img src=x>`, Passed: true,
		SteadyState:   testReport(),
		Checks:        []Check{{Name: "<b>check</b>", Problems: []string{"<i>problem</i>"}}},
		FailureReason: "</pre><script>",
	}
	out := render(t, []Spec{spec})
	if strings.Contains(out, "<script") || strings.Contains(out, "<img") || strings.Contains(out, "<b>") || strings.Contains(out, "<i>") {
		t.Error("the page holds markup from the report")
	}
	for _, want := range []string{"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", "&lt;b&gt;check&lt;/b&gt;", "&lt;i&gt;problem&lt;/i&gt;"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks the escaped %q", want)
		}
	}
}

// A spec's observations and the sources of its limits are on the page,
// escaped.
func TestWriteHTMLObservations(t *testing.T) {
	spec := Spec{
		Spec: "disk loss", Passed: true, SteadyState: testReport(),
		Observations: []string{"broker 1 caught up 14.7s after the fault", "<b>x</b>"},
		Limits:       []string{"maxUnavailable 14s: a hard fault"},
	}
	out := render(t, []Spec{spec})
	for _, want := range []string{"Observed", "broker 1 caught up 14.7s after the fault", "&lt;b&gt;x&lt;/b&gt;", "maxUnavailable 14s: a hard fault"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if out := render(t, []Spec{{Spec: "plain", Passed: true}}); strings.Contains(out, "Observed") {
		t.Error("a spec without observations has an Observed section")
	}
}

// What the pods used is a table with a total; not measured, it says why.
func TestWriteHTMLResources(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	measured := &resources.Usage{From: t0, To: t0.Add(50 * time.Second), Problem: "node-2: timeout", Pods: []resources.PodUsage{
		{Pod: "kafka-0", CPUSeconds: 25, PeakMemoryBytes: 400 << 20}, {Pod: "kafka-1", CPUSeconds: 15, PeakMemoryBytes: 500 << 20}}}
	tests := []struct {
		name string
		u    *resources.Usage
		want []string
		not  []string
	}{
		{"measured", measured, []string{"What the pods used", "kafka-0", "25.0 s", "0.50", "400 MiB", "all pods", "40.0 s", "0.80", "900 MiB", "partial: node-2: timeout"}, nil},
		{"not measured", &resources.Usage{Problem: "<forbidden>"}, []string{"What the pods used", "not measured: &lt;forbidden&gt;"}, []string{"all pods"}},
		{"an older report", nil, nil, []string{"What the pods used"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, []Spec{{Spec: "pod kill", Passed: true, SteadyState: testReport(), Resources: tt.u}})
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(out, w) {
					t.Errorf("page has %q", w)
				}
			}
		})
	}
}

func TestWriteHTMLFailedEarly(t *testing.T) {
	spec := Spec{
		Spec:          "a broker pod is deleted",
		FailureReason: "Kafka was not healthy before the fault",
		Checks:        []Check{{Name: CheckAudit}, {Name: CheckPodsBack, Problems: []string{"broker 1 not Ready"}}},
	}
	out := render(t, []Spec{spec})
	for _, want := range []string{">FAIL<", "Kafka was not healthy before the fault", "No steady-state report", "No fault injected",
		string(CheckAudit), string(CheckPodsBack), `<span class="ok">ok</span>`, "broker 1 not Ready", "none measured"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(out, "<svg class=\"plot\"") {
		t.Error("a spec without a steady state has a chart")
	}
}

// TestWriteHTMLEmptySteadyState: a steady state that measured nothing
// still renders, with empty charts.
func TestWriteHTMLEmptySteadyState(t *testing.T) {
	out := render(t, []Spec{{Spec: "empty", SteadyState: &steadystate.Report{}}})
	if n := strings.Count(out, `<svg class="plot"`); n != 2 {
		t.Errorf("%d charts, want 2", n)
	}
}

// The summary names the partition that stalled longest, which the
// run-wide unavailability can hide.
func TestWriteHTMLWorstPartition(t *testing.T) {
	rep := testReport()
	rep.Partitions = []steadystate.PartitionStall{{Partition: 0, Longest: 300 * time.Millisecond}, {Partition: 1, Longest: 20 * time.Second}}
	out := render(t, []Spec{{Spec: "a broker is paused", SteadyState: rep}})
	if !strings.Contains(out, "Worst partition</th>") || !strings.Contains(out, `<td class="num">p1 20s</td>`) {
		t.Error("the summary does not name partition 1's 20 s stall")
	}
}

// rects returns the x and width of every band of the given phase.
func rects(t *testing.T, out, phase string) [][2]float64 {
	t.Helper()
	re := regexp.MustCompile(`<rect class="band ` + phase + `" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"`)
	var got [][2]float64
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		w, _ := strconv.ParseFloat(m[2], 64)
		got = append(got, [2]float64{x, w})
	}
	return got
}

func TestWriteHTMLFaultWindow(t *testing.T) {
	out := render(t, []Spec{{Spec: "pod kill", Passed: true, SteadyState: testReport()}})
	tests := []struct {
		phase    string
		from, to float64 // seconds
	}{
		{"fault", 10, 20},
		{"recovery", 20, 25},
	}
	for _, tt := range tests {
		t.Run(tt.phase, func(t *testing.T) {
			got := rects(t, out, tt.phase)
			if len(got) != 2 {
				t.Fatalf("%d %s bands, want one per chart (2)", len(got), tt.phase)
			}
			for _, r := range got {
				if math.Abs(r[0]-xAt(tt.from)) > 0.15 || math.Abs(r[0]+r[1]-xAt(tt.to)) > 0.15 {
					t.Errorf("band from x %.1f to %.1f, want %.1f to %.1f", r[0], r[0]+r[1], xAt(tt.from), xAt(tt.to))
				}
			}
		})
	}
	for _, phase := range []string{"baseline", "fault", "recovery", "after"} {
		label := regexp.MustCompile(`<text class="phase" x="[0-9.]+" y="[0-9.]+">` + phase + `</text>`)
		if n := len(label.FindAllString(out, -1)); n != 2 {
			t.Errorf("%d labels for phase %s, want one per chart (2)", n, phase)
		}
	}
}

func TestWriteHTMLBoundLines(t *testing.T) {
	all := func(k steadystate.BoundKind, limit float64, text string) []steadystate.Verdict {
		var vs []steadystate.Verdict
		for _, p := range []steadystate.Phase{"baseline", "fault", "recovery", "after"} {
			vs = append(vs, verdict(p, k, limit, text))
		}
		return vs
	}
	type line struct {
		class    string
		from, to float64 // seconds
	}
	tests := []struct {
		name     string
		verdicts []steadystate.Verdict
		want     []line
	}{
		{"no bounds", nil, nil},
		{"no line for unavailability or records", []steadystate.Verdict{verdict("fault", steadystate.BoundMaxUnavailability, 30, "30s"), verdict("", steadystate.BoundLostRecords, 0, "0")}, nil},
		{"p99 ack in every phase: one line", all(steadystate.BoundMaxP99Ack, 0.2, "200ms"), []line{{"ack", 0, 40}}},
		{"p99 end-to-end in the fault", []steadystate.Verdict{verdict("fault", steadystate.BoundMaxP99E2E, 1, "1s")}, []line{{"e2e", 10, 20}}},
		{"min throughput after", []steadystate.Verdict{verdict("after", steadystate.BoundMinThroughput, 500, "500.0 records/s")}, []line{{"thr", 25, 40}}},
		{"throughput ratio after", []steadystate.Verdict{verdict("after", steadystate.BoundMinThroughputRatio, 0.9, "0.90")}, []line{{"thr", 25, 40}}},
		{"an old report's verdicts, without figures: no line", []steadystate.Verdict{{Phase: "after", Bound: "max p99 ack latency", Limit: "200ms", Passed: true}}, nil},
	}
	re := regexp.MustCompile(`<line class="bound (\w+)" x1="([0-9.]+)" y1="[0-9.]+" x2="([0-9.]+)"`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, []Spec{{Spec: "s", Passed: true, SteadyState: testReport(tt.verdicts...)}})
			ms := re.FindAllStringSubmatch(out, -1)
			if len(ms) != len(tt.want) {
				t.Fatalf("%d bound lines, want %d: %q", len(ms), len(tt.want), ms)
			}
			for i, m := range ms {
				x1, _ := strconv.ParseFloat(m[2], 64)
				x2, _ := strconv.ParseFloat(m[3], 64)
				w := tt.want[i]
				if m[1] != w.class || math.Abs(x1-xAt(w.from)) > 0.15 || math.Abs(x2-xAt(w.to)) > 0.15 {
					t.Errorf("bound line %s from x %.1f to %.1f, want %s from %.1f to %.1f", m[1], x1, x2, w.class, xAt(w.from), xAt(w.to))
				}
			}
		})
	}
}

// TestWriteHTMLFixtureBounds: the fixture's verdicts carry figures, so its
// page draws their bounds: p99 ack in every phase, the throughput ratio
// after.
func TestWriteHTMLFixtureBounds(t *testing.T) {
	out := renderRun(t, loadFixture(t))
	for _, want := range []string{`<line class="bound ack"`, `<line class="bound thr"`, "max p99 ack 5s", "min 0.90 × baseline"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
