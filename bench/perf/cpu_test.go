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
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no true(1): %v", err)
	}
	if got := childCPU(cmd.ProcessState); got.user < 0 || got.system < 0 {
		t.Fatalf("childCPU = %+v", got)
	}
}
