package kafkaadmin

import (
	"slices"
	"strings"
	"testing"
)

// roundRobin is n partitions of topic t with rf replicas over brokers,
// placed as Kafka places a new topic's: partition p starts at broker p.
func roundRobin(t string, n, rf int, brokers ...int32) Assignments {
	a := Assignments{}
	for p := range n {
		var rs []int32
		for r := range rf {
			rs = append(rs, brokers[(p+r)%len(brokers)])
		}
		a.set(t, int32(p), rs)
	}
	return a
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name    string
		from    Assignments
		brokers []int32
		moves   int    // replicas that change broker; -1: not checked
		wantErr string // "" = no error
	}{
		{name: "3 brokers to 4", from: roundRobin("t", 6, 3, 0, 1, 2), brokers: []int32{0, 1, 2, 3}, moves: 4},
		{name: "3 brokers to 5", from: roundRobin("t", 6, 3, 0, 1, 2), brokers: []int32{0, 1, 2, 3, 4}, moves: 6},
		{name: "two topics to 5", from: func() Assignments {
			a := roundRobin("a", 6, 3, 0, 1, 2)
			for p, rs := range roundRobin("b", 3, 2, 0, 1, 2)["b"] {
				a.set("b", p, rs)
			}
			return a
		}(), brokers: []int32{0, 1, 2, 3, 4}, moves: 9},
		{name: "repeated broker IDs", from: roundRobin("t", 6, 3, 0, 1, 2), brokers: []int32{3, 0, 1, 1, 2, 3}, moves: 4},
		{name: "a repeated ID is one broker", from: Assignments{"t": {0: {5, 6, 7}}}, brokers: []int32{0, 1, 1}, wantErr: "more than the 2 brokers"},
		{name: "leaders uneven after the moves", from: Assignments{"t": {
			0: {1, 0}, 1: {3, 0}, 2: {3, 0}, 3: {3, 0}, 4: {1, 2}, 5: {2, 1}, 6: {2, 1},
		}}, brokers: []int32{0, 1, 2, 3, 4}, moves: -1},
		{name: "already even", from: roundRobin("t", 6, 3, 0, 1, 2), brokers: []int32{0, 1, 2}, moves: 0},
		{name: "off a broker that goes", from: roundRobin("t", 6, 2, 0, 1, 2), brokers: []int32{0, 1}, moves: -1},
		{name: "more replicas than brokers", from: roundRobin("t", 2, 3, 0, 1, 2), brokers: []int32{0, 1}, wantErr: "more than the 2 brokers"},
		{name: "no brokers", from: roundRobin("t", 2, 1, 0), wantErr: "no broker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.from.String()
			to, err := Spread(tt.from, tt.brokers)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Spread: err %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Spread: %v", err)
			}
			if tt.from.String() != before {
				t.Errorf("Spread changed its input: %s, was %s", tt.from, before)
			}
			load, leads := map[int32]int{}, map[int32]int{}
			moved := 0
			to.Each(func(tp string, p int32, rs []int32) {
				was := tt.from[tp][p]
				if len(rs) != len(was) {
					t.Errorf("%s/%d: %v has %d replicas, had %d", tp, p, rs, len(rs), len(was))
				}
				if c := slices.Compact(slices.Sorted(slices.Values(rs))); len(c) != len(rs) {
					t.Errorf("%s/%d: %v holds a broker twice", tp, p, rs)
				}
				for i, b := range rs {
					if !slices.Contains(tt.brokers, b) {
						t.Errorf("%s/%d: %v uses broker %d, not one of %v", tp, p, rs, b, tt.brokers)
					}
					load[b]++
					if i == 0 {
						leads[b]++
					}
					if !slices.Contains(was, b) {
						moved++
					}
				}
			})
			if tt.moves >= 0 && moved != tt.moves {
				t.Errorf("%d replicas moved, want %d: %s -> %s", moved, tt.moves, tt.from, to)
			}
			spread := func(m map[int32]int) int {
				var n []int
				for _, b := range tt.brokers {
					n = append(n, m[b])
				}
				return slices.Max(n) - slices.Min(n)
			}
			if s := spread(load); s > 1 {
				t.Errorf("replicas per broker %v differ by %d: %s", load, s, to)
			}
			if s := spread(leads); s > 1 {
				t.Errorf("leaders per broker %v differ by %d: %s", leads, s, to)
			}
		})
	}
}
