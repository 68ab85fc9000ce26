package txncheck

import (
	"maps"
	"testing"
)

// out is one output record a reader saw: the copy of in/inOff at
// outP/outOff.
type out struct {
	in     int32
	inOff  int64
	outP   int32
	outOff int64
}

// copies returns the outputs of input partition p's offsets from..to-1,
// at output offsets from outOff on, in partition p.
func copies(p int32, from, to, outOff int64) []out {
	var o []out
	for off := from; off < to; off++ {
		o = append(o, out{p, off, p, outOff + off - from})
	}
	return o
}

func TestCopyChecker(t *testing.T) {
	start, end := []int64{10, 0}, []int64{20, 5}
	tests := []struct {
		name    string
		outs    []out
		drained bool
		want    map[Check]uint64
		copied  bool
	}{
		{"every input once", append(copies(0, 10, 20, 0), copies(1, 0, 5, 0)...), true, map[Check]uint64{}, true},
		{"a refetch of an output offset already read is no second copy",
			append(append(copies(0, 10, 20, 0), copies(1, 0, 5, 0)...), out{0, 15, 0, 5}), true, map[Check]uint64{}, true},
		{"inputs before the run's start are not judged",
			append(copies(0, 5, 20, 0), copies(1, 0, 5, 0)...), true, map[Check]uint64{}, true},
		{"an input copied twice, in a later transaction",
			append(append(copies(0, 10, 20, 0), copies(1, 0, 5, 0)...), out{0, 12, 0, 30}), true, map[Check]uint64{CheckCopiedTwice: 1}, true},
		{"a gap of two inputs not copied",
			append(append(copies(0, 10, 14, 0), copies(0, 16, 20, 4)...), copies(1, 0, 5, 0)...), true, map[Check]uint64{CheckNotCopied: 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCopyChecker(start)
			for _, o := range tt.outs {
				c.Output(o.in, o.inOff, o.outP, o.outOff, t0)
			}
			if got := c.Copied(end); got != tt.copied {
				t.Errorf("Copied = %v, want %v", got, tt.copied)
			}
			r := c.Result(end, tt.drained)
			if !maps.Equal(r.Counts, tt.want) {
				t.Errorf("counts %v, want %v; witnesses %v", r.Counts, tt.want, r.Witnesses)
			}
			if r.Inputs != 15 || r.Clean() != (len(tt.want) == 0) {
				t.Errorf("inputs %d, clean %v", r.Inputs, r.Clean())
			}
		})
	}
	if w := NewCopyChecker(start).Result(end, true).Witnesses; len(w) != 2 || w[0].Offset != 10 || w[1].Offset != 0 {
		t.Errorf("nothing copied: witnesses %v, want each partition's first input", w)
	}
}
