package pauseleader

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// This team's own load and bounds.
const (
	rate       = 500                    // records/s
	hold       = 8 * time.Second        // how long the leader stays frozen
	p99Ack     = 30 * time.Second       // at most, in every phase
	story      = 8 * time.Minute        // the whole story, at most
	cleanupMax = 5 * time.Minute        // each cleanup, at most
	settleFor  = 5 * time.Second        // baseline and after phases
	warmFor    = 3 * time.Second        // before the baseline
	partition  = int32(0)               // whose leader is paused
	runID      = "example-pause-leader" // in the ledger, for kafkachaos recover --run-id
)

// testCaller connects the engine to a plain Go test: narration to the
// test's log, cleanups to t.Cleanup (last in, first out, on a context of
// their own), and the outcome to the log.
type testCaller struct{ t *testing.T }

func (c testCaller) By(text string) { c.t.Log("STEP: " + text) }
func (c testCaller) Write(p []byte) (int, error) {
	c.t.Log(string(p))
	return len(p), nil
}
func (c testCaller) Defer(fn func(context.Context) error, timeout time.Duration) {
	c.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := fn(ctx); err != nil {
			c.t.Errorf("cleanup: %v", err)
		}
	})
}
func (c testCaller) Spec() string { return c.t.Name() }
func (c testCaller) Record(o scenario.Outcome) {
	c.t.Logf("outcome: victims %v, fault %q, %d checks", o.Victims, o.Fault, len(o.Checks))
}

// TestPauseLeader freezes the leader of partition 0 for hold, under this
// team's load, and fails on any check the suite would fail. It runs where
// the environment says: KAFKACHAOS_NAMESPACE, and KAFKACHAOS_STATE_DIR (a
// local cluster) or KAFKACHAOS_KUBECONFIG with KAFKACHAOS_BOOTSTRAP.
func TestPauseLeader(t *testing.T) {
	target := scenario.Target{
		StateDir: os.Getenv("KAFKACHAOS_STATE_DIR"), Kubeconfig: os.Getenv("KAFKACHAOS_KUBECONFIG"),
		Namespace: os.Getenv("KAFKACHAOS_NAMESPACE"),
	}
	if b := os.Getenv("KAFKACHAOS_BOOTSTRAP"); b != "" {
		target.Bootstrap = []string{b}
	}
	if target.Namespace == "" || (target.StateDir == "" && target.Kubeconfig == "") {
		t.Skip("set KAFKACHAOS_NAMESPACE, and KAFKACHAOS_STATE_DIR or KAFKACHAOS_KUBECONFIG (see README.md)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), story)
	defer cancel()
	env, err := scenario.Connect(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	caller := testCaller{t}
	env.Narrator, env.Cleanups, env.Recorder, env.RunID = caller, caller, caller, runID
	env.SteadyState = scenario.SteadyStateConfig{Rate: rate}
	env.Timing = scenario.TimingConfig{Warmup: dur(warmFor), Baseline: dur(settleFor), Hold: dur(hold), After: dur(settleFor)}
	env.Bounds = scenario.BoundsConfig{MaxP99Ack: dur(p99Ack), MinThroughputRatioAfter: 0.9}

	st := scenario.Story[*testing.T]{
		Label: "example-pause-leader",
		Kind:  scenario.Hard, // Kafka fences a frozen broker after broker.session.timeout.ms
		Pick: func(ctx context.Context, t *testing.T, topic string, snap []brokers.Server) ([]brokers.Server, error) {
			var id int32
			err := env.WithKafka(func(cl *kafkaadmin.Client) (err error) {
				id, err = cl.PartitionLeader(ctx, topic, partition)
				return err
			})
			if err != nil {
				return nil, err
			}
			b, ok := brokers.ByID(snap, id)
			if !ok {
				return nil, fmt.Errorf("no pod carries broker %d, the leader of %s/%d", id, topic, partition)
			}
			return []brokers.Server{b}, nil
		},
		Fault: func(_ *testing.T, v []brokers.Server) chaos.Fault {
			return &chaos.Pause{Scope: env.FaultScope(), Exec: env.Exec, Pod: v[0].Pod, Container: v[0].Container}
		},
	}
	o, err := scenario.Run(ctx, env, t, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", o.SteadyState.SummaryLine)
	for _, c := range o.Checks {
		if len(c.Problems) > 0 {
			t.Errorf("%s: %q", c.Name, c.Problems)
		}
	}
}

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }
