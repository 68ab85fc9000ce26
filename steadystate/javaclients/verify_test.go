package javaclients

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func send(p int32, off int64, v string) Event {
	return Event{Name: ProducerSendOK, Topic: "t", Partition: p, Offset: off, Value: &v, Timestamp: 1}
}
func rec(p int32, off int64, v string) Event {
	return Event{Name: RecordData, Topic: "t", Partition: p, Offset: off, Value: &v, Timestamp: 2}
}
func polled(p int32, lo, hi int64) Event {
	return Event{Name: RecordsConsumed, Timestamp: 2, Partitions: []Partition{{Topic: "t", Partition: p, Count: hi - lo + 1, MinOffset: lo, MaxOffset: hi}}}
}

func TestVerifier(t *testing.T) {
	assign := Event{Name: PartitionsAssigned, Timestamp: 1, Partitions: []Partition{{Topic: "t", Partition: 0}}}
	tests := []struct {
		name     string
		producer []Event
		consumer []Event
		clean    bool
		want     string // in the problems
	}{
		{"acked then read, the same values", []Event{send(0, 0, "1.0"), send(0, 1, "1.1")}, []Event{assign, rec(0, 0, "1.0"), rec(0, 1, "1.1"), polled(0, 0, 1)}, true, ""},
		{"read before the ack", nil, []Event{assign, rec(0, 0, "1.0"), rec(0, 1, "1.1"), polled(0, 0, 1)}, true, ""},
		{"another value at an acked offset", []Event{send(0, 0, "1.0"), send(0, 1, "1.1")}, []Event{assign, rec(0, 0, "1.0"), rec(0, 1, "9.9"), polled(0, 0, 1)}, false, `offset 1: acknowledged "1.1", read "9.9"`},
		{"a record missing inside one poll (its summary spans it)", []Event{send(0, 0, "1.0"), send(0, 1, "1.1"), send(0, 2, "1.2")}, []Event{assign, rec(0, 0, "1.0"), rec(0, 2, "1.2"), polled(0, 0, 2)}, false, "lost: 1"},
		{"an acked record never read", []Event{send(0, 0, "1.0"), send(0, 1, "1.1")}, []Event{assign, rec(0, 0, "1.0"), polled(0, 0, 0)}, false, "lost: 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewVerifier("t", time.UnixMilli(0), []int64{0})
			// The consumer's events may come first, as on a real run.
			for _, e := range tt.consumer {
				v.Consumer("m0", e)
			}
			for _, e := range tt.producer {
				v.Producer(e)
			}
			res := v.Result(time.UnixMilli(3))
			if res.Clean() != tt.clean || !strings.Contains(strings.Join(res.Problems(), "\n"), tt.want) {
				t.Errorf("clean %t, problems %q; want clean %t and %q", res.Clean(), res.Problems(), tt.clean, tt.want)
			}
		})
	}
}

// Each partition's longest wait between acknowledgements is kept, by the
// tool's clock, whatever the order the partitions' acks interleave in.
func TestAckGaps(t *testing.T) {
	at := func(p int32, off, ms int64) Event {
		e := send(p, off, "1.x")
		e.Timestamp = ms
		return e
	}
	v := NewVerifier("t", time.UnixMilli(0), []int64{0, 0})
	for _, e := range []Event{at(0, 0, 1000), at(1, 0, 1010), at(0, 1, 1100), at(1, 1, 31010), at(0, 2, 1200), at(0, 3, 5200), at(1, 2, 31020)} {
		v.Producer(e)
	}
	res := v.Result(time.UnixMilli(40000))
	want := []time.Duration{4 * time.Second, 30 * time.Second}
	for p, w := range want {
		if g := res.AckGaps[p]; g.Gap != w || g.Partition != int32(p) || g.To.Sub(g.From) != w {
			t.Errorf("partition %d: gap %+v, want %s", p, g, w)
		}
	}
	if l := res.LongestAckGap(); l.Partition != 1 || l.Gap != 30*time.Second || !l.From.Equal(time.UnixMilli(1010)) {
		t.Errorf("longest %+v, want partition 1's 30s from 1010 ms", l)
	}
}

// The lag is what was acknowledged above what was read, per partition,
// and only what the tools have said so far: a group that starts at its
// committed offsets has none.
func TestVerifierLag(t *testing.T) {
	tests := []struct {
		name     string
		start    []int64
		producer []Event
		consumer []Event
		want     int64
	}{ // the consumer's record_data are its polls, one offset each (--verbose)
		{"nothing yet", []int64{5, 7}, nil, nil, 0},
		{"acked, none read", []int64{0, 0}, []Event{send(0, 0, "a"), send(0, 1, "b"), send(1, 0, "c")}, nil, 3},
		{"acked, part read", []int64{0, 0}, []Event{send(0, 0, "a"), send(0, 1, "b"), send(1, 0, "c")}, []Event{rec(0, 0, "a")}, 2},
		{"read ahead of the acks (they come later)", []int64{0}, []Event{send(0, 0, "a")}, []Event{rec(0, 0, "a"), rec(0, 1, "b"), rec(0, 2, "c"), rec(0, 3, "d")}, 0},
		{"from a committed start", []int64{10}, []Event{send(0, 10, "a"), send(0, 11, "b")}, []Event{rec(0, 10, "a")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewVerifier("t", time.UnixMilli(0), tt.start)
			for _, e := range tt.producer {
				v.Producer(e)
			}
			for _, e := range tt.consumer {
				v.Consumer("m0", e)
			}
			if got := v.Lag(); got != tt.want {
				t.Errorf("Lag() = %d, want %d", got, tt.want)
			}
		})
	}
}

// A member that dies says nothing more: Gone revokes what it owned at
// its death, so that its partitions count as owned by no one until the
// group gives them to another member. Without Gone they would look owned
// all along.
func TestVerifierGone(t *testing.T) {
	assign := func(ms int64, ps ...int32) Event {
		e := Event{Name: PartitionsAssigned, Timestamp: ms}
		for _, p := range ps {
			e.Partitions = append(e.Partitions, Partition{Topic: "t", Partition: p})
		}
		return e
	}
	tests := []struct {
		name string
		gone bool
		want time.Duration // partition 1 unowned after the start
	}{
		{"the dead member's partition unowned until the takeover", true, 45 * time.Second},
		{"without Gone, never unowned", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewVerifier("t", time.UnixMilli(0), []int64{0, 0})
			v.Consumer("m0", assign(0, 0))
			v.Consumer("m1", assign(0, 1))
			v.Consumer("m1", rec(1, 0, "a"))                                                                                 // at 2 ms
			v.Consumer("m1", Event{Name: RecordData, Topic: "t", Partition: 1, Offset: 1, Value: new("b"), Timestamp: 5000}) // its last word, after the kill was sent
			if tt.gone {
				v.Gone("m1", time.UnixMilli(4000))
				v.Gone("m1", time.UnixMilli(6000)) // once is enough
			}
			v.Consumer("m0", assign(50000, 1))
			var got time.Duration
			for _, u := range v.Result(time.UnixMilli(60000)).Group.Unowned {
				if u.Partition == 1 && u.From.After(time.UnixMilli(0)) {
					got += u.To.Sub(u.From)
				}
			}
			if got != tt.want {
				t.Errorf("partition 1 unowned for %s, want %s", got, tt.want)
			}
		})
	}
}

// A commit is printed when its response is handled, which a frozen JVM
// delays past the other members' commits: it goes at the member's
// previous event, and is not a commit backwards. One the member made
// after it printed anything new still is.
func TestVerifierCommitTime(t *testing.T) {
	at := func(e Event, ms int64) Event { e.Timestamp = ms; return e }
	commit := func(off int64, ms int64) Event {
		return Event{Name: OffsetsCommitted, Success: true, Timestamp: ms, Offsets: []Partition{{Topic: "t", Partition: 0, Offset: off}}}
	}
	assigned := Event{Name: PartitionsAssigned, Partitions: []Partition{{Topic: "t", Partition: 0}}}
	consumed := Event{Name: RecordsConsumed, Partitions: []Partition{{Topic: "t", Partition: 0, Count: 1}}}
	tests := []struct {
		name   string
		frozen []Event // m0's events after its first poll
		clean  bool
	}{
		{"a commit in flight across a pause", []Event{commit(2, 61000)}, true},
		{"a commit made after the pause", []Event{at(consumed, 60500), commit(2, 61000)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewVerifier("t", time.UnixMilli(0), []int64{0})
			for i := range int64(10) {
				v.Producer(at(send(0, i, fmt.Sprint(i)), 100+i))
			}
			v.Consumer("m0", at(assigned, 10))
			v.Consumer("m0", at(rec(0, 0, "0"), 1000))
			v.Consumer("m0", at(rec(0, 1, "1"), 1000))
			v.Consumer("m1", at(assigned, 50000))
			for i := range int64(8) {
				v.Consumer("m1", at(rec(0, 2+i, fmt.Sprint(2+i)), 50500))
			}
			v.Consumer("m1", commit(10, 51000))
			for _, e := range tt.frozen {
				v.Consumer("m0", e)
			}
			res := v.Result(time.UnixMilli(70000))
			if res.Clean() != tt.clean {
				t.Errorf("clean %t, problems %q; want clean %t", res.Clean(), res.Problems(), tt.clean)
			}
		})
	}
}
