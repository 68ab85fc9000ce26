package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/pidfile"
)

// Limits for stopping a daemon.
const (
	daemonStopGrace = 10 * time.Second
	daemonPoll      = 100 * time.Millisecond
)

// daemon is a process the cluster starts and tracks by a pid file, so that a
// later `cluster down` (another process) finds and stops it. The pid file
// also records the process's start time, so a reused pid is never signalled.
type daemon struct {
	name string
	dir  string // the cluster's state dir
}

func (d daemon) pidFile() string { return filepath.Join(d.dir, "run", d.name+".pid") }
func (d daemon) logFile() string { return filepath.Join(d.dir, "logs", d.name+".log") }

// start runs path with args in its own process group, logging to logFile.
// The process outlives the caller: it is not tied to the caller's life.
func (d daemon) start(path string, args ...string) (int, error) {
	for _, dir := range []string{filepath.Dir(d.pidFile()), filepath.Dir(d.logFile())} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, fmt.Errorf("localcluster: %s: %w", d.name, err)
		}
	}
	logf, err := os.OpenFile(d.logFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("localcluster: %s: %w", d.name, err)
	}
	defer logf.Close()
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = logf, logf, d.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("localcluster: start %s: %w", d.name, err)
	}
	pid := cmd.Process.Pid
	go func() { _ = cmd.Wait() }() // reap it if it dies while we live
	if err := pidfile.Write(d.pidFile(), pid); err != nil {
		return 0, fmt.Errorf("localcluster: %s: %w", d.name, err)
	}
	return pid, nil
}

// running returns the daemon's pid if its pid file names a live process
// that is still the one started (same start time, not a zombie).
func (d daemon) running() (int, bool) { return pidfile.Running(d.pidFile()) }

// checkAlive returns nil if the daemon is running, else an error that says
// what exited, with the last lines of its log.
func (d daemon) checkAlive(what string) error {
	if _, ok := d.running(); ok {
		return nil
	}
	return fmt.Errorf("localcluster: %s exited; last lines of %s:\n%s", what, d.logFile(), tailFile(d.logFile(), 30))
}

// stop sends SIGTERM to the daemon's process group, then SIGKILL after a
// grace period, and removes the pid file. Stopping a daemon that is not
// running succeeds.
func (d daemon) stop(ctx context.Context) error {
	pid, ok := d.running()
	if ok {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		deadline := time.Now().Add(daemonStopGrace)
		for {
			if _, still := d.running(); !still {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				if err := d.waitGone(); err != nil {
					return err
				}
				break
			}
			time.Sleep(daemonPoll) // polling a process we cannot wait on
		}
	}
	if err := os.Remove(d.pidFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("localcluster: %s: %w", d.name, err)
	}
	return nil
}

func (d daemon) waitGone() error {
	for range 50 {
		if _, still := d.running(); !still {
			return nil
		}
		time.Sleep(daemonPoll)
	}
	return fmt.Errorf("localcluster: %s survived SIGKILL", d.name)
}

// tailFile returns the last n lines of path, or why it cannot.
func tailFile(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}
