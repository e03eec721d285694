package conformance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "item", "0 items"},
		{1, "item", "1 item"},
		{2, "item", "2 items"},
		{1, "entry", "1 entry"},
		{3, "entry", "3 entries"},
	} {
		if got := plural(tt.n, tt.noun); got != tt.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}

// wordingSlips are the slips a report's expected and actual have shown:
// an article before an article ("expected: no the token query
// parameter…"), a count before a plural that may be 1 ("1 items"; use
// plural), a clause put before what was expected ("expected: after the
// sign-up, a GET…").
var wordingSlips = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`\b(?i:a|an|no|the) (?i:a|an|the|no)\b`), "two articles in a row"},
	{regexp.MustCompile(`%d (items|entries|records|mails|requests)\b`), "a count that may be 1 before a plural: use plural"},
	{regexp.MustCompile(`^(after|before|within) [^,]*, `), "a clause before what is expected: put it after"},
	{regexp.MustCompile(`  `), "two spaces"},
}

// TestWording reads the expected and actual texts the checks give
// Mismatch (the string literals and Sprintf formats of its arguments, in
// every file of the package but the tests) for wordingSlips.
func TestWording(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || !isCallTo(call, "Mismatch") {
				return true
			}
			for _, arg := range call.Args {
				for _, s := range leadingLiterals(arg) {
					n++
					for _, slip := range wordingSlips {
						if slip.re.MatchString(s) {
							t.Errorf("%s: %q: %s", fset.Position(arg.Pos()), s, slip.why)
						}
					}
				}
			}
			return true
		})
	}
	if n < 100 {
		t.Fatalf("read only %d texts given to Mismatch", n)
	}
}

// isCallTo reports whether call calls the function name.
func isCallTo(call *ast.CallExpr, name string) bool {
	id, ok := call.Fun.(*ast.Ident)
	return ok && id.Name == name
}

// leadingLiterals returns the string literal arg begins with: itself, the
// first operand of a concatenation, or the format of a fmt.Sprintf.
func leadingLiterals(arg ast.Expr) []string {
	switch e := arg.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(e.Value); err == nil && e.Kind == token.STRING {
			return []string{s}
		}
	case *ast.BinaryExpr:
		return leadingLiterals(e.X)
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(e.Args) > 0 {
			return leadingLiterals(e.Args[0])
		}
	}
	return nil
}
