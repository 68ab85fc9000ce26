package steadystate

import (
	"testing"
	"time"
)

func TestThroughputBackAfter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	series := func(acked ...int64) []Second {
		out := make([]Second, len(acked))
		for i, a := range acked {
			out[i] = Second{T: int64(i), Acked: a}
		}
		return out
	}
	base := []PhaseStats{{Phase: PhaseBaseline, From: t0, To: t0.Add(4 * time.Second), Seconds: 4, Throughput: 100}}
	tests := []struct {
		name   string
		series []Second
		phases []PhaseStats
		since  int
		want   time.Duration
		ok     bool
	}{
		{"back after two seconds", series(100, 100, 100, 100, 0, 0, 95, 100, 100, 100, 100), base, 4, 2 * time.Second, true},
		{"a blip resets the hold", series(100, 100, 100, 100, 0, 95, 10, 95, 95, 95, 95), base, 4, 3 * time.Second, true},
		{"never back", series(100, 100, 100, 100, 0, 50, 50, 50, 50, 50), base, 4, 0, false},
		{"no baseline", series(100, 100, 100), nil, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Start: t0, Series: tt.series, Phases: tt.phases}
			got, ok := r.ThroughputBackAfter(t0.Add(time.Duration(tt.since)*time.Second), 0.9)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %s %t, want %s %t", got, ok, tt.want, tt.ok)
			}
		})
	}
}
