package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/timeline"
)

func TestEventLanes(t *testing.T) {
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	r := &steadystate.Report{Start: start, LoadEnd: start.Add(60 * time.Second),
		Marks: []steadystate.Mark{{Phase: steadystate.PhaseFault, At: start.Add(15 * time.Second)}, {Phase: steadystate.PhaseRecovery, At: start.Add(25 * time.Second)}}}
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	var events []timeline.Event
	for p := range 6 {
		events = append(events, timeline.Event{At: at(24 + float64(p)*0.05), Lane: timeline.LaneKafka, Kind: timeline.LeaderChanged, Subject: fmt.Sprintf("partition %d", p)})
	}
	events = append(events,
		timeline.Event{At: at(24.1), Lane: timeline.LaneKafka, Kind: timeline.BrokerFenced, Subject: "broker 0"},
		timeline.Event{At: at(25.5), Lane: timeline.LaneKafka, Kind: timeline.ISRExpanded, Subject: "partition 2"},
		timeline.Event{At: at(15.1), Lane: timeline.LaneKubernetes, Kind: timeline.PodDeleting, Subject: "pod kafka-0"},
		timeline.Event{At: at(90), Lane: timeline.LaneKubernetes, Kind: timeline.PodReady, Subject: "pod kafka-0"}, // after the load: not drawn
	)
	c := eventLanes(events, r)
	if c == nil || len(c.Lanes) != 2 {
		t.Fatalf("lanes: %+v", c)
	}
	kafka, kube := c.Lanes[0], c.Lanes[1]
	// The six leader moves and the fencing within a second: one mark,
	// coloured as the fencing; the ISR growing 1.5 s later: another.
	if len(kafka.Marks) != 2 || kafka.Marks[0].Label != "leader ×6, fenced broker 0" || kafka.Marks[0].Class != "ev-fenced" ||
		kafka.Marks[1].Label != "ISR+ 2" || kafka.Marks[1].Class != "ev-isr-expanded" {
		t.Errorf("Kafka lane: %+v", kafka.Marks)
	}
	if !strings.Contains(kafka.Marks[0].Title, "partition 5") {
		t.Errorf("the group's tooltip does not name its partitions: %q", kafka.Marks[0].Title)
	}
	// Two marks 1.4 s (26 px) apart: the second label goes on the next row.
	if kafka.Marks[1].LabelY <= kafka.Marks[0].LabelY {
		t.Errorf("overlapping labels on one row: %+v", kafka.Marks)
	}
	if len(kube.Marks) != 1 || kube.Marks[0].Class != "ev-pod" || kube.Marks[0].Label != "deleting kafka-0" {
		t.Errorf("Kubernetes lane: %+v, want the deletion only", kube.Marks)
	}
	// On the charts' axis: 15.1 s of 60 s.
	if want := round1(plotLeft + 15.1/60*plotWidth); kube.Marks[0].X != want {
		t.Errorf("x = %g, want %g", kube.Marks[0].X, want)
	}
	if eventLanes(nil, r) != nil {
		t.Error("lanes without events")
	}
}
