package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The house's size rules, like depsRules a statement of policy: a function
// does one job (at most maxFuncLines lines), a conformance check file
// covers one route or area (at most maxCheckFileLines lines), and main.go
// only picks a command (at most maxMainLines lines). Split the code, do
// not raise the numbers.
const (
	maxFuncLines      = 100
	maxCheckFileLines = 700
	maxMainLines      = 150
)

// TestFunctionsAndFilesStaySmall walks every non-test Go file of the
// module and reports functions over maxFuncLines lines, conformance
// sources over maxCheckFileLines lines and a main.go over maxMainLines.
func TestFunctionsAndFilesStaySmall(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(src), "\n"); path == "main.go" && n > maxMainLines {
			t.Errorf("main.go: %d lines, over %d: move what is not the choice of a command to a file of its own", n, maxMainLines)
		}
		if filepath.Dir(path) == "conformance" {
			if n := strings.Count(string(src), "\n"); n > maxCheckFileLines {
				t.Errorf("%s: %d lines, over %d: split it by route or area", path, n, maxCheckFileLines)
			}
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines, over %d: split it along its steps", path, start.Line, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestREADMELayout requires the README's layout table to list every
// package of the module but the test helpers, each once, in dependency
// order: a package's project imports are listed above it.
func TestREADMELayout(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := map[string]int{}
	for _, line := range strings.Split(section, "\n") {
		name, ok := strings.CutPrefix(line, "| `")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, "`")
		if _, dup := row[name]; dup {
			t.Errorf("README layout lists %s twice", name)
		}
		row[name] = len(row)
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], "strongbox"), "/")
		if pkg == "" {
			pkg = "main.go"
		}
		if strings.HasSuffix(pkg, "test") {
			continue // test helpers, named below the table
		}
		at, listed := row[pkg]
		if !listed {
			t.Errorf("README layout does not list %s", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, "strongbox/")
			if !ok {
				continue
			}
			if depAt, listed := row[dep]; listed && depAt > at {
				t.Errorf("README layout lists %s above %s, which it imports", pkg, dep)
			}
		}
	}
}
