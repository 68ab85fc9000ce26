package localkafka

import "syscall"

// sysProcAttr puts a JVM in its own process group, so that a signal reaches
// everything it started, and has the kernel SIGKILL it when the thread that
// started it exits: Go ends no thread of a running program (unless a
// goroutine exits while locked to its thread), so in practice when the Go
// process dies, even by SIGKILL, so that no JVM outlives a test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
