package groupcheck

import (
	"fmt"
	"time"
)

// Check names one of the group's checks, as Jepsen names them.
type Check string

// The checks. Each counts records (or commits), with witnesses.
const (
	// CheckLost: acknowledged, never consumed by the group.
	CheckLost Check = "lost"
	// CheckPollSkip: a member's consecutive polls of a partition it kept
	// skipped offsets that hold acknowledged records.
	CheckPollSkip Check = "poll-skip"
	// CheckNonmonotonicPoll: a member's polls of a partition went
	// backwards with no rebalance or reported reset in between.
	CheckNonmonotonicPoll Check = "nonmonotonic-poll"
	// CheckCommitBackward: an acknowledged commit went below the one
	// before it.
	CheckCommitBackward Check = "commit-backward"
	// CheckCommitPastProcessed: an acknowledged commit passed what the
	// group had processed.
	CheckCommitPastProcessed Check = "commit-past-processed"
	// CheckRedeliveredBeforeCommit: after a rebalance, a member started a
	// partition below the last acknowledged commit.
	CheckRedeliveredBeforeCommit Check = "redelivered-before-commit"
)

// Checks lists every check, in the order a report shows them.
func Checks() []Check {
	return []Check{CheckLost, CheckPollSkip, CheckNonmonotonicPoll, CheckCommitBackward, CheckCommitPastProcessed, CheckRedeliveredBeforeCommit}
}

// maxWitnesses is how many witnesses a check keeps.
const maxWitnesses = 10

// Witness is one instance of an anomaly: where, who and when.
type Witness struct {
	Check     Check     `json:"check"`
	At        time.Time `json:"at"`
	Member    string    `json:"member,omitempty"`
	Partition int32     `json:"partition"`
	// Offset is the first offset concerned; Count how many records (or 1
	// for a commit).
	Offset int64  `json:"offset"`
	Count  uint64 `json:"count"`
	// Detail says what was expected instead.
	Detail string `json:"detail,omitempty"`
}

func (w Witness) String() string {
	who := ""
	if w.Member != "" {
		who = " by " + w.Member
	}
	return fmt.Sprintf("%s: partition %d offset %d (%d)%s at %s: %s", w.Check, w.Partition, w.Offset, w.Count, who, w.At.Format("15:04:05.000"), w.Detail)
}

// Unowned is a time when no member owned a partition.
type Unowned struct {
	Partition int32     `json:"partition"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
}

// Result is the group's verdict.
type Result struct {
	// Acked counts the acknowledged records; Consumed those the group
	// polled at least once.
	Acked    uint64 `json:"acked"`
	Consumed uint64 `json:"consumed"`
	// Counts of each check's anomalies (records, or commits), by check.
	Counts map[Check]uint64 `json:"counts"`
	// Redelivered counts records polled again from the last commit on
	// after a rebalance: allowed.
	Redelivered uint64 `json:"redelivered"`
	// Resets counts the positions reset (allowed, reported).
	Resets uint64 `json:"resets"`
	// Assignments and Revocations count the partitions given to and taken
	// from members.
	Assignments uint64 `json:"assignments"`
	Revocations uint64 `json:"revocations"`
	// Unowned lists the times a partition had no owner (the group's start
	// included).
	Unowned   []Unowned `json:"unowned,omitempty"`
	Witnesses []Witness `json:"witnesses,omitempty"`
	// Lag is what the group's consumer lag did around the fault, as its
	// workload sampled it (Checker.Lag, or the Java clients' Verifier.Lag);
	// nil without phases marked (a run with no fault).
	Lag *Lag `json:"lag,omitempty"`
	// Rebalances are the assignments and revocations, in the order
	// observed, at most MaxRebalances of them: the group's lane in the
	// HTML report.
	Rebalances []Event `json:"rebalances,omitempty"`
}

// MaxRebalances bounds Result.Rebalances.
const MaxRebalances = 2000

// Total is what every check found, added up.
func (r Result) Total() uint64 {
	var n uint64
	for _, c := range Checks() {
		n += r.Counts[c]
	}
	return n
}

// Clean reports whether no check found anything.
func (r Result) Clean() bool { return r.Total() == 0 }

// Problems returns one line per check that found something, with its
// witnesses, in the order of Checks.
func (r Result) Problems() []string {
	var p []string
	for _, c := range Checks() {
		n := r.Counts[c]
		if n == 0 {
			continue
		}
		line := fmt.Sprintf("%s: %d", c, n)
		for _, w := range r.Witnesses {
			if w.Check == c {
				line += "; " + w.String()
			}
		}
		p = append(p, line)
	}
	return p
}
