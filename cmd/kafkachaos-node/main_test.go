package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBadInputExitsTwo checks the usage errors the node binary refuses
// before it does anything.
func TestBadInputExitsTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"agent without state dir", []string{"agent"}, "--state-dir is required"},
		{"purge without state dir", []string{"purge"}, "--state-dir is required"},
		{"unknown script", []string{"kafka-run", "--libs", "/libs", "--script", "kafka-topics.sh"}, "want kafka-server-start.sh, kafka-storage.sh"},
		{"kafka-run arguments without a script", []string{"kafka-run", "--libs", "/libs", "extra"}, "only with --script"},
		{"bad mount", []string{"pod-exec", "--mount", "nocolon", "--", "/bin/true"}, "is not source:/target"},
		{"unknown flag", []string{"agent", "--nope"}, "unknown flag"},
		{"zookeeper-run argument", []string{"zookeeper-run", "extra"}, "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != exitBadInput {
				t.Errorf("exit code %d, want %d; stderr: %s", code, exitBadInput, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
		})
	}
}
