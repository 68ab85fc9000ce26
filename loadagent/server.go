package loadagent

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Server serves one runner's state and results over the protocol. The
// caller runs the runner, calls Stop to end the load gracefully, and
// Finish with Run's outcome.
type Server struct {
	r       *steadystate.Runner
	metrics http.Handler // of the runner's Observer; nil for none

	mu       sync.Mutex
	stopping bool
	finished bool
	runErr   error
	raw      encodedJSON // the run's measurements, once done
	report   encodedJSON // the agent's own report, once done
}

// NewServer returns a server for r. metrics, when non-nil, serves
// GET /metrics: the Prometheus metrics of r's Observer (see
// steadystate/metrics).
func NewServer(r *steadystate.Runner, metrics http.Handler) *Server {
	return &Server{r: r, metrics: metrics}
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

// Stop ends the load, gracefully; it reports whether this call did.
func (s *Server) Stop() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping || s.finished {
		return false
	}
	s.stopping = true
	s.r.Stop()
	return true
}

// Finish records the outcome of the runner's Run. Its error says that the
// results could not be encoded (the run's own error is served in Status).
func (s *Server) Finish(rep *steadystate.Report, runErr error) error {
	var raw, report encodedJSON
	var encErr error
	if rep != nil {
		m, ok := s.r.Measurements()
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
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	s.runErr = errors.Join(runErr, encErr)
	s.raw, s.report = raw, report
	return encErr
}

// Status returns what /status serves.
func (s *Server) Status() Status {
	cfg := s.r.Config()
	p := s.r.Progress()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		State: s.stateLocked(), RunID: fmt.Sprintf("%016x", cfg.RunID),
		ProducerBase: cfg.ProducerBase, Producers: cfg.Producers,
		ElapsedSeconds: p.Elapsed.Seconds(),
		Sent:           p.Sent, Acked: p.Acked, Failed: p.Failed, Consumed: p.Consumed,
	}
	if s.runErr != nil {
		st.Error = s.runErr.Error()
	}
	return st
}

func (s *Server) stateLocked() State {
	switch {
	case s.finished && s.raw.plain != nil:
		return StateDone
	case s.finished:
		return StateFailed
	case s.stopping:
		return StateStopping
	}
	select {
	case <-s.r.Started():
		return StateRunning
	default:
		return StateStarting
	}
}

// Handler returns the protocol's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathHealthz, s.serveHealthz)
	mux.HandleFunc("GET "+PathStatus, func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, s.Status())
	})
	mux.HandleFunc("POST "+PathStop, func(w http.ResponseWriter, _ *http.Request) {
		s.Stop()
		writeStatus(w, http.StatusAccepted, s.Status())
	})
	mux.HandleFunc("POST "+PathPhase, func(w http.ResponseWriter, req *http.Request) {
		p := steadystate.Phase(req.URL.Query().Get("name"))
		if !slices.Contains(steadystate.Phases, p) {
			http.Error(w, fmt.Sprintf("phase %q: want one of %v", p, steadystate.Phases), http.StatusBadRequest)
			return
		}
		s.r.Mark(p)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET "+PathRaw, func(w http.ResponseWriter, req *http.Request) {
		s.serveResult(w, req, func() encodedJSON { return s.raw })
	})
	mux.HandleFunc("GET "+PathReport, func(w http.ResponseWriter, req *http.Request) {
		s.serveResult(w, req, func() encodedJSON { return s.report })
	})
	if s.metrics != nil {
		mux.Handle("GET "+PathMetrics, s.metrics)
	}
	return mux
}

// serveHealthz answers 200 once the load is running (and after it ended
// with results), 503 before that or when the run failed.
func (s *Server) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	st := s.Status()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch st.State {
	case StateRunning, StateStopping, StateDone:
		fmt.Fprintln(w, "ok")
	default:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, st.State)
	}
}

// serveResult serves one of the results once the run is done: 409 with the
// status while it runs, 500 with the status when it failed.
func (s *Server) serveResult(w http.ResponseWriter, req *http.Request, pick func() encodedJSON) {
	s.mu.Lock()
	doc := pick()
	s.mu.Unlock()
	if doc.plain == nil {
		st := s.Status()
		code := http.StatusConflict
		if st.State == StateFailed {
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

func writeStatus(w http.ResponseWriter, code int, st Status) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}
