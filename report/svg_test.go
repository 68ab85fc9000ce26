package report

import (
	"math"
	"strings"
	"testing"
)

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
