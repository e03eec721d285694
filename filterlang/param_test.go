package filterlang

import (
	"strings"
	"testing"
	"time"
)

// paramEntry is a fixture entry with the value the Param field "p" reads
// for it (the same for every entry of one case, as a request's is).
type paramEntry struct {
	r *rec
	p Value
}

// paramResolver is recResolver over paramEntry, plus "p", a Param field,
// and the macros @now and @hour bound per entry to paramClock.
func paramResolver(name string) (Field[paramEntry], bool) {
	switch name {
	case "p":
		return Field[paramEntry]{Type: TypeDynamic, Param: true, Dyn: func(e paramEntry) Value { return e.p }}, true
	case "@now", "@hour":
		return Field[paramEntry]{Type: TypeDynamic, Param: true, Dyn: func(paramEntry) Value {
			v, _ := MacroValue(name, paramClock)
			return v
		}}, true
	}
	f, ok := recResolver(name)
	if !ok {
		return Field[paramEntry]{}, false
	}
	out := Field[paramEntry]{Type: f.Type, JSON: f.JSON}
	switch {
	case f.Str != nil:
		out.Str = func(e paramEntry) (string, bool) { return f.Str(e.r) }
	case f.Num != nil:
		out.Num = func(e paramEntry) (float64, bool) { return f.Num(e.r) }
	default:
		out.Dyn = func(e paramEntry) Value { return f.Dyn(e.r) }
	}
	return out, true
}

var paramClock = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// TestParamAsConstant checks that a Param field compares exactly as the
// constant it holds would if written in the filter: for every template
// and value, the filter with p matches the same entries as the filter
// with the value's literal in p's place.
func TestParamAsConstant(t *testing.T) {
	templates := []string{
		"message = p", "p = message", "message != p", "level = p", "level != p", "p != level",
		"level > p", "p <= level", "status = p", "status != p", "data.tags ?= p", "method = p",
		"message ~ p", "message !~ p", "p ~ message", "p = p", "p = ''", "p != null", "p = 4",
		"id ?= p", "data.lv = p", "dlevel = p",
	}
	values := []struct {
		v   Value
		lit string
	}{
		{Value{}, "null"}, {str(""), `""`}, {str("GET /api"), `"GET /api"`}, {str("4"), `"4"`},
		{num(4), "4"}, {num(0), "0"}, {str("a"), `"a"`}, {str("%api"), `"%api"`}, {str("x"), `"x"`},
		{str("GET"), `"GET"`}, {str(" 4"), `" 4"`},
	}
	for _, tmpl := range templates {
		for _, v := range values {
			got := paramIDs(t, tmpl, v.v)
			want := matchIDs(t, strings.ReplaceAll(tmpl, "p", v.lit), false)
			if got != want {
				t.Errorf("%s with p = %s: [%s], want [%s] (as the literal)", tmpl, v.lit, got, want)
			}
		}
	}
}

// paramIDs compiles src over paramResolver, with p bound to v, and
// returns the ids of the matching fixture entries, by the predicate and
// by the selector (which must agree).
func paramIDs(t *testing.T, src string, v Value) string {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	p, err := Compile(e, paramResolver, Options{})
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	sel, err := CompileSelector(e, paramResolver, Options{})
	if err != nil {
		t.Fatalf("CompileSelector(%q): %v", src, err)
	}
	var ids []string
	es := make([]paramEntry, len(recs))
	for i, r := range recs {
		es[i] = paramEntry{r: r, p: v}
		if p(es[i]) {
			ids = append(ids, r.id)
		}
	}
	var sids []string
	for _, e := range sel(nil, es) {
		sids = append(sids, e.r.id)
	}
	if a, b := strings.Join(ids, ","), strings.Join(sids, ","); a != b {
		t.Errorf("%s: predicate [%s], selector [%s]", src, a, b)
	}
	return strings.Join(ids, ",")
}

// TestParamMacros checks Options.ParamMacros: a macro the Resolver binds
// is read per evaluation; one it does not know keeps its Compile-time
// value; without the option the Compile-time value wins.
func TestParamMacros(t *testing.T) {
	compileAt := time.Date(2030, 6, 7, 8, 9, 10, 0, time.UTC)
	cases := []struct {
		src    string
		params bool
		want   bool
	}{
		{`@hour = 3`, true, true},  // bound: paramClock's hour
		{`@hour = 8`, false, true}, // Compile time
		{`@now = "2025-01-02 03:04:05.000Z"`, true, true},
		{`@year = 2030`, true, true}, // not bound: Compile time
	}
	for _, tc := range cases {
		e, err := Parse(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(e, paramResolver, Options{Now: func() time.Time { return compileAt }, ParamMacros: tc.params})
		if err != nil {
			t.Fatal(err)
		}
		if got := p(paramEntry{r: recs[0]}); got != tc.want {
			t.Errorf("%s (ParamMacros %v) = %v, want %v", tc.src, tc.params, got, tc.want)
		}
	}
	if v, ok := MacroValue("@nope", compileAt); ok {
		t.Errorf("MacroValue(@nope) = %v, true", v)
	}
}

// TestParamArray: an array in a Param field is some-element under the
// any-of operators and its JSON text otherwise.
func TestParamArray(t *testing.T) {
	v := arr(str("x"), str("y"))
	for src, want := range map[string]string{
		`p ?= "x"`: "a,b,c,d", `p = "x"`: "", `p = '["x","y"]'`: "a,b,c,d", `"y" ?= p`: "a,b,c,d", `p ?> "x"`: "a,b,c,d",
		`p ?= message`: "", `data.tags ?= p`: "a",
	} {
		if got := paramIDs(t, src, v); got != want {
			t.Errorf("%s with p = [x y]: [%s], want [%s]", src, got, want)
		}
	}
}
