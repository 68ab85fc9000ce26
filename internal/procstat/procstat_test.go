package procstat

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func TestParseStat(t *testing.T) {
	for _, tt := range []struct {
		name    string
		line    string
		want    stat
		wantErr bool
	}{{
		name: "cat",
		line: "9472 (cat) R 9470 9470 8673 0 -1 4194304 102 0 0 0 3 5 7 11 20 0 1 0 1205659 3133440 383 18446744073709551615 93967154343936 93967154363817 140736067868864 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 93967154379824 93967154381440 93968063451136 140736067877562 140736067877582 140736067877582 140736067878891 0\n",
		want: stat{pid: 9472, comm: "cat", pgrp: 9470, utime: 3, stime: 5, cutime: 7, cstime: 11, rss: 383},
	}, {
		// A thread can name itself anything: spaces and ") S 1 2 "
		// must not shift the fields.
		name: "command with spaces and parentheses",
		line: "123 (a b) S 1 2 (x) R 1 77 77 0 -1 4194560 5 0 0 0 250 40 0 0 20 0 12 0 99 1000 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0",
		want: stat{pid: 123, comm: "a b) S 1 2 (x", pgrp: 77, utime: 250, stime: 40, rss: 2048},
	}, {
		name:    "truncated",
		line:    "9472 (cat) R 9470 9470 8673",
		wantErr: true,
	}, {
		name:    "no command",
		line:    "9472 cat R 9470 9470 8673 0 -1 4194304 102 0 0 0 3 5 7 11 20 0 1 0 1205659 3133440 383",
		wantErr: true,
	}, {
		name:    "not a number",
		line:    "9472 (cat) R 9470 9470 8673 0 -1 4194304 102 0 0 0 x 5 7 11 20 0 1 0 1205659 3133440 383",
		wantErr: true,
	}, {
		name:    "empty",
		line:    "",
		wantErr: true,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat(tt.line)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStat error = %v, want error %t", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("parseStat = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// statLine is a recorded stat line with the given pid, pgrp, times and rss.
func statLine(pid, pgrp, utime, stime, cutime, cstime, rss string) string {
	return pid + " (java) S 1 " + pgrp + " " + pgrp + " 0 -1 4194560 5 0 0 0 " +
		utime + " " + stime + " " + cutime + " " + cstime + " 20 0 12 0 99 1000 " + rss +
		" 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
}

func TestGroupRecorded(t *testing.T) {
	proc := t.TempDir()
	files := map[string]string{
		"100/stat": statLine("100", "100", "10", "20", "300", "400", "2"), // the leader
		"101/stat": statLine("101", "100", "1", "2", "1000", "1000", "3"), // its children's time not counted
		"102/stat": statLine("102", "55", "1000", "1000", "0", "0", "9"),  // another group
		"self/x":   "not a process",
	}
	for name, content := range files {
		path := filepath.Join(proc, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A process that exited between listing /proc and reading its stat.
	if err := os.Mkdir(filepath.Join(proc, "103"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := uint64(os.Getpagesize())
	for _, tt := range []struct {
		pgid    int
		want    Usage
		wantErr error
	}{
		{pgid: 100, want: Usage{CPU: (10 + 20 + 300 + 400 + 1 + 2) * 10 * time.Millisecond, RSSBytes: 5 * page, Processes: 2}},
		{pgid: 55, want: Usage{CPU: 2000 * 10 * time.Millisecond, RSSBytes: 9 * page, Processes: 1}},
		{pgid: 7, wantErr: ErrNoProcess},
	} {
		got, err := group(proc, tt.pgid)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("group(%d) error = %v, want %v", tt.pgid, err, tt.wantErr)
		}
		if got != tt.want {
			t.Errorf("group(%d) = %+v, want %+v", tt.pgid, got, tt.want)
		}
	}
}

func TestGroupOfChild(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })

	var last Usage
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		u, err := Group(cmd.Process.Pid)
		if err != nil {
			return false, err
		}
		last = u
		// RSS too may read 0 for a moment: the kernel folds a task's
		// page counts into its mm's only now and then.
		return u.CPU > 0 && u.RSSBytes > 0, nil
	})
	if err != nil {
		t.Fatalf("group of a busy child: %v (last %+v)", err, last)
	}
	if last.Processes < 1 {
		t.Errorf("Group = %+v, want at least one process", last)
	}
}

func TestGroupNone(t *testing.T) {
	// Pids stay below pid_max, which is at most 1<<22 (PID_MAX_LIMIT), so
	// no process is in this group.
	if _, err := Group(1 << 22); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Group of an unused pgid: error %v, want ErrNoProcess", err)
	}
	if _, err := Group(0); err == nil || errors.Is(err, ErrNoProcess) {
		t.Errorf("Group(0): error %v, want an invalid group", err)
	}
}

func TestRSS(t *testing.T) {
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "100"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "100", "stat"), []byte(statLine("100", "100", "1", "1", "0", "0", "7")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := rss(proc, 100); err != nil || got != 7*uint64(os.Getpagesize()) {
		t.Errorf("rss(100) = %d, %v; want 7 pages", got, err)
	}
	if _, err := rss(proc, 101); err == nil {
		t.Error("rss of a process that is not there: no error")
	}
	if got, err := RSS(os.Getpid()); err != nil || got == 0 {
		t.Errorf("RSS of this process = %d, %v", got, err)
	}
}
