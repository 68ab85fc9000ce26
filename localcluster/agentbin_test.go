package localcluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestAgentBinary checks where the node agent's binary is found: the one
// given, else on PATH (this test's own directory holds none), and that a
// missing one says to run make build.
func TestAgentBinary(t *testing.T) {
	onPath := t.TempDir()
	node := filepath.Join(onPath, AgentBinaryName)
	if err := os.WriteFile(node, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExecutable := filepath.Join(t.TempDir(), AgentBinaryName)
	if err := os.WriteFile(notExecutable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		given   string
		path    string // $PATH
		want    string
		wantErr bool
	}{
		{name: "given", given: node, path: t.TempDir(), want: node},
		{name: "on PATH", path: onPath, want: node},
		{name: "missing", path: t.TempDir(), wantErr: true},
		{name: "given but missing", given: filepath.Join(t.TempDir(), AgentBinaryName), path: onPath, wantErr: true},
		{name: "given but not executable", given: notExecutable, path: onPath, wantErr: true},
		{name: "given the CLI", given: filepath.Join(onPath, "kafkachaos"), path: onPath, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			c, err := New(WithStateDir(t.TempDir()), WithAgentBinary(tt.given))
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.AgentBinary()
			if tt.wantErr {
				if !errors.Is(err, ErrNoAgentBinary) {
					t.Fatalf("AgentBinary() = %q, %v; want ErrNoAgentBinary", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("AgentBinary() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestUpWithoutAgentBinary checks that Up refuses before it touches the
// state dir when there is no node agent binary.
func TestUpWithoutAgentBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	state := filepath.Join(t.TempDir(), "state")
	c, err := New(WithStateDir(state))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Up(t.Context()); !errors.Is(err, ErrNoAgentBinary) {
		t.Fatalf("Up() = %v; want ErrNoAgentBinary", err)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state dir %s was made (%v)", state, err)
	}
}
