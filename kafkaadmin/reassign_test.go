package kafkaadmin

import (
	"slices"
	"testing"
)

func TestAssignmentsChanged(t *testing.T) {
	a := roundRobin("t", 3, 2, 0, 1, 2)
	to := roundRobin("t", 3, 2, 0, 1, 2)
	to.set("t", 1, []int32{2, 1}) // same brokers, other leader
	to.set("t", 2, []int32{2, 3})
	got := a.Changed(to).String()
	if want := "t/1=[2 1] t/2=[2 3]"; got != want {
		t.Errorf("Changed = %q, want %q", got, want)
	}
	if b := to.Brokers(); !slices.Equal(b, []int32{0, 1, 2, 3}) {
		t.Errorf("Brokers = %v", b)
	}
}
