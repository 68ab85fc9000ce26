package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// flaky is a fault whose Recover returns errs in turn, then nil.
type flaky struct {
	errs  []error
	calls int
}

var _ Fault = (*flaky)(nil)

func (f *flaky) Name() string                 { return "flaky" }
func (f *flaky) Plan() string                 { return "nothing: a test fault" }
func (f *flaky) Inject(context.Context) error { return nil }
func (f *flaky) Recover(context.Context) error {
	f.calls++
	if f.calls <= len(f.errs) {
		return f.errs[f.calls-1]
	}
	return nil
}

func TestRecoverRetrying(t *testing.T) {
	refused := fmt.Errorf("chaos: uncordon: Get \"https://127.0.0.1:6443\": %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "n", errors.New("no"))
	tests := []struct {
		name      string
		errs      []error
		timeout   time.Duration
		wantCalls int
		wantErr   string
	}{
		{"succeeds at once", nil, time.Minute, 1, ""},
		{"the API server restarting: refused twice, then recovered", []error{refused, refused}, time.Minute, 3, ""},
		{"unavailable, then recovered", []error{apierrors.NewServiceUnavailable("starting")}, time.Minute, 2, ""},
		{"forbidden is not retried", []error{forbidden}, time.Minute, 1, "forbidden"},
		{"the API never comes back: gives up when the context ends", []error{refused, refused, refused, refused, refused, refused}, 800 * time.Millisecond, 2, "gave up retrying (context deadline exceeded)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
			defer cancel()
			f := &flaky{errs: tt.errs}
			var heard int
			err := RecoverRetrying(ctx, f, func(error, time.Duration) { heard++ })
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if f.calls != tt.wantCalls {
				t.Errorf("%d calls, want %d", f.calls, tt.wantCalls)
			}
			if want := f.calls - 1; tt.wantErr == "" && heard != want {
				t.Errorf("heard of %d retries, want %d", heard, want)
			}
		})
	}
}

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("x: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true},
		{fmt.Errorf("x: %w", syscall.ECONNRESET), true},
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewInternalError(errors.New("etcd")), true},
		{&apierrors.StatusError{ErrStatus: metav1.Status{Code: 502, Reason: metav1.StatusReasonUnknown}}, true},
		{&apierrors.StatusError{ErrStatus: metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden}}, false},
		{apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p"), false},
		{apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("changed")), false},
		{errors.New("ledger annotation: invalid JSON"), false},
	}
	for _, tt := range tests {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%v) = %t, want %t", tt.err, got, tt.want)
		}
	}
}
