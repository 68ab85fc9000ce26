package chaos

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestJVMScripts runs the pause and disk-loss shell scripts for real, in a
// UTS namespace of their own (as a container has), against a fake Kafka
// JVM: a process whose executable is named java and whose command line
// holds kafka.Kafka. A second fake JVM outside the namespace stands for
// another pod's broker on the same host, and must be left alone.
func TestJVMScripts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for unshare --uts")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	tail, err := exec.LookPath("tail")
	if err != nil {
		t.Skip("no tail")
	}
	dir := t.TempDir()
	java := filepath.Join(dir, "bin", "java")
	raw, err := os.ReadFile(tail)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(java), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(java, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	// The other pod's broker, in the host's UTS namespace.
	other := exec.Command(java, "-f", "/dev/null", "kafka.Kafka")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })

	tests := []struct {
		name   string
		script string
		// runs are the script's argument lists, run one after the other.
		runs [][]string
		// want matches the script's output; after checks what it left.
		want  string
		after func(t *testing.T, data string, out string)
	}{
		{name: "state", script: signalJVM, runs: [][]string{{"state"}}, want: `^\d+:[RS]$`, after: alive},
		{name: "stop", script: signalJVM, runs: [][]string{{"STOP"}, {"state"}}, want: `^\d+\n\d+:T$`, after: alive},
		{name: "stop and resume", script: signalJVM, runs: [][]string{{"STOP"}, {"CONT"}, {"state"}}, want: `^\d+\n\d+\n\d+:[RS]$`, after: alive},
		{name: "wipe", script: wipeVolume, runs: [][]string{{"DATA"}}, want: `^\d+$`, after: func(t *testing.T, data, out string) {
			left, err := os.ReadDir(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Errorf("wiped volume still holds %d entries", len(left))
			}
			if !strings.Contains(out, "dead") {
				t.Errorf("the JVM survived the wipe: %s", out)
			}
		}},
		{name: "wipe of a missing dir", script: wipeVolume, runs: [][]string{{"/nonexistent-kafkachaos"}}, want: `no directory`, after: alive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			for _, f := range []string{"meta.properties", "topic-0/00000000000000000000.log"} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(data, f)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(data, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The driver starts the fake JVM in the new namespace, runs the
			// script beside it, then says whether the JVM lives.
			driver := `"$JAVA" -f /dev/null kafka.Kafka >/dev/null 2>&1 & j=$!
sleep 0.3
`
			for _, args := range tt.runs {
				driver += `sh -c "$SCRIPT" script ` + strings.ReplaceAll(strings.Join(args, " "), "DATA", data) + " 2>&1\nsleep 0.2\n"
			}
			driver += `kill -0 $j 2>/dev/null && echo alive || echo dead
kill -CONT $j 2>/dev/null; kill -KILL $j 2>/dev/null; wait $j 2>/dev/null; true`
			cmd := exec.Command(unshare, "--uts", "sh", "-c", driver)
			cmd.Env = append(os.Environ(), "JAVA="+java, "SCRIPT="+tt.script)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("driver: %v: %s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			got := strings.Join(lines[:len(lines)-1], "\n") // the last line is alive/dead
			if !regexp.MustCompile(tt.want).MatchString(got) {
				t.Errorf("output %q does not match %s", got, tt.want)
			}
			if strings.Contains(got, strconv.Itoa(other.Process.Pid)) {
				t.Errorf("the script saw the other pod's JVM %d: %q", other.Process.Pid, got)
			}
			if tt.after != nil {
				tt.after(t, data, string(out))
			}
		})
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the other pod's JVM did not survive: %v", err)
	}
}

// alive checks that the script left the fake JVM running.
func alive(t *testing.T, _ string, out string) {
	t.Helper()
	if !strings.HasSuffix(strings.TrimSpace(out), "alive") {
		t.Errorf("the JVM did not survive: %s", out)
	}
}
