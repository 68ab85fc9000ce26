package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/kafkachaos/kafkachaos/resources"
	"github.com/kafkachaos/kafkachaos/soak"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// SchemaVersion is the version of report.json this code writes. Schema 1
// was a bare list of specs, with recovery times as a map of strings and
// verdicts without figures; Read reads it still.
const SchemaVersion = 2

// Run is a run report, report.json: the environment of the run and what
// each spec saw.
type Run struct {
	// Schema is the report's version: SchemaVersion when written, 1 for a
	// report of the bare list of specs.
	Schema int `json:"schema"`
	// Environment is nil in a report of schema 1, and when the suite
	// ended before Kafka was up.
	Environment *Environment `json:"environment,omitempty"`
	Specs       []Spec       `json:"specs"`
}

// Spec is what one spec saw.
type Spec struct {
	Spec    string  `json:"spec"`
	Fault   string  `json:"fault"`
	Victims []int32 `json:"victims"`
	Passed  bool    `json:"passed"`
	// ExpectFailures marks a negative spec: it passes when its checks fail.
	ExpectFailures bool                `json:"expectFailures,omitempty"`
	SteadyState    *steadystate.Report `json:"steadyState,omitempty"`
	Checks         []Check             `json:"checks"`
	// Java is the verdict of Kafka's own Java clients, where the story
	// ran them: their records and their group's history.
	Java     *javaclients.Result `json:"java,omitempty"`
	Recovery Recovery            `json:"recovery"`
	// Limits says where each bound's limit came from ("maxUnavailable
	// 14s: a hard fault: broker.session.timeout.ms 9000 of broker 0 + 5s").
	Limits []string `json:"limits,omitempty"`
	// Observations are figures a spec measured beyond its checks, each
	// beside what Kafka's documented timing predicts ("time to ISR full
	// 14.2s for 256 MiB, predicted ...").
	Observations []string `json:"observations,omitempty"`
	// Events are what Kafka and Kubernetes did while the load ran, on the
	// steady-state series' clock.
	Events []timeline.Event `json:"events,omitempty"`
	// Resources is what the namespace's pods used while the load ran
	// (CPU time, peak working set); nil in reports written before it.
	Resources *resources.Usage `json:"resources,omitempty"`
	// Soak is what a soak saw of the suite's own process: its memory
	// curve and goroutines; nil for every other spec.
	Soak          *soak.Report `json:"soak,omitempty"`
	FailureReason string       `json:"failure,omitempty"`
}

// Check is one point of a spec's verdict: its problems, none when it held.
type Check struct {
	Name     CheckName `json:"name"`
	Problems []string  `json:"problems,omitempty"`
}

// A spec's verdict, as the summary tables name it.
const (
	VerdictPass = "PASS"
	VerdictFail = "FAIL"
	// VerdictCaught is a negative spec that passed: its checks failed on
	// the unsafe cluster, as they must.
	VerdictCaught = "CAUGHT"
)

// Verdict returns VerdictPass, VerdictFail or VerdictCaught.
func (s Spec) Verdict() string {
	switch {
	case !s.Passed:
		return VerdictFail
	case s.ExpectFailures:
		return VerdictCaught
	}
	return VerdictPass
}

// Problems returns the problems of check name.
func (s Spec) Problems(name CheckName) []string {
	for _, c := range s.Checks {
		if c.Name == name {
			return c.Problems
		}
	}
	return nil
}

// Add appends check name with its problems.
func (s *Spec) Add(name CheckName, problems ...string) {
	s.Checks = append(s.Checks, Check{Name: name, Problems: problems})
}

// FailedChecks names the checks with problems.
func (s Spec) FailedChecks() []CheckName {
	var names []CheckName
	for _, c := range s.Checks {
		if len(c.Problems) > 0 {
			names = append(names, c.Name)
		}
	}
	return names
}

// Read reads a run report of any schema up to SchemaVersion.
func Read(path string) (Run, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Run{}, fmt.Errorf("report: %w", err)
	}
	run, err := decode(raw)
	if err != nil {
		return Run{}, fmt.Errorf("report: %s: %w", path, err)
	}
	return run, nil
}

// decode reads a report of schema 2 and later, an object, or of schema 1,
// a list of specs.
func decode(raw []byte) (Run, error) {
	if b := bytes.TrimLeft(raw, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		var specs []Spec
		if err := json.Unmarshal(raw, &specs); err != nil {
			return Run{}, err
		}
		return Run{Schema: 1, Specs: specs}, nil
	}
	var run Run
	if err := json.Unmarshal(raw, &run); err != nil {
		return Run{}, err
	}
	switch {
	case run.Schema < 2:
		return Run{}, fmt.Errorf("schema %d: not a run report", run.Schema)
	case run.Schema > SchemaVersion:
		return Run{}, fmt.Errorf("schema %d: this kafkachaos reads reports up to schema %d", run.Schema, SchemaVersion)
	}
	return run, nil
}

// Write writes run to path as a report of schema SchemaVersion.
func Write(path string, run Run) error {
	run.Schema = SchemaVersion
	if run.Specs == nil {
		run.Specs = []Spec{}
	}
	raw, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
