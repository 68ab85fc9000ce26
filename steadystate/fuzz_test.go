package steadystate

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// FuzzMergeAgentJSON: an agent's measurements, as the suite decodes them
// from GET /raw, are merged or refused with an error, never a panic, however
// they are malformed (an agent of another version, a truncated answer).
func FuzzMergeAgentJSON(f *testing.F) {
	start := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	one := measured(0, start, acked(0, 100, 5*time.Millisecond), acked(1, 100, 7*time.Millisecond))
	one.Marks = []Mark{{Phase: PhaseBaseline, At: start}, {Phase: PhaseFault, At: start.Add(time.Second)}}
	one.AckGaps = [][]Gap{{{From: start.Add(500 * time.Millisecond), To: start.Add(1500 * time.Millisecond)}}}
	raw, err := json.Marshal(one)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`{"runId":"1","topic":"t","producers":1,"start":"2026-12-05T00:00:00Z","loadEnd":"2026-12-05T00:00:01Z","end":"2026-12-05T00:00:02Z","seconds":[{"t":-5,"acked":3}]}`))
	// A clock gone wrong: a load that would end in the year 9999 once ran
	// the suite out of memory, a row per second.
	f.Add([]byte(`{"runId":"1","topic":"t","producers":1,"start":"2026-12-05T00:00:00Z","loadEnd":"9999-12-05T00:00:01Z","end":"9999-12-05T00:00:02Z","seconds":[{"t":0,"acked":3}]}`))
	f.Add([]byte(`{"producers":2,"ackGaps":[[{"from":"2026-12-05T00:00:01Z","to":"2026-12-05T00:00:00Z"}]]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m Measurements
		if err := json.Unmarshal(raw, &m); err != nil {
			return
		}
		// A second agent's measurements, with the producer IDs after m's,
		// so the merge gets past the overlap check to the report's rows.
		next := uint64(m.ProducerBase) + uint64(max(m.Producers, 0))
		if next > math.MaxUint32 {
			return
		}
		m2 := m
		m2.ProducerBase = uint32(next)
		rep, err := Merge([]Measurements{m, m2}, nil, Hypothesis{All: Bounds{MaxUnavailable: time.Second}})
		if err == nil && rep == nil {
			t.Fatal("Merge returned neither a report nor an error")
		}
	})
}
