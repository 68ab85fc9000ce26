package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Agent mode: `kafkachaos steadystate --agent` runs the load in a pod of a
// StatefulSet and serves its state and measurements over HTTP, so that a
// suite can run N agents under one run ID and merge their measurements
// (steadystate.Merge) through the API server (pods/portforward).

// agentIndexEnv gives the agent index when --agent-index is not set; a
// StatefulSet passes its pod index (label apps.kubernetes.io/pod-index)
// through the downward API.
const agentIndexEnv = "KAFKACHAOS_AGENT_INDEX"

// podIPEnv is set by the embedded local cluster's node agent, where pods
// share the host's network: an agent listens on its pod's own IP there, so
// several agents can use port 8080 at once.
const podIPEnv = "KAFKACHAOS_POD_IP"

// Agent defaults and timeouts.
const (
	defaultAgentListen      = ":8080"
	defaultAgentMaxDuration = 3 * time.Hour
	agentReadHeaderTimeout  = 10 * time.Second
	agentShutdownTimeout    = 5 * time.Second
)

// States of an agent, as /status reports them.
const (
	agentStarting = "starting" // creating the topic and clients
	agentRunning  = "running"  // producing
	agentStopping = "stopping" // stop requested: flushing and draining
	agentDone     = "done"     // measurements and report are served
	agentFailed   = "failed"   // the run ended without a report
)

// agentFlags are the flags of agent mode.
type agentFlags struct {
	enabled     bool
	listen      string
	index       int
	maxDuration time.Duration
}

func (a *agentFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&a.enabled, "agent", false, "run as an in-cluster agent: start the load at once and serve /healthz, /status, /stop, /raw and /report over HTTP")
	fl.StringVar(&a.listen, "listen", defaultAgentListen, "agent: HTTP listen address (on the local cluster, default: the pod's IP, port 8080)")
	fl.IntVar(&a.index, "agent-index", 0, "agent: this agent's index; its producer IDs are [index*producers, (index+1)*producers) (default $"+agentIndexEnv+", else 0)")
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
	if ip := os.Getenv(podIPEnv); ip != "" && !fl.Changed("listen") {
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
		if env := os.Getenv(agentIndexEnv); env != "" {
			i, err := strconv.Atoi(strings.TrimSpace(env))
			if err != nil {
				return usageError{fmt.Errorf("%s=%q is not an agent index: %w", agentIndexEnv, env, err)}
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

// agentStatus is the JSON of /status, and of /raw and /report before the
// run is done.
type agentStatus struct {
	State string `json:"state"`
	RunID string `json:"runId"`
	// The agent's producer IDs are [ProducerBase, ProducerBase+Producers).
	ProducerBase   uint32  `json:"producerBase"`
	Producers      int     `json:"producers"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	Sent           int64   `json:"sent"`
	Acked          int64   `json:"acked"`
	Failed         int64   `json:"failed"`
	Consumed       int64   `json:"consumed"`
	Error          string  `json:"error,omitempty"`
}

// loadAgent serves one runner's state over HTTP.
type loadAgent struct {
	r *steadystate.Runner

	mu       sync.Mutex
	stopping bool
	finished bool
	runErr   error
	raw      encodedJSON // the run's measurements, once done
	report   encodedJSON // the agent's own report, once done
}

// encodedJSON is a JSON document, and its gzip form.
type encodedJSON struct{ plain, gz []byte }

func encodeJSON(v any) (encodedJSON, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return encodedJSON{}, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return encodedJSON{}, err
	}
	if err := zw.Close(); err != nil {
		return encodedJSON{}, err
	}
	return encodedJSON{plain: b, gz: buf.Bytes()}, nil
}

// stop ends the load, gracefully; it reports whether this call did.
func (a *loadAgent) stop() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopping || a.finished {
		return false
	}
	a.stopping = true
	a.r.Stop()
	return true
}

// finish records the outcome of Run.
func (a *loadAgent) finish(rep *steadystate.Report, runErr error) error {
	var raw, report encodedJSON
	var encErr error
	if rep != nil {
		m, ok := a.r.Measurements()
		if !ok {
			encErr = errors.New("the run has a report but no measurements")
		} else if raw, encErr = encodeJSON(m); encErr == nil {
			report, encErr = encodeJSON(rep)
		}
		if encErr != nil {
			encErr = fmt.Errorf("steady state agent: encode results: %w", encErr)
			raw, report = encodedJSON{}, encodedJSON{}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.finished = true
	a.runErr = errors.Join(runErr, encErr)
	a.raw, a.report = raw, report
	return encErr
}

func (a *loadAgent) status() agentStatus {
	cfg := a.r.Config()
	p := a.r.Progress()
	a.mu.Lock()
	defer a.mu.Unlock()
	st := agentStatus{
		State: a.stateLocked(), RunID: fmt.Sprintf("%016x", cfg.RunID),
		ProducerBase: cfg.ProducerBase, Producers: cfg.Producers,
		ElapsedSeconds: p.Elapsed.Seconds(),
		Sent:           p.Sent, Acked: p.Acked, Failed: p.Failed, Consumed: p.Consumed,
	}
	if a.runErr != nil {
		st.Error = a.runErr.Error()
	}
	return st
}

func (a *loadAgent) stateLocked() string {
	switch {
	case a.finished && a.raw.plain != nil:
		return agentDone
	case a.finished:
		return agentFailed
	case a.stopping:
		return agentStopping
	}
	select {
	case <-a.r.Started():
		return agentRunning
	default:
		return agentStarting
	}
}

func (a *loadAgent) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.serveHealthz)
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, a.status())
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, _ *http.Request) {
		a.stop()
		writeStatus(w, http.StatusAccepted, a.status())
	})
	mux.HandleFunc("GET /raw", func(w http.ResponseWriter, req *http.Request) {
		a.serveResult(w, req, func() encodedJSON { return a.raw })
	})
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, req *http.Request) {
		a.serveResult(w, req, func() encodedJSON { return a.report })
	})
	return mux
}

// serveHealthz answers 200 once the load is running (and after it ended
// with results), 503 before that or when the run failed.
func (a *loadAgent) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	st := a.status()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch st.State {
	case agentRunning, agentStopping, agentDone:
		fmt.Fprintln(w, "ok")
	default:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, st.State)
	}
}

// serveResult serves one of the results once the run is done: 409 with the
// status while it runs, 500 with the status when it failed.
func (a *loadAgent) serveResult(w http.ResponseWriter, req *http.Request, pick func() encodedJSON) {
	a.mu.Lock()
	doc := pick()
	a.mu.Unlock()
	if doc.plain == nil {
		st := a.status()
		code := http.StatusConflict
		if st.State == agentFailed {
			code = http.StatusInternalServerError
		}
		writeStatus(w, code, st)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Vary", "Accept-Encoding")
	body := doc.plain
	if acceptsGzip(req) {
		w.Header().Set("Content-Encoding", "gzip")
		body = doc.gz
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// acceptsGzip reports whether the client takes a gzip-encoded response
// (Go's HTTP client asks for one, and decompresses it, by itself).
func acceptsGzip(req *http.Request) bool {
	for _, part := range strings.Split(req.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			return strings.ReplaceAll(params, " ", "") != "q=0"
		}
	}
	return false
}

func writeStatus(w http.ResponseWriter, code int, st agentStatus) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

// runAgent runs r as an agent, serving on ln: it starts the load at once,
// stops it on POST /stop, after maxDuration, or on the first SIGTERM or
// SIGINT (a second one aborts), and then serves the results until a signal
// comes. A signal during the run makes it exit once the run has ended. The
// exit is 0 whenever the run produced its results, whatever its verdict:
// the suite judges the merged run.
func runAgent(ctx context.Context, r *steadystate.Runner, ln net.Listener, maxDuration time.Duration, reportPath string,
	intr *interrupts, cancel context.CancelFunc, stdout, stderr io.Writer) error {
	a := &loadAgent{r: r}
	srv := &http.Server{Handler: a.routes(), ReadHeaderTimeout: agentReadHeaderTimeout}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "agent: serving HTTP failed: %v\n", err)
		}
	}()
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), agentShutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	}()

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
		if a.stop() {
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
				a.stop()
			} else {
				fmt.Fprintln(stderr, "agent: aborting the run")
				cancel()
			}
		}
	}
	close(progStop)
	<-progDone
	encErr := a.finish(res.rep, res.err)

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
