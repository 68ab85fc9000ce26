package chaos

import (
	"context"
	"errors"
	"slices"
	"testing"
)

type fakeNodes struct {
	calls []string
	fail  error
}

func (f *fakeNodes) Kill(_ context.Context, id int32) error    { return f.do("kill", id) }
func (f *fakeNodes) Stop(_ context.Context, id int32) error    { return f.do("stop", id) }
func (f *fakeNodes) Restart(_ context.Context, id int32) error { return f.do("restart", id) }
func (f *fakeNodes) do(what string, id int32) error {
	if f.fail != nil {
		return f.fail
	}
	f.calls = append(f.calls, what+" "+string(rune('0'+id)))
	return nil
}

func TestProcessKill(t *testing.T) {
	tests := []struct {
		name     string
		graceful bool
		steps    []string // inject, recover
		fail     error
		want     []string
		wantErr  bool
	}{
		{name: "recover without inject does nothing", steps: []string{"recover"}, want: nil},
		{name: "kill then recover restarts once", steps: []string{"inject", "recover", "recover"}, want: []string{"kill 1", "restart 1"}},
		{name: "graceful stop", graceful: true, steps: []string{"inject", "recover"}, want: []string{"stop 1", "restart 1"}},
		{name: "failed inject is not recovered", steps: []string{"inject", "recover"}, fail: errors.New("boom"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &fakeNodes{fail: tt.fail}
			f := &ProcessKill{Nodes: n, ID: 1, Graceful: tt.graceful}
			var gotErr bool
			for _, s := range tt.steps {
				var err error
				if s == "inject" {
					err = f.Inject(t.Context())
				} else {
					err = f.Recover(t.Context())
				}
				gotErr = gotErr || err != nil
			}
			if gotErr != tt.wantErr {
				t.Errorf("error %t, want %t", gotErr, tt.wantErr)
			}
			if !slices.Equal(n.calls, tt.want) {
				t.Errorf("calls %v, want %v", n.calls, tt.want)
			}
		})
	}
}
