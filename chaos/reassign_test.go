package chaos

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// fakeKafka is a Mover over an assignment it keeps: Reassign applies the
// partitions given at once, unless fail is set.
type fakeKafka struct {
	now      kafkaadmin.Assignments
	fail     error
	moves    []string // what each Reassign was asked, as Assignments.String
	throttle []int64
}

func (k *fakeKafka) Assignments(_ context.Context, topics ...string) (kafkaadmin.Assignments, error) {
	out := kafkaadmin.Assignments{}
	for _, t := range topics {
		out[t] = map[int32][]int32{}
		for p, rs := range k.now[t] {
			out[t][p] = slices.Clone(rs)
		}
	}
	return out, nil
}

func (k *fakeKafka) Reassign(_ context.Context, to kafkaadmin.Assignments, throttle int64) error {
	k.moves = append(k.moves, to.String())
	k.throttle = append(k.throttle, throttle)
	if k.fail != nil {
		return k.fail
	}
	to.Each(func(t string, p int32, rs []int32) { k.now[t][p] = slices.Clone(rs) })
	return nil
}

// threeBrokers is topic t's 3 partitions, 2 replicas each, on brokers 0-2.
func threeBrokers() kafkaadmin.Assignments {
	return kafkaadmin.Assignments{"t": {0: {0, 1}, 1: {1, 2}, 2: {2, 0}}}
}

// scaledOut is a StatefulSet scaled from 3 to 4 by Inject, and the fault.
func scaledOut(t *testing.T, k Mover) (fakeClient, *Scale) {
	t.Helper()
	s := scaleSTS("kafka", "kafka", 3, "data")
	s.ResourceVersion = "7"
	cs := newClient(allowedNS("kafka"), s)
	f := &Scale{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, StatefulSet: "kafka", Replicas: 4,
		Kafka: k, Topics: []string{"t"}, Throttle: 1 << 20}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	return cs, f
}

func TestScaleSpreadAndRecover(t *testing.T) {
	k := &fakeKafka{now: threeBrokers()}
	cs, f := scaledOut(t, k)

	moved, err := f.Spread(t.Context(), []int32{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) == 0 || !slices.Contains(k.now.Brokers(), 3) {
		t.Fatalf("Spread moved %s; Kafka now %s, nothing on broker 3", moved, k.now)
	}
	if got := kinds(ledger(t, getSTS(t, cs, "kafka", "kafka"))); !slices.Equal(got, []string{"reassign@r1", "scale@r1"}) {
		t.Fatalf("ledger %v, want the reassign and the scale entry", got)
	}
	n := len(k.moves)
	if again, err := f.Spread(t.Context(), []int32{0, 1, 2, 3}); err != nil || len(again) != 0 || len(k.moves) != n {
		t.Errorf("second Spread moved %s (err %v), want nothing: the partitions are spread", again, err)
	}
	// Another spread, to fewer brokers, would overwrite what recovery needs.
	if _, err := f.Spread(t.Context(), []int32{0, 1, 3}); err == nil || !strings.Contains(err.Error(), "already carries a reassign entry") {
		t.Errorf("Spread with a reassign entry there = %v, want a refusal", err)
	}

	if err := f.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k.now.String() != threeBrokers().String() {
		t.Errorf("after Recover Kafka has %s, want %s back", k.now, threeBrokers())
	}
	if k.throttle[len(k.throttle)-1] != 1<<20 {
		t.Errorf("move back throttled to %v, want the spread's 1 MiB/s", k.throttle)
	}
	s := getSTS(t, cs, "kafka", "kafka")
	if es := ledger(t, s); len(es) != 0 || *s.Spec.Replicas != 3 {
		t.Errorf("after Recover: ledger %v, replicas %d; want none and 3", kinds(es), *s.Spec.Replicas)
	}
}

func TestSpreadNeedsAScaleOut(t *testing.T) {
	s := scaleSTS("kafka", "kafka", 3, "data")
	cs := newClient(allowedNS("kafka"), s)
	k := &fakeKafka{now: threeBrokers()}
	f := &Scale{Scope: Scope{Client: cs, Namespace: "kafka"}, StatefulSet: "kafka", Replicas: 4, Kafka: k, Topics: []string{"t"}}
	_, err := f.Spread(t.Context(), []int32{0, 1, 2, 3})
	if err == nil || !strings.Contains(err.Error(), "no scale entry") {
		t.Fatalf("Spread = %v, want a refusal without a scale-out", err)
	}
	if len(k.moves) != 0 {
		t.Errorf("Spread moved %v", k.moves)
	}
}

// Recovery without Kafka, or with Kafka failing, must not scale in: the
// added broker holds replicas.
func TestRecoverKeepsTheScaleOutUntilPartitionsAreBack(t *testing.T) {
	tests := []struct {
		name   string
		access func(*fakeKafka) Access
	}{
		{name: "no Kafka", access: func(*fakeKafka) Access { return Access{} }},
		{name: "Kafka fails", access: func(k *fakeKafka) Access {
			k.fail = errors.New("broker 3 not available")
			return Access{Kafka: k}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &fakeKafka{now: threeBrokers()}
			cs, f := scaledOut(t, k)
			if _, err := f.Spread(t.Context(), []int32{0, 1, 2, 3}); err != nil {
				t.Fatal(err)
			}
			spread := k.now.String()
			_, err := RecoverAll(t.Context(), cs, tt.access(k), nil, "", false)
			if err == nil {
				t.Fatal("RecoverAll succeeded though the partitions could not be moved back")
			}
			s := getSTS(t, cs, "kafka", "kafka")
			if got := kinds(ledger(t, s)); !slices.Equal(got, []string{"reassign@r1", "scale@r1"}) || *s.Spec.Replicas != 4 {
				t.Errorf("ledger %v, replicas %d; want both entries kept and 4 replicas", got, *s.Spec.Replicas)
			}
			if k.now.String() != spread {
				t.Errorf("Kafka changed to %s", k.now)
			}

			// With Kafka back, the next recover finishes the job.
			k.fail = nil
			lines, err := RecoverAll(t.Context(), cs, Access{Kafka: k}, nil, "", false)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != 2 || !strings.Contains(lines[0], "move partitions back") || !strings.Contains(lines[1], "scale back from 4 to 3") {
				t.Errorf("lines %q, want the move back, then the scale-in", lines)
			}
			if k.now.String() != threeBrokers().String() {
				t.Errorf("Kafka has %s, want %s", k.now, threeBrokers())
			}
		})
	}
}

func TestRecoverDryRunListsTheMoveBackAndTheScaleIn(t *testing.T) {
	k := &fakeKafka{now: threeBrokers()}
	cs, f := scaledOut(t, k)
	if _, err := f.Spread(t.Context(), []int32{0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	n := len(k.moves)
	lines, err := RecoverAll(t.Context(), cs, Access{}, nil, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "would recover") || !strings.Contains(lines[1], "scale back from 4 to 3") {
		t.Errorf("dry-run lines %q, want the move back and the scale-in", lines)
	}
	if len(k.moves) != n {
		t.Errorf("the dry run moved partitions: %v", k.moves[n:])
	}

	// The fault's own Recover, dry: the same two steps, nothing done.
	var out bytes.Buffer
	f.DryRun, f.Out = true, &out
	if err := f.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "move partitions back") || !strings.Contains(out.String(), "scale back from 4 to 3") {
		t.Errorf("dry Recover said %q, want the move back and the scale-in", out.String())
	}
	if len(k.moves) != n || len(ledger(t, getSTS(t, cs, "kafka", "kafka"))) != 2 {
		t.Errorf("the dry Recover changed something: moves %v", k.moves[n:])
	}
}
