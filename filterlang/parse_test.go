package filterlang

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .golden files in testdata")

// dump renders the tree of e as an S-expression, positions included, so
// that tests see structure that String() leaves implicit.
func dump(e Expr) string {
	var sb strings.Builder
	var walk func(e Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *Binary:
			fmt.Fprintf(&sb, "(%s@%d ", e.Op, e.OpPos)
			walk(e.X)
			sb.WriteByte(' ')
			walk(e.Y)
			sb.WriteByte(')')
		case *Compare:
			op := e.Op.String()
			if e.AnyOf {
				op = "?" + op
			}
			fmt.Fprintf(&sb, "(%s@%d %s %s)", op, e.OpPos, dumpOperand(e.Left), dumpOperand(e.Right))
		default:
			fmt.Fprintf(&sb, "%T", e)
		}
	}
	walk(e)
	return sb.String()
}

func dumpOperand(x Operand) string {
	switch x := x.(type) {
	case Ident:
		return fmt.Sprintf("ident:%s@%d", x.Name, x.NamePos)
	case Str:
		return fmt.Sprintf("str:%s@%d", strconv.Quote(x.Value), x.ValuePos)
	case Num:
		return fmt.Sprintf("num:%s@%d", formatNum(x.Value), x.ValuePos)
	}
	return fmt.Sprintf("%T", x)
}

// shape is dump without positions: what must survive a trip through
// String().
func shape(e Expr) string {
	var sb strings.Builder
	var walk func(e Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *Binary:
			fmt.Fprintf(&sb, "(%s ", e.Op)
			walk(e.X)
			sb.WriteByte(' ')
			walk(e.Y)
			sb.WriteByte(')')
		case *Compare:
			fmt.Fprintf(&sb, "(%v%s %s %s)", e.AnyOf, e.Op, shapeOperand(e.Left), shapeOperand(e.Right))
		}
	}
	walk(e)
	return sb.String()
}

func shapeOperand(x Operand) string {
	switch x := x.(type) {
	case Ident:
		return "i" + strconv.Quote(x.Name)
	case Str:
		return "s" + strconv.Quote(x.Value)
	case Num:
		return "n" + strconv.FormatFloat(x.Value, 'g', -1, 64)
	}
	return "?"
}

var parseTests = []struct {
	name, src, want string
}{
	{"simple", "level>0", "level > 0"},
	{"dotted", `data.status >= 400 && data.method = "GET"`, `data.status >= 400 && data.method = "GET"`},
	{"and binds tighter", "a=0 || b=8 && c=4", "a = 0 || b = 8 && c = 4"},
	{"group kept", "(a=0 || b=8) && c=4", "(a = 0 || b = 8) && c = 4"},
	{"right group kept", "a=1 || (b=2 || c=3)", "a = 1 || (b = 2 || c = 3)"},
	{"right and group", "a=1 && (b=2 && c=3)", "a = 1 && (b = 2 && c = 3)"},
	{"redundant parens dropped", "((a=1)) && (b=2)", "a = 1 && b = 2"},
	{"left or in and", "(a=1 || b=2) && (c=3 || d=4)", "(a = 1 || b = 2) && (c = 3 || d = 4)"},
	{"single quotes", "a = 'x'", `a = "x"`},
	{"escaped quote", `a = 'it\'s'`, `a = "it's"`},
	{"other backslashes literal", `a = 'a\b\"c'`, `a = 'a\b\"c'`},
	{"backslash before quote", `a = "\\\""`, `a = '\\"'`},
	{"more doubles than singles", `a = '"x"'`, `a = '"x"'`},
	{"negative number", "a>=-1", "a >= -1"},
	{"decimal", "a = 1.50", "a = 1.5"},
	{"leading zeros", "a = 007", "a = 7"},
	{"any-of ops", "a?=1 && a?!=1 && a?<1 && a?<=1 && a?>1 && a?>=1 && a?~1 && a?!~1",
		"a ?= 1 && a ?!= 1 && a ?< 1 && a ?<= 1 && a ?> 1 && a ?>= 1 && a ?~ 1 && a ?!~ 1"},
	{"plain ops", "a=1&&a!=1&&a<1&&a<=1&&a>1&&a>=1&&a~1&&a!~1",
		"a = 1 && a != 1 && a < 1 && a <= 1 && a > 1 && a >= 1 && a ~ 1 && a !~ 1"},
	{"whitespace everywhere", "\t\r\n a \n=\r\n 1 \t", "a = 1"},
	{"comments", "a = 1 // one\n&& b = 2 // two", "a = 1 && b = 2"},
	{"literal vs literal", "1 = 1", "1 = 1"},
	{"keywords kept as written", "a = NULL || b = True", "a = NULL || b = True"},
	{"macros", "created > @todayStart", "created > @todayStart"},
	{"identifier chars", "@request.auth.id = #x:y_1", "@request.auth.id = #x:y_1"},
	{"unicode string", "a = 'çüé'", `a = "çüé"`},
	{"newline in string", "a = 'x\ny'", "a = \"x\ny\""},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.src, err)
			}
			if got := e.String(); got != tt.want {
				t.Errorf("Parse(%q).String() = %q, want %q", tt.src, got, tt.want)
			}
			checkRoundTrip(t, tt.src, e)
		})
	}
}

// checkRoundTrip asserts that the canonical form of e parses to the same
// tree and prints identically.
func checkRoundTrip(t testing.TB, src string, e Expr) {
	t.Helper()
	canon := e.String()
	e2, err := parse(canon, false)
	if err != nil {
		t.Fatalf("Parse(%q) = %q, which does not parse: %v", src, canon, err)
	}
	if got := e2.String(); got != canon {
		t.Fatalf("Parse(%q) = %q, which re-parses as %q", src, canon, got)
	}
	if a, b := shape(e), shape(e2); a != b {
		t.Fatalf("Parse(%q) tree %s, canonical form %q re-parses as %s", src, a, canon, b)
	}
}

func TestParsePositions(t *testing.T) {
	e, err := Parse(`a = 1 || b ?~ "x"`)
	if err != nil {
		t.Fatal(err)
	}
	want := `(||@6 (=@2 ident:a@0 num:1@4) (?~@11 ident:b@9 str:"x"@14))`
	if got := dump(e); got != want {
		t.Errorf("dump = %s, want %s", got, want)
	}
	if e.Pos() != 0 {
		t.Errorf("Pos() = %d, want 0", e.Pos())
	}
}

var parseErrorTests = []struct {
	name, src string
	offset    int
	msg       string
}{
	{"empty", "", 0, "empty filter: expected operand, found end of input"},
	{"whitespace only", " \t\n", 3, "empty filter: expected operand, found end of input"},
	{"comment only", "// nothing", 10, "empty filter: expected operand, found end of input"},
	{"empty group", "()", 1, `expected operand, found ")"`},
	{"empty group with space", "a = 1 && ( )", 11, `expected operand, found ")"`},
	{"missing close", "(a = 1", 6, `expected ")" to close "(" at offset 0, found end of input`},
	{"missing inner close", "((a = 1) && b = 2", 17, `expected ")" to close "(" at offset 0, found end of input`},
	{"stray close", "a = 1)", 5, `unbalanced ")": no "(" to close`},
	{"lone operand", "a", 1, "expected comparison operator, found end of input"},
	{"dangling operator", "a =", 3, "expected operand, found end of input"},
	{"dangling and", "a = 1 &&", 8, "expected operand, found end of input"},
	{"dangling or", "a = 1 ||", 8, "expected operand, found end of input"},
	{"double join", "a = 1 && && b = 2", 9, `expected operand, found "&&"`},
	{"leading join", "&& a = 1", 0, `expected operand, found "&&"`},
	{"operand before group", "a (b = 1)", 2, `expected comparison operator, found "("`},
	{"operator before group", "a = (b = 1)", 4, `expected operand, found "("`},
	{"adjacent groups", "(a = 1)(b = 2)", 7, `expected && or ||, found "("`},
	{"adjacent comparisons", "a = 1 b = 2", 6, `expected && or ||, found "b"`},
	{"adjacent in group", "(a = 1 b = 2)", 7, `expected &&, || or ")", found "b"`},
	{"two operands", "a b = 1", 2, `expected comparison operator, found "b"`},
	{"three operands", "a = 1 = 2", 6, `expected && or ||, found "="`},
	{"keyword and", "a = 1 and b = 2", 6, `expected && or ||, found "and"`},
	{"double equals", "a == 1", 2, `invalid operator "=="`},
	{"equals bang", "a =! 1", 2, `invalid operator "=!"`},
	{"less greater", "a <> 1", 2, `invalid operator "<>"`},
	{"equals less", "a =< 1", 2, `invalid operator "=<"`},
	{"lone question", "a ? 1", 2, `invalid operator "?"`},
	{"lone bang", "a ! 1", 2, `invalid operator "!"`},
	{"single amp", "a = 1 & b = 2", 6, `invalid operator "&" (want && or ||)`},
	{"single pipe", "a = 1 | b = 2", 6, `invalid operator "|" (want && or ||)`},
	{"triple pipe", "a = 1 ||| b = 2", 6, `invalid operator "|||" (want && or ||)`},
	{"mixed join", "a = 1 &| b = 2", 6, `invalid operator "&|" (want && or ||)`},
	{"leading dot number", "a = .5", 4, `invalid number ".5" (want digits with an optional '-' and fraction, as in -12.5)`},
	{"trailing dot number", "a = 5.", 4, `invalid number "5." (want digits with an optional '-' and fraction, as in -12.5)`},
	{"exponent", "a = 1e3", 4, `invalid number "1e3" (want digits with an optional '-' and fraction, as in -12.5)`},
	{"hex", "a = 0x10", 4, `invalid number "0x10" (want digits with an optional '-' and fraction, as in -12.5)`},
	{"two dots", "a = 1.2.3", 4, `invalid number "1.2.3" (want digits with an optional '-' and fraction, as in -12.5)`},
	{"lone minus", "a = - 1", 4, `invalid number "-" (want digits with an optional '-' and fraction, as in -12.5)`},
	{"minus in identifier", "a-b = 1", 1, `invalid number "-b" (want digits with an optional '-' and fraction, as in -12.5)`},
	{"huge number", "a = 1" + strings.Repeat("0", 400), 4, `number "1` + strings.Repeat("0", 31) + `…" out of range`},
	{"unterminated single", "a = 'abc", 4, "unterminated string (missing closing ')"},
	{"unterminated double", `a = "abc`, 4, `unterminated string (missing closing ")`},
	{"string ending in backslash", `a = 'abc\'`, 4, "unterminated string (missing closing ')"},
	{"lone slash", "a = 1 / 2", 6, `unexpected "/" (comments start with "//")`},
	{"identifier ends in dot", "data. = 1", 4, `identifier "data." cannot end with '.'`},
	{"identifier ends in colon", "a: = 1", 1, `identifier "a:" cannot end with ':'`},
	{"lone at", "@ = 1", 0, `invalid identifier "@"`},
	{"lone hash", "# = 1", 0, `invalid identifier "#"`},
	{"lone underscore", "_ = 1", 0, `invalid identifier "_"`},
	{"function", "geoDistance(1,2,3,4) < 5", 0, "functions are not supported: geoDistance("},
	{"function on right", "a = lower(b)", 4, "functions are not supported: lower("},
	{"non-ascii identifier", "ñ = 1", 0, `unexpected character 'ñ'`},
	{"invalid utf8", "a = \xff", 4, `unexpected byte 0xff`},
	{"other punctuation", "a = 1; b = 2", 5, `unexpected character ';'`},
	{"form feed is not space", "a =\f1", 3, `unexpected character '\f'`},
	{"too long", "a = '" + strings.Repeat("x", MaxLength) + "'", MaxLength, fmt.Sprintf("filter too long: %d bytes (max %d)", MaxLength+6, MaxLength)},
	{"too many comparisons", strings.Repeat("a = 1 && ", MaxComparisons) + "b = 2", MaxComparisons * 9, "too many comparisons (max 200)"},
	{"too deep", strings.Repeat("(", MaxDepth+1) + "a = 1" + strings.Repeat(")", MaxDepth+1), MaxDepth, "parentheses nested too deeply (max 50)"},
}

func TestParseErrors(t *testing.T) {
	for _, tt := range parseErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.src)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error at offset %d", tt.src, e, tt.offset)
			}
			se, ok := errors.AsType[*SyntaxError](err)
			if !ok {
				t.Fatalf("Parse(%q) error %T %v, want *SyntaxError", tt.src, err, err)
			}
			if se.Offset != tt.offset || se.Msg != tt.msg {
				t.Errorf("Parse(%q) error = offset %d %q, want offset %d %q", tt.src, se.Offset, se.Msg, tt.offset, tt.msg)
			}
			if want := fmt.Sprintf("filterlang: offset %d: %s", tt.offset, tt.msg); err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestParseLimitsExact(t *testing.T) {
	// Exactly at each limit parses.
	long := "a = '" + strings.Repeat("x", MaxLength-6) + "'"
	deep := strings.Repeat("(", MaxDepth) + "a = 1" + strings.Repeat(")", MaxDepth)
	many := strings.Repeat("a = 1 && ", MaxComparisons-1) + "b = 2"
	for name, src := range map[string]string{"length": long, "depth": deep, "comparisons": many} {
		if _, err := Parse(src); err != nil {
			t.Errorf("%s at the limit: Parse error %v", name, err)
		}
	}
	if len(long) != MaxLength {
		t.Fatalf("len(long) = %d", len(long))
	}
	// Sequential groups do not add up to depth.
	wide := strings.Repeat("(a = 1) && ", 60) + "(b = 2)"
	if _, err := Parse(wide); err != nil {
		t.Errorf("Parse(60 sibling groups) error %v", err)
	}
}

// TestGolden parses every expression in testdata/canonical.input (one per
// line; "#" starts a comment line; a line starting with "q:" is a Go quoted
// string) and compares the canonical form and tree with
// testdata/canonical.golden. Run with -update to rewrite the golden file.
func TestGolden(t *testing.T) {
	in := filepath.Join("testdata", "canonical.input")
	golden := filepath.Join("testdata", "canonical.golden")
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		src := line
		if rest, ok := strings.CutPrefix(line, "q:"); ok {
			if src, err = strconv.Unquote(rest); err != nil {
				t.Fatalf("%s: bad quoted line %q: %v", in, line, err)
			}
		}
		fmt.Fprintf(&out, "input:  %s\n", strconv.Quote(src))
		e, err := Parse(src)
		if err != nil {
			fmt.Fprintf(&out, "error:  %v\n\n", err)
			continue
		}
		checkRoundTrip(t, src, e)
		fmt.Fprintf(&out, "string: %s\ntree:   %s\n\n", e, dump(e))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("canonical forms differ from %s (run go test -update after checking the change):\n%s", golden, lineDiff(string(want), got))
	}
}

// lineDiff reports the first differing line.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, a, b)
		}
	}
	return ""
}
