package steadystate

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestPartitionNoAckGaps(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	gap := func(f, t float64) Gap { return Gap{at(f), at(t)} }
	// Two runners (agents) of one producer each, over 2 partitions, from 0
	// to 30 s. Partition 0 stalls for both from 10 to 19 s (one sees 10-19,
	// the other 11-20): 11-19 has no ack. Partition 1 stalls only for one
	// runner: the other kept getting acks, so it never stalled.
	ms := []Measurements{
		{Start: at(0), End: at(30), PartitionAckGaps: [][][]Gap{{{gap(10, 19)}, {gap(5, 25)}}}},
		{Start: at(0), End: at(30), PartitionAckGaps: [][][]Gap{{{gap(11, 20)}, {}}}},
	}
	got := partitionNoAckGaps(ms, at(0), at(30))
	want := [][]Gap{{gap(11, 19)}, nil}
	if len(got) != 2 || !reflect.DeepEqual(got[0], want[0]) || len(got[1]) != 0 {
		t.Errorf("partitionNoAckGaps = %v, want %v", got, want)
	}
	if got := partitionNoAckGaps([]Measurements{{Start: at(0), End: at(30)}}, at(0), at(30)); got != nil {
		t.Errorf("measurements without per-partition gaps: %v, want nil", got)
	}
}

func TestStalled(t *testing.T) {
	r := Report{Partitions: []PartitionStall{
		{Partition: 0, Longest: 200 * time.Millisecond},
		{Partition: 1, Longest: 9140 * time.Millisecond},
		{Partition: 2, Longest: 30 * time.Second},
	}}
	if got, want := r.Stalled(time.Second), []string{"p2 30s", "p1 9.1s"}; !slices.Equal(got, want) {
		t.Errorf("Stalled(1s) = %q, want %q", got, want)
	}
	if got := r.Stalled(time.Minute); len(got) != 0 {
		t.Errorf("Stalled(1m) = %q, want none", got)
	}
	if got := r.WorstPartition(); got != "p2 30s" {
		t.Errorf("WorstPartition = %q, want p2 30s", got)
	}
	if got := (&Report{}).WorstPartition(); got != "-" {
		t.Errorf("WorstPartition without per-partition figures = %q, want -", got)
	}
}
