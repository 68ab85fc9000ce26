package report

import "testing"

// TestThroughputBack reads testReport: 1000 records/s, nothing acked from
// 12 s to 14 s.
func TestThroughputBack(t *testing.T) {
	tests := []struct {
		name  string
		since float64 // seconds
		ratio float64
		want  string
	}{
		{"back after the gap", 12, 0.9, "2s"},
		{"to the millisecond", 12.0004, 0.9, "2s"},
		{"mid-second", 12.5, 0.9, "1.5s"},
		{"back at once", 20, 0.9, "0s"},
		{"never above the baseline", 12, 1.5, Never},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ThroughputBack(testReport(), at(tt.since), tt.ratio); got != tt.want {
				t.Errorf("ThroughputBack = %q, want %q", got, tt.want)
			}
		})
	}
}
