package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// The event lanes: what Kafka and Kubernetes did, under the charts and on
// their time axis. Each group of events (one kind within groupWindow) is a
// mark with a label; labels take the first of laneRows rows where they do
// not overlap the one before.
const (
	groupWindow  = time.Second
	laneRows     = 4
	laneRowH     = 14
	laneTop      = 8
	laneGap      = 10
	labelCharPx  = 6.2 // an 11 px label's width per character, about
	laneLabelPad = 4
)

// laneChart is the SVG of the lanes.
type laneChart struct {
	Width, Height            float64
	Left, Right, Top, Bottom float64
	XTicks                   []tick
	Bands                    []band
	Lanes                    []laneRow
}

// laneRow is one lane: its name, where it starts, and its marks.
type laneRow struct {
	Name      string
	Y, Height float64
	Marks     []laneMark
}

// laneMark is one group of events.
type laneMark struct {
	X, Y1, Y2, LabelY float64
	Class, Label      string
	Title             string // every subject, for the tooltip
}

// eventClass is a mark's CSS class: its colour.
func eventClass(k timeline.Kind) string {
	switch k {
	case timeline.LeaderChanged:
		return "ev-leader"
	case timeline.ISRShrunk:
		return "ev-isr-shrunk"
	case timeline.ISRExpanded:
		return "ev-isr-expanded"
	case timeline.BrokerFenced, timeline.BrokerGone:
		return "ev-fenced"
	case timeline.BrokerUnfenced, timeline.BrokerRegistered:
		return "ev-unfenced"
	case timeline.ControllerChanged:
		return "ev-controller"
	case timeline.NodeCordoned, timeline.NodeUncordoned:
		return "ev-node"
	case timeline.PartitionsAssigned:
		return "ev-assigned"
	case timeline.PartitionsRevoked:
		return "ev-revoked"
	}
	return "ev-pod"
}

// eventLanes lays out s's events over the run's seconds, as the charts of
// r are; nil when the spec recorded no event.
func eventLanes(events []timeline.Event, r *steadystate.Report) *laneChart {
	if len(events) == 0 || r == nil {
		return nil
	}
	end := loadSeconds(r)
	spans := phaseSpans(r, end)
	c := &laneChart{Width: chartWidth, Left: plotLeft, Right: plotLeft + plotWidth, Top: laneTop}
	x := scale{lo: 0, hi: end, from: c.Left, to: c.Right}
	y := c.Top
	lanes := []timeline.Lane{timeline.LaneKafka, timeline.LaneKubernetes}
	if slices.ContainsFunc(events, func(e timeline.Event) bool { return e.Lane == timeline.LaneGroups }) {
		lanes = append(lanes, timeline.LaneGroups)
	}
	for _, lane := range lanes {
		var evs []timeline.Event
		for _, e := range events {
			if e.Lane == lane {
				evs = append(evs, e)
			}
		}
		h := float64(laneRows*laneRowH + 6)
		row := laneRow{Name: laneName(lane), Y: y, Height: h}
		lastEnd := make([]float64, laneRows) // right end of each label row
		for _, m := range moments(timeline.GroupEvents(evs, groupWindow)) {
			t := m[0].At.Sub(r.Start).Seconds()
			if t < 0 || t > end {
				continue
			}
			px := x.at(t)
			label, title, class := describe(m)
			w := float64(len(label))*labelCharPx + laneLabelPad
			slot := 0
			for slot < laneRows-1 && lastEnd[slot] > px {
				slot++
			}
			lastEnd[slot] = px + w
			row.Marks = append(row.Marks, laneMark{
				X: px, Y1: y, Y2: y + h, LabelY: y + float64(slot+1)*laneRowH,
				Class: class, Label: label, Title: fmt.Sprintf("+%.1fs %s", t, title),
			})
		}
		c.Lanes = append(c.Lanes, row)
		y += h + laneGap
	}
	c.Bottom = y - laneGap
	c.Height = c.Bottom + 22
	c.XTicks, c.Bands = timeAxis(end, x), phaseBands(spans, x)
	return c
}

func laneName(l timeline.Lane) string {
	switch l {
	case timeline.LaneKafka:
		return "Kafka"
	case timeline.LaneGroups:
		return "Groups"
	}
	return "K8s"
}

// moments joins the groups of one lane that start within groupWindow of
// one another into one mark: a pod deleted, gone, created, scheduled and
// started within a second is one mark, not five labels on top of each
// other.
func moments(groups []timeline.Group) [][]timeline.Group {
	var out [][]timeline.Group
	for _, g := range groups {
		if n := len(out); n > 0 && g.At.Sub(out[n-1][0].At) <= groupWindow {
			out[n-1] = append(out[n-1], g)
			continue
		}
		out = append(out, []timeline.Group{g})
	}
	return out
}

// shortName names a kind in a mark's label.
func shortName(k timeline.Kind) string {
	switch k {
	case timeline.LeaderChanged:
		return "leader"
	case timeline.ISRShrunk:
		return "ISR−"
	case timeline.ISRExpanded:
		return "ISR+"
	case timeline.ControllerChanged:
		return "controller moved"
	case timeline.PodReady:
		return "Ready"
	case timeline.PodNotReady:
		return "not Ready"
	}
	// broker-fenced -> fenced, pod-deleting -> deleting, node-cordoned -> cordoned
	_, name, _ := strings.Cut(string(k), "-")
	return name
}

// priority orders the kinds for a mark's colour: the most telling wins.
func priority() []timeline.Kind {
	return []timeline.Kind{timeline.BrokerFenced, timeline.BrokerGone, timeline.LeaderChanged,
		timeline.ControllerChanged, timeline.ISRShrunk, timeline.NodeCordoned, timeline.BrokerUnfenced,
		timeline.BrokerRegistered, timeline.ISRExpanded}
}

// describe returns a mark's label ("leader ×2, ISR− ×6, fenced broker 2"),
// its tooltip (every subject) and its colour.
func describe(m []timeline.Group) (label, title, class string) {
	var parts, titles []string
	order := priority()
	best := len(order)
	class = eventClass(m[0].Kind)
	for _, g := range m {
		part := shortName(g.Kind)
		if g.Count > 1 {
			part += fmt.Sprintf(" ×%d", g.Count)
		} else {
			part += " " + strings.TrimPrefix(strings.TrimPrefix(g.Subjects[0], "pod "), "partition ")
		}
		parts = append(parts, part)
		titles = append(titles, fmt.Sprintf("%s: %s", g.Kind, strings.Join(g.Subjects, ", ")))
		for i, k := range order {
			if k == g.Kind && i < best {
				best, class = i, eventClass(k)
			}
		}
	}
	return strings.Join(parts, ", "), strings.Join(titles, "; "), class
}

// Positions the template needs.
func (c laneChart) PlotHeight() float64 { return c.Bottom - c.Top }
func (c laneChart) XLabelY() float64    { return c.Bottom + 15 }
func (c laneChart) NameX() float64      { return c.Left - 7 }
func (r laneRow) NameY() float64        { return r.Y + r.Height/2 + 4 }
