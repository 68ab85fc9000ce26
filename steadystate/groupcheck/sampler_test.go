package groupcheck

import (
	"reflect"
	"testing"
	"time"
)

func TestSampler(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var s Sampler
	for i, r := range []int64{10, 10, 10, 500, 900, 300, 15, 10} {
		s.Add(LagSample{At: at(i), Records: r})
	}
	tests := []struct {
		name                     string
		baseline, fault, loadEnd time.Time
		want                     *Lag
	}{
		{"no baseline mark", time.Time{}, at(3), at(8), nil},
		{"no fault mark", at(0), time.Time{}, at(8), nil},
		{"peak and back", at(0), at(3), at(8), &Lag{Baseline: 10, BaselineMax: 10, Peak: 900, PeakAt: at(4), BackAt: at(6), Back: 3 * time.Second, Samples: 8}},
		{"load ended before the lag was back", at(0), at(3), at(6), &Lag{Baseline: 10, BaselineMax: 10, Peak: 900, PeakAt: at(4), NeverBack: true, Samples: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Lag(tt.baseline, tt.fault, tt.loadEnd)
			if (got == nil) != (tt.want == nil) || got != nil && !reflect.DeepEqual(figures(*got), *tt.want) {
				t.Errorf("Lag = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSamplerKeepsAtMostMax(t *testing.T) {
	var s Sampler
	for i := range MaxLagSamples + 10 {
		s.Add(LagSample{At: time.Unix(int64(i), 0), Records: 1})
	}
	if l := s.Lag(time.Unix(0, 0), time.Unix(1, 0), time.Unix(1e9, 0)); l.Samples != MaxLagSamples {
		t.Errorf("kept %d samples, want %d", l.Samples, MaxLagSamples)
	}
}
