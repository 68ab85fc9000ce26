package report

import (
	"strings"
	"testing"
)

func TestWriteFailures(t *testing.T) {
	passed := Spec{Spec: "roll", Fault: "rolling-restart", Passed: true}
	bounds := Spec{Spec: "pod kill", Fault: "pod-kill", Victims: []int32{1},
		Checks: []Check{{Name: CheckBounds, Problems: []string{"unavailable 15.2s > 14s"}}, {Name: CheckRecords}},
		Limits: []string{"maxUnavailable 14s: a hard fault"}}
	long := Spec{Spec: "drain", Fault: "drain", FailureReason: strings.Repeat("line\n", maxFailureLines+5)}
	tests := []struct {
		name   string
		specs  []Spec
		failed int
		want   []string
		not    []string
	}{
		{"all passed", []Spec{passed}, 0, []string{"no spec failed"}, []string{"roll"}},
		{"a failed check with its limit", []Spec{passed, bounds}, 1,
			[]string{"FAILED pod kill (fault pod-kill, victims 1)", string(CheckBounds) + ": unavailable 15.2s > 14s", "limit: maxUnavailable 14s"},
			[]string{"roll", string(CheckRecords) + ":"}},
		{"a long reason is cut", []Spec{long}, 1, []string{"FAILED drain", "(5 more lines in the report)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			n, err := WriteFailures(&b, Run{Specs: tt.specs})
			if err != nil || n != tt.failed {
				t.Fatalf("WriteFailures = %d, %v; want %d failed", n, err, tt.failed)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tt.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("output has %q:\n%s", w, b.String())
				}
			}
			if lines := strings.Count(b.String(), "\n"); tt.name == "a long reason is cut" && lines > maxFailureLines+3 {
				t.Errorf("%d lines, want the reason cut to %d", lines, maxFailureLines)
			}
		})
	}
}
