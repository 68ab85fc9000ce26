package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// dockerRunning reports whether a Docker engine answers here: then kind up
// would really create a cluster, which a unit test must not do.
func dockerRunning(t *testing.T) bool {
	t.Helper()
	docker, err := exec.LookPath("docker")
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, docker, "info", "--format", "{{.ServerVersion}}")
	cmd.WaitDelay = time.Second
	return cmd.Run() == nil
}

func TestKindExitsTwo(t *testing.T) {
	noDocker := []string{"kind needs a running Docker engine", "this machine has none", "make chaos"}
	tests := []struct {
		name      string
		args      []string
		emptyPath bool     // run with $PATH holding no program
		needNoEng bool     // skip where a Docker engine runs
		say       []string // in stderr
	}{
		{"up without docker", []string{"kind", "up"}, true, false, append(noDocker, "no docker client")},
		{"down without docker", []string{"kind", "down"}, true, false, noDocker},
		{"up on this machine", []string{"kind", "up"}, false, true, noDocker},
		{"unknown layout", []string{"kind", "up", "--kafka", "nope"}, false, false, []string{"no Kafka layout"}},
		{"bad name", []string{"kind", "down", "--name", "Kafka_1"}, false, false, []string{"cluster name"}},
		{"positional argument", []string{"kind", "down", "extra"}, false, false, []string{"takes no arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needNoEng && dockerRunning(t) {
				t.Skip("a Docker engine runs here: kind up would create a real cluster")
			}
			t.Setenv("HOME", t.TempDir())
			if tt.emptyPath {
				t.Setenv("PATH", t.TempDir())
			}
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := run(tt.args, &stdout, &stderr)
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("took %s; a missing prerequisite must fail fast", took)
			}
			if code != exitBadInput {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitBadInput, stderr.String())
			}
			for _, s := range tt.say {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr %q does not say %q", stderr.String(), s)
				}
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}
