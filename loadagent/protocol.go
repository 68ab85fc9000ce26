package loadagent

import "github.com/kafkachaos/kafkachaos/steadystate/metrics"

// The load agent's HTTP protocol: both the server (Server) and the client
// (Stop, MarkPhase, Collect, the StatefulSet's readiness probe) use these names, so the
// two sides cannot drift apart.
//
//	GET  /healthz  200 "ok" once producing, 503 before (or when the run failed)
//	GET  /status   200 with Status
//	POST /stop     202 with Status: ends the load gracefully; idempotent
//	POST /phase?name=P  204: the run enters phase P (its metrics' kafkachaos_phase);
//	               400 for a phase that is not one of steadystate's
//	GET  /raw      200: the run's steadystate.Measurements (gzip if asked);
//	               409 with Status while it runs, 500 with Status if it failed
//	GET  /report   200: the agent's own steadystate.Report; 409 or 500 as /raw
//	GET  /metrics  200: the run's Prometheus metrics (package steadystate/metrics),
//	               live while it runs and final once it is done

// Port is where agents serve the protocol (the agent's default --listen, on
// the pod's IP).
const Port = 8080

// Routes of the protocol.
const (
	PathHealthz = "/healthz"
	PathStatus  = "/status"
	PathStop    = "/stop"
	PathPhase   = "/phase"
	PathRaw     = "/raw"
	PathReport  = "/report"
	PathMetrics = metrics.Path
)

// IndexEnv gives an agent its index when --agent-index is not set; the
// StatefulSet passes its pod index (label apps.kubernetes.io/pod-index)
// through the downward API.
const IndexEnv = "KAFKACHAOS_AGENT_INDEX"

// PodIPEnv is set by the embedded local cluster's node agent, where pods
// share the host's network: an agent listens on its pod's own IP there, so
// several agents can use Port at once.
const PodIPEnv = "KAFKACHAOS_POD_IP"

// State is an agent's state, as /status reports it.
type State string

// States of an agent.
const (
	StateStarting State = "starting" // creating the topic and clients
	StateRunning  State = "running"  // producing
	StateStopping State = "stopping" // stop requested: flushing and draining
	StateDone     State = "done"     // measurements and report are served
	StateFailed   State = "failed"   // the run ended without a report
)

// Status is the JSON of /status, and of /raw and /report before the run is
// done.
type Status struct {
	State State  `json:"state"`
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
