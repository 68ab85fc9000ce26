package procstat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is what a process group has used so far.
type Usage struct {
	// CPU is user plus system time of the group's processes, and of the
	// children its leader has waited for.
	CPU time.Duration
	// RSSBytes is the sum of the processes' resident sets; pages shared
	// between them count once per process.
	RSSBytes uint64
	// Processes is how many processes were in the group.
	Processes int
}

// ErrNoProcess is wrapped by Group's error when no process is in the group.
var ErrNoProcess = errors.New("procstat: no process in the group")

// tick is one clock tick of /proc/<pid>/stat's times. The kernel reports
// them in USER_HZ, which is 100 on every Linux architecture whatever its
// CONFIG_HZ; sysconf(_SC_CLK_TCK) would need cgo just to say so.
const tick = time.Second / 100

// Group returns the usage of the processes whose process group is pgid.
func Group(pgid int) (Usage, error) {
	return group("/proc", pgid)
}

// group is Group over a /proc at proc, so that tests can give recorded
// stat files.
func group(proc string, pgid int) (Usage, error) {
	// Kernel threads are in process group 0: never a pod's.
	if pgid <= 0 {
		return Usage{}, fmt.Errorf("procstat: invalid process group %d", pgid)
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return Usage{}, fmt.Errorf("procstat: %w", err)
	}
	page := uint64(os.Getpagesize())
	var u Usage
	var ticks uint64
	for _, e := range ents {
		if !isPID(e.Name()) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(proc, e.Name(), "stat"))
		if err != nil {
			// A process that exited since the directory was read.
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
				continue
			}
			return Usage{}, fmt.Errorf("procstat: %w", err)
		}
		s, err := parseStat(string(raw))
		if err != nil {
			return Usage{}, fmt.Errorf("procstat: process %s: %w", e.Name(), err)
		}
		if s.pgrp != pgid {
			continue
		}
		u.Processes++
		ticks += s.utime + s.stime
		// The leader is the container's main process: the children it
		// ran and waited for (a shell's commands) used the group's CPU
		// too, as a cgroup would count it. Other members' waited-for
		// children are left out.
		if s.pid == pgid {
			ticks += s.cutime + s.cstime
		}
		u.RSSBytes += s.rss * page
	}
	if u.Processes == 0 {
		return Usage{}, fmt.Errorf("procstat: process group %d: %w", pgid, ErrNoProcess)
	}
	u.CPU = time.Duration(ticks) * tick
	return u, nil
}

// RSS returns process pid's resident set size.
func RSS(pid int) (uint64, error) {
	return rss("/proc", pid)
}

func rss(proc string, pid int) (uint64, error) {
	raw, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	s, err := parseStat(string(raw))
	if err != nil {
		return 0, fmt.Errorf("procstat: process %d: %w", pid, err)
	}
	return s.rss * uint64(os.Getpagesize()), nil
}

func isPID(name string) bool {
	for _, r := range name {
		if r < '0' || r > '9' {
			return false
		}
	}
	return name != ""
}

// stat is what Group needs of one /proc/<pid>/stat line (proc(5)); times
// are in clock ticks, rss in pages.
type stat struct {
	pid                          int
	comm                         string
	pgrp                         int
	utime, stime, cutime, cstime uint64
	rss                          uint64
}

// parseStat parses one /proc/<pid>/stat line. The command name (field 2)
// is in parentheses and may itself hold spaces and ')', so the fields
// after it start after the last ')'.
func parseStat(line string) (stat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return stat{}, fmt.Errorf("malformed stat line %q", line)
	}
	var s stat
	var err error
	if s.pid, err = strconv.Atoi(strings.TrimSpace(line[:open])); err != nil {
		return stat{}, fmt.Errorf("stat line pid: %w", err)
	}
	s.comm = line[open+1 : end]
	// f[0] is field 3 (state): field n is f[n-3].
	f := strings.Fields(line[end+1:])
	if len(f) < 22 {
		return stat{}, fmt.Errorf("stat line of %d has %d fields after the command, want at least 22", s.pid, len(f))
	}
	if s.pgrp, err = strconv.Atoi(f[5-3]); err != nil {
		return stat{}, fmt.Errorf("stat line pgrp: %w", err)
	}
	for _, v := range []struct {
		field int
		to    *uint64
	}{{14, &s.utime}, {15, &s.stime}, {16, &s.cutime}, {17, &s.cstime}, {24, &s.rss}} {
		// cutime, cstime and rss are signed in the kernel's format,
		// though never negative.
		n, err := strconv.ParseInt(f[v.field-3], 10, 64)
		if err != nil || n < 0 {
			return stat{}, fmt.Errorf("stat line of %d: field %d is %q, not a count", s.pid, v.field, f[v.field-3])
		}
		*v.to = uint64(n)
	}
	return s, nil
}
