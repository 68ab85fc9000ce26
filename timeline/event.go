package timeline

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// Lane is the side an event happened on: one row of the report's picture.
type Lane string

// Lanes.
const (
	LaneKafka      Lane = "kafka"
	LaneKubernetes Lane = "kubernetes"
	// LaneGroups: the consumer groups' assignments and revocations, as
	// their members said them (report.json keeps them with each group's
	// verdict, not in events).
	LaneGroups Lane = "groups"
)

// Kind is what happened.
type Kind string

// Kinds of Kafka events.
const (
	LeaderChanged     Kind = "leader-changed"     // a partition's leader moved (To "-1": none)
	ISRShrunk         Kind = "isr-shrunk"         // a partition's ISR lost members
	ISRExpanded       Kind = "isr-expanded"       // a partition's ISR gained members
	BrokerFenced      Kind = "broker-fenced"      // a registered broker was fenced
	BrokerUnfenced    Kind = "broker-unfenced"    // a fenced broker was unfenced
	BrokerGone        Kind = "broker-gone"        // a broker left the registrations
	BrokerRegistered  Kind = "broker-registered"  // a broker joined the registrations
	ControllerChanged Kind = "controller-changed" // the KRaft quorum's leader (ZooKeeper mode: the controller broker) changed (To "-1": none)
)

// Kinds of Kubernetes events.
const (
	PodDeleting    Kind = "pod-deleting"    // deletion requested
	PodGone        Kind = "pod-gone"        // removed from the API
	PodCreated     Kind = "pod-created"     // a new pod (UID) of the name
	PodScheduled   Kind = "pod-scheduled"   // bound to a node
	PodStarted     Kind = "pod-started"     // every container running
	PodReady       Kind = "pod-ready"       // Ready turned true
	PodNotReady    Kind = "pod-not-ready"   // Ready turned false
	NodeCordoned   Kind = "node-cordoned"   // spec.unschedulable set
	NodeUncordoned Kind = "node-uncordoned" // spec.unschedulable cleared
)

// Kinds of a consumer group's events.
const (
	PartitionsAssigned Kind = "partitions-assigned" // a member was given a partition
	PartitionsRevoked  Kind = "partitions-revoked"  // a member gave one up (or died holding it)
)

// Event is one change, seen at At (the look that saw it; a poll's
// resolution for Kafka, the watch's for Kubernetes).
type Event struct {
	At      time.Time `json:"at"`
	Lane    Lane      `json:"lane"`
	Kind    Kind      `json:"kind"`
	Subject string    `json:"subject"` // "partition 3", "broker 1", "controller", "pod kafka-0", "node n"
	From    string    `json:"from,omitempty"`
	To      string    `json:"to,omitempty"`
}

func (e Event) String() string {
	s := fmt.Sprintf("%s %s %s", e.At.Format("15:04:05.000"), e.Kind, e.Subject)
	if e.From != "" || e.To != "" {
		s += fmt.Sprintf(" %s -> %s", e.From, e.To)
	}
	return s
}

// KafkaEvents returns what changed from prev to cur, dated when cur's
// answer about it arrived (a controller change at cur.ControllerAt). A
// part unknown in either look (a failed request) yields nothing, so a
// missed look is never read as a change.
func KafkaEvents(prev, cur kafkaadmin.State) []Event {
	var out []Event
	add := func(k Kind, subject, from, to string) {
		out = append(out, Event{At: cur.At, Lane: LaneKafka, Kind: k, Subject: subject, From: from, To: to})
	}
	if prev.Partitions != nil && cur.Partitions != nil {
		for _, id := range sortedKeys(cur.Partitions) {
			p, c := prev.Partitions[id], cur.Partitions[id]
			if _, ok := prev.Partitions[id]; !ok {
				continue
			}
			subject := fmt.Sprintf("partition %d", id)
			if p.Leader != c.Leader {
				add(LeaderChanged, subject, fmt.Sprint(p.Leader), fmt.Sprint(c.Leader))
			}
			if lost := minus(p.ISR, c.ISR); len(lost) > 0 {
				add(ISRShrunk, subject, ids(p.ISR), ids(c.ISR))
			} else if len(minus(c.ISR, p.ISR)) > 0 {
				add(ISRExpanded, subject, ids(p.ISR), ids(c.ISR))
			}
		}
	}
	if prev.Brokers != nil && cur.Brokers != nil {
		for _, id := range sortedKeys(union(prev.Brokers, cur.Brokers)) {
			was, wasIn := prev.Brokers[id]
			is, isIn := cur.Brokers[id]
			subject := fmt.Sprintf("broker %d", id)
			switch {
			case wasIn && !isIn:
				add(BrokerGone, subject, "", "")
			case !wasIn && isIn:
				add(BrokerRegistered, subject, "", fenced(is))
			case !was && is:
				add(BrokerFenced, subject, "", "")
			case was && !is:
				add(BrokerUnfenced, subject, "", "")
			}
		}
	}
	if prev.ControllerKnown && cur.ControllerKnown && prev.Controller != cur.Controller {
		out = append(out, Event{At: cur.ControllerAt, Lane: LaneKafka, Kind: ControllerChanged, Subject: "controller",
			From: fmt.Sprint(prev.Controller), To: fmt.Sprint(cur.Controller)})
	}
	return out
}

func fenced(f bool) string {
	if f {
		return "fenced"
	}
	return ""
}

// ids is a set of broker IDs as "[0 1 2]".
func ids(s []int32) string { return fmt.Sprint(s) }

func minus(a, b []int32) []int32 {
	var out []int32
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func union[V any](a, b map[int32]V) map[int32]V {
	out := make(map[int32]V, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

func sortedKeys[V any](m map[int32]V) []int32 { return slices.Sorted(maps.Keys(m)) }

// Group is events of one kind close together, as the report draws them:
// six partitions changing leader at once are one mark with a count.
type Group struct {
	At       time.Time `json:"at"`   // the first event's
	Last     time.Time `json:"last"` // the last event's
	Lane     Lane      `json:"lane"`
	Kind     Kind      `json:"kind"`
	Count    int       `json:"count"`
	Subjects []string  `json:"subjects"`
}

// Label is a short text for the group: "leader-changed ×6".
func (g Group) Label() string {
	if g.Count == 1 {
		return string(g.Kind) + " " + g.Subjects[0]
	}
	return fmt.Sprintf("%s ×%d", g.Kind, g.Count)
}

// GroupEvents joins events of the same lane and kind that follow one
// another within window of the group's first.
func GroupEvents(events []Event, window time.Duration) []Group {
	evs := slices.Clone(events)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At.Before(evs[j].At) })
	var out []Group
	open := map[string]int{} // lane/kind -> index in out
	for _, e := range evs {
		k := string(e.Lane) + "/" + string(e.Kind)
		if i, ok := open[k]; ok && e.At.Sub(out[i].At) <= window {
			g := &out[i]
			g.Count++
			g.Last = e.At
			if !slices.Contains(g.Subjects, e.Subject) {
				g.Subjects = append(g.Subjects, e.Subject)
			}
			continue
		}
		open[k] = len(out)
		out = append(out, Group{At: e.At, Last: e.At, Lane: e.Lane, Kind: e.Kind, Count: 1, Subjects: []string{e.Subject}})
	}
	return out
}

// Summary is the events as lines, for a log.
func Summary(events []Event) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}
