package chaos

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJVMScripts runs the pause and disk-loss shell scripts for real, in a
// UTS namespace of their own (as a container has), against a fake Kafka
// JVM: a process whose executable is named java and whose command line
// holds kafka.Kafka. A second fake JVM outside the namespace stands for
// another pod's broker on the same host, and must be left alone.
func TestJVMScripts(t *testing.T) {
	const javaTool = "org.apache.kafka.tools.VerifiableConsumer"
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
		// main is the fake JVM's main class; empty means kafka.Kafka.
		main string
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
		{name: "stop a tool's JVM by its class", script: signalJVM, runs: [][]string{{"STOP", javaTool}, {"state", javaTool}}, want: `^\d+\n\d+:T$`, after: alive, main: javaTool},
		{name: "a tool's JVM is no broker", script: signalJVM, runs: [][]string{{"STOP"}}, want: `no JVM running kafka.Kafka`, after: alive, main: javaTool},
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
			driver := `"$JAVA" -f /dev/null ` + cmp.Or(tt.main, BrokerMainClass) + ` >/dev/null 2>&1 & j=$!
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

// A Kafka JVM that is its container's PID 1 (the image execs java, and the
// pod has a PID namespace of its own) cannot be stopped or killed from
// inside: the kernel drops the signals and kill still succeeds. The
// scripts must refuse (exit 4) and leave the volume alone.
func TestJVMScriptsRefusePID1(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for unshare and nsenter")
	}
	unshare, err1 := exec.LookPath("unshare")
	nsenter, err2 := exec.LookPath("nsenter")
	tail, err3 := exec.LookPath("tail")
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	java := filepath.Join(dir, "java")
	raw, err := os.ReadFile(tail)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(java, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "meta.properties"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The container: java as PID 1 of new PID, UTS and mount namespaces.
	box := exec.Command(unshare, "--uts", "--pid", "--fork", "--mount-proc", "--kill-child", java, "-f", "/dev/null", "kafka.Kafka")
	if err := box.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = box.Process.Signal(syscall.SIGTERM); _ = box.Wait() })
	var init string // the JVM's PID on the host
	for range 50 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", box.Process.Pid, box.Process.Pid))
		if init = strings.TrimSpace(string(b)); init != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if init == "" {
		t.Fatal("the namespace's PID 1 did not start")
	}
	// Killed whatever becomes of unshare: it must not outlive the test.
	t.Cleanup(func() {
		if pid, err := strconv.Atoi(init); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for _, tt := range []struct {
		name   string
		script string
		arg    string
	}{
		{"stop", signalJVM, "STOP"},
		{"wipe", wipeVolume, data},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(nsenter, "-t", init, "-p", "-u", "-m", "sh", "-c", tt.script, "script", tt.arg).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 4 || !strings.Contains(string(out), "PID 1") {
				t.Errorf("want exit 4 naming PID 1, got %v: %s", err, out)
			}
			if _, err := os.Stat(filepath.Join(data, "meta.properties")); err != nil {
				t.Errorf("the volume was touched: %v", err)
			}
			state, _ := os.ReadFile("/proc/" + init + "/stat")
			if f := strings.Fields(string(state)); len(f) < 3 || f[2] == "T" {
				t.Errorf("the JVM's state: %q", state)
			}
		})
	}
}
