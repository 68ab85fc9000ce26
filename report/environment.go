package report

import (
	"cmp"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Environment is what a run ran against, and with what: enough to tell two
// runs apart and to reproduce a figure. The suite records it once Kafka is
// healthy, before the first spec.
type Environment struct {
	// RunID tags the run's ledger entries (annotations).
	RunID string `json:"runId"`
	// Kafkachaos is the build of the suite that ran.
	Kafkachaos Build `json:"kafkachaos"`
	// Kubernetes is the API server's version (discovery), e.g. "v1.33.1";
	// empty when it could not be read.
	Kubernetes string `json:"kubernetes,omitempty"`
	// Flavor of the deployment: statefulset, strimzi or koperator.
	Flavor string `json:"flavor,omitempty"`
	// Layout of manifests/kafka, on the embedded local cluster only.
	Layout    string `json:"layout,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Nodes are the Kafka pods (brokers and controllers), by ID.
	Nodes []Node `json:"nodes,omitempty"`
	// Load is how the steady state loads Kafka in every spec.
	Load Load `json:"load"`
}

// String says in a line what the run ran against: "Kafka v4.4,
// Kubernetes v1.37.2, kafkachaos 1a2b3c4d5e6f (modified), run ...".
func (e Environment) String() string {
	var kafka []string
	for _, n := range e.Nodes {
		if n.Kafka != "" && !slices.Contains(kafka, n.Kafka) {
			kafka = append(kafka, n.Kafka)
		}
	}
	return fmt.Sprintf("Kafka %s, Kubernetes %s, kafkachaos %s, run %s",
		cmp.Or(strings.Join(kafka, " and "), "unknown"), cmp.Or(e.Kubernetes, "unknown"), e.Kafkachaos, cmp.Or(e.RunID, "-"))
}

// Node is one Kafka pod of the run.
type Node struct {
	ID  int32  `json:"id"`
	Pod string `json:"pod"`
	// Image of its Kafka container, as its pod spec names it.
	Image string `json:"image,omitempty"`
	// Kafka is its version as guessed from its ApiVersions answer: "v4.4",
	// or a range. Empty for a node that did not answer (a controller the
	// suite's clients do not reach).
	Kafka string `json:"kafka,omitempty"`
}

// Load is the steady state's settings.
type Load struct {
	Rate       int   `json:"rate"` // records/s, over all producers
	Partitions int32 `json:"partitions"`
	RecordSize int   `json:"recordSize"` // bytes
	// Producers per process: the suite's, or each agent's.
	Producers int `json:"producers"`
	// Agents is how many in-cluster agent pods run the load; 0: the
	// suite's own process does.
	Agents     int              `json:"agents,omitempty"`
	Acks       steadystate.Acks `json:"acks"`
	Idempotent bool             `json:"idempotent"`
	// RequestTimeout is the producers' request timeout (a time.Duration
	// string); empty for franz-go's default, 10s + 10s.
	RequestTimeout string `json:"requestTimeout,omitempty"`
}

// Build is a build of kafkachaos.
type Build struct {
	// Version of the main module; "(devel)" when built from a checkout.
	Version string `json:"version,omitempty"`
	// Revision is the commit it was built from; empty when unknown.
	Revision string `json:"revision,omitempty"`
	// Modified says the checkout had uncommitted changes.
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go,omitempty"`
}

// String is the build's version (unless "(devel)") and the first 12
// characters of its revision: "v1.2.0 1a2b3c4d5e6f", "1a2b3c4d5e6f
// (modified)", or "unknown revision".
func (b Build) String() string {
	rev := b.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	rev = cmp.Or(rev, "unknown revision")
	if b.Modified {
		rev += " (modified)"
	}
	if b.Version != "" && b.Version != "(devel)" {
		rev = b.Version + " " + rev
	}
	return rev
}

// ReadBuild returns this program's build, from its build info. A test
// binary (the suite) carries no VCS stamp: its Revision is empty, for the
// caller to find otherwise.
func ReadBuild() Build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Build{}
	}
	b := Build{Version: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}
