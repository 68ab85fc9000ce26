package report

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kafkachaos/kafkachaos/resources"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// pageTemplate is the page (html.tmpl). Its CSS colors the chart's
// classes; it holds no script and no link to anything outside the page.
//
//go:embed html.tmpl
var pageTemplate string

// HTMLOptions describe the page WriteHTML writes.
type HTMLOptions struct {
	// Title heads the page; default "kafkachaos run report".
	Title string
	// Source names the report.json the page shows, as readers should see it.
	Source string
	// Generated is when the page was made; the zero time leaves it out.
	Generated time.Time
}

// WriteHTML writes run as one self-contained HTML page: an overall
// verdict, the environment, a summary table, and per spec its timeline
// charts (inline SVG) and tables of verdicts, anomalies, checks and
// recovery times. The page loads nothing: no script, font or image from
// anywhere.
func WriteHTML(w io.Writer, run Run, opts HTMLOptions) error {
	t, err := template.New("report").Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("report: html template: %w", err)
	}
	if err := t.Execute(w, newPage(run, opts)); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	return nil
}

// page is what the template shows.
type page struct {
	Title, Source, Generated, RunTime string
	Total, Passed, Caught, Failed     int
	Environment                       []cell
	Specs                             []specView
}

func newPage(run Run, opts HTMLOptions) page {
	specs := run.Specs
	p := page{Title: cmp.Or(opts.Title, "kafkachaos run report"), Source: opts.Source, Total: len(specs),
		Environment: environmentCells(run.Environment)}
	if !opts.Generated.IsZero() {
		p.Generated = opts.Generated.UTC().Format("2006-01-02 15:04:05 MST")
	}
	var start, end time.Time
	for i, s := range specs {
		switch s.Verdict() {
		case VerdictPass:
			p.Passed++
		case VerdictCaught:
			p.Caught++
		default:
			p.Failed++
		}
		if r := s.SteadyState; r != nil {
			if start.IsZero() || r.Start.Before(start) {
				start = r.Start
			}
			for _, t := range []time.Time{r.Start, r.LoadEnd, r.End} {
				if t.After(end) {
					end = t
				}
			}
		}
		p.Specs = append(p.Specs, newSpecView(i+1, s))
	}
	if !start.IsZero() {
		p.RunTime = fmt.Sprintf("%s – %s (%s)", start.UTC().Format("2006-01-02 15:04:05"),
			end.UTC().Format("15:04:05 MST"), end.Sub(start).Round(time.Second))
	}
	return p
}

// specView is one spec's row and section.
type specView struct {
	ID, Name, Verdict, Fault, Victims string
	Failure                           string // why the spec failed outside its checks
	Load                              string // the workload, in a line
	Row                               summaryRow
	HasSteadyState                    bool
	Charts                            []chart
	Lanes                             *laneChart // what Kafka and Kubernetes did; nil: no events
	Phases                            []phaseRow
	Verdicts                          []verdictRow
	Records                           []cell
	Examples, Violations              []string
	Errors                            []cell
	Checks                            []checkRow
	Recovery                          []cell
	// Limits and Observations are the spec's, as report.json has them.
	Limits, Observations []string
	// Resources are what the pods used, a row per pod and a total; empty
	// when not measured, and then ResourcesProblem says why.
	Resources        []resourceRow
	ResourcesProblem string
}

type resourceRow struct {
	Pod, CPUSeconds, MeanCores, PeakMemory string
}

// summaryRow holds a spec's figures for the summary table; "-" when the
// spec has none.
type summaryRow struct {
	Rate, P99Ack, Unavailable, WorstPartition, Records, ToHealthy, ThroughputBack string
	RecordsBad, BackBad                                                           bool
}

// cell is a named figure; Bad marks one that should not be.
type cell struct {
	Name, Value string
	Bad         bool
}

type phaseRow struct {
	Phase, From, To, Throughput, P99Ack, P99E2E, Unavailable string
	Seconds                                                  int
}

type verdictRow struct {
	Phase, Bound, Observed, Limit string
	Passed                        bool
}

type checkRow struct {
	Name     CheckName
	Problems []string
}

func newSpecView(n int, s Spec) specView {
	v := specView{
		ID: fmt.Sprintf("spec-%d", n), Name: s.Spec, Verdict: s.Verdict(),
		Fault: cmp.Or(s.Fault, "-"), Victims: joinIDs(s.Victims), Failure: s.FailureReason,
		Row: summaryRow{Rate: "-", P99Ack: "-", Unavailable: "-", WorstPartition: "-", Records: "-",
			ToHealthy: s.Recovery.ToHealthy.String(), ThroughputBack: s.Recovery.ThroughputBack.String(),
			BackBad: s.Recovery.ThroughputBack.IsNever()},
	}
	for _, c := range s.Checks {
		v.Checks = append(v.Checks, checkRow{c.Name, c.Problems})
	}
	v.Recovery = recoveryCells(s.Recovery)
	v.Limits, v.Observations = s.Limits, s.Observations
	v.Resources, v.ResourcesProblem = resourceRows(s.Resources)
	r := s.SteadyState
	if r == nil {
		return v
	}
	v.HasSteadyState = true
	idem := "idempotent"
	if !r.Idempotent {
		idem = "not idempotent"
	}
	v.Load = fmt.Sprintf("topic %s, %d records/s of %d B from %d producer(s), acks=%s, %s, run %s",
		r.Topic, r.Rate, r.Record, r.Producers, r.Acks, idem, r.RunID)
	rec := r.Records
	v.Row.Rate = fmt.Sprintf("%.0f", r.Summary.RecordsPerSec)
	v.Row.P99Ack = latencyMs(r.Latency[steadystate.AckLatency.String()])
	v.Row.Unavailable = r.Unavailable.Round(time.Millisecond).String()
	v.Row.WorstPartition = r.WorstPartition()
	v.Row.Records = fmt.Sprintf("%d / %d / %d", rec.Lost, rec.Duplicates, rec.Reordered)
	v.Row.RecordsBad = !rec.Clean()
	v.Charts = timelineCharts(r)
	if c, ok := lagChart(r, s.Java); ok {
		v.Charts = append(v.Charts, c)
	}
	v.Lanes = eventLanes(append(slices.Clone(s.Events), groupEvents(r, s.Java)...), r)
	for _, ps := range r.Phases {
		v.Phases = append(v.Phases, phaseRow{
			Phase: string(ps.Phase), From: offset(r.Start, ps.From), To: offset(r.Start, ps.To), Seconds: ps.Seconds,
			Throughput: fmt.Sprintf("%.1f", ps.Throughput), P99Ack: latencyMs(ps.Ack), P99E2E: latencyMs(ps.E2E),
			Unavailable: ps.Unavailable.Round(time.Millisecond).String(),
		})
	}
	for _, vd := range r.Verdicts {
		v.Verdicts = append(v.Verdicts, verdictRow{cmp.Or(string(vd.Phase), "run"), vd.Bound, vd.Observed, vd.Limit, vd.Passed})
	}
	v.Records = []cell{
		{"acked", fmt.Sprint(rec.Acked), false},
		{"consumed", fmt.Sprint(rec.Consumed), false},
		{"lost", fmt.Sprint(rec.Lost), rec.Lost > 0},
		{"duplicated", fmt.Sprint(rec.Duplicates), rec.Duplicates > 0},
		{"reordered", fmt.Sprint(rec.Reordered), rec.Reordered > 0},
		{"inconsistent offsets", fmt.Sprint(rec.InconsistentOffsets), rec.InconsistentOffsets > 0},
		{"consumed, never acked (allowed)", fmt.Sprint(rec.UnackedSeen), false},
		{"redelivered (ignored)", fmt.Sprint(rec.Redelivered), false},
		{"foreign (ignored)", fmt.Sprint(rec.Foreign), false},
	}
	if rec.DrainIncomplete {
		v.Records = append(v.Records, cell{"final drain", "incomplete: lost records are unverified", true})
	}
	v.Examples = examples(rec)
	for _, kind := range slices.Sorted(maps.Keys(r.Errors)) {
		v.Errors = append(v.Errors, cell{kind, fmt.Sprint(r.Errors[kind]), true})
	}
	for _, vi := range r.Violations {
		v.Violations = append(v.Violations, fmt.Sprintf("%s: %s observed %s, limit %s (at %s)",
			cmp.Or(string(vi.Phase), "run"), vi.Bound, vi.Observed, vi.Limit, offset(r.Start, vi.At)))
	}
	return v
}

// resourceRows lays out what the pods used: a row per pod, then the
// total, whose peak is the sum of the pods' peaks.
func resourceRows(u *resources.Usage) ([]resourceRow, string) {
	if u == nil {
		return nil, ""
	}
	if len(u.Pods) == 0 {
		return nil, "not measured: " + cmp.Or(u.Problem, "no pod seen")
	}
	w := u.To.Sub(u.From).Seconds()
	row := func(name string, cpu float64, peak uint64) resourceRow {
		r := resourceRow{Pod: name, CPUSeconds: fmt.Sprintf("%.1f s", cpu), MeanCores: "-", PeakMemory: fmt.Sprintf("%d MiB", peak>>20)}
		if w > 0 {
			r.MeanCores = fmt.Sprintf("%.2f", cpu/w)
		}
		return r
	}
	var rows []resourceRow
	var cpu float64
	for _, p := range u.Pods {
		rows = append(rows, row(p.Pod, p.CPUSeconds, p.PeakMemoryBytes))
		cpu += p.CPUSeconds
	}
	rows = append(rows, row("all pods", cpu, u.PeakMemoryBytes()))
	return rows, u.Problem
}

// joinIDs lists IDs for people, "0, 1, 2"; "-" for none.
func joinIDs(ids []int32) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}

// latencyMs formats a p99 in milliseconds; "-" when nothing was measured.
func latencyMs(l steadystate.LatencyStats) string {
	if l.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", float64(l.P99)/1000)
}

// offset formats t as seconds since start.
func offset(start, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("+%.1f s", t.Sub(start).Seconds())
}

// environmentCells describes the run's environment; none when the report
// has none.
func environmentCells(env *Environment) []cell {
	if env == nil {
		return nil
	}
	l := env.Load
	load := fmt.Sprintf("%d records/s of %d B, %d partitions, %d producer(s)", l.Rate, l.RecordSize, l.Partitions, l.Producers)
	if l.Agents > 0 {
		load += fmt.Sprintf(" in each of %d agent pods", l.Agents)
	}
	idem := "idempotent"
	if !l.Idempotent {
		idem = "not idempotent"
	}
	load += fmt.Sprintf(", acks=%s, %s, request timeout %s", l.Acks, idem, cmp.Or(l.RequestTimeout, "franz-go's default"))
	deployment := cmp.Or(env.Flavor, "-")
	if env.Layout != "" {
		deployment += ", layout " + env.Layout
	}
	if env.Namespace != "" {
		deployment += ", namespace " + env.Namespace
	}
	return []cell{
		{"run", cmp.Or(env.RunID, "-"), false},
		{"kafkachaos", env.Kafkachaos.String(), false},
		{"Kubernetes", cmp.Or(env.Kubernetes, "unknown"), false},
		{"deployment", deployment, false},
		{"Kafka", kafkaVersions(env.Nodes), false},
		{"load", load, false},
	}
}

// kafkaVersions says which Kafka each node runs: "v4.4 (apache/kafka:4.4.0)
// on nodes 0, 1, 2", one group per version and image.
func kafkaVersions(nodes []Node) string {
	if len(nodes) == 0 {
		return "-"
	}
	var groups []string
	ids := map[string][]int32{}
	for _, n := range nodes {
		g := cmp.Or(n.Kafka, "version unknown")
		if n.Image != "" {
			g += " (" + n.Image + ")"
		}
		if _, ok := ids[g]; !ok {
			groups = append(groups, g)
		}
		ids[g] = append(ids[g], n.ID)
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g + " on nodes " + joinIDs(ids[g])
	}
	return strings.Join(out, "; ")
}

// recoveryCells lists the measured recovery times, in order and described.
func recoveryCells(r Recovery) []cell {
	var cells []cell
	for _, t := range r.times() {
		if t.d.Measured() {
			cells = append(cells, cell{t.what, t.d.String(), t.d.IsNever()})
		}
	}
	return cells
}

// examples describes the examples of lost, duplicated and reordered
// records the verifier kept.
func examples(rec steadystate.Records) []string {
	var out []string
	for _, l := range rec.LostExamples {
		out = append(out, fmt.Sprintf("lost: partition %d, producer %d, sequences %d–%d (%d records)", l.Partition, l.Producer, l.FirstSeq, l.LastSeq, l.Count))
	}
	for _, d := range rec.DuplicateExamples {
		out = append(out, fmt.Sprintf("duplicate: partition %d offset %d, producer %d sequence %d", d.Partition, d.Offset, d.Producer, d.Seq))
	}
	for _, d := range rec.ReorderExamples {
		out = append(out, fmt.Sprintf("reordered: partition %d offset %d, producer %d sequence %d after %d", d.Partition, d.Offset, d.Producer, d.Seq, d.PrevSeq))
	}
	for _, m := range rec.InconsistentOffsetExamples {
		out = append(out, "inconsistent offset: "+m.String())
	}
	return out
}
