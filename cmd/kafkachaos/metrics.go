package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/kafkachaos/kafkachaos/steadystate/metrics"
)

// Timeouts of the HTTP servers (the agent's, the metrics endpoint).
const (
	readHeaderTimeout = 10 * time.Second
	shutdownTimeout   = 5 * time.Second
)

// metricsFlags are the flags of a standalone run's Prometheus endpoint.
// Agents serve /metrics on --listen instead.
type metricsFlags struct {
	addr   string
	linger time.Duration
}

func (mf *metricsFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&mf.addr, "metrics-addr", "", "serve Prometheus metrics on http://HOST:PORT"+metrics.Path+" during the run (agents serve them on --listen)")
	fl.DurationVar(&mf.linger, "metrics-linger", 0, "with --metrics-addr: keep serving the final metrics this long after the run, so a scrape sees them (Ctrl-C ends it)")
}

// check rejects metrics flags that cannot apply: in agent mode, or
// --metrics-linger alone.
func (mf *metricsFlags) check(fl *pflag.FlagSet, agent bool) error {
	switch {
	case agent && fl.Changed("metrics-addr"):
		return usageError{errors.New("--metrics-addr: an agent serves " + metrics.Path + " on --listen")}
	case fl.Changed("metrics-linger") && mf.addr == "":
		return usageError{errors.New("--metrics-linger needs --metrics-addr")}
	case mf.linger < 0:
		return usageError{fmt.Errorf("--metrics-linger %s is negative", mf.linger)}
	}
	if mf.addr != "" {
		if _, _, err := net.SplitHostPort(mf.addr); err != nil {
			return usageError{fmt.Errorf("--metrics-addr %q: %w", mf.addr, err)}
		}
	}
	return nil
}

// serveHTTP serves h on ln until the returned function, which shuts the
// server down (waiting up to shutdownTimeout for requests in flight), is
// called. A failure to serve is reported on stderr, prefixed with what.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, what string, stderr io.Writer) (shutdown func()) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "%s: serving HTTP failed: %v\n", what, err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	}
}

// serve serves m at metrics.Path on --metrics-addr, and says where on
// stderr; the returned function lingers as --metrics-linger asks (a signal
// ends that early) and then stops serving.
func (mf *metricsFlags) serve(ctx context.Context, m *metrics.Metrics, intr *interrupts, stderr io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", mf.addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, m.Handler())
	shutdown := serveHTTP(ctx, ln, mux, "metrics", stderr)
	fmt.Fprintf(stderr, "metrics: serving http://%s%s\n", ln.Addr(), metrics.Path)
	return func() {
		defer shutdown()
		if mf.linger <= 0 || ctx.Err() != nil {
			return
		}
		ended := make(chan struct{})
		var once sync.Once
		intr.set(func() { once.Do(func() { close(ended) }) })
		fmt.Fprintf(stderr, "metrics: serving the final values for %s (Ctrl-C ends it)\n", mf.linger)
		t := time.NewTimer(mf.linger)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ended:
		case <-ctx.Done():
		}
	}, nil
}
