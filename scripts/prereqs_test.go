package scripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTools is a PATH of stubs for the tools prereqs.sh checks, and the
// real text tools it uses, so a case can take a tool away or age it.
type fakeTools struct {
	goVersion   string // "" removes go
	javaVersion string // "" removes java
	mvn         bool
	unshare     bool // whether creating namespaces works
	uid         int
	chromium    bool
	noCgroup2   bool // the mountinfo the script reads has no cgroup2 line
}

func (f fakeTools) path(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	stub := func(name, script string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range []string{"awk", "sort", "head", "cut", "sed", "cat", "dirname"} {
		real, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	if f.goVersion != "" {
		stub("go", "echo go"+f.goVersion)
	}
	if f.javaVersion != "" {
		stub("java", fmt.Sprintf(`echo 'openjdk version "%s" 2025-04-15' >&2`, f.javaVersion))
	}
	if f.mvn {
		stub("mvn", "echo 'Apache Maven 3.8.7'")
	}
	if f.unshare {
		stub("unshare", "exit 0")
	} else {
		stub("unshare", "exit 1")
	}
	stub("id", fmt.Sprintf("echo %d", f.uid))
	if f.chromium {
		stub("chromium", "exit 0")
	}
	return dir
}

func TestPrereqs(t *testing.T) {
	ok := fakeTools{goVersion: "1.26.8", javaVersion: "17.0.15", mvn: true, unshare: true, chromium: true}
	tests := []struct {
		name string
		what string
		edit func(*fakeTools)
		want string // in the output; "" with exit 0
		code int
	}{
		{name: "all there", what: "chaos", edit: func(*fakeTools) {}, want: "prereqs: ok (go 1.26.8, java 17, maven 3.8.7)"},
		{name: "newer java", what: "chaos", edit: func(f *fakeTools) { f.javaVersion = "21.0.2" }, want: "java 21"},
		{name: "no go", what: "chaos", edit: func(f *fakeTools) { f.goVersion = "" }, want: "Go is not on PATH", code: 2},
		{name: "old go", what: "chaos", edit: func(f *fakeTools) { f.goVersion = "1.22.1" }, want: "Go 1.22.1 is older than go.mod's", code: 2},
		{name: "no java", what: "chaos", edit: func(f *fakeTools) { f.javaVersion = "" }, want: "java is not on PATH", code: 2},
		{name: "java 11", what: "chaos", edit: func(f *fakeTools) { f.javaVersion = "11.0.2" }, want: "java is version '11'", code: 2},
		{name: "no maven", what: "chaos", edit: func(f *fakeTools) { f.mvn = false }, want: "mvn is not on PATH", code: 2},
		{name: "no namespaces", what: "chaos", edit: func(f *fakeTools) { f.unshare = false }, want: "cannot create mount and UTS namespaces", code: 2},
		{name: "no cgroup v2", what: "chaos", edit: func(f *fakeTools) { f.noCgroup2 = true }, want: "no cgroup v2 hierarchy is mounted", code: 2},
		{name: "chaos needs no chromium", what: "chaos", edit: func(f *fakeTools) { f.chromium = false }, want: "prereqs: ok"},
		{name: "test without chromium, not root", what: "test", edit: func(f *fakeTools) { f.chromium, f.uid = false, 1000 }, want: "apt-get install chromium", code: 2},
		{name: "everything missing at once", what: "test", edit: func(f *fakeTools) { *f = fakeTools{uid: 1000} },
			want: "Go is not on PATH", code: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ok
			tt.edit(&f)
			cmd := exec.Command("/bin/bash", "prereqs.sh", tt.what)
			mountinfo := filepath.Join(t.TempDir(), "mountinfo")
			line := "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
			if f.noCgroup2 {
				line = "24 1 0:22 / /sys rw,nosuid - sysfs sysfs rw\n"
			}
			if err := os.WriteFile(mountinfo, []byte(line), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd.Env = []string{"PATH=" + f.path(t), "PREREQS_MOUNTINFO=" + mountinfo}
			out, err := cmd.CombinedOutput()
			code := 0
			if exit, isExit := err.(*exec.ExitError); isExit {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || !strings.Contains(string(out), tt.want) {
				t.Errorf("prereqs.sh %s: exit %d, output:\n%s\nwant exit %d and %q", tt.what, code, out, tt.code, tt.want)
			}
		})
	}
}
