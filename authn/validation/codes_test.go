package validation

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// codeExemptions are files that may spell a validation code out, and why.
var codeExemptions = map[string]string{
	"logstore/seed.go": "sample log entries for benchmarks, not an answer of the server",
}

// TestCodesInOnePlace: no code of the project, outside this package, spells
// out a validation code; it uses the constants of codes.go instead. Tests
// and the conformance suite (which imports nothing of the project) may.
func TestCodesInOnePlace(t *testing.T) {
	root := filepath.Join("..", "..")
	code := regexp.MustCompile(`^validation_[a-z0-9_]+$`)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "conformance" || rel == "authn/validation" || (rel != "." && strings.HasPrefix(d.Name(), ".")) || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || codeExemptions[rel] != "" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && code.MatchString(s) {
				t.Errorf("%s spells out %q: use the constant of authn/validation/codes.go", fset.Position(lit.Pos()), s)
			}
			return true
		})
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("read %d Go files under %s, want the whole module", files, root)
	}
}
