package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kafkachaos/kafkachaos/loadagent"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Agent mode: `kafkachaos steadystate --agent` runs the load in a pod of a
// StatefulSet and serves it with loadagent.Server. This file holds only the
// flags and the wiring: signals, --max-duration, progress and the report.

// Agent defaults and timeouts.
const (
	defaultAgentListen      = ":8080" // loadagent.Port
	defaultAgentMaxDuration = 3 * time.Hour
)

// agentFlags are the flags of agent mode.
type agentFlags struct {
	enabled     bool
	listen      string
	index       int
	maxDuration time.Duration
}

func (a *agentFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&a.enabled, "agent", false, "run as an in-cluster agent: start the load at once and serve /healthz, /status, /stop, /raw, /report and /metrics over HTTP")
	fl.StringVar(&a.listen, "listen", defaultAgentListen, "agent: HTTP listen address (on the local cluster, default: the pod's IP, port 8080)")
	fl.IntVar(&a.index, "agent-index", 0, "agent: this agent's index; its producer IDs are [index*producers, (index+1)*producers) (default $"+loadagent.IndexEnv+", else 0)")
	fl.DurationVar(&a.maxDuration, "max-duration", defaultAgentMaxDuration, "agent: stop the load after this long if nothing stopped it before")
}

// apply checks the agent flags and sets cfg's producer base. Without
// --agent, it rejects the flags that only agents take.
func (a *agentFlags) apply(fl *pflag.FlagSet, cfg *steadystate.Config, runIDGiven bool) error {
	if !a.enabled {
		for _, name := range []string{"listen", "agent-index", "max-duration"} {
			if fl.Changed(name) {
				return usageError{fmt.Errorf("--%s needs --agent", name)}
			}
		}
		return nil
	}
	if !runIDGiven {
		return usageError{errors.New("--agent needs --run-id: every agent of a run must use the same one")}
	}
	if ip := os.Getenv(loadagent.PodIPEnv); ip != "" && !fl.Changed("listen") {
		_, port, _ := net.SplitHostPort(defaultAgentListen)
		a.listen = net.JoinHostPort(ip, port)
	}
	if _, _, err := net.SplitHostPort(a.listen); err != nil {
		return usageError{fmt.Errorf("--listen %q: %w", a.listen, err)}
	}
	if a.maxDuration <= 0 {
		return usageError{fmt.Errorf("--max-duration %s: must be positive", a.maxDuration)}
	}
	if !fl.Changed("agent-index") {
		if env := os.Getenv(loadagent.IndexEnv); env != "" {
			i, err := strconv.Atoi(strings.TrimSpace(env))
			if err != nil {
				return usageError{fmt.Errorf("%s=%q is not an agent index: %w", loadagent.IndexEnv, env, err)}
			}
			a.index = i
		}
	}
	base := uint64(a.index) * uint64(cfg.Producers)
	switch {
	case a.index < 0:
		return usageError{fmt.Errorf("agent index %d is negative", a.index)}
	case base+uint64(cfg.Producers) > 1<<32:
		return usageError{fmt.Errorf("agent index %d with %d producers overflows the 32-bit producer IDs", a.index, cfg.Producers)}
	}
	cfg.ProducerBase = uint32(base)
	return nil
}

// parseRunID reads a run ID in hex, as reports print it (runId), with or
// without 0x.
func parseRunID(s string) (uint64, error) {
	h := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	id, err := strconv.ParseUint(h, 16, 64)
	switch {
	case err != nil:
		return 0, usageError{fmt.Errorf("--run-id %q is not up to 16 hex digits", s)}
	case id == 0:
		return 0, usageError{fmt.Errorf("--run-id %q: 0 is not a run ID", s)}
	}
	return id, nil
}

// runAgent runs r as an agent, serving on ln (metrics, the Prometheus
// metrics of r's Observer, on /metrics): it starts the load at once,
// stops it on POST /stop, after maxDuration, or on the first SIGTERM or
// SIGINT (a second one aborts), and then serves the results until a signal
// comes. A signal during the run makes it exit once the run has ended. The
// exit is 0 whenever the run produced its results, whatever its verdict:
// the suite judges the merged run.
func runAgent(ctx context.Context, r *steadystate.Runner, ln net.Listener, metrics http.Handler, maxDuration time.Duration, reportPath string,
	intr *interrupts, cancel context.CancelFunc, stdout, stderr io.Writer) error {
	a := loadagent.NewServer(r, metrics)
	defer serveHTTP(ctx, ln, a.Handler(), "agent", stderr)()

	cfg := r.Config()
	fmt.Fprintf(stderr, "agent listening on %s\n", ln.Addr())
	fmt.Fprintf(stderr, "steady state agent: run %016x, producer IDs [%d, %d), topic %s, %s, %d-byte records, acks=%s, idempotent=%t; POST /stop or SIGTERM ends the load, at the latest after %s\n",
		cfg.RunID, cfg.ProducerBase, uint64(cfg.ProducerBase)+uint64(cfg.Producers), cfg.Topic, rateText(cfg.Rate), cfg.RecordSize, cfg.Acks, !cfg.NoIdempotence, maxDuration)

	signals := make(chan struct{}, 4)
	intr.set(func() {
		select {
		case signals <- struct{}{}:
		default:
		}
	})
	limit := time.AfterFunc(maxDuration, func() {
		if a.Stop() {
			fmt.Fprintf(stderr, "agent: --max-duration %s reached, stopping the load\n", maxDuration)
		}
	})
	defer limit.Stop()

	type result struct {
		rep *steadystate.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := r.Run(ctx)
		done <- result{rep, err}
	}()
	progStop, progDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(progDone)
		showProgress(r, stderr, progStop)
	}()

	terminate := false
	var res result
	for running := true; running; {
		select {
		case res = <-done:
			running = false
		case <-signals:
			if !terminate {
				terminate = true
				fmt.Fprintln(stderr, "agent: terminating: stopping the load, flushing and draining (signal again to abort)")
				a.Stop()
			} else {
				fmt.Fprintln(stderr, "agent: aborting the run")
				cancel()
			}
		}
	}
	close(progStop)
	<-progDone
	encErr := a.Finish(res.rep, res.err)

	if res.rep != nil {
		printReport(stdout, res.rep)
		if reportPath != "" {
			if err := writeJSON(reportPath, res.rep); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "report: %s\n", reportPath)
		}
	}
	if !terminate {
		if res.rep != nil {
			fmt.Fprintln(stderr, "agent: run ended; serving /raw and /report until terminated")
		} else {
			fmt.Fprintf(stderr, "agent: run failed: %v; serving /status until terminated\n", res.err)
		}
		select {
		case <-signals:
		case <-ctx.Done():
		}
	}
	switch {
	case res.rep == nil && res.err == nil:
		return errors.New("steady state agent: the run ended without a report")
	case res.rep == nil:
		return fmt.Errorf("steady state agent: %w", res.err)
	case encErr != nil:
		return encErr
	}
	return nil
}
