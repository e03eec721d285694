package filterlang

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// rec is a test entry: columns id, message and level, and JSON attributes
// in data.
type rec struct {
	id       string
	message  string
	hasMsg   bool
	level    float64
	hasLevel bool
	data     map[string]Value
}

func num(f float64) Value      { return Value{Kind: KindNumber, Num: f} }
func str(s string) Value       { return Value{Kind: KindString, Str: s} }
func arr(vs ...Value) Value    { return Value{Kind: KindArray, Arr: vs} }
func obj(json string) Value    { return Value{Kind: KindObject, Str: json} }
func msg(s string) func(*rec)  { return func(r *rec) { r.message, r.hasMsg = s, true } }
func lvl(f float64) func(*rec) { return func(r *rec) { r.level, r.hasLevel = f, true } }

func newRec(id string, data map[string]Value, opts ...func(*rec)) *rec {
	r := &rec{id: id, data: data}
	for _, o := range opts {
		o(r)
	}
	return r
}

// recs is the fixture every semantics case runs against.
var recs = []*rec{
	newRec("a", map[string]Value{
		"status": num(200), "method": str("GET"), "tags": arr(str("x"), str("y")), "auth": str(""),
	}, msg("GET /api"), lvl(0)),
	newRec("b", map[string]Value{
		"status": num(404), "method": str("POST"), "lv": str(" 4"), "tags": arr(), "auth": str("_superusers"), "n": {},
	}, msg(""), lvl(4)),
	newRec("c", map[string]Value{
		"status": str("204"), "tags": arr(num(1), num(2), num(3)), "obj": obj(`{"k":1}`),
		"created": str("2024-05-06 07:08:09.123Z"),
	}),
	newRec("d", map[string]Value{
		"status": num(500), "method": str("get"), "flag": num(1), "nested": arr(arr(num(1)), obj(`{"a":"b"}`)),
		"created": str("2024-05-05 23:59:59.999Z"),
	}, msg(`100%_done \ ok`), lvl(8)),
}

// recResolver exposes:
//   - id, message: string columns; level: number column;
//   - data.<k>: dynamic JSON attributes;
//   - status, method: the same attributes through typed JSON getters
//     (status is a number or missing, method a string or missing), as the
//     logs store binds its typed fields;
//   - dlevel: level as a dynamic column (no affinity, coalescing).
func recResolver(name string) (Field[*rec], bool) {
	switch name {
	case "id":
		return Field[*rec]{Type: TypeString, Str: func(r *rec) (string, bool) { return r.id, true }}, true
	case "message":
		return Field[*rec]{Type: TypeString, Str: func(r *rec) (string, bool) { return r.message, r.hasMsg }}, true
	case "level":
		return Field[*rec]{Type: TypeNumber, Num: func(r *rec) (float64, bool) { return r.level, r.hasLevel }}, true
	case "dlevel":
		return Field[*rec]{Type: TypeDynamic, Dyn: func(r *rec) Value {
			if !r.hasLevel {
				return Value{}
			}
			return num(r.level)
		}}, true
	case "status":
		return Field[*rec]{Type: TypeNumber, JSON: true, Num: func(r *rec) (float64, bool) {
			v := r.data["status"]
			return v.Num, v.Kind == KindNumber
		}}, true
	case "method":
		return Field[*rec]{Type: TypeString, JSON: true, Str: func(r *rec) (string, bool) {
			v := r.data["method"]
			return v.Str, v.Kind == KindString
		}}, true
	}
	if k, ok := strings.CutPrefix(name, "data."); ok {
		return Field[*rec]{Type: TypeDynamic, JSON: true, Dyn: func(r *rec) Value { return r.data[k] }}, true
	}
	return Field[*rec]{}, false
}

var testNow = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 2*3600))

// matchIDs compiles src (with or without the specialised closures) and
// returns the ids of the matching fixture entries.
func matchIDs(t testing.TB, src string, fast bool) string {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	c := &compiler[*rec]{resolve: recResolver, now: testNow.UTC(), fast: fast}
	p, err := c.expr(e, 0)
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	var ids []string
	for _, r := range recs {
		if p(r) {
			ids = append(ids, r.id)
		}
	}
	if fast {
		c.batch = true
		sel, err := c.selector(e, 0)
		if err != nil {
			t.Fatalf("CompileSelector(%q): %v", src, err)
		}
		checkSelector(t, src, sel, p)
	}
	return strings.Join(ids, ",")
}

// checkSelector reports whether sel selects exactly the entries of recs
// that p matches: into a new slice, into a slice with entries already in
// it, and in place, with blocks of every size from one entry up.
func checkSelector(t testing.TB, src string, sel Selector[*rec], p Predicate[*rec]) {
	t.Helper()
	var want []*rec
	for _, r := range recs {
		if p(r) {
			want = append(want, r)
		}
	}
	defer func(n int) { blockSize = n }(blockSize)
	for _, blockSize = range []int{1, 2, 3, len(recs), 1024} {
		if got := sel(nil, recs); !slices.Equal(got, want) {
			t.Fatalf("%s (blocks of %d): selects %v, predicate %v", src, blockSize, recIDs(got), recIDs(want))
		}
		pre := []*rec{recs[0]}
		if got := sel(pre, recs); !slices.Equal(got[1:], want) || got[0] != recs[0] {
			t.Fatalf("%s (blocks of %d) after one entry: selects %v, predicate %v", src, blockSize, recIDs(got), recIDs(want))
		}
		buf := slices.Clone(recs)
		if got := sel(buf[:0], buf); !slices.Equal(got, want) {
			t.Fatalf("%s (blocks of %d) in place: selects %v, predicate %v", src, blockSize, recIDs(got), recIDs(want))
		}
	}
}

func recIDs(rs []*rec) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.id
	}
	return ids
}

var semanticsTests = []struct {
	name, src, want string
}{
	// Number column (level: 0, 4, NULL, 8).
	{"num col = num", "level = 0", "a"},
	{"num col = numeric text", `level = "0"`, "a"},
	{"num col = decimal text", "level = '0.0'", "a"},
	{"num col = padded text", "level = ' 4 '", "b"},
	{"num col = text", "level = 'abc'", ""},
	{"num col != num", "level != 4", "a,c,d"},
	{"num col = null", "level = null", "c"},
	{"num col = empty", `level = ""`, "c"},
	{"num col != null", "level != null", "a,b,d"},
	{"num col != empty", "level != ''", "a,b,d"},
	{"num col < num", "level < 4", "a"},
	{"num col <= num", "level <= 4", "a,b"},
	{"num col > num", "level > 4", "d"},
	{"num col >= num", "level >= 4", "b,d"},
	{"num col >= numeric text", "level >= '4'", "b,d"},
	{"num col < text", "level < 'abc'", "a,b,d"},
	{"num col > text", "level > 'abc'", ""},
	{"num col < null", "level < null", ""},
	{"num col = true", "level = false", "a"},
	{"num col flipped", "4 < level", "d"},
	{"num col flipped text", "'4' <= level", "b,d"},
	{"num col any-of", "level ?= 0", "a"},
	{"num col like", "level ~ 8", "d"},
	{"num col like text", "level ~ '0'", "a"},
	{"num col not like", "level !~ 0", "b,d"},

	// String column (message: "GET /api", "", NULL, `100%_done \ ok`).
	{"str col = str", `message = "GET /api"`, "a"},
	{"str col case-sensitive", `message = "get /api"`, ""},
	{"str col != str", `message != "GET /api"`, "b,c,d"},
	{"str col = null", "message = null", "b,c"},
	{"str col = empty", `message = ""`, "b,c"},
	{"str col != null", "message != null", "a,d"},
	{"str col != empty", "message != ''", "a,d"},
	{"str col = num", "id = 5", ""},
	{"str col < str", "message < 'H'", "a,b,d"},
	{"str col > num as text", "message > 2", "a"},
	{"str col < null", "message < null", ""},
	{"str col flipped", "'H' > message", "a,b,d"},
	{"str col like", "message ~ 'get'", "a"},
	{"str col like upper", "message ~ 'API'", "a"},
	{"str col not like", "message !~ 'get'", "b,d"},
	{"str col like empty", "message ~ ''", "a,b,d"},
	{"str col like contains percent", `message ~ "0\%"`, "d"},
	{"str col like contains underscore", "message ~ '_'", "d"},
	{"str col like escaped pair", `message ~ "\%\_"`, "d"},
	{"str col like backslash", `message ~ "\ ok"`, "d"},
	{"str col like prefix", "message ~ 'get%'", "a"},
	{"str col like suffix", "message ~ '%OK'", "d"},
	{"str col like underscore wildcard", "message ~ 'G_T%'", "a"},
	{"str col like escaped underscore", `message ~ "%\_d%"`, "d"},
	{"str col like all", "message ~ '%'", "a,b,d"},
	{"str col like exact", "message ~ 'get /API%'", "a"},
	{"str col like null", "message ~ null", ""},
	{"str col not like null", "message !~ null", ""},
	{"str col like num", "message ~ 100", "d"},
	{"str col like true", "message ~ true", "d"},

	// Typed JSON fields (status: 200, 404, missing (a string), 500;
	// method: GET, POST, missing, get).
	{"json num = num", "status = 200", "a"},
	{"json num = text", "status = '200'", ""},
	{"json num >= num", "status >= 400", "b,d"},
	{"json num = null", "status = null", "c"},
	{"json num != num", "status != 200", "b,c,d"},
	{"json num != null", "status != null", "a,b,d"},
	{"json num = empty", "status = ''", ""},
	{"json num < text", "status < 'a'", "a,b,d"},
	{"json num like", "status ~ '0'", "a,b,d"},
	{"json str = str", "method = 'GET'", "a"},
	{"json str = null", "method = null", "c"},
	{"json str != str", "method != 'GET'", "b,c,d"},
	{"json str = empty", "method = ''", ""},
	{"json str > num", "method > 1", "a,b,d"},
	{"json str = num", "method = 1", ""},
	{"json str like", "method ~ 'get'", "a,d"},
	{"benchmark shape", `status >= 400 && method = "GET"`, ""},
	{"benchmark shape 2", `status >= 200 && method = "GET"`, "a"},

	// Dynamic JSON attributes.
	{"json dyn = num", "data.status = 200", "a"},
	{"json number is not text", "data.status = 204", ""},
	{"json text is not number", `data.status = "204"`, "c"},
	{"json text sorts after numbers", "data.status >= 400", "b,c,d"},
	{"json = empty is strict", `data.auth = ""`, "a"},
	{"json = null matches missing", "data.auth = null", "c,d"},
	{"json != null", "data.auth != null", "a,b"},
	{"json null value", "data.n = null", "a,b,c,d"},
	{"json != on missing", "data.x != 5", "a,b,c,d"},
	{"json = on missing", "data.x = 5", ""},
	{"json bool is number", "data.flag = true", "d"},
	{"json bool not false", "data.flag != false", "a,b,c,d"},
	{"json object as text", `data.obj = '{"k":1}'`, "c"},
	{"json object like", `data.obj ~ '"k"'`, "c"},
	{"json dates as strings", "data.created > '2024-05-06'", "c"},
	{"json dates macro", "data.created >= @todayStart", "c"},
	{"json dates yesterday", "data.created > @yesterday && data.created < @now", "d"},
	{"json dyn flipped", "400 <= data.status", "b,c,d"},
	{"json dyn like number", "data.status ~ 40", "b"},

	// Arrays.
	{"array plain = json text", `data.tags = '["x","y"]'`, "a"},
	{"array plain = empty json", `data.tags = '[]'`, "b"},
	{"array plain like", `data.tags ~ '"x"'`, "a"},
	{"array any =", "data.tags ?= 'x'", "a"},
	{"array any = number", "data.tags ?= 2", "c"},
	{"array any !=", "data.tags ?!= 'x'", "a,c,d"},
	{"array any <", "data.tags ?< 2", "c"},
	{"array any <=", "data.tags ?<= 1", "c"},
	{"array any >", "data.tags ?> 2", "a,c"},
	{"array any >=", "data.tags ?>= 'y'", "a"},
	{"array any like", "data.tags ?~ 'X'", "a"},
	{"array any not like", "data.tags ?!~ 'x'", "a,c"},
	{"array any flipped", "2 ?= data.tags", "c"},
	{"array any on scalar", "data.status ?= 200", "a"},
	{"array any nested as text", "data.nested ?= '[1]'", "d"},
	{"array any object element", `data.nested ?= '{"a":"b"}'`, "d"},
	{"array any null", "data.tags ?= null", "d"},
	{"array any pairs", "data.tags ?= data.tags", "a,c,d"},
	{"array nested plain text", `data.nested = '[[1],{"a":"b"}]'`, "d"},

	// Field against field.
	{"columns coalesce", "level = message", "c"},
	{"columns coalesce !=", "level != message", "a,b,d"},
	{"dynamic column coalesce", "dlevel = message", "c"},
	{"column vs json is strict", "level = data.flag", "c"},
	{"column vs json uses affinity", "level = data.lv", "b,c"},
	{"text column vs json number", "id != data.status", "a,b,c,d"},
	{"like field pattern", "'GET /api/x' ~ message", "a,b"},
	{"like field pattern with wildcard", "'100 done \\ ok' ~ message", "b"},
	{"like field vs field", "message ~ id", "a,d"},
	{"like number field pattern", "'x48y' ~ level", "b,d"},
	{"like any-of array pattern", "'yes' ?~ data.tags", "a"},

	// Constants.
	{"literal equal", "1 = 1", "a,b,c,d"},
	{"literal number vs text", "1 = '1'", ""},
	{"literal null vs empty", "null = ''", "a,b,c,d"},
	{"literal null != null", "null != null", ""},
	{"literal null vs number", "null = 1", ""},
	{"literal null != number", "null != 1", "a,b,c,d"},
	{"literal ordering", "'a' < 'b'", "a,b,c,d"},
	{"literal number < text", "99 < 'a'", "a,b,c,d"},
	{"literal null ordering", "null < 1", ""},
	{"literal like", "'Hello' ~ 'ell'", "a,b,c,d"},
	{"literal not like", "'Hello' !~ 'ell'", ""},
	{"keywords any case", "TRUE = 1 && False = 0 && NULL = null", "a,b,c,d"},
	{"macro numbers", "@year = 2024 && @month = 5 && @day = 6 && @hour = 5 && @minute = 8 && @second = 9 && @weekday = 1", "a,b,c,d"},
	{"macro now", "@now = '2024-05-06 05:08:09.123Z'", "a,b,c,d"},
	{"macro days", "@yesterday = '2024-05-05 05:08:09.123Z' && @tomorrow = '2024-05-07 05:08:09.123Z'", "a,b,c,d"},
	{"macro today", "@todayStart = '2024-05-06 00:00:00.000Z' && @todayEnd = '2024-05-06 23:59:59.999Z'", "a,b,c,d"},
	{"macro month", "@monthStart = '2024-05-01 00:00:00.000Z' && @monthEnd = '2024-05-31 23:59:59.999Z'", "a,b,c,d"},
	{"macro year", "@yearStart = '2024-01-01 00:00:00.000Z' && @yearEnd = '2024-12-31 23:59:59.999Z'", "a,b,c,d"},

	// Joins.
	{"and over or", "id = 'a' || id = 'b' && level = 0", "a"},
	{"group", "(id = 'a' || id = 'b') && level = 4", "b"},
	{"long and", "id != 'x' && id != 'y' && id != 'a'", "b,c,d"},
	{"long or", "id = 'x' || id = 'b' || id = 'd'", "b,d"},
	{"or chain over null", "status >= 400 || level = 0", "a,b,d"},
	{"or chain null first", "status < 300 || message = ''", "a,b,c"},
	{"and chain over null", "status != 200 && method != 'GET'", "b,c,d"},
	{"mixed chain", "status > 250 && method = 'get' || level < 1 && message ~ 'api'", "a,d"},
	{"chain then group", "level >= 4 && (status = 404 || status = 500)", "b,d"},
}

func TestCompileSemantics(t *testing.T) {
	for _, tt := range semanticsTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matchIDs(t, tt.src, true); got != tt.want {
				t.Errorf("%s matches [%s], want [%s]", tt.src, got, tt.want)
			}
			if got := matchIDs(t, tt.src, false); got != tt.want {
				t.Errorf("%s (general path) matches [%s], want [%s]", tt.src, got, tt.want)
			}
		})
	}
}

// TestCompileFastPathsAgree runs every operator over every pair of
// operand kinds through the specialised and the general closures.
func TestCompileFastPathsAgree(t *testing.T) {
	fields := []string{"id", "message", "level", "dlevel", "status", "method", "data.status", "data.tags", "data.missing"}
	consts := []string{"0", "4", "200", "-1.5", "'0'", "'4'", "'GET'", "'get'", "'GET /api'", "''", "null", "true", "'abc'", "'%'", "'g%'", "'_'"}
	ops := []string{"=", "!=", "<", "<=", ">", ">=", "~", "!~", "?=", "?!=", "?<", "?>=", "?~", "?!~"}
	n := 0
	for _, f := range fields {
		for _, k := range consts {
			for _, op := range ops {
				for _, src := range []string{f + " " + op + " " + k, k + " " + op + " " + f} {
					if fast, slow := matchIDs(t, src, true), matchIDs(t, src, false); fast != slow {
						t.Errorf("%s: specialised [%s], general [%s]", src, fast, slow)
					}
					n++
				}
			}
		}
	}
	// Joined, the comparisons become chains of continuations.
	for i, f := range fields {
		for j, k := range consts {
			for _, op := range []string{"=", "!=", "<", ">=", "~"} {
				f2, k2 := fields[(i+j+1)%len(fields)], consts[(i*7+j)%len(consts)]
				for _, join := range []string{" && ", " || "} {
					src := f + " " + op + " " + k + join + f2 + " = " + k2 + join + k + " < " + f
					if fast, slow := matchIDs(t, src, true), matchIDs(t, src, false); fast != slow {
						t.Errorf("%s: specialised [%s], general [%s]", src, fast, slow)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d filters agree", n)
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, src string
		offset    int
		msg       string
	}{
		{"unknown field", "nope = 1", 0, `unknown field "nope"`},
		{"unknown on right", "level = 1 && 2 = other", 17, `unknown field "other"`},
		{"unknown in group", "(level = 1 || (x.y ~ 'a'))", 15, `unknown field "x.y"`},
		{"unknown macro", "@nope = 1", 0, `unknown field "@nope"`},
		{"macro case-sensitive", "@NOW = 1", 0, `unknown field "@NOW"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Compile(e, recResolver, Options{})
			_, serr := CompileSelector(e, recResolver, Options{})
			for name, err := range map[string]error{"Compile": err, "CompileSelector": serr} {
				se, ok := errors.AsType[*SyntaxError](err)
				if !ok {
					t.Fatalf("%s(%q) error = %v, want *SyntaxError", name, tt.src, err)
				}
				if se.Offset != tt.offset || se.Msg != tt.msg {
					t.Errorf("%s(%q) error = offset %d %q, want offset %d %q", name, tt.src, se.Offset, se.Msg, tt.offset, tt.msg)
				}
			}
		})
	}
}

func TestCompileFieldWinsOverKeyword(t *testing.T) {
	r := func(name string) (Field[int], bool) {
		if name == "null" {
			return Field[int]{Type: TypeNumber, Num: func(i int) (float64, bool) { return float64(i), true }}, true
		}
		return Field[int]{}, false
	}
	e, _ := Parse("null = 3")
	p, err := Compile(e, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p(3) || p(4) {
		t.Errorf("a field named null should be read as a field")
	}
}

func TestCompileBadField(t *testing.T) {
	getS := func(int) (string, bool) { return "", true }
	getN := func(int) (float64, bool) { return 0, true }
	bad := []Field[int]{
		{},
		{Type: TypeString},
		{Type: TypeString, Num: getN},
		{Type: TypeNumber, Str: getS},
		{Type: TypeNumber, Num: getN, Str: getS},
		{Type: TypeDynamic, Num: getN},
		{Type: 9, Num: getN},
	}
	for i, f := range bad {
		e, _ := Parse("x = 1")
		r := func(string) (Field[int], bool) { return f, true }
		_, err := Compile(e, r, Options{})
		_, serr := CompileSelector(e, r, Options{})
		for name, err := range map[string]error{"Compile": err, "CompileSelector": serr} {
			if err == nil {
				t.Errorf("field %d: %s succeeded with a broken Field", i, name)
				continue
			}
			if _, ok := errors.AsType[*SyntaxError](err); ok {
				t.Errorf("field %d: %s: got *SyntaxError %v, want a plain error", i, name, err)
			}
		}
	}
}

func TestCompileNil(t *testing.T) {
	if _, err := Compile[int](nil, nil, Options{}); err == nil {
		t.Error("Compile(nil) succeeded")
	}
	if _, err := CompileSelector[int](nil, nil, Options{}); err == nil {
		t.Error("CompileSelector(nil) succeeded")
	}
	// Hand-built trees with holes are errors, not panics.
	for _, e := range []Expr{
		&Binary{Op: And},
		&Binary{Op: Eq, X: &Compare{}, Y: &Compare{}},
		&Compare{Op: Eq},
		&Compare{Op: And, Left: Num{}, Right: Num{}},
		&Compare{Op: Eq, Left: Num{}, Right: nil},
	} {
		if _, err := Compile[int](e, nil, Options{}); err == nil {
			t.Errorf("Compile(%#v) succeeded", e)
		}
		if _, err := CompileSelector[int](e, nil, Options{}); err == nil {
			t.Errorf("CompileSelector(%#v) succeeded", e)
		}
	}
}

func TestCompileNowDefault(t *testing.T) {
	e, _ := Parse("@year >= 2024")
	p, err := Compile[int](e, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p(0) {
		t.Error("@year >= 2024 is false with the real clock")
	}
}

func TestPredicateAllocs(t *testing.T) {
	srcs := []string{
		`status >= 400 && method = "GET"`,
		`level = "4" || message = null`,
		`message ~ "api" && message !~ "x%y"`,
		`message ~ "G_T%" || level ~ 8`,
		"data.status >= 400 && data.method != 'x'",
		"data.tags ?= 'y' || data.tags ?~ 'Q'",
		"level = message || 'GET /api/x' ~ message",
		"id != data.status",
	}
	for _, src := range srcs {
		e, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(e, recResolver, Options{Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(100, func() {
			for _, r := range recs {
				p(r)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per pass, want 0", src, allocs)
		}
		sel, err := CompileSelector(e, recResolver, Options{Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]*rec, 0, len(recs))
		allocs = testing.AllocsPerRun(100, func() { buf = sel(buf[:0], recs) })
		if allocs != 0 {
			t.Errorf("%s: %v allocations per selection, want 0", src, allocs)
		}
	}
}

func TestSQLNumber(t *testing.T) {
	yes := []string{"0", "-1", "+1", "1.5", ".5", "5.", "1e3", "1E-3", " 7 ", "\t7\n"}
	no := []string{"", " ", "-", ".", "e3", "1e", "0x10", "1_000", "inf", "NaN", "1 2", "abc", "1a"}
	for _, s := range yes {
		if _, ok := sqlNumber(s); !ok {
			t.Errorf("sqlNumber(%q) = false, want true", s)
		}
	}
	for _, s := range no {
		if _, ok := sqlNumber(s); ok {
			t.Errorf("sqlNumber(%q) = true, want false", s)
		}
	}
}

func TestArrayText(t *testing.T) {
	v := arr(num(1), num(-2.5), num(1e21), str("a\"b\\c\n\x01é"), Value{}, arr(), obj(`{"k":1}`), Value{Kind: KindObject})
	want := `[1,-2.5,1e+21,"a\"b\\c\n\u0001é",null,[],{"k":1},{}]`
	if got := arrayText(v); got != want {
		t.Errorf("arrayText = %s, want %s", got, want)
	}
	v.Str = "given"
	if got := arrayText(v); got != "given" {
		t.Errorf("arrayText with Str = %s, want given", got)
	}
	_ = slices.Clone(recs)
}

// TestOperatorMatrix runs all sixteen operators over each kind of operand
// against one constant. Columns: =, !=, <, <=, >, >=, ~, !~; the ?-variants
// equal the plain ones on scalars and are listed separately for arrays.
func TestOperatorMatrix(t *testing.T) {
	ops := []string{"=", "!=", "<", "<=", ">", ">=", "~", "!~"}
	tests := []struct {
		name, field, value string
		want               [8]string
		anyOf              *[8]string // nil: same as want
	}{
		{"column number", "level", "4", [8]string{"b", "a,c,d", "a", "a,b", "d", "b,d", "b", "a,d"}, nil},
		{"column string", "message", "'GET /api'", [8]string{"a", "b,c,d", "b,d", "a,b,d", "", "a", "a", "b,d"}, nil},
		{"json number, typed", "status", "404", [8]string{"b", "a,c,d", "a", "a,b", "d", "b,d", "b", "a,d"}, nil},
		{"json string, typed", "method", "'GET'", [8]string{"a", "b,c,d", "", "a", "b,d", "a,b,d", "a,d", "b"}, nil},
		{"json dynamic", "data.status", "404", [8]string{"b", "a,c,d", "a", "a,b", "c,d", "b,c,d", "b", "a,c,d"}, nil},
		{"json missing", "data.x", "5", [8]string{"", "a,b,c,d", "", "", "", "", "", ""}, nil},
		{"json null or missing", "data.n", "5", [8]string{"", "a,b,c,d", "", "", "", "", "", ""}, nil},
		{"array", "data.tags", "2",
			[8]string{"", "a,b,c,d", "", "", "a,b,c", "a,b,c", "c", "a,b"},
			&[8]string{"c", "a,c,d", "c", "c", "a,c", "a,c", "c", "a,c"}},
	}
	for _, tt := range tests {
		for i, op := range ops {
			src := tt.field + " " + op + " " + tt.value
			if got := matchIDs(t, src, true); got != tt.want[i] {
				t.Errorf("%s: %s matches [%s], want [%s]", tt.name, src, got, tt.want[i])
			}
			want := tt.want[i]
			if tt.anyOf != nil {
				want = tt.anyOf[i]
			}
			src = tt.field + " ?" + op + " " + tt.value
			if got := matchIDs(t, src, true); got != want {
				t.Errorf("%s: %s matches [%s], want [%s]", tt.name, src, got, want)
			}
		}
	}
}
