package kubelet

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// A followed log yields what was written before and while the process
// ran, and ends once it has ended and the rest is read; or when the caller
// goes away.
func TestFollowReader(t *testing.T) {
	tests := []struct {
		name string
		// cancel ends the caller instead of the process.
		cancel bool
		want   string
	}{
		{name: "the process ends", want: "before\nwhile\nlast\n"},
		{name: "the caller goes away", cancel: true, want: "before\nwhile\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.log")
			w, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			_, _ = w.WriteString("before\n")
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			ended := make(chan struct{})
			r := &followReader{ctx: ctx, f: f, ended: ended, poll: time.Millisecond}
			defer r.Close()
			got := make(chan string)
			go func() {
				b, _ := io.ReadAll(r)
				got <- string(b)
			}()
			_, _ = w.WriteString("while\n")
			// The reader must still be waiting: nothing has ended.
			select {
			case g := <-got:
				t.Fatalf("the follow ended early with %q", g)
			case <-time.After(50 * time.Millisecond):
			}
			if tt.cancel {
				// Give the reader time to pass "while" before it is cut off.
				err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
					off, _ := f.Seek(0, io.SeekCurrent)
					return off >= int64(len("before\nwhile\n")), nil
				})
				if err != nil {
					t.Fatalf("the reader never passed %q: %v", "while", err)
				}
				cancel()
			} else {
				_, _ = w.WriteString("last\n")
				close(ended)
			}
			if g := <-got; g != tt.want {
				t.Errorf("followed %q, want %q", g, tt.want)
			}
		})
	}
}
