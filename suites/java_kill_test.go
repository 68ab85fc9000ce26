package suites

import (
	"testing"
	"time"

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
		kill  scenario.JavaKill
		java  *javaclients.Result
		clean bool
	}{
		{"killed, and taken over", scenario.JavaKill{Killed: "p-1", Done: 100}, acked(250), true},
		{"never killed", scenario.JavaKill{}, acked(250), false},
		{"killed before any ack", scenario.JavaKill{Killed: "p-1"}, acked(250), false},
		{"nobody took over", scenario.JavaKill{Killed: "p-1", Done: 100}, acked(100), false},
		{"no Java verdict", scenario.JavaKill{Killed: "p-1", Done: 100}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p := producerKillProblems(&tt.kill, tt.java); (len(p) == 0) != tt.clean {
				t.Errorf("problems %q, want clean %v", p, tt.clean)
			}
		})
	}
}

// The member kill counts only when it killed a member that had read
// records, and its replacement read records after it.
func TestMemberKillProblems(t *testing.T) {
	tests := []struct {
		name  string
		kill  scenario.JavaKill
		read  int64
		clean bool
	}{
		{"killed, replaced, the replacement read", scenario.JavaKill{Client: 1, Killed: "c-1-0", Done: 500}, 300, true},
		{"never killed", scenario.JavaKill{Client: 1}, 300, false},
		{"killed before it read anything", scenario.JavaKill{Client: 1, Killed: "c-1-0"}, 300, false},
		{"the replacement read nothing", scenario.JavaKill{Client: 1, Killed: "c-1-0", Done: 500}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p := memberKillProblems(&tt.kill, tt.read); (len(p) == 0) != tt.clean {
				t.Errorf("problems %q, want clean %v", p, tt.clean)
			}
		})
	}
}

// The member faults' lag bound passes the measured takeovers and fails a
// run half again as slow, or one whose lag was never sampled.
func TestMemberFaultLagProblems(t *testing.T) {
	peak := time.Date(2026, 12, 7, 14, 22, 7, 0, time.UTC)
	lag := func(back time.Duration) *groupcheck.Lag {
		return &groupcheck.Lag{Baseline: 11, Peak: 3180, PeakAt: peak, Back: back, Samples: 352}
	}
	tests := []struct {
		name  string
		lag   *groupcheck.Lag
		clean bool
	}{
		{"back in 49.3 s, the slowest measured", lag(49300 * time.Millisecond), true},
		{"back in 75 s", lag(75 * time.Second), false},
		{"not sampled", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p := memberFaultLagProblems(tt.lag); (len(p) == 0) != tt.clean {
				t.Errorf("problems %q, want clean %v", p, tt.clean)
			}
		})
	}
}

// KIP-848's protocol counts as on only where the brokers' coordinators
// accept it: Kafka 3.9's default list is "classic".
func TestConsumerProtocolOn(t *testing.T) {
	for _, tt := range []struct {
		protocols string
		on        bool
	}{{"classic,consumer", true}, {"classic, consumer, streams", true}, {"classic", false}, {"", false}, {"consumerx", false}} {
		if got := consumerProtocolOn(tt.protocols); got != tt.on {
			t.Errorf("consumerProtocolOn(%q) = %v, want %v", tt.protocols, got, tt.on)
		}
	}
}
