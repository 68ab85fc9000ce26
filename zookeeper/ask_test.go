package zookeeper

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAsk(t *testing.T) {
	f := startFake(t, map[string]string{
		"ruok": testdata(t, "ruok.txt"),
		"srvr": testdata(t, "srvr_leader.txt"),
		"mntr": testdata(t, "mntr_not_whitelisted.txt"),
		"stat": hang,
	})
	dead := deadAddr(t)

	tests := []struct {
		name    string
		addr    string
		word    string
		timeout time.Duration
		want    string // answer; "" with wantErr: not compared
		wantErr error  // errors.Is target; nil: no error
		errHas  string // the error names this
	}{
		{name: "ruok", addr: f.addr, word: "ruok", want: "imok"},
		{name: "srvr", addr: f.addr, word: "srvr", want: testdata(t, "srvr_leader.txt")},
		{name: "not whitelisted", addr: f.addr, word: "mntr", wantErr: ErrNotWhitelisted, errHas: "mntr is not executed"},
		{name: "deadline", addr: f.addr, word: "stat", timeout: 100 * time.Millisecond, wantErr: context.DeadlineExceeded},
		{name: "refused", addr: dead, word: "srvr", errHas: "dial"},
		{name: "not a word", addr: f.addr, word: "SRVR", errHas: "not a four-letter word"},
		{name: "too long", addr: f.addr, word: "srvrx", errHas: "not a four-letter word"},
		{name: "no answer", addr: f.addr, word: "envi", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			got, err := Ask(ctx, tc.addr, tc.word)
			if took := time.Since(start); took > timeout+2*time.Second {
				t.Errorf("Ask took %v, past its %v deadline", took, timeout)
			}
			wantErr := tc.wantErr != nil || tc.errHas != ""
			switch {
			case wantErr && err == nil:
				t.Fatalf("Ask = %q, nil; want an error", got)
			case !wantErr && err != nil:
				t.Fatalf("Ask: %v", err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("Ask error %v; want one wrapping %v", err, tc.wantErr)
			}
			if tc.errHas != "" && !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("Ask error %q; want it to contain %q", err, tc.errHas)
			}
			if !wantErr && got != tc.want {
				t.Errorf("Ask = %q; want %q", got, tc.want)
			}
		})
	}
}

func TestAskCancel(t *testing.T) {
	f := startFake(t, map[string]string{"srvr": hang})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := Ask(ctx, f.addr, "srvr")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Ask error %v; want one wrapping context.Canceled", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Ask took %v after cancel", took)
	}
}
