package kafkaadmin

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Spread returns a's partitions with their replicas spread evenly over
// brokers, moving few replicas (greedily, one at a time from the most
// loaded broker to the least), as an operator does after
// adding brokers: no broker holds more than one replica more than
// another, and leaders (first replicas) are spread the same way where a
// move allows it. A moved replica keeps its position in the list, so a
// leader that moves stays the preferred leader. Replicas on a broker not
// in brokers are moved too. It fails when a partition has more replicas
// than there are brokers.
func Spread(a Assignments, brokers []int32) (Assignments, error) {
	brokers = slices.Compact(slices.Sorted(slices.Values(brokers)))
	if len(brokers) == 0 {
		return nil, errors.New("kafkaadmin: spread: no broker given")
	}
	out := Assignments{}
	load := map[int32]int{}  // replicas per broker
	leads := map[int32]int{} // first replicas per broker
	var errs []error
	a.Each(func(t string, p int32, rs []int32) {
		if len(rs) > len(brokers) {
			errs = append(errs, fmt.Errorf("%s/%d has %d replicas, more than the %d brokers %v", t, p, len(rs), len(brokers), brokers))
		}
		out.set(t, p, rs)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("kafkaadmin: spread: %w", err)
	}
	count := func() {
		clear(load)
		clear(leads)
		out.Each(func(_ string, _ int32, rs []int32) {
			for i, b := range rs {
				load[b]++
				if i == 0 {
					leads[b]++
				}
			}
		})
	}
	// lightest is the broker of brokers with the fewest replicas (then
	// leaders, then the lowest ID) that partition rs does not hold.
	lightest := func(rs []int32) (int32, bool) {
		var free []int32
		for _, b := range brokers {
			if !slices.Contains(rs, b) {
				free = append(free, b)
			}
		}
		if len(free) == 0 {
			return 0, false
		}
		return slices.MinFunc(free, func(x, y int32) int {
			return cmp.Or(cmp.Compare(load[x], load[y]), cmp.Compare(leads[x], leads[y]), cmp.Compare(x, y))
		}), true
	}

	// First, every replica on a broker that is not one of brokers moves.
	count()
	out.Each(func(_ string, _ int32, rs []int32) {
		for i, b := range rs {
			if !slices.Contains(brokers, b) {
				to, _ := lightest(rs) // there is room: checked above
				rs[i] = to
				count()
			}
		}
	})
	// Then one replica at a time from the most loaded broker to the least
	// loaded one, until they differ by one at most. Each move lowers the
	// sum of squared loads, so this ends.
	for {
		count()
		heavy := slices.MaxFunc(brokers, func(x, y int32) int {
			return cmp.Or(cmp.Compare(load[x], load[y]), cmp.Compare(leads[x], leads[y]), cmp.Compare(y, x))
		})
		light := slices.MinFunc(brokers, func(x, y int32) int {
			return cmp.Or(cmp.Compare(load[x], load[y]), cmp.Compare(leads[x], leads[y]), cmp.Compare(x, y))
		})
		if load[heavy]-load[light] <= 1 {
			break
		}
		// Move a leader when heavy leads more than light, else a follower;
		// either kind if the other is not to be found.
		wantLead := leads[heavy] > leads[light]+1
		var at []int32
		var pos int
		for _, lead := range []bool{wantLead, !wantLead} {
			out.Each(func(_ string, _ int32, rs []int32) {
				i := slices.Index(rs, heavy)
				if at == nil && i >= 0 && (i == 0) == lead && !slices.Contains(rs, light) {
					at, pos = rs, i
				}
			})
			if at != nil {
				break
			}
		}
		if at == nil {
			break // every partition on heavy is also on light
		}
		at[pos] = light
	}
	// Last, leaders alone: make another replica of a partition its first
	// while that replica's broker leads at least two fewer partitions than
	// the first's. No replica changes broker, so the replicas' spread stays;
	// each swap lowers the sum of squared leader counts, so this ends.
	for {
		count()
		swapped := false
		out.Each(func(_ string, _ int32, rs []int32) {
			for i := 1; i < len(rs) && !swapped; i++ {
				if leads[rs[i]]+2 <= leads[rs[0]] {
					rs[0], rs[i] = rs[i], rs[0]
					swapped = true
				}
			}
		})
		if !swapped {
			return out, nil
		}
	}
}
