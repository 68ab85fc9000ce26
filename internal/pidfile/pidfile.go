package pidfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Write records pid, with its start time, in path.
func Write(path string, pid int) error {
	st, err := startTime(pid)
	if err != nil {
		return fmt.Errorf("pidfile: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("pidfile: %w", err)
	}
	if err := os.WriteFile(path, []byte(fmt.Sprintf("%d %d\n", pid, st)), 0o644); err != nil {
		return fmt.Errorf("pidfile: %w", err)
	}
	return nil
}

// Running returns the pid recorded in path if that process still runs: same
// start time, not a zombie.
func Running(path string) (int, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	var pid int
	var st uint64
	if _, err := fmt.Sscanf(string(raw), "%d %d", &pid, &st); err != nil || pid <= 0 {
		return 0, false
	}
	got, err := startTime(pid)
	if err != nil || got != st || Zombie(pid) {
		return 0, false
	}
	return pid, true
}

// KillGroup sends SIGKILL to the process group of the process recorded in
// path, if it still runs, and removes the file.
func KillGroup(path string) {
	if pid, ok := Running(path); ok {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	_ = os.Remove(path)
}

// startTime reads field 22 of /proc/<pid>/stat: the start time in clock
// ticks since boot.
func startTime(pid int) (uint64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// State returns pid's state letter from /proc (R, S, T for stopped, Z, ...).
func State(pid int) (string, error) {
	f, err := statFields(pid)
	if err != nil {
		return "", err
	}
	return f[0], nil
}

// Zombie reports whether pid is gone or a zombie.
func Zombie(pid int) bool {
	f, err := statFields(pid)
	return err != nil || f[0] == "Z" || f[0] == "X"
}

// statFields returns the fields of /proc/<pid>/stat after the command name,
// starting with the state (field 3).
func statFields(pid int) ([]string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return nil, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return f, nil
}
