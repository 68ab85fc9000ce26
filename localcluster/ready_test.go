package localcluster

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/pidfile"
)

// TestWaitHTTP waits on a test server for a daemon that runs (its pid file
// names this test's process) or has exited (no pid file).
func TestWaitHTTP(t *testing.T) {
	const timeout = time.Second
	tests := []struct {
		name    string
		running bool
		status  func(call int) int // the HTTP status of the call'th request
		wantErr []string           // what the error says; nil: no error
		wantIs  error
	}{
		{
			name:    "ready at once",
			running: true,
			status:  func(int) int { return http.StatusOK },
		},
		{
			name:    "ready the third time",
			running: true,
			status: func(call int) int {
				if call < 3 {
					return http.StatusServiceUnavailable
				}
				return http.StatusOK
			},
		},
		{
			name:    "never ready",
			running: true,
			status:  func(int) int { return http.StatusServiceUnavailable },
			wantErr: []string{"localcluster: etcd not ready after 1s", "last seen: HTTP 503: starting", "log: "},
			wantIs:  context.DeadlineExceeded,
		},
		{
			name:    "exited",
			status:  func(int) int { return http.StatusServiceUnavailable },
			wantErr: []string{"localcluster: etcd exited; last lines of "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status(int(calls.Add(1))))
				_, _ = w.Write([]byte("starting"))
			}))
			defer srv.Close()
			c := &Cluster{dir: t.TempDir()}
			if tt.running {
				if err := pidfile.Write(c.etcd().pidFile(), os.Getpid()); err != nil {
					t.Fatal(err)
				}
			}
			err := c.waitHTTP(t.Context(), "etcd", srv.URL, nil, timeout)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("waitHTTP() error = %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("waitHTTP() error = nil, want one saying %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("waitHTTP() error = %q, want it to say %q", err, want)
				}
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("waitHTTP() error = %v, want one that is %v", err, tt.wantIs)
			}
		})
	}
}

// TestNotReady checks which ends of a wait notReady explains.
func TestNotReady(t *testing.T) {
	exited := errors.New("localcluster: etcd exited")
	tests := []struct {
		name string
		err  error
		want string // the error's text; "": no error
	}{
		{name: "ready", err: nil, want: ""},
		{name: "failed early", err: exited, want: exited.Error()},
		{
			name: "timed out",
			err:  context.DeadlineExceeded,
			want: "localcluster: etcd not ready after 1m0s (context deadline exceeded); last seen: HTTP 503; log: /logs/etcd.log",
		},
		{
			name: "cancelled",
			err:  context.Canceled,
			want: "localcluster: etcd not ready after 1m0s (context canceled); last seen: HTTP 503; log: /logs/etcd.log",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := notReady(tt.err, "etcd", time.Minute, "HTTP 503", "/logs/etcd.log")
			if tt.want == "" {
				if err != nil {
					t.Fatalf("notReady() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("notReady() = %v, want %q", err, tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("notReady() = %v, does not wrap %v", err, tt.err)
			}
		})
	}
}
