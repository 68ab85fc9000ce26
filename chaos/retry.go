package chaos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// AuthWarmUp is how long after the Kubernetes API last failed to serve
// (Transient) its 401 and 403 answers still count as transient. A freshly
// started kube-apiserver answers Forbidden until its RBAC authorizer has
// synced its roles and bindings (seen here: the first answer after a
// restart was a 403 for a permission the account has), and an
// authenticating webhook in front of it can answer 401 while it warms.
// Past AuthWarmUp, and always when no outage came before, a 401 or 403 is
// a real permission problem and fails at once.
const AuthWarmUp = 45 * time.Second

// recoverBackoff spaces the attempts of RecoverRetrying: from 0.5 s,
// doubling, at most 5 s apart, for as long as its context allows.
func recoverBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 5 * time.Second}
}

// RecoverRetrying recovers f, and while the API server cannot be reached
// or answers that it cannot serve now (Transient), or is still warming up
// after that (APIWatch), tries again with back-off until ctx ends: a
// restarting or overloaded control plane must not leave a node cordoned or
// a broker frozen. onRetry, if not nil, hears of each failed attempt that
// will be retried, with the wait before the next. Any other error ends it
// at once.
func RecoverRetrying(ctx context.Context, f Fault, onRetry func(err error, next time.Duration)) error {
	return RetryTransient(ctx, f.Name(), f.Recover, onRetry)
}

// RetryTransient runs do, and again with back-off while it fails with an
// error that an APIWatch of AuthWarmUp retries, until ctx ends; what names it
// in the error. do must be idempotent, as every recovery is.
func RetryTransient(ctx context.Context, what string, do func(context.Context) error, onRetry func(err error, next time.Duration)) error {
	return retryTransient(ctx, what, do, onRetry, NewAPIWatch(AuthWarmUp))
}

func retryTransient(ctx context.Context, what string, do func(context.Context) error, onRetry func(err error, next time.Duration), w *APIWatch) error {
	b := recoverBackoff()
	for {
		err := do(ctx)
		retry, err := w.Retry(err)
		if !retry {
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

// APIWatch tells, one failed call after another, which failures of the
// Kubernetes API are worth retrying: every Transient one, and a 401 or 403
// that comes within its warm-up of the last Transient one (AuthWarmUp).
// It is for one sequence of calls (a recovery, a poll while a fault holds),
// and not safe for concurrent use.
type APIWatch struct {
	warmUp time.Duration
	now    func() time.Time
	// down is when the API last failed to serve; zero until it has.
	down time.Time
}

// NewAPIWatch returns an APIWatch whose 401 and 403 answers count as
// transient for warmUp after the API last failed to serve.
func NewAPIWatch(warmUp time.Duration) *APIWatch {
	return &APIWatch{warmUp: warmUp, now: time.Now}
}

// Retry judges err, the failure of one call: whether to try again, and
// if not, the error to report: nil for nil, err itself, or for a 401 or
// 403 a PermissionError that says whether it outlasted a warm-up.
func (w *APIWatch) Retry(err error) (bool, error) {
	switch {
	case err == nil:
		return false, nil
	case Transient(err):
		w.down = w.now()
		return true, err
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		if !w.down.IsZero() && w.now().Sub(w.down) < w.warmUp {
			return true, err
		}
		return false, &PermissionError{Err: err, WarmUp: w.warmUp, AfterOutage: !w.down.IsZero()}
	}
	return false, err
}

// PermissionError is a 401 or 403 that is not the API server warming up: no
// outage came before it, or it outlasted the warm-up after one. Err, the
// API's answer, names the verb and the resource refused.
type PermissionError struct {
	Err error
	// WarmUp is the grace given to a restarted API server; AfterOutage
	// says the refusal outlasted it.
	WarmUp      time.Duration
	AfterOutage bool
}

func (e *PermissionError) Error() string {
	s := e.Err.Error() + ": the suite's identity lacks this permission"
	if e.AfterOutage {
		s += fmt.Sprintf(" (refused for longer than the %s given to an API server warming up after an outage)", e.WarmUp)
	}
	return s + "; grant it (kafkachaos rbac prints the Role and ClusterRole the suite needs)"
}

func (e *PermissionError) Unwrap() error { return e.Err }

// Transient reports whether err says the Kubernetes API could not be
// reached or could not serve the request now, so that the same request may
// succeed later: a refused, reset or timed-out connection, an EOF, or the
// API's own timeout, throttling, unavailable and internal errors, and a
// load balancer's 502. A 401 or
// 403 is never Transient by itself: APIWatch judges it by what came before.
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
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), badGateway(err):
		return true
	}
	return false
}

// badGateway: a load balancer in front of the API servers found none to
// serve (502).
func badGateway(err error) bool {
	var s apierrors.APIStatus
	return errors.As(err, &s) && s.Status().Code == http.StatusBadGateway
}
