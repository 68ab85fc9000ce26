package intervals

import "testing"

func TestIntervalSet(t *testing.T) {
	tests := []struct {
		name    string
		add     []uint64
		wantDup []uint64
		want    []Span
	}{
		{name: "in order", add: []uint64{0, 1, 2, 3}, want: []Span{{0, 4}}},
		{name: "gap", add: []uint64{0, 1, 5, 6}, want: []Span{{0, 2}, {5, 7}}},
		{name: "fill gap joins", add: []uint64{0, 1, 3, 2}, want: []Span{{0, 4}}},
		{name: "below first", add: []uint64{5, 3}, want: []Span{{3, 4}, {5, 6}}},
		{name: "extend down", add: []uint64{5, 4}, want: []Span{{4, 6}}},
		{name: "duplicates", add: []uint64{0, 1, 2, 1, 0, 9, 9}, wantDup: []uint64{1, 0, 9}, want: []Span{{0, 3}, {9, 10}}},
		{name: "middle insert", add: []uint64{0, 10, 20, 15}, want: []Span{{0, 1}, {10, 11}, {15, 16}, {20, 21}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Set
			var dups []uint64
			for _, v := range tt.add {
				if s.Add(v) {
					dups = append(dups, v)
				}
			}
			if len(dups) != len(tt.wantDup) {
				t.Errorf("dups %v, want %v", dups, tt.wantDup)
			}
			if len(s.r) != len(tt.want) {
				t.Fatalf("ranges %v, want %v", s.r, tt.want)
			}
			for i := range s.r {
				if s.r[i] != tt.want[i] {
					t.Errorf("ranges %v, want %v", s.r, tt.want)
				}
			}
		})
	}
}

func TestIntervalSetMinus(t *testing.T) {
	set := func(r ...Span) *Set { return &Set{r: r} }
	tests := []struct {
		name string
		a, b *Set
		want []Span
	}{
		{"equal", set(Span{0, 10}), set(Span{0, 10}), nil},
		{"empty b", set(Span{0, 10}), set(), []Span{{0, 10}}},
		{"hole", set(Span{0, 10}), set(Span{0, 3}, Span{5, 10}), []Span{{3, 5}}},
		{"tail", set(Span{0, 10}), set(Span{0, 7}), []Span{{7, 10}}},
		{"head and many", set(Span{0, 4}, Span{6, 9}), set(Span{1, 2}, Span{7, 8}), []Span{{0, 1}, {2, 4}, {6, 7}, {8, 9}}},
		{"b wider", set(Span{2, 4}), set(Span{0, 10}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Span
			tt.a.Minus(tt.b, func(lo, hi uint64) { got = append(got, Span{lo, hi}) })
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestIn(t *testing.T) {
	var s Set
	for _, v := range []uint64{3, 4, 5, 9, 20} {
		s.Add(v)
	}
	tests := []struct {
		lo, hi      uint64
		first, want uint64
	}{
		{0, 3, 0, 0}, {0, 4, 3, 1}, {5, 9, 5, 1}, {6, 9, 0, 0}, {6, 10, 9, 1}, {10, 20, 0, 0}, {21, 100, 0, 0}, {0, 100, 3, 5}, {4, 21, 4, 4},
	}
	for _, tt := range tests {
		if first, n := s.In(tt.lo, tt.hi); first != tt.first || n != tt.want {
			t.Errorf("In(%d, %d) = %d, %d; want %d, %d", tt.lo, tt.hi, first, n, tt.first, tt.want)
		}
	}
}

func TestFirstGap(t *testing.T) {
	var s Set
	for _, v := range []uint64{3, 4, 5, 9, 20} {
		s.Add(v)
	}
	tests := []struct{ lo, hi, want uint64 }{
		{0, 10, 0}, {3, 10, 6}, {4, 6, 6}, {9, 10, 10}, {9, 21, 10}, {20, 21, 21}, {3, 5, 5}, {6, 8, 6}, {21, 30, 21},
	}
	for _, tt := range tests {
		if got := s.FirstGap(tt.lo, tt.hi); got != tt.want {
			t.Errorf("FirstGap(%d, %d) = %d, want %d", tt.lo, tt.hi, got, tt.want)
		}
	}
}
