package steadystate

// intervalSet is a set of uint64 kept as sorted, disjoint, non-adjacent
// half-open ranges [lo, hi). A stream of sequences that arrives in order costs
// one range however long it is, so memory grows with gaps, not with records.
type intervalSet struct {
	r []span
}

type span struct{ lo, hi uint64 }

// add inserts v and reports whether it was already present.
func (s *intervalSet) add(v uint64) (dup bool) {
	n := len(s.r)
	// Hot path: v extends the last range (the in-order case).
	if n > 0 {
		last := &s.r[n-1]
		switch {
		case v == last.hi:
			last.hi++
			return false
		case v > last.hi:
			s.r = append(s.r, span{v, v + 1})
			return false
		case v >= last.lo:
			return true
		}
	} else {
		s.r = append(s.r, span{v, v + 1})
		return false
	}
	return s.addSlow(v)
}

// addSlow handles a value below the last range.
func (s *intervalSet) addSlow(v uint64) bool {
	// First range whose hi is > v.
	lo, hi := 0, len(s.r)
	for lo < hi {
		m := (lo + hi) / 2
		if s.r[m].hi > v {
			hi = m
		} else {
			lo = m + 1
		}
	}
	i := lo
	if s.r[i].lo <= v {
		return true
	}
	switch {
	case i > 0 && s.r[i-1].hi == v && s.r[i].lo == v+1:
		s.r[i-1].hi = s.r[i].hi
		s.r = append(s.r[:i], s.r[i+1:]...)
	case i > 0 && s.r[i-1].hi == v:
		s.r[i-1].hi++
	case s.r[i].lo == v+1:
		s.r[i].lo--
	default:
		s.r = append(s.r, span{})
		copy(s.r[i+1:], s.r[i:])
		s.r[i] = span{v, v + 1}
	}
	return false
}

// len returns how many values the set holds.
func (s *intervalSet) len() uint64 {
	var n uint64
	for _, sp := range s.r {
		n += sp.hi - sp.lo
	}
	return n
}

// minus calls fn for each range of values in s that are not in o, in order.
func (s *intervalSet) minus(o *intervalSet, fn func(lo, hi uint64)) {
	j := 0
	for _, sp := range s.r {
		cur := sp.lo
		for cur < sp.hi {
			for j < len(o.r) && o.r[j].hi <= cur {
				j++
			}
			if j == len(o.r) || o.r[j].lo >= sp.hi {
				fn(cur, sp.hi)
				break
			}
			if o.r[j].lo > cur {
				fn(cur, o.r[j].lo)
			}
			cur = o.r[j].hi
		}
	}
}
