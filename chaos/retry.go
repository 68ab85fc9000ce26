package chaos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// recoverBackoff spaces the attempts of RecoverRetrying: from 0.5 s,
// doubling, at most 5 s apart, for as long as its context allows.
func recoverBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 5 * time.Second}
}

// RecoverRetrying recovers f, and while the API server cannot be reached
// or answers that it cannot serve now (Transient), tries again with
// back-off until ctx ends: a restarting or overloaded control plane must
// not leave a node cordoned or a broker frozen. onRetry, if not nil, hears
// of each failed attempt that will be retried, with the wait before the
// next. Any other error ends it at once.
func RecoverRetrying(ctx context.Context, f Fault, onRetry func(err error, next time.Duration)) error {
	return RetryTransient(ctx, f.Name(), f.Recover, onRetry)
}

// RetryTransient runs do, and again with back-off while it fails with a
// Transient error, until ctx ends; what names it in the error. do must be
// idempotent, as every recovery is.
func RetryTransient(ctx context.Context, what string, do func(context.Context) error, onRetry func(err error, next time.Duration)) error {
	b := recoverBackoff()
	for {
		err := do(ctx)
		if err == nil || !Transient(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("chaos: %s: gave up retrying (%w): %w", what, ctx.Err(), err)
		}
		next := b.Step()
		if onRetry != nil {
			onRetry(err, next)
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("chaos: %s: gave up retrying (%w): %w", what, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// Transient reports whether err says the Kubernetes API could not be
// reached or could not serve the request now, so that the same request may
// succeed later: a refused, reset or timed-out connection, an EOF, or the
// API's own timeout, throttling, unavailable and internal errors.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	switch {
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err),
		errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &ne) && ne.Timeout():
		return true
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err):
		return true
	}
	return false
}
