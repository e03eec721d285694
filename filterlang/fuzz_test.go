package filterlang

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzResolver accepts the fixture fields of recResolver and reads any
// other plain identifier as a JSON attribute of the same name, so that
// most fuzzed filters compile. Keywords and macros stay keywords and
// macros.
func fuzzResolver(name string) (Field[*rec], bool) {
	if f, ok := recResolver(name); ok {
		return f, true
	}
	switch strings.ToLower(name) {
	case "null", "true", "false":
		return Field[*rec]{}, false
	}
	if strings.HasPrefix(name, "@") {
		return Field[*rec]{}, false
	}
	return Field[*rec]{Type: TypeDynamic, JSON: true, Dyn: func(r *rec) Value { return r.data[name] }}, true
}

// inputLines returns the expressions of a testdata .input file.
func inputLines(t testing.TB, name string) []string {
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "q:"); ok {
			if s, err := strconv.Unquote(rest); err == nil {
				line = s
			}
		}
		out = append(out, line)
	}
	return out
}

// countCompares returns the number of comparisons in e and the parenthesis
// depth of its canonical form.
func countCompares(e Expr) (n, depth int) {
	b, ok := e.(*Binary)
	if !ok {
		return 1, 0
	}
	nx, dx := countCompares(b.X)
	ny, dy := countCompares(b.Y)
	if childPrec(b.X) < b.Op.precedence() {
		dx++
	}
	if childPrec(b.Y) <= b.Op.precedence() {
		dy++
	}
	return nx + ny, max(dx, dy)
}

func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.src)
	}
	for _, tt := range parseErrorTests {
		if len(tt.src) < 300 {
			f.Add(tt.src)
		}
	}
	for _, tt := range semanticsTests {
		f.Add(tt.src)
	}
	for _, s := range inputLines(f, "canonical.input") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			se, ok := errors.AsType[*SyntaxError](err)
			if !ok {
				t.Fatalf("Parse(%q) error %T, want *SyntaxError", src, err)
			}
			if se.Offset < 0 || se.Offset > len(src) || se.Msg == "" {
				t.Fatalf("Parse(%q) error %v: offset outside the source or no message", src, err)
			}
			if e != nil {
				t.Fatalf("Parse(%q) returned both %v and an error", src, e)
			}
			return
		}
		if len(src) > MaxLength {
			t.Fatalf("Parse accepted %d bytes", len(src))
		}
		n, depth := countCompares(e)
		if n > MaxComparisons || depth > MaxDepth {
			t.Fatalf("Parse(%q) accepted %d comparisons, depth %d", src, n, depth)
		}
		checkRoundTrip(t, src, e)
		if canon := e.String(); len(canon) <= MaxLength {
			if _, err := Parse(canon); err != nil {
				t.Fatalf("Parse(%q) = %q, which Parse rejects: %v", src, canon, err)
			}
		}

		// Compiled, the specialised and the general closures agree.
		fast := &compiler[*rec]{resolve: fuzzResolver, now: testNow.UTC(), fast: true}
		pf, errf := fast.expr(e, 0)
		slow := &compiler[*rec]{resolve: fuzzResolver, now: testNow.UTC()}
		ps, errs := slow.expr(e, 0)
		if (errf == nil) != (errs == nil) {
			t.Fatalf("Compile(%q): specialised error %v, general error %v", src, errf, errs)
		}
		if errf != nil {
			if _, ok := errors.AsType[*SyntaxError](errf); !ok {
				t.Fatalf("Compile(%q) error %v, want *SyntaxError", src, errf)
			}
			return
		}
		for _, r := range recs {
			if a, b := pf(r), ps(r); a != b {
				t.Fatalf("%q on %s: specialised %v, general %v", src, r.id, a, b)
			}
		}
		// And the batch form selects what the predicate matches.
		fast.batch = true
		sel, err := fast.selector(e, 0)
		if err != nil {
			t.Fatalf("CompileSelector(%q): %v, but Compile succeeded", src, err)
		}
		checkSelector(t, src, sel, pf)
	})
}

func FuzzParseFields(f *testing.F) {
	for _, tt := range fieldsApplyTests {
		f.Add(tt.fields)
	}
	for _, tt := range fieldsErrorTests {
		f.Add(tt.src)
	}
	for _, s := range inputLines(f, "fields.input") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		fl, err := ParseFields(src)
		if err != nil {
			se, ok := errors.AsType[*SyntaxError](err)
			if !ok {
				t.Fatalf("ParseFields(%q) error %T, want *SyntaxError", src, err)
			}
			if se.Offset < 0 || se.Offset > len(src) || se.Msg == "" {
				t.Fatalf("ParseFields(%q) error %v: offset outside the source or no message", src, err)
			}
			return
		}
		checkFieldsRoundTrip(t, src, fl)
		once := encode(t, fl.Apply(decode(t, logItemJSON)))
		if !strings.Contains(src, ":") {
			// Without modifiers, a projection is idempotent.
			v := decode(t, once)
			if twice := encode(t, fl.Apply(v)); twice != once {
				t.Fatalf("ParseFields(%q): Apply twice %s, once %s", src, twice, once)
			}
		}
	})
}

func FuzzExcerpt(f *testing.F) {
	f.Add("<p>Hello   <b>wor</b>ld</p><script>x</script><div>Second&nbsp;para</div><img src=x>çüé text", 12, true)
	f.Add("a<!-- x -->b<title>c</title>", 3, false)
	f.Fuzz(func(t *testing.T, src string, max int, ellipsis bool) {
		max %= 200
		got := Excerpt(src, max, ellipsis)
		limit := max
		if ellipsis {
			limit += 3
		}
		if n := utf8.RuneCountInString(got); n > limit && max > 0 {
			t.Fatalf("Excerpt(%q, %d, %v) = %q: %d runes", src, max, ellipsis, got, n)
		}
		// A result other than the whole text is a cut prefix of it.
		if full := Excerpt(src, 1<<30, false); max > 0 && got != full {
			if utf8.RuneCountInString(full) <= max || !strings.HasPrefix(full, strings.TrimSuffix(got, "...")) {
				t.Fatalf("Excerpt(%q, %d, %v) = %q, but the full text is %q", src, max, ellipsis, got, full)
			}
		}
	})
}
