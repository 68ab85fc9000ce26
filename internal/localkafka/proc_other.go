//go:build unix && !linux

package localkafka

import "syscall"

// sysProcAttr puts a JVM in its own process group, so that a signal reaches
// everything it started. Outside Linux there is no parent-death signal: a
// JVM outlives a Go process that dies without calling Close.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
