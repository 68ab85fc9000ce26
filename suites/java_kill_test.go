package suites

import (
	"testing"

	"github.com/kafkachaos/kafkachaos/scenario"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// The producer kill counts only when it killed a producer with
// acknowledged sends, and a new one's sends were acknowledged after it.
func TestProducerKillProblems(t *testing.T) {
	acked := func(n uint64) *javaclients.Result { return &javaclients.Result{Group: groupcheck.Result{Acked: n}} }
	tests := []struct {
		name  string
		kill  scenario.JavaProducerKill
		java  *javaclients.Result
		clean bool
	}{
		{"killed, and taken over", scenario.JavaProducerKill{Killed: "p-1", Acked: 100}, acked(250), true},
		{"never killed", scenario.JavaProducerKill{}, acked(250), false},
		{"killed before any ack", scenario.JavaProducerKill{Killed: "p-1"}, acked(250), false},
		{"nobody took over", scenario.JavaProducerKill{Killed: "p-1", Acked: 100}, acked(100), false},
		{"no Java verdict", scenario.JavaProducerKill{Killed: "p-1", Acked: 100}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p := producerKillProblems(&tt.kill, tt.java); (len(p) == 0) != tt.clean {
				t.Errorf("problems %q, want clean %v", p, tt.clean)
			}
		})
	}
}
