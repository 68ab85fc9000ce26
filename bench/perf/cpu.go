package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// cpuTime is CPU time spent in user and in system mode.
type cpuTime struct {
	user, system time.Duration
}

func (c cpuTime) sub(o cpuTime) cpuTime {
	return cpuTime{user: c.user - o.user, system: c.system - o.system}
}

// selfCPU returns this process's CPU time so far, all of its threads
// (getrusage RUSAGE_SELF); children are not counted.
func selfCPU() (cpuTime, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTime{}, fmt.Errorf("getrusage: %w", err)
	}
	return cpuTime{user: time.Duration(ru.Utime.Nano()), system: time.Duration(ru.Stime.Nano())}, nil
}

// childCPU returns the CPU time of a child that has exited: all of its
// threads (for a JVM: the application, GC and JIT compiler threads).
func childCPU(ps *os.ProcessState) cpuTime {
	if ps == nil {
		return cpuTime{}
	}
	return cpuTime{user: ps.UserTime(), system: ps.SystemTime()}
}

// CPU is one client's CPU time over one run.
type CPU struct {
	UserSeconds   float64 `json:"userSeconds"`
	SystemSeconds float64 `json:"systemSeconds"`
	// Seconds is user + system.
	Seconds float64 `json:"seconds"`
	// SecondsPerMillionRecords is Seconds per million records sent.
	SecondsPerMillionRecords float64 `json:"secondsPerMillionRecords"`
}

// newCPU returns c as CPU seconds, and per million of records.
func newCPU(c cpuTime, records int64) CPU {
	total := (c.user + c.system).Seconds()
	return CPU{
		UserSeconds:              c.user.Seconds(),
		SystemSeconds:            c.system.Seconds(),
		Seconds:                  total,
		SecondsPerMillionRecords: ratio(total*1e6, float64(records)),
	}
}

// ratio returns a/b, or 0 when b is not positive: JSON has no Inf or NaN,
// and a run with no records or no CPU time has no meaningful figure.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
