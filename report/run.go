package report

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Check is one point of a spec's verdict: its problems, none when it held.
type Check struct {
	Name     CheckName `json:"name"`
	Problems []string  `json:"problems,omitempty"`
}

// Spec is what one spec saw; a run report (report.json) is a list of them.
type Spec struct {
	Spec    string  `json:"spec"`
	Fault   string  `json:"fault"`
	Victims []int32 `json:"victims"`
	Passed  bool    `json:"passed"`
	// ExpectFailures marks a negative spec: it passes when its checks fail.
	ExpectFailures bool                `json:"expectFailures,omitempty"`
	SteadyState    *steadystate.Report `json:"steadyState,omitempty"`
	Checks         []Check             `json:"checks"`
	Recovery       Recovery            `json:"recovery"`
	FailureReason  string              `json:"failure,omitempty"`
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

// Read reads a run report.
func Read(path string) ([]Spec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var specs []Spec
	if err := json.Unmarshal(raw, &specs); err != nil {
		return nil, fmt.Errorf("report: %s: %w", path, err)
	}
	return specs, nil
}
