package steadystate

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestHypothesisEvaluate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	phases := []PhaseStats{
		{Phase: PhaseBaseline, From: at(0), To: at(10), Seconds: 10, Throughput: 1000, Ack: LatencyStats{Count: 10_000, P99: 5_000}, E2E: LatencyStats{Count: 10_000, P99: 8_000}},
		{Phase: PhaseFault, From: at(10), To: at(20), Seconds: 10, Throughput: 400, Ack: LatencyStats{Count: 4000, P99: 900_000}, E2E: LatencyStats{Count: 4000, P99: 2_000_000},
			WorstAckAt: at(13), WorstE2EAt: at(14), Unavailable: 3 * time.Second, UnavailableFrom: at(12)},
		{Phase: PhaseAfter, From: at(20), To: at(30), Seconds: 10, Throughput: 950, Ack: LatencyStats{Count: 9500, P99: 6_000}, E2E: LatencyStats{Count: 9500, P99: 7_000}},
	}
	tests := []struct {
		name       string
		h          Hypothesis
		phases     []PhaseStats // default: the three above
		rec        Records
		idem       bool
		partitions []PartitionStall
		want       []Violation // Phase, Kind and At are compared
		checked    int
	}{
		{name: "default hypothesis on a recovered run", h: DefaultHypothesis(), idem: true, checked: 5},
		{
			name: "unavailability in the fault phase",
			h:    Hypothesis{Phases: map[Phase]Bounds{PhaseFault: {MaxUnavailable: time.Second}}},
			want: []Violation{{Phase: PhaseFault, Figures: Figures{Kind: BoundMaxUnavailability}, At: at(12)}}, checked: 4,
		},
		{
			name: "p99 ack bound on every phase",
			h:    Hypothesis{All: Bounds{MaxP99Ack: 100 * time.Millisecond}},
			want: []Violation{{Phase: PhaseFault, Figures: Figures{Kind: BoundMaxP99Ack}, At: at(13)}}, checked: 6,
		},
		{
			name: "p99 ack as a multiple of the baseline's: 900 ms > 20 × 5 ms floored at 500 ms; 6 ms after is within",
			h:    Hypothesis{All: Bounds{MaxP99AckRatio: 20, P99AckFloor: 500 * time.Millisecond}},
			want: []Violation{{Phase: PhaseFault, Figures: Figures{Kind: BoundMaxP99Ack}, At: at(13)}}, checked: 5,
		},
		{
			name:    "the same multiple with a floor above the fault's p99 passes",
			h:       Hypothesis{All: Bounds{MaxP99AckRatio: 20, P99AckFloor: time.Second}},
			checked: 5,
		},
		{
			name:    "no baseline phase: the multiple is not checked",
			h:       Hypothesis{All: Bounds{MaxP99AckRatio: 2}},
			phases:  []PhaseStats{{Phase: PhaseFault, From: at(10), To: at(20), Seconds: 10, Ack: LatencyStats{Count: 10, P99: 9_000_000}}},
			checked: 3,
		},
		{
			name:    "the multiple on an empty phase (a recovery over at once) is not measured",
			h:       Hypothesis{Phases: map[Phase]Bounds{PhaseRecovery: {MaxP99AckRatio: 20, P99AckFloor: time.Second}}},
			phases:  append(slices.Clone(phases[:2]), PhaseStats{Phase: PhaseRecovery, From: at(20), To: at(20)}),
			checked: 4,
		},
		{
			name:    "the multiple on a phase of seconds without an ack fails",
			h:       Hypothesis{Phases: map[Phase]Bounds{PhaseRecovery: {MaxP99AckRatio: 20, P99AckFloor: time.Second}}},
			phases:  append(slices.Clone(phases[:2]), PhaseStats{Phase: PhaseRecovery, From: at(20), To: at(25), Seconds: 5}),
			want:    []Violation{{Phase: PhaseRecovery, Figures: Figures{Kind: BoundMaxP99Ack}, At: at(20)}},
			checked: 4,
		},
		{
			name: "e2e bound",
			h:    Hypothesis{All: Bounds{MaxP99E2E: time.Second}},
			want: []Violation{{Phase: PhaseFault, Figures: Figures{Kind: BoundMaxP99E2E}, At: at(14)}}, checked: 6,
		},
		{
			name: "throughput ratio after the fault",
			h:    Hypothesis{Phases: map[Phase]Bounds{PhaseAfter: {MinThroughputRatio: 0.99}}},
			want: []Violation{{Phase: PhaseAfter, Figures: Figures{Kind: BoundMinThroughputRatio}, At: at(20)}}, checked: 4,
		},
		{
			name:    "absolute throughput, phase override wins",
			h:       Hypothesis{All: Bounds{MinThroughput: 500}, Phases: map[Phase]Bounds{PhaseFault: {MinThroughput: 300}}},
			checked: 6,
		},
		{
			name: "lost and reordered records",
			h:    Hypothesis{}, rec: Records{Lost: 3, Reordered: 1, Duplicates: 2, InconsistentOffsets: 4}, idem: true,
			want: []Violation{{Figures: Figures{Kind: BoundLostRecords}, At: at(30)}, {Figures: Figures{Kind: BoundDuplicateRecords}, At: at(30)},
				{Figures: Figures{Kind: BoundReorderedRecords}, At: at(30)}, {Figures: Figures{Kind: BoundInconsistentOffsets}, At: at(30)}},
			checked: 4,
		},
		{
			name:    "a phase with no ack violates a latency bound",
			h:       Hypothesis{Phases: map[Phase]Bounds{PhaseFault: {MaxP99Ack: time.Hour}}},
			phases:  []PhaseStats{{Phase: PhaseFault, From: at(10), To: at(20), Seconds: 10}},
			want:    []Violation{{Phase: PhaseFault, Figures: Figures{Kind: BoundMaxP99Ack}, At: at(10)}},
			checked: 4,
		},
		{
			name:    "a sub-second phase with no ack is not measured for latency",
			h:       Hypothesis{All: Bounds{MaxP99Ack: time.Second}},
			phases:  append(slices.Clone(phases[:2]), PhaseStats{Phase: PhaseRecovery, From: at(20), To: at(20).Add(400 * time.Millisecond)}),
			checked: 6,
		},
		{
			name:    "a sub-second phase is not measured for throughput",
			h:       Hypothesis{All: Bounds{MinThroughput: 10}},
			phases:  []PhaseStats{{Phase: PhaseFault, From: at(10), To: at(10).Add(400 * time.Millisecond)}},
			checked: 4,
		},
		{
			name: "one partition stalled for 12 s while the others acked: the stall bound fails at its start",
			h:    Hypothesis{MaxPartitionStall: 10 * time.Second},
			partitions: []PartitionStall{{Partition: 0, Longest: 800 * time.Millisecond, From: at(11)},
				{Partition: 1, Longest: 12 * time.Second, From: at(12)}, {Partition: 2, Longest: time.Second, From: at(13)}},
			want:    []Violation{{Figures: Figures{Kind: BoundMaxPartitionStall}, At: at(12)}},
			checked: 4,
		},
		{
			name:       "every partition within the stall bound",
			h:          Hypothesis{MaxPartitionStall: 10 * time.Second},
			partitions: []PartitionStall{{Partition: 0, Longest: 10 * time.Second, From: at(11)}},
			checked:    4,
		},
		{
			name:    "no per-partition figures: the stall bound is not measured",
			h:       Hypothesis{MaxPartitionStall: time.Second},
			checked: 4,
		},
		{
			name: "duplicates allowed without idempotence",
			h:    Hypothesis{}, rec: Records{Duplicates: 2},
			checked: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ph := phases
			if tt.phases != nil {
				ph = tt.phases
			}
			verdicts, got := tt.h.evaluate(ph, tt.partitions, tt.rec, tt.idem, at(30))
			if len(verdicts) != tt.checked {
				t.Errorf("%d bounds checked, want %d: %+v", len(verdicts), tt.checked, verdicts)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("violations %v, want %v", got, tt.want)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Phase != w.Phase || g.Kind != w.Kind || !g.At.Equal(w.At) {
					t.Errorf("violation %d = {%s %s %s}, want {%s %s %s}", i, g.Phase, g.Kind, g.At, w.Phase, w.Kind, w.At)
				}
			}
		})
	}
}

// A stall during the fault phase must be reported against that phase, at
// the time it started, and not against the others.
func TestRunStallIsReportedInItsPhase(t *testing.T) {
	c := newFake(t)
	cfg := fakeConfig(c)
	cfg.NumRecords = 0
	cfg.Rate = 1000
	cfg.Hypothesis = &Hypothesis{All: Bounds{MaxUnavailable: 700 * time.Millisecond}}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), fakeRunTimeout)
	defer cancel()

	const stall = 1500 * time.Millisecond
	var stallStart atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		hold := func(d time.Duration) bool {
			select {
			case <-time.After(d): // holding a fault for a set time
				return true
			case <-ctx.Done():
				return false
			}
		}
		if !hold(time.Second) {
			return
		}
		r.Mark(PhaseFault)
		wake := make(chan struct{})
		c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			select {
			case <-wake:
				c.DropControl()
				return nil, nil, false
			default:
			}
			stallStart.CompareAndSwap(0, time.Now().UnixNano())
			c.SleepControl(func() { <-wake })
			return nil, nil, false
		})
		if !hold(stall) {
			close(wake)
			return
		}
		close(wake)
		if !hold(time.Second) {
			return
		}
		r.Mark(PhaseAfter)
		if hold(time.Second) {
			r.Stop()
		}
	}()
	rep, err := r.Run(ctx)
	<-done
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rep.Records.Clean() {
		t.Errorf("a stall must not lose records: %+v", rep.Records)
	}
	if len(rep.Violations) != 1 {
		t.Fatalf("violations %v; want one, unavailability in the fault phase", rep.Violations)
	}
	v := rep.Violations[0]
	started := time.Unix(0, stallStart.Load())
	if v.Phase != PhaseFault || v.Kind != BoundMaxUnavailability {
		t.Errorf("violation %v, want max unavailability in phase fault", v)
	}
	if d := v.At.Sub(started); d < -200*time.Millisecond || d > 200*time.Millisecond {
		t.Errorf("violation at %s, %s from the stall's start %s", v.At, d, started)
	}
	if rep.Unavailable < stall-300*time.Millisecond {
		t.Errorf("unavailability %s, want about %s", rep.Unavailable, stall)
	}
	t.Logf("unavailable %s from %s; violation: %s", rep.Unavailable, rep.UnavailableFrom, v)
}
