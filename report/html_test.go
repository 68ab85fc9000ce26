package report

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// loadFixture reads testdata/report.json: a pod kill that passed, a
// negative spec that was caught, and a spec that failed before its load.
func loadFixture(t *testing.T) []Spec {
	t.Helper()
	specs, err := Read(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 {
		t.Fatalf("%s holds %d specs, want 3", fixturePath, len(specs))
	}
	return specs
}

func render(t *testing.T, specs []Spec) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, specs, HTMLOptions{Source: "reports/report.json", Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
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

func TestVerdict(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"passed", Spec{Passed: true}, VerdictPass},
		{"failed", Spec{Passed: false}, VerdictFail},
		{"negative spec whose checks failed", Spec{Passed: true, ExpectFailures: true, Checks: []Check{{Name: "audit", Problems: []string{"no PDB"}}}}, VerdictCaught},
		{"negative spec that failed", Spec{Passed: false, ExpectFailures: true}, VerdictFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.spec.Verdict(); got != tt.want {
				t.Errorf("verdict %s, want %s", got, tt.want)
			}
		})
	}
}

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
		{"the fixture", nil, []string{"1 of 3 spec(s) failed", "1 PASS · 1 CAUGHT", ">CAUGHT<", ">PASS<", ">FAIL<", "Run: 2026-12-03"}},
		{"no spec", []Spec{}, []string{"The report holds no spec"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs := tt.specs
			if specs == nil {
				specs = loadFixture(t)
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
	out := render(t, loadFixture(t))
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

func TestWriteHTMLFailedEarly(t *testing.T) {
	spec := Spec{
		Spec:          "a broker pod is deleted",
		FailureReason: "Kafka was not healthy before the fault",
		Checks:        []Check{{Name: CheckAudit}, {Name: CheckPodsBack, Problems: []string{"broker 1 not Ready"}}},
	}
	out := render(t, []Spec{spec})
	for _, want := range []string{">FAIL<", "Kafka was not healthy before the fault", "No steady-state report", "No fault injected",
		CheckAudit, CheckPodsBack, `<span class="ok">ok</span>`, "broker 1 not Ready", "none measured"} {
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
	v := func(phase steadystate.Phase, bound, limit string) steadystate.Verdict {
		return steadystate.Verdict{Phase: phase, Bound: bound, Limit: limit, Observed: "x", Passed: true}
	}
	all := func(bound, limit string) []steadystate.Verdict {
		var vs []steadystate.Verdict
		for _, p := range []steadystate.Phase{"baseline", "fault", "recovery", "after"} {
			vs = append(vs, v(p, bound, limit))
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
		{"no line for unavailability or records", []steadystate.Verdict{v("fault", "max unavailability", "30s"), v("", "lost records", "0")}, nil},
		{"p99 ack in every phase: one line", all("max p99 ack latency", "200ms"), []line{{"ack", 0, 40}}},
		{"p99 end-to-end in the fault", []steadystate.Verdict{v("fault", "max p99 end-to-end latency", "1s")}, []line{{"e2e", 10, 20}}},
		{"min throughput after", []steadystate.Verdict{v("after", "min throughput", "500.0 records/s")}, []line{{"thr", 25, 40}}},
		{"throughput ratio after", []steadystate.Verdict{v("after", "min throughput ratio to baseline", "0.90")}, []line{{"thr", 25, 40}}},
		{"unreadable limit", []steadystate.Verdict{v("after", "max p99 ack latency", "soon")}, nil},
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

func TestBoundOf(t *testing.T) {
	tests := []struct {
		bound, limit string
		ok           bool
		class        string
		value        float64
	}{
		{"min throughput", "500.0 records/s", true, classThroughput, 500},
		{"min throughput ratio to baseline", "0.90", true, classThroughput, 900},
		{"max p99 ack latency", "1.5s", true, classAck, 1500},
		{"max p99 end-to-end latency", "250ms", true, classE2E, 250},
		{"max unavailability", "30s", false, "", 0},
		{"lost records", "0", false, "", 0},
		{"min throughput", "many", false, "", 0},
		{"min throughput", "NaN records/s", false, "", 0},
		{"min throughput", "Inf records/s", false, "", 0},
		{"max p99 ack latency", "0s", false, "", 0},
		{"max p99 ack latency", "-1s", false, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.bound+" "+tt.limit, func(t *testing.T) {
			b, ok := boundOf(steadystate.Verdict{Bound: tt.bound, Limit: tt.limit}, 1000)
			if ok != tt.ok || b.class != tt.class || math.Abs(b.value-tt.value) > 1e-9 {
				t.Errorf("got %+v %v, want %s %g %v", b, ok, tt.class, tt.value, tt.ok)
			}
		})
	}
}

func TestScale(t *testing.T) {
	tests := []struct {
		name string
		s    scale
		v    float64
		want float64
	}{
		{"linear low end", scale{lo: 0, hi: 100, from: 50, to: 150}, 0, 50},
		{"linear middle", scale{lo: 0, hi: 100, from: 50, to: 150}, 25, 75},
		{"linear inverted (y)", scale{lo: 0, hi: 100, from: 200, to: 0}, 75, 50},
		{"clamped above", scale{lo: 0, hi: 100, from: 0, to: 10}, 500, 10},
		{"log decade", scale{lo: 1, hi: 1000, from: 300, to: 0, log: true}, 10, 200},
		{"log clamps zero", scale{lo: 1, hi: 1000, from: 300, to: 0, log: true}, 0, 300},
		{"empty range", scale{lo: 5, hi: 5, from: 10, to: 20}, 5, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.at(tt.v); math.Abs(got-tt.want) > 0.05 {
				t.Errorf("at(%g) = %g, want %g", tt.v, got, tt.want)
			}
		})
	}
}

func TestTicks(t *testing.T) {
	linear := []struct {
		top  float64
		n    int
		want []float64
	}{
		{1050, 5, []float64{0, 500, 1000, 1500}},
		{5250, 5, []float64{0, 2000, 4000, 6000}},
		{40, 10, []float64{0, 5, 10, 15, 20, 25, 30, 35, 40}},
		{0.7, 5, []float64{0, 0.2, 0.4, 0.6000000000000001, 0.8}},
	}
	for _, tt := range linear {
		got, hi := linearTicks(tt.top, tt.n)
		if !slicesNear(got, tt.want) || hi < tt.top {
			t.Errorf("linearTicks(%g, %d) = %v (to %g), want %v", tt.top, tt.n, got, hi, tt.want)
		}
	}
	logs := []struct {
		lo, hi   float64
		want     []float64
		from, to float64
	}{
		{12, 4000, []float64{10, 100, 1000, 10000}, 10, 10000},
		{12, 60, []float64{10, 20, 50, 100}, 10, 100},
		{0.3, 20, []float64{0.1, 1, 10, 100}, 0.1, 100},
		{0.3, 8, []float64{0.1, 0.2, 0.5, 1, 2, 5, 10}, 0.1, 10},
		{5, 5, []float64{1, 2, 5, 10}, 1, 10},
		{0, 0, []float64{1, 10, 100, 1000}, 1, 1000},
		{-1, math.Inf(1), []float64{1, 10, 100, 1000}, 1, 1000},
	}
	for _, tt := range logs {
		got, from, to := logRange(tt.lo, tt.hi)
		if !slicesNear(got, tt.want) || math.Abs(from-tt.from) > 1e-9 || math.Abs(to-tt.to) > 1e-9 {
			t.Errorf("logRange(%g, %g) = %v from %g to %g, want %v from %g to %g", tt.lo, tt.hi, got, from, to, tt.want, tt.from, tt.to)
		}
	}
}

func slicesNear(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*math.Max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}

func TestPhaseSpans(t *testing.T) {
	mark := func(p steadystate.Phase, sec float64) steadystate.Mark {
		return steadystate.Mark{Phase: p, At: at(sec)}
	}
	tests := []struct {
		name  string
		marks []steadystate.Mark
		want  string
	}{
		{"no marks: all baseline", nil, "baseline 0-40"},
		{"the story's phases", testReport().Marks, "baseline 0-10 fault 10-20 recovery 20-25 after 25-40"},
		{"marked at the start", []steadystate.Mark{mark("fault", 0)}, "fault 0-40"},
		{"marked after the load", []steadystate.Mark{mark("fault", 30), mark("after", 45)}, "baseline 0-30 fault 30-40"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range phaseSpans(&steadystate.Report{Start: at(0), Marks: tt.marks}, 40) {
				got = append(got, string(s.phase)+" "+strconv.FormatFloat(s.from, 'f', -1, 64)+"-"+strconv.FormatFloat(s.to, 'f', -1, 64))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("spans %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}

func TestPolylinesBreakAtGaps(t *testing.T) {
	x := scale{lo: 0, hi: 10, from: 0, to: 100}
	y := scale{lo: 0, hi: 10, from: 100, to: 0}
	tests := []struct {
		name string
		ps   []point
		want []string
	}{
		{"no point", nil, nil},
		{"one line", []point{{0, 0, true}, {5, 5, true}}, []string{"0,100 50,50"}},
		{"a gap splits it", []point{{0, 0, true}, {1, 1, true}, {2, 0, false}, {3, 3, true}}, []string{"0,100 10,90", "30,70"}},
		{"all gaps", []point{{0, 0, false}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := polylines(tt.ps, x, y); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("polylines %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTimelineSkipsPartialLastSecond: the last second of a series holds
// the flush and drain; when the load ended inside it, it is not drawn.
func TestTimelineSkipsPartialLastSecond(t *testing.T) {
	r := testReport()
	r.LoadEnd = at(39.4)
	r.Series[39].Acked = 3
	charts := timelineCharts(r)
	if len(charts) != 2 {
		t.Fatalf("%d charts, want 2: throughput and latency", len(charts))
	}
	if len(charts[0].Lines) != 1 || len(charts[1].Lines) != 2 {
		t.Fatalf("%d and %d lines, want 1 (throughput) and 2 (ack, end-to-end)", len(charts[0].Lines), len(charts[1].Lines))
	}
	pts := strings.Fields(strings.Join(charts[0].Lines[0].Points, " "))
	if len(pts) != 39 {
		t.Errorf("%d throughput points, want 39 (the partial last second left out)", len(pts))
	}
	// The ack line has a gap where nothing was acked: two polylines.
	for _, l := range charts[1].Lines {
		if len(l.Points) != 2 {
			t.Errorf("%s: %d polylines, want 2 around the seconds with no ack", l.Class, len(l.Points))
		}
	}
}
