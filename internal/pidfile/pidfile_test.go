package pidfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
