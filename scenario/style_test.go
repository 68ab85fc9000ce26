package scenario

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds a function of the package, from its first line to
// its last: a story's phases stay readable one at a time.
const maxFuncLines = 80

// TestFunctionsShort fails on a function of the package (tests aside)
// longer than maxFuncLines.
func TestFunctionsShort(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start, end := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
			if n := end - start + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines long, more than %d", name, start, fn.Name.Name, n, maxFuncLines)
			}
		}
	}
}

// TestNoGinkgo: the package is for any caller, not only a Ginkgo suite;
// Ginkgo and Gomega stay on the caller's side of Narrator and Cleanups.
func TestNoGinkgo(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.GoFiles) == 0 {
		t.Fatal("no Go files found")
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/onsi/") {
			t.Errorf("the package imports %s", imp)
		}
	}
}
