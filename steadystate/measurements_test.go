package steadystate

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestMeasurementsJSONRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := measured(5, t0, acked(0, 10, time.Millisecond), acked(1, 20, 3*time.Millisecond))
	m.Seconds[1].Errors = map[string]int64{"NOT_LEADER_FOR_PARTITION": 2}
	m.Seconds[1].Latency[EndToEnd] = histOf(4*time.Millisecond, 9*time.Second)
	m.AckGaps = [][]Gap{{{t0.Add(time.Second), t0.Add(1500 * time.Millisecond)}}}
	m.Marks = []Mark{{PhaseFault, t0.Add(time.Second)}}
	m.Records.ReorderExamples = []Anomaly{{Partition: 1, Offset: 9, Producer: 5, Seq: 3, PrevSeq: 4}}
	m.DrainError = "drain timed out"

	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"e2e":{"bucketDeltas":[`)) {
		t.Errorf("histograms are not keyed by metric name: %s", b)
	}
	var got Measurements
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("round trip changed the measurements\ngot  %+v\nwant %+v", got, m)
	}
	if err := json.Unmarshal(bytes.Replace(b, []byte(`"e2e"`), []byte(`"nope"`), 1), &got); err == nil {
		t.Errorf("an unknown metric name decoded")
	}
}
