package groupcheck

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLag(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	series := func(recs ...int64) []LagSample {
		var out []LagSample
		for i, r := range recs {
			out = append(out, LagSample{At: at(i), Records: r})
		}
		return out
	}
	// Second 0 is the warm-up, 1-2 the baseline, the fault from 3 on.
	backlog := LagOf([]LagSample{{at(1), 3000}, {at(2), 20}, {at(3), 25}, {at(4), 30}, {at(5), 500}, {at(6), 45}}, at(1), at(5), at(100))
	if backlog.Baseline != 30 || backlog.BaselineMax != 3000 || backlog.BackAt != at(6) {
		t.Errorf("a warm-up's backlog drained in the baseline: %+v, want a baseline of 30 (the upper median) and back at 6 s", backlog)
	}
	tests := []struct {
		name     string
		samples  []LagSample
		want     Lag
		wantBack time.Duration
	}{
		{name: "never above twice the baseline", samples: series(900, 20, 30, 55, 60, 10),
			want: Lag{Baseline: 30, BaselineMax: 30, Peak: 60, PeakAt: at(4), Samples: 6}},
		{name: "a peak, then back", samples: series(900, 20, 30, 500, 2000, 800, 61, 60, 40),
			want: Lag{Baseline: 30, BaselineMax: 30, Peak: 2000, PeakAt: at(4), BackAt: at(7), Back: 4 * time.Second, Samples: 9}},
		{name: "never back", samples: series(0, 20, 30, 500, 2000, 800, 400),
			want: Lag{Baseline: 30, BaselineMax: 30, Peak: 2000, PeakAt: at(4), NeverBack: true, Samples: 7}},
		{name: "no sample after the fault", samples: series(0, 20),
			want: Lag{Baseline: 20, BaselineMax: 20, Samples: 2}},
	}
	// The drain after the load's end does not make a lag that never came
	// back look back.
	if got := LagOf(series(0, 20, 30, 500, 2000, 800, 400, 0, 0), at(1), at(3), at(7)); !got.NeverBack || got.Samples != 7 {
		t.Errorf("with the drain from 7 s: %+v, want never back over 7 samples", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := figures(LagOf(tt.samples, at(1), at(3), at(100))); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LagOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The lag is what was acknowledged above what was processed, per
// partition, never below zero.
func TestCheckerLag(t *testing.T) {
	c := New(time.Unix(0, 0), []int64{10, 0})
	if c.Lag() != 0 {
		t.Fatalf("lag %d before anything", c.Lag())
	}
	for o := int64(10); o < 20; o++ {
		c.Acked(0, o)
	}
	c.Acked(1, 0)
	c.Observe(Event{Kind: Assigned, Member: "m", Partition: 0})
	c.Observe(Event{Kind: Polled, Member: "m", Partition: 0, First: 10, Last: 14})
	if got := c.Lag(); got != 5+1 {
		t.Errorf("lag %d, want 6 (offsets 15-19 of partition 0, 0 of partition 1)", got)
	}
}

// A lag back within the bound passes, one back later or never fails, and
// one never sampled after the fault fails: it could not have failed.
func TestLagProblems(t *testing.T) {
	peak := time.Date(2026, 12, 7, 11, 0, 5, 0, time.UTC)
	const bound = 70 * time.Second
	tests := []struct {
		name string
		l    Lag
		want string // in the problems; empty: none
	}{
		{"back in 48 s", Lag{Baseline: 10, Peak: 3000, PeakAt: peak, Back: 48 * time.Second, Samples: 300}, ""},
		{"never rose", Lag{Baseline: 10, Peak: 15, PeakAt: peak, Samples: 300}, ""},
		{"back in 95 s", Lag{Baseline: 10, Peak: 3000, PeakAt: peak, Back: 95 * time.Second, Samples: 300}, "over the bound 1m10s"},
		{"never back", Lag{Baseline: 10, Peak: 3000, PeakAt: peak, NeverBack: true, Samples: 300}, "not back"},
		{"not sampled", Lag{Baseline: 10}, "not sampled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := strings.Join(tt.l.Problems(bound, "the session and a margin"), "\n")
			if (tt.want == "") != (p == "") || !strings.Contains(p, tt.want) {
				t.Errorf("problems %q, want %q", p, tt.want)
			}
		})
	}
}

// The lag per second keeps each second's highest sample, a second with
// none as -1, from the first sample on.
func TestLagPerSecond(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	at := func(ms int, n int64) LagSample {
		return LagSample{At: t0.Add(time.Duration(ms) * time.Millisecond), Records: n}
	}
	l := LagOf([]LagSample{at(0, 4), at(250, 9), at(750, 2), at(2100, 7), at(2600, 1)}, t0, t0.Add(time.Second), t0.Add(time.Minute))
	want := []int64{9, -1, 7}
	if !l.SecondsFrom.Equal(t0) || len(l.PerSecond) != len(want) {
		t.Fatalf("from %s, per second %v; want %s and %v", l.SecondsFrom, l.PerSecond, t0, want)
	}
	for i, w := range want {
		if l.PerSecond[i] != w {
			t.Errorf("second %d: %d, want %d", i, l.PerSecond[i], w)
		}
	}
	if l := LagOf(nil, t0, t0, t0); l.PerSecond != nil {
		t.Errorf("no samples: per second %v", l.PerSecond)
	}
}

// figures is l without its series, which other tests check.
func figures(l Lag) Lag {
	l.SecondsFrom, l.PerSecond = time.Time{}, nil
	return l
}
