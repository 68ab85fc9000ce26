package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// The brokers' committed offsets must never go backwards; reads where
// they stay or go forward are clean, and a watch with no read shows
// nothing, so it is a problem too.
func TestCommittedWatch(t *testing.T) {
	read := func(offsets ...int64) map[int32]kadm.OffsetResponse {
		out := map[int32]kadm.OffsetResponse{}
		for p, o := range offsets {
			out[int32(p)] = kadm.OffsetResponse{Offset: kadm.Offset{Partition: int32(p), At: o}}
		}
		return out
	}
	tests := []struct {
		name  string
		reads []map[int32]kadm.OffsetResponse
		want  string // in the problems; empty: none
	}{
		{"forward and level", []map[int32]kadm.OffsetResponse{read(10, 20), read(10, 25), read(30, 25)}, ""},
		{"none committed yet (-1), then some", []map[int32]kadm.OffsetResponse{read(-1, -1), read(5, 7)}, ""},
		{"partition 1 back", []map[int32]kadm.OffsetResponse{read(10, 2499), read(12, 594), read(14, 600)}, "partition 1: the brokers served committed offset 594"},
		{"never read", nil, "never served"},
		{"read, but nothing of the topic", []map[int32]kadm.OffsetResponse{{}, {}}, "never served"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w committedWatch
			for i, r := range tt.reads {
				w.observe(time.Unix(int64(i), 0), r)
			}
			p := strings.Join(w.problems(), "\n")
			if (tt.want == "") != (p == "") || !strings.Contains(p, tt.want) {
				t.Errorf("problems %q, want %q", p, tt.want)
			}
		})
	}
}
