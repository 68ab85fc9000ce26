package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestReportExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	raw, err := json.Marshal([]report.Spec{
		{Spec: "pod-kill", Passed: true, SteadyState: &steadystate.Report{Summary: steadystate.Summary{RecordsPerSec: 1000}}},
		{Spec: "drain", FailureReason: "not healthy before the fault"},
	})
	if err != nil {
		t.Fatal(err)
	}
	good := write("report.json", string(raw))
	garbage := write("garbage.json", "{")
	empty := write("empty.json", "[]")
	custom := filepath.Join(dir, "custom.html")

	tests := []struct {
		name    string
		args    []string
		code    int
		want    string // in stdout+stderr
		written string // the page, when one is written
	}{
		{"next to the input", []string{good}, exitOK, filepath.Join(dir, "report.html"), filepath.Join(dir, "report.html")},
		{"-o", []string{good, "-o", custom}, exitOK, custom, custom},
		{"--failures: why, as text, no page", []string{good, "--failures", "-o", filepath.Join(dir, "never.html")}, exitOK, "FAILED drain (fault -, victims -)\n  failure: not healthy before the fault", ""},
		{"no argument", nil, exitBadInput, "wants one report, got 0", ""},
		{"two arguments", []string{good, good}, exitBadInput, "wants one report, got 2", ""},
		{"missing file", []string{filepath.Join(dir, "none.json")}, exitBadInput, "none.json", ""},
		{"not JSON", []string{garbage}, exitBadInput, "garbage.json", ""},
		{"no spec", []string{empty}, exitBadInput, "holds no specs", ""},
		{"unwritable output", []string{good, "-o", filepath.Join(dir, "no", "such", "dir.html")}, exitFailed, "writing the page", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"report"}, tt.args...), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, stderr.String())
			}
			if out := stdout.String() + stderr.String(); !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			if tt.written == "" {
				if _, err := os.Stat(filepath.Join(dir, "never.html")); err == nil {
					t.Errorf("a page was written")
				}
				return
			}
			page, err := os.ReadFile(tt.written)
			if err != nil {
				t.Fatalf("no page: %v", err)
			}
			for _, want := range []string{"<!DOCTYPE html>", "pod-kill", "not healthy before the fault", "1 of 2 spec(s) failed", "Source: " + good} {
				if !strings.Contains(string(page), want) {
					t.Errorf("page lacks %q", want)
				}
			}
		})
	}
}
