package intervals

// Set is a set of uint64 kept as sorted, disjoint, non-adjacent
// half-open ranges [lo, hi). The zero value is empty. A stream of sequences that arrives in order costs
// one range however long it is, so memory grows with gaps, not with records.
type Set struct {
	r []Span
}

// Span is the half-open range [Lo, Hi).
type Span struct{ Lo, Hi uint64 }

// Add inserts v and reports whether it was already present.
func (s *Set) Add(v uint64) (dup bool) {
	n := len(s.r)
	// Hot path: v extends the last range (the in-order case).
	if n > 0 {
		last := &s.r[n-1]
		switch {
		case v == last.Hi:
			last.Hi++
			return false
		case v > last.Hi:
			s.r = append(s.r, Span{v, v + 1})
			return false
		case v >= last.Lo:
			return true
		}
	} else {
		s.r = append(s.r, Span{v, v + 1})
		return false
	}
	return s.addSlow(v)
}

// addSlow handles a value below the last range.
func (s *Set) addSlow(v uint64) bool {
	// First range whose hi is > v.
	lo, hi := 0, len(s.r)
	for lo < hi {
		m := (lo + hi) / 2
		if s.r[m].Hi > v {
			hi = m
		} else {
			lo = m + 1
		}
	}
	i := lo
	if s.r[i].Lo <= v {
		return true
	}
	switch {
	case i > 0 && s.r[i-1].Hi == v && s.r[i].Lo == v+1:
		s.r[i-1].Hi = s.r[i].Hi
		s.r = append(s.r[:i], s.r[i+1:]...)
	case i > 0 && s.r[i-1].Hi == v:
		s.r[i-1].Hi++
	case s.r[i].Lo == v+1:
		s.r[i].Lo--
	default:
		s.r = append(s.r, Span{})
		copy(s.r[i+1:], s.r[i:])
		s.r[i] = Span{v, v + 1}
	}
	return false
}

// Len returns how many values the set holds.
func (s *Set) Len() uint64 {
	var n uint64
	for _, sp := range s.r {
		n += sp.Hi - sp.Lo
	}
	return n
}

// Minus calls fn for each range of values in s that are not in o, in order.
func (s *Set) Minus(o *Set, fn func(lo, hi uint64)) {
	j := 0
	for _, sp := range s.r {
		cur := sp.Lo
		for cur < sp.Hi {
			for j < len(o.r) && o.r[j].Hi <= cur {
				j++
			}
			if j == len(o.r) || o.r[j].Lo >= sp.Hi {
				fn(cur, sp.Hi)
				break
			}
			if o.r[j].Lo > cur {
				fn(cur, o.r[j].Lo)
			}
			cur = o.r[j].Hi
		}
	}
}

// In returns how many values of the set lie in [lo, hi), and the least of
// them (0 when there are none).
func (s *Set) In(lo, hi uint64) (first, n uint64) {
	for _, sp := range s.r { // a set of in-order values is a few ranges
		if a, b := max(sp.Lo, lo), min(sp.Hi, hi); a < b {
			if n == 0 {
				first = a
			}
			n += b - a
		}
	}
	return first, n
}

// FirstGap returns the least value in [lo, hi) that is not in the set, or
// hi when the set holds them all.
func (s *Set) FirstGap(lo, hi uint64) uint64 {
	for _, sp := range s.r { // sorted and non-adjacent: one pass
		if sp.Hi <= lo {
			continue
		}
		if sp.Lo > lo {
			break
		}
		lo = sp.Hi
	}
	return min(lo, hi)
}
