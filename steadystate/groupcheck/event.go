package groupcheck

import (
	"fmt"
	"time"
)

// Kind is what happened to a member of the group.
type Kind string

// The kinds of events a group's members report.
const (
	// Assigned: the member was given Partition.
	Assigned Kind = "assigned"
	// Revoked: the member gave Partition up (or lost it).
	Revoked Kind = "revoked"
	// Polled: the member handed the application the records at offsets
	// First..Last of Partition, in one batch; the offsets between that
	// hold no record of the member's (transaction markers, compacted
	// records) are not its to report.
	Polled Kind = "polled"
	// Committed: the broker acknowledged the member's commit of First
	// (the next offset to read) for Partition.
	Committed Kind = "committed"
	// Reset: the member's position in Partition was reset to First (an
	// offset out of range, data loss): allowed, and reported on its own.
	Reset Kind = "reset"
)

// Event is one thing a member of the group saw or did.
type Event struct {
	At        time.Time `json:"at"`
	Member    string    `json:"member"`
	Kind      Kind      `json:"kind"`
	Partition int32     `json:"partition"`
	// First and Last: see Kind.
	First int64 `json:"first"`
	Last  int64 `json:"last,omitempty"`
}

func (e Event) String() string {
	s := fmt.Sprintf("%s %s %s partition %d", e.At.Format("15:04:05.000"), e.Member, e.Kind, e.Partition)
	switch e.Kind {
	case Polled:
		s += fmt.Sprintf(" offsets %d-%d", e.First, e.Last)
	case Committed, Reset:
		s += fmt.Sprintf(" at %d", e.First)
	}
	return s
}
