package steadystate

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// TestVerdictFigures: every bound says its outcome in numbers, in its
// kind's unit, next to the text people read.
func TestVerdictFigures(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	baseline := PhaseStats{Phase: PhaseBaseline, From: t0, To: t0.Add(10 * time.Second), Seconds: 10, Throughput: 1000,
		Ack: LatencyStats{Count: 10_000, P99: 5_000}, E2E: LatencyStats{Count: 10_000, P99: 8_000}}
	after := PhaseStats{Phase: PhaseAfter, From: t0.Add(10 * time.Second), To: t0.Add(20 * time.Second), Seconds: 10, Throughput: 950,
		Ack: LatencyStats{Count: 9500, P99: 250_000}, E2E: LatencyStats{Count: 9500, P99: 1_500_000}, Unavailable: 1500 * time.Millisecond}
	afterOnly := func(b Bounds) Hypothesis { return Hypothesis{Phases: map[Phase]Bounds{PhaseAfter: b}} }
	none := -1.0 // nothing observed
	tests := []struct {
		name     string
		h        Hypothesis
		phases   []PhaseStats // default: baseline and after
		rec      Records
		kind     BoundKind
		unit     Unit
		limit    float64
		observed float64
		texts    string // bound, limit and observed
	}{
		{"min throughput", afterOnly(Bounds{MinThroughput: 500}), nil, Records{}, BoundMinThroughput, UnitRecordsPerSecond, 500, 950,
			"min throughput|500.0 records/s|950.0 records/s"},
		{"throughput ratio", afterOnly(Bounds{MinThroughputRatio: 0.9}), nil, Records{}, BoundMinThroughputRatio, UnitRatio, 0.9, 0.95,
			"min throughput ratio to baseline|0.90|0.95 (950.0 of 1000.0 records/s)"},
		{"p99 ack", afterOnly(Bounds{MaxP99Ack: 200 * time.Millisecond}), nil, Records{}, BoundMaxP99Ack, UnitSeconds, 0.2, 0.25,
			"max p99 ack latency|200ms|250ms"},
		{"p99 end-to-end", afterOnly(Bounds{MaxP99E2E: 2 * time.Second}), nil, Records{}, BoundMaxP99E2E, UnitSeconds, 2, 1.5,
			"max p99 end-to-end latency|2s|1.5s"},
		{"unavailability", afterOnly(Bounds{MaxUnavailable: 30 * time.Second}), nil, Records{}, BoundMaxUnavailability, UnitSeconds, 30, 1.5,
			"max unavailability|30s|1.5s"},
		{"no ack: nothing observed", afterOnly(Bounds{MaxP99Ack: time.Second}), []PhaseStats{{Phase: PhaseAfter, Seconds: 10}}, Records{},
			BoundMaxP99Ack, UnitSeconds, 1, none, "max p99 ack latency|1s|no ack in the phase"},
		{"sub-second phase: throughput not measured", afterOnly(Bounds{MinThroughput: 10}), []PhaseStats{{Phase: PhaseAfter}}, Records{},
			BoundMinThroughput, UnitRecordsPerSecond, 10, none, "min throughput|10.0 records/s|not measured: the phase holds no whole second"},
		{"lost records", Hypothesis{}, nil, Records{Lost: 3}, BoundLostRecords, UnitRecords, 0, 3, "lost records|0|3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			phases := tt.phases
			if phases == nil {
				phases = []PhaseStats{baseline, after}
			}
			verdicts, _ := tt.h.evaluate(phases, nil, tt.rec, true, t0.Add(20*time.Second))
			var v *Verdict
			for i := range verdicts {
				if verdicts[i].Kind == tt.kind {
					v = &verdicts[i]
					break
				}
			}
			if v == nil {
				t.Fatalf("no %s verdict in %+v", tt.kind, verdicts)
			}
			if v.Unit != tt.unit || v.Unit != tt.kind.Unit() || v.LimitValue != tt.limit {
				t.Errorf("unit %q limit %g, want %q %g", v.Unit, v.LimitValue, tt.unit, tt.limit)
			}
			switch {
			case tt.observed == none && v.ObservedValue != nil:
				t.Errorf("observed %g, want nothing", *v.ObservedValue)
			case tt.observed != none && (v.ObservedValue == nil || math.Abs(*v.ObservedValue-tt.observed) > 1e-9):
				t.Errorf("observed %v, want %g", v.ObservedValue, tt.observed)
			}
			if got := strings.Join([]string{v.Bound, v.Limit, v.Observed}, "|"); got != tt.texts {
				t.Errorf("texts %q, want %q", got, tt.texts)
			}
		})
	}
}

func TestBoundKindMin(t *testing.T) {
	for _, k := range []BoundKind{BoundMinThroughput, BoundMinThroughputRatio} {
		if !k.Min() {
			t.Errorf("%s: want a least value", k)
		}
	}
	for _, k := range []BoundKind{BoundMaxP99Ack, BoundMaxP99E2E, BoundMaxUnavailability, BoundLostRecords, BoundFinalDrain, "unknown"} {
		if k.Min() {
			t.Errorf("%s: want a most value", k)
		}
	}
	if u := BoundKind("unknown").Unit(); u != "" {
		t.Errorf("unknown kind has unit %q", u)
	}
}

// TestVerdictJSON: the figures sit next to the texts in report.json, null
// when nothing was observed; a verdict written before them reads back
// with no kind.
func TestVerdictJSON(t *testing.T) {
	tests := []struct {
		name string
		v    Verdict
		want string
	}{
		{"observed", newVerdict(PhaseAfter, BoundMaxP99Ack, seconds(time.Second), seconds(250*time.Millisecond), true),
			`{"phase":"after","bound":"max p99 ack latency","limit":"1s","observed":"250ms","passed":true,"kind":"max-p99-ack","unit":"seconds","limitValue":1,"observedValue":0.25}`},
		{"nothing observed", newVerdict(PhaseFault, BoundMaxP99E2E, seconds(time.Second), nothing("nothing consumed in the phase"), false),
			`{"phase":"fault","bound":"max p99 end-to-end latency","limit":"1s","observed":"nothing consumed in the phase","passed":false,"kind":"max-p99-e2e","unit":"seconds","limitValue":1,"observedValue":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tt.want {
				t.Errorf("JSON\n%s\nwant\n%s", raw, tt.want)
			}
		})
	}
	var old Verdict
	if err := json.Unmarshal([]byte(`{"phase":"after","bound":"max p99 ack latency","limit":"1s","observed":"250ms","passed":true}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Kind != "" || old.ObservedValue != nil || old.Limit != "1s" {
		t.Errorf("an old verdict reads back as %+v", old)
	}
}
