package manifests_test

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/loadagent"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/metrics"
)

// exportedNames returns the series names the program exports, from the
// registry of a run's metrics: each family's name, and for histograms and
// summaries the _bucket, _sum and _count series PromQL reads.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New()
	m.Phase(steadystate.PhaseBaseline) // the phase family exists once a phase is set
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fams {
		names[f.GetName()] = true
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[f.GetName()+"_bucket"] = true
			fallthrough
		case dto.MetricType_SUMMARY:
			names[f.GetName()+"_sum"] = true
			names[f.GetName()+"_count"] = true
		}
	}
	return names
}

// What PromQL expressions hold besides metric names.
var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "inf", "nan", "Inf", "NaN"}
	labelValues  = regexp.MustCompile(`^\s*label_values\(\s*([^,)]+)`)
)

// metricNames returns the metric names expr reads: its identifiers that
// are not in a string, a label matcher, a range, a grouping, a function or
// aggregation call, a keyword, a number or a Grafana variable.
func metricNames(expr string) []string {
	for _, re := range []*regexp.Regexp{promStrings, promMatchers, promRanges, promGrouping} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, loc := range promIdent.FindAllStringIndex(expr, -1) {
		id := expr[loc[0]:loc[1]]
		if loc[0] > 0 && strings.ContainsAny(expr[loc[0]-1:loc[0]], "$.0123456789") {
			continue // a Grafana variable, or a number's exponent
		}
		if strings.HasPrefix(strings.TrimSpace(expr[loc[1]:]), "(") || slices.Contains(promKeywords, id) {
			continue
		}
		names = append(names, id)
	}
	return names
}

func TestMetricNames(t *testing.T) {
	tests := map[string][]string{
		`sum(rate(a_total{namespace=~"$namespace"}[$__rate_interval]))`:                       {"a_total"},
		`histogram_quantile(0.99, sum by (le) (rate(b_bucket{x="}"}[5m])))`:                   {"b_bucket"},
		`max by (pod) (c) / on (pod) group_left d offset 1m > bool 1e3 or vector(0) unless e`: {"c", "d", "e"},
		`label_replace(f, "dst", "$1", "src", "(.*)") * 2.5 + sum without (kind) (g{k='v'})`:  {"f", "g"},
	}
	for expr, want := range tests {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %q, want %q", expr, got, want)
		}
	}
}

// The dashboard is valid JSON, and every panel's queries and every
// template variable read only metrics that the program exports: the
// throughput, both latencies, the unavailability and the phase among them.
func TestDashboard(t *testing.T) {
	raw, err := os.ReadFile("monitoring/dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title      string `json:"title"`
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("dashboard: title %q, uid %q, %d panels; want all three", dash.Title, dash.UID, len(dash.Panels))
	}
	exported := exportedNames(t)
	used := map[string]bool{}
	check := func(where, expr string) {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q reads no metric", where, expr)
		}
		for _, n := range names {
			used[n] = true
			if !exported[n] {
				t.Errorf("%s: %q reads %s, which the program does not export (it exports %v)", where, expr, n, slices.Sorted(maps.Keys(exported)))
			}
		}
	}
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d is taken", p.Title, p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			check("panel "+p.Title+" "+tg.RefID, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		sel := labelValues.FindStringSubmatch(q)
		if sel == nil {
			t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q)
			continue
		}
		check("variable "+v.Name, sel[1])
	}
	for _, n := range []string{metrics.RecordsAcked, metrics.AckLatency + "_bucket", metrics.EndToEndLatency + "_bucket", metrics.UnavailableSeconds, metrics.CurrentPhase} {
		if !used[n] {
			t.Errorf("no panel reads %s", n)
		}
	}
}

// The PodMonitor selects the agents' pods, as loadagent.StatefulSet makes
// them, in the default layout's namespace, on their HTTP port and
// loadagent.PathMetrics; the Role lets kube-prometheus's Prometheus find
// them there.
func TestPodMonitor(t *testing.T) {
	raw, err := os.ReadFile("monitoring/podmonitor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	namespace := manifests.Layouts()[0].Namespace
	sts := loadagent.StatefulSet(loadagent.Spec{Namespace: namespace, Agents: 3})
	pod := sts.Spec.Template
	var monitors, roles int
	for _, o := range objs {
		if o.GetNamespace() != namespace {
			t.Errorf("%s %s is in namespace %q, not Kafka's %q where the agents run", o.GetKind(), o.GetName(), o.GetNamespace(), namespace)
		}
		switch o.GetKind() {
		case "PodMonitor":
			monitors++
			if o.GetAPIVersion() != "monitoring.coreos.com/v1" {
				t.Errorf("PodMonitor apiVersion %q, want monitoring.coreos.com/v1", o.GetAPIVersion())
			}
			sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
			if len(sel) == 0 {
				t.Errorf("PodMonitor selects no label")
			}
			for k, v := range sel {
				if pod.Labels[k] != v {
					t.Errorf("PodMonitor selects %s=%s; the agents' pods have %v", k, v, pod.Labels)
				}
			}
			eps, _, _ := unstructured.NestedSlice(o.Object, "spec", "podMetricsEndpoints")
			if len(eps) != 1 {
				t.Fatalf("PodMonitor has %d endpoints, want 1", len(eps))
			}
			ep, _ := eps[0].(map[string]any)
			port := pod.Spec.Containers[0].Ports[0]
			if ep["port"] != port.Name || port.ContainerPort != loadagent.Port || ep["path"] != loadagent.PathMetrics {
				t.Errorf("PodMonitor scrapes port %v path %v; the agents serve %s on port %q (%d)", ep["port"], ep["path"], loadagent.PathMetrics, port.Name, port.ContainerPort)
			}
		case "Role":
			roles++
		}
	}
	if monitors != 1 || roles != 1 {
		t.Errorf("%d PodMonitors and %d Roles, want one of each", monitors, roles)
	}
}
