package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// TestChecksListsEveryCheck: Checks holds every CheckName constant of
// checks.go, once.
func TestChecksListsEveryCheck(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "checks.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "CheckName" {
				for _, name := range vs.Names {
					declared = append(declared, name.Name)
				}
			}
		}
		return true
	})
	if len(declared) != len(Checks()) {
		t.Errorf("checks.go declares %d check names %v; Checks returns %d", len(declared), declared, len(Checks()))
	}
	seen := map[CheckName]bool{}
	for _, c := range Checks() {
		if seen[c] {
			t.Errorf("Checks holds %q twice", c)
		}
		seen[c] = true
	}
	if !slices.Contains(declared, "CheckCluster") {
		t.Errorf("found no CheckCluster in %v: does the test read checks.go right?", declared)
	}
}
