package groupcheck

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)

// at is an event s seconds into the history.
func ev(s int, member string, k Kind, p int32, first, last int64) Event {
	return Event{At: t0.Add(time.Duration(s) * time.Second), Member: member, Kind: k, Partition: p, First: first, Last: last}
}
func assign(s int, m string, p int32) Event           { return ev(s, m, Assigned, p, 0, 0) }
func revoke(s int, m string, p int32) Event           { return ev(s, m, Revoked, p, 0, 0) }
func poll(s int, m string, p int32, a, b int64) Event { return ev(s, m, Polled, p, a, b) }
func commit(s int, m string, p int32, o int64) Event  { return ev(s, m, Committed, p, o, 0) }
func reset(s int, m string, p int32, o int64) Event   { return ev(s, m, Reset, p, o, 0) }

func TestChecker(t *testing.T) {
	tests := []struct {
		name string
		// acked are the offsets acknowledged in partition 0 (partition 1's
		// are 0-9 in every history).
		acked   []int64
		history []Event
		want    map[Check]uint64
		// wantWitness is a part of the first witness's text, when any.
		wantWitness string
		redelivered uint64
	}{
		// Legitimate histories: they must pass.
		{name: "one member, polls in order, commits what it processed", acked: seq(0, 9),
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 4), commit(2, "a", 0, 5), poll(3, "a", 0, 5, 9), commit(4, "a", 0, 10)}},
		{name: "transaction markers leave gaps that hold no acknowledged record", acked: []int64{0, 1, 2, 4, 5, 6},
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 2), poll(2, "a", 0, 4, 6), commit(3, "a", 0, 7)}},
		{name: "redelivery from the last commit after a rebalance", acked: seq(0, 9), redelivered: 3,
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 7), commit(2, "a", 0, 5), revoke(3, "a", 0), assign(4, "b", 0), poll(5, "b", 0, 5, 9), commit(6, "b", 0, 10)}},
		{name: "a reported reset lets the polls go back", acked: seq(0, 9), redelivered: 5,
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 9), reset(2, "a", 0, 5), poll(3, "a", 0, 5, 9)}},
		{name: "the same member assigned again restarts from the commit", acked: seq(0, 9), redelivered: 5,
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 9), commit(2, "a", 0, 5), revoke(3, "a", 0), assign(4, "a", 0), poll(5, "a", 0, 5, 9)}},
		{name: "a reported reset below the last commit after a rebalance", acked: seq(0, 9), redelivered: 8,
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 9), commit(2, "a", 0, 8), revoke(3, "a", 0), assign(4, "b", 0), reset(5, "b", 0, 2), poll(6, "b", 0, 2, 9)}},
		// Histories that must fail.
		{name: "lost: acknowledged, never polled", acked: seq(0, 9),
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 6)}, want: map[Check]uint64{CheckLost: 3}, wantWitness: "lost: partition 0 offset 7 (3)"},
		{name: "poll skip: consecutive polls skip acknowledged records", acked: seq(0, 9),
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 3), poll(2, "a", 0, 6, 9), assign(3, "b", 0), poll(4, "b", 0, 4, 5)},
			want:    map[Check]uint64{CheckPollSkip: 2}, wantWitness: "poll-skip: partition 0 offset 4 (2) by a"},
		{name: "nonmonotonic poll: back without a rebalance", acked: seq(0, 9), redelivered: 3,
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 6), poll(2, "a", 0, 4, 9)},
			want:    map[Check]uint64{CheckNonmonotonicPoll: 3}, wantWitness: "previous poll of the partition ended at 6"},
		{name: "a commit that goes backwards", acked: seq(0, 9),
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 9), commit(2, "a", 0, 8), commit(3, "zombie", 0, 3)},
			want:    map[Check]uint64{CheckCommitBackward: 1}, wantWitness: "the commit before it was 8"},
		{name: "a commit past what was processed", acked: seq(0, 9),
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 4), commit(2, "a", 0, 9), poll(3, "a", 0, 5, 9)},
			want:    map[Check]uint64{CheckCommitPastProcessed: 1}, wantWitness: "processed up to 4"},
		{name: "redelivered from before the last commit after a rebalance", acked: seq(0, 9), redelivered: 8,
			history: []Event{assign(0, "a", 0), poll(1, "a", 0, 0, 9), commit(2, "a", 0, 8), revoke(3, "a", 0), assign(4, "b", 0), poll(5, "b", 0, 2, 9)},
			want:    map[Check]uint64{CheckRedeliveredBeforeCommit: 6}, wantWitness: "the last acknowledged commit was 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(t0, []int64{0, 0})
			for _, o := range tt.acked {
				c.Acked(0, o)
			}
			for o := int64(0); o < 10; o++ {
				c.Acked(1, o)
			}
			c.Observe(assign(0, "p1", 1))
			c.Observe(poll(1, "p1", 1, 0, 9))
			for _, e := range tt.history {
				c.Observe(e)
			}
			res := c.Result(t0.Add(time.Minute))
			for _, ch := range Checks() {
				if got := res.Counts[ch]; got != tt.want[ch] {
					t.Errorf("%s = %d, want %d; problems: %q", ch, got, tt.want[ch], res.Problems())
				}
			}
			if res.Clean() != (len(tt.want) == 0) {
				t.Errorf("Clean() = %t with %v", res.Clean(), res.Counts)
			}
			if res.Redelivered != tt.redelivered {
				t.Errorf("redelivered %d, want %d", res.Redelivered, tt.redelivered)
			}
			if tt.wantWitness != "" {
				if len(res.Witnesses) == 0 || !strings.Contains(res.Witnesses[0].String(), tt.wantWitness) {
					t.Errorf("witnesses %v, want the first to say %q", res.Witnesses, tt.wantWitness)
				}
			}
			if want := uint64(len(tt.acked)) + 10; res.Acked != want {
				t.Errorf("acked %d, want %d", res.Acked, want)
			}
		})
	}
}

func TestUnowned(t *testing.T) {
	c := New(t0, []int64{0})
	for _, e := range []Event{assign(2, "a", 0), revoke(10, "a", 0), assign(13, "b", 0), revoke(20, "b", 0)} {
		c.Observe(e)
	}
	res := c.Result(t0.Add(25 * time.Second))
	want := []Unowned{{0, t0, t0.Add(2 * time.Second)}, {0, t0.Add(10 * time.Second), t0.Add(13 * time.Second)}, {0, t0.Add(20 * time.Second), t0.Add(25 * time.Second)}}
	if len(res.Unowned) != len(want) {
		t.Fatalf("unowned %v, want %v", res.Unowned, want)
	}
	for i := range want {
		if res.Unowned[i] != want[i] {
			t.Errorf("unowned[%d] = %v, want %v", i, res.Unowned[i], want[i])
		}
	}
	if res.Assignments != 2 || res.Revocations != 2 {
		t.Errorf("assignments %d revocations %d, want 2 and 2", res.Assignments, res.Revocations)
	}
}

func seq(a, b int64) []int64 {
	var s []int64
	for o := a; o <= b; o++ {
		s = append(s, o)
	}
	return s
}
