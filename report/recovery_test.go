package report

import (
	"encoding/json"
	"testing"
	"time"
)

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
		{"never above the baseline", 12, 1.5, "never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ThroughputBack(testReport(), at(tt.since), tt.ratio).String(); got != tt.want {
				t.Errorf("ThroughputBack = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRecoveryJSON: a time reached is a duration string, one never reached
// is null, one not measured is left out; older reports' "never" reads as
// never.
func TestRecoveryJSON(t *testing.T) {
	tests := []struct {
		name string
		r    Recovery
		json string
	}{
		{"all reached", Recovery{ToPodsReady: Reached(20 * time.Millisecond), ToHealthy: Reached(2253 * time.Millisecond),
			InjectToHealthy: Reached(47313 * time.Millisecond), ThroughputBack: Reached(286 * time.Millisecond)},
			`{"toPodsReady":"20ms","toHealthy":"2.253s","injectToHealthy":"47.313s","throughputBack":"286ms"}`},
		{"never healthy", Recovery{ToPodsReady: Reached(time.Second), ToHealthy: Never(), InjectToHealthy: Never(), ThroughputBack: Never()},
			`{"toPodsReady":"1s","toHealthy":null,"injectToHealthy":null,"throughputBack":null}`},
		{"ended before the throughput was back", Recovery{ToPodsReady: Reached(time.Second), ToHealthy: Reached(2 * time.Second), InjectToHealthy: Reached(12 * time.Second)},
			`{"toPodsReady":"1s","toHealthy":"2s","injectToHealthy":"12s"}`},
		{"nothing measured", Recovery{}, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tt.json {
				t.Errorf("JSON %s, want %s", raw, tt.json)
			}
			var back Recovery
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if back != tt.r {
				t.Errorf("read back %v, want %v", back, tt.r)
			}
		})
	}
}

func TestRecoveryReadsOlderReports(t *testing.T) {
	tests := []struct {
		name, json string
		want       Recovery
		err        bool
	}{
		{"the map of schema 1", `{"injectToHealthy":"47.313s","throughputBack":"never","toHealthy":"2.253s","toPodsReady":"20ms"}`,
			Recovery{ToPodsReady: Reached(20 * time.Millisecond), ToHealthy: Reached(2253 * time.Millisecond), InjectToHealthy: Reached(47313 * time.Millisecond), ThroughputBack: Never()}, false},
		{"an empty map", `{}`, Recovery{}, false},
		{"not a duration", `{"toHealthy":"soon"}`, Recovery{}, true},
		{"not a string", `{"toHealthy":12}`, Recovery{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Recovery
			err := json.Unmarshal([]byte(tt.json), &got)
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want one: %v", err, tt.err)
			}
			if !tt.err && got != tt.want {
				t.Errorf("read %v, want %v", got, tt.want)
			}
		})
	}
}
