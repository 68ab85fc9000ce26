package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterUpWithoutNodeBinaryExitsTwo checks that cluster up, with no
// kafkachaos-node next to it or on PATH, exits 2 naming make build, and
// makes no state dir.
func TestClusterUpWithoutNodeBinaryExitsTwo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	state := filepath.Join(t.TempDir(), "state")
	var stdout, stderr bytes.Buffer
	code := run([]string{"cluster", "up", "--kafka", "none", "--state-dir", state}, &stdout, &stderr)
	if code != exitBadInput {
		t.Errorf("exit code %d, want %d; stderr: %s", code, exitBadInput, stderr.String())
	}
	if want := "make build"; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "kafkachaos-node") {
		t.Errorf("stderr %q does not name kafkachaos-node and %q", stderr.String(), want)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state dir %s was made (%v)", state, err)
	}
}
