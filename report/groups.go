package report

import (
	"fmt"
	"slices"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// The lag lines' classes: the application's consumer group (franz-go)
// and Kafka's own Java clients' group.
const (
	classLagGroup = "lag-group"
	classLagJava  = "lag-java"
)

// lagChart draws the consumer groups' lag over the run's seconds, as the
// other charts of r: each second's highest sample, for the steady state's
// group and the Java clients' group (java, nil without them); ok is false
// when neither was sampled.
func lagChart(r *steadystate.Report, java *javaclients.Result) (c chart, ok bool) {
	end := loadSeconds(r)
	var ss []series
	add := func(class, label string, l *groupcheck.Lag) {
		if l == nil || len(l.PerSecond) == 0 {
			return
		}
		s := series{class: class, label: label}
		from := l.SecondsFrom.Sub(r.Start).Seconds()
		for i, v := range l.PerSecond {
			if t := from + float64(i) + 0.5; t >= 0 && t <= end {
				s.points = append(s.points, point{t, float64(v), v >= 0})
			}
		}
		ss = append(ss, s)
	}
	if r.Group != nil {
		add(classLagGroup, "the consumer group's lag", r.Group.Lag)
	}
	if java != nil {
		add(classLagJava, "the Java group's lag", java.Group.Lag)
	}
	if len(ss) == 0 {
		return chart{}, false
	}
	c = newChart("Consumer lag: acknowledged records not yet read (highest per second)", end, phaseSpans(r, end), ss, nil, false)
	c.Caption = "The lag is sampled every 250 ms; the bound on the member faults is on its time back within twice the baseline's (consumer-groups.md)."
	return c, true
}

// groupEvents are the consumer groups' assignments and revocations as
// events of the groups' lane, in time order: the steady state's group's
// ("group") and the Java clients' group's ("Java"; java is nil without
// them). A killed member's partitions count as revoked when it died.
func groupEvents(r *steadystate.Report, java *javaclients.Result) []timeline.Event {
	var out []timeline.Event
	add := func(group string, evs []groupcheck.Event) {
		for _, e := range evs {
			k := timeline.PartitionsAssigned
			if e.Kind == groupcheck.Revoked {
				k = timeline.PartitionsRevoked
			}
			out = append(out, timeline.Event{At: e.At, Lane: timeline.LaneGroups, Kind: k,
				Subject: fmt.Sprintf("%s %s p%d", group, e.Member, e.Partition)})
		}
	}
	if r != nil && r.Group != nil {
		add("group", r.Group.Rebalances)
	}
	if java != nil {
		add("Java", java.Group.Rebalances)
	}
	slices.SortStableFunc(out, func(a, b timeline.Event) int { return a.At.Compare(b.At) })
	return out
}
