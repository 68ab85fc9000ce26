package localkafka

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// process is one started JVM, the leader of its own process group.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // the exit status; read only after done is closed
}

// startProcess starts path with args in dir, in a new process group, with
// stdout and stderr appended to logf. It owns logf from then on, and closes
// it, and runs onExit, once the process has exited.
func startProcess(path string, args []string, dir string, logf *os.File, onExit func()) (*process, error) {
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logf.Close()
		onExit()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitErr returns how the process ended; call it only once exited.
func (p *process) exitErr() error {
	if p.err == nil {
		return errors.New("exit status 0")
	}
	return p.err
}

// signal sends sig to the process group, unless the process is already
// reaped (its group ID could then belong to another process group).
func (p *process) signal(sig syscall.Signal) {
	if !p.exited() {
		_ = syscall.Kill(-p.pid(), sig)
	}
}

func (p *process) kill() { p.signal(syscall.SIGKILL) }

// killAndWait sends SIGKILL to the process group and waits until the process
// is reaped, for at most killWait or until ctx ends.
func (p *process) killAndWait(ctx context.Context) error {
	p.kill()
	ctx, cancel := context.WithTimeout(ctx, killWait)
	defer cancel()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("process %d not gone after SIGKILL: %w", p.pid(), ctx.Err())
	}
}
