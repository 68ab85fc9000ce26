package main

import (
	"os/exec"
	"testing"
	"time"
)

func TestSelfCPU(t *testing.T) {
	before, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	after, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	if d := after.sub(before); d.user+d.system <= 0 {
		t.Fatalf("20 ms of spinning (%d turns) counted %v user, %v system", x, d.user, d.system)
	}
}

func TestChildCPU(t *testing.T) {
	if got := childCPU(nil); got != (cpuTime{}) {
		t.Fatalf("childCPU(nil) = %+v", got)
	}
	// A child that spins: its CPU time must show up.
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Skipf("no sh(1): %v", err)
	}
	if got := childCPU(cmd.ProcessState); got.user+got.system <= 0 {
		t.Fatalf("a spinning child counted %+v", got)
	}
}
