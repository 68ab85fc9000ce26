package suites

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// observeFencing adds fencingObservation to a hard fault's outcome whose
// victim is a broker (a controller-only node leads no partition).
func observeFencing(_ context.Context, e *env, victims []brokers.Server, o *outcome) {
	if len(victims) > 0 && victims[0].Broker {
		o.Observations = append(o.Observations, fencingObservation(*o, e.ZooKeeperConnect != ""))
	}
}

// fencingObservation says, from a hard fault's timeline, how long after
// the fault the victim's leaderships moved, and whether the victim was
// the active KRaft controller too. When it was, the new controller starts
// every registered broker's session anew as it takes over (Kafka's
// ClusterControlManager.activate touches each one), so the dead broker is
// fenced a whole broker.session.timeout.ms after the failover, not after
// its last heartbeat; and its restarted pod cannot register in between
// (a new incarnation is refused while the old one's session is valid).
// In ZooKeeper mode (zk) the controller learns of the death when the
// broker's ZooKeeper session expires.
func fencingObservation(o outcome, zk bool) string {
	if o.SteadyState == nil || len(o.Victims) == 0 {
		return ""
	}
	var from time.Time
	for _, m := range o.SteadyState.Marks {
		if m.Phase == steadystate.PhaseFault {
			from = m.At
		}
	}
	victim := fmt.Sprint(o.Victims[0])
	var moved, failover time.Duration
	var newController string
	wasController := false
	for _, e := range o.Events {
		if e.At.Before(from) {
			continue
		}
		switch {
		case e.Kind == timeline.ControllerChanged:
			// The victim led the quorum if the first change after the
			// fault is away from it; the takeover is the first look that
			// names another node (a look may know no controller: "-1").
			wasController = wasController || e.From == victim
			if wasController && failover == 0 && e.To != victim && e.To != "-1" {
				failover, newController = e.At.Sub(from), e.To
			}
		case e.Kind == timeline.LeaderChanged && e.From == victim && moved == 0:
			moved = e.At.Sub(from)
		}
	}
	if moved == 0 {
		return fmt.Sprintf("no leadership was seen moving off broker %s after the fault", victim)
	}
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	if zk {
		return fmt.Sprintf("leaderships moved off broker %s %s after the kill; predicted: once its ZooKeeper session expires, within zookeeper.session.timeout.ms and a tick of its last heartbeat", victim, r(moved))
	}
	if failover > 0 && failover <= moved {
		return fmt.Sprintf("leaderships moved off broker %s %s after the kill; it was the active controller too, and node %s took over %s after the kill; predicted: that failover + a whole broker.session.timeout.ms, as the new controller starts every broker's session anew",
			victim, r(moved), newController, r(failover))
	}
	return fmt.Sprintf("leaderships moved off broker %s %s after the kill; predicted: within broker.session.timeout.ms of its last heartbeat (heartbeats every broker.heartbeat.interval.ms)", victim, r(moved))
}

func TestFencingObservation(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 4, 33, 16, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	base := outcome{Victims: []int32{2}, SteadyState: &steadystate.Report{Marks: []steadystate.Mark{{Phase: steadystate.PhaseFault, At: at(0)}}}}
	// As measured on 2026-12-06: broker 2 led the controller quorum too.
	ctrl := timeline.Event{At: at(500), Kind: timeline.ControllerChanged, Subject: "controller", From: "2", To: "1"}
	moved := timeline.Event{At: at(11500), Kind: timeline.LeaderChanged, Subject: "partition 0", From: "2", To: "1"}
	early := moved
	early.At = at(-1000)
	otherCtrl := ctrl
	otherCtrl.From, otherCtrl.To = "0", "1"
	toNone, noneTo1 := ctrl, ctrl
	toNone.To = "-1"
	noneTo1.From, noneTo1.At = "-1", at(900)
	tests := []struct {
		name   string
		events []timeline.Event
		zk     bool
		want   string
	}{
		{"the controller too", []timeline.Event{ctrl, moved}, false, "11.5s after the kill; it was the active controller too, and node 1 took over 500ms after"},
		{"a broker only", []timeline.Event{moved}, false, "11.5s after the kill; predicted: within broker.session.timeout.ms of its last heartbeat"},
		{"another node's failover", []timeline.Event{otherCtrl, moved}, false, "predicted: within broker.session.timeout.ms"},
		{"through a look that knew no controller", []timeline.Event{toNone, noneTo1, moved}, false, "node 1 took over 900ms after"},
		{"ZooKeeper mode", []timeline.Event{ctrl, moved}, true, "once its ZooKeeper session expires"},
		{"moved before the fault only", []timeline.Event{early}, false, "no leadership was seen moving off broker 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			o.Events = tt.events
			if got := fencingObservation(o, tt.zk); !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to say %q", got, tt.want)
			}
		})
	}
	if got := fencingObservation(outcome{}, false); got != "" {
		t.Errorf("no report: %q", got)
	}
}
