package pidfile

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func TestWriteRunningKill(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	path := filepath.Join(t.TempDir(), "x.pid")
	if err := Write(path, cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if pid, ok := Running(path); !ok || pid != cmd.Process.Pid {
		t.Fatalf("Running = %d %t, want %d true", pid, ok, cmd.Process.Pid)
	}
	// A pid file whose start time does not match names another process.
	other := filepath.Join(t.TempDir(), "y.pid")
	if err := os.WriteFile(other, []byte("1 12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := Running(other); ok {
		t.Errorf("a reused pid counted as running")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, ok := Running(path); ok {
		t.Errorf("a dead process counted as running")
	}
}

func TestState(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for _, tt := range []struct {
		sig  syscall.Signal
		want string
	}{{syscall.SIGSTOP, "T"}, {syscall.SIGCONT, "S"}} {
		if err := cmd.Process.Signal(tt.sig); err != nil {
			t.Fatal(err)
		}
		var seen string
		err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			s, err := State(cmd.Process.Pid)
			seen = s
			return s == tt.want, err
		})
		if err != nil {
			t.Errorf("after %s: state %q (%v), want %s", tt.sig, seen, err, tt.want)
		}
	}
	if _, err := State(1 << 30); err == nil {
		t.Error("State of a PID that does not exist: no error")
	}
}
