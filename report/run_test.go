package report

import "testing"

func TestVerdict(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"passed", Spec{Passed: true}, VerdictPass},
		{"failed", Spec{Passed: false}, VerdictFail},
		{"negative spec whose checks failed", Spec{Passed: true, ExpectFailures: true, Checks: []Check{{Name: CheckAudit, Problems: []string{"no PDB"}}}}, VerdictCaught},
		{"negative spec that failed", Spec{Passed: false, ExpectFailures: true}, VerdictFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.spec.Verdict(); got != tt.want {
				t.Errorf("verdict %s, want %s", got, tt.want)
			}
		})
	}
}
