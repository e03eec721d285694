package filterlang

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const logItemJSON = `{"id":"abc","created":"2024-05-06 07:08:09.123Z","level":8,"message":"<p>Hello   <b>wor</b>ld</p>",
"data":{"status":400,"method":"GET","url":"/api/x","details":{"a":1,"b":[{"x":1,"y":2},{"x":3,"y":4}]},"list":[1,2,3]}}`

func decode(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func encode(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var fieldsApplyTests = []struct {
	name, fields, want string
}{
	{"one", "id", `{"id":"abc"}`},
	{"two", "id, level", `{"id":"abc","level":8}`},
	{"missing", "nope", `{}`},
	{"nested", "data.status,data.method", `{"data":{"method":"GET","status":400}}`},
	{"nested missing", "data.nope", `{"data":{}}`},
	{"star", "*", `{"created":"2024-05-06 07:08:09.123Z","data":{"details":{"a":1,"b":[{"x":1,"y":2},{"x":3,"y":4}]},"list":[1,2,3],"method":"GET","status":400,"url":"/api/x"},"id":"abc","level":8,"message":"\u003cp\u003eHello   \u003cb\u003ewor\u003c/b\u003eld\u003c/p\u003e"}`},
	{"star with nested", "*,data.status", `{"created":"2024-05-06 07:08:09.123Z","data":{"status":400},"id":"abc","level":8,"message":"\u003cp\u003eHello   \u003cb\u003ewor\u003c/b\u003eld\u003c/p\u003e"}`},
	{"nested star", "id,data.*", `{"data":{"details":{"a":1,"b":[{"x":1,"y":2},{"x":3,"y":4}]},"list":[1,2,3],"method":"GET","status":400,"url":"/api/x"},"id":"abc"}`},
	{"array of objects", "data.details.b.x", `{"data":{"details":{"b":[{"x":1},{"x":3}]}}}`},
	{"array of scalars kept", "data.list.x", `{"data":{"list":[1,2,3]}}`},
	{"scalar on path kept", "level.x", `{"level":8}`},
	{"whole wins over deeper", "data.details,data.details.a", `{"data":{"details":{"a":1,"b":[{"x":1,"y":2},{"x":3,"y":4}]}}}`},
	{"excerpt", "message:excerpt(8)", `{"message":"Hello wo"}`},
	{"excerpt ellipsis", "message:excerpt(8, true)", `{"message":"Hello wo..."}`},
	{"excerpt no cut", "message:excerpt(100,TRUE)", `{"message":"Hello world"}`},
	{"excerpt non-string", "level:excerpt(1)", `{"level":8}`},
	{"excerpt on star", "*:excerpt(3),data.status", `{"created":"202","data":{"status":400},"id":"abc","level":8,"message":"Hel"}`},
	{"star mod not on named", "*:excerpt(2),id", `{"created":"20","data":{"details":{"a":1,"b":[{"x":1,"y":2},{"x":3,"y":4}]},"list":[1,2,3],"method":"GET","status":400,"url":"/api/x"},"id":"abc","level":8,"message":"He"}`},
	{"later modifier wins", "id:excerpt(1),id:excerpt(2)", `{"id":"ab"}`},
	{"later plain item wins", "id:excerpt(1),id", `{"id":"abc"}`},
	{"empty items skipped", ",id,,level,", `{"id":"abc","level":8}`},
	{"no paths keeps all", ",", `{"created":"2024-05-06 07:08:09.123Z","data":{"details":{"a":1,"b":[{"x":1,"y":2},{"x":3,"y":4}]},"list":[1,2,3],"method":"GET","status":400,"url":"/api/x"},"id":"abc","level":8,"message":"\u003cp\u003eHello   \u003cb\u003ewor\u003c/b\u003eld\u003c/p\u003e"}`},
}

func TestFieldsApply(t *testing.T) {
	for _, tt := range fieldsApplyTests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFields(tt.fields)
			if err != nil {
				t.Fatalf("ParseFields(%q) error %v", tt.fields, err)
			}
			if got := encode(t, f.Apply(decode(t, logItemJSON))); got != tt.want {
				t.Errorf("ParseFields(%q).Apply = %s, want %s", tt.fields, got, tt.want)
			}
			checkFieldsRoundTrip(t, tt.fields, f)
		})
	}
}

func TestFieldsApplyShapes(t *testing.T) {
	f, err := ParseFields("id")
	if err != nil {
		t.Fatal(err)
	}
	// A top-level array: each object element is pruned, others kept.
	if got := encode(t, f.Apply(decode(t, `[{"id":1,"x":2},3,{"y":4}]`))); got != `[{"id":1},3,{}]` {
		t.Errorf("array: %s", got)
	}
	if got := encode(t, f.Apply([]map[string]any{{"id": 1, "x": 2}})); got != `[{"id":1}]` {
		t.Errorf("[]map: %s", got)
	}
	for _, v := range []any{nil, "s", 1.5, json.Number("2"), true} {
		if got := f.Apply(v); got != v {
			t.Errorf("Apply(%v) = %v", v, got)
		}
	}
	var nilFields *Fields
	if got := encode(t, nilFields.Apply(map[string]any{"a": 1})); got != `{"a":1}` {
		t.Errorf("nil Fields: %s", got)
	}
	if got := encode(t, (&Fields{}).Apply(map[string]any{"a": 1})); got != `{"a":1}` {
		t.Errorf("zero Fields: %s", got)
	}
}

func checkFieldsRoundTrip(t testing.TB, src string, f *Fields) {
	t.Helper()
	canon := f.String()
	g, err := ParseFields(canon)
	if err != nil {
		t.Fatalf("ParseFields(%q).String() = %q, which does not parse: %v", src, canon, err)
	}
	if got := g.String(); got != canon {
		t.Fatalf("ParseFields(%q).String() = %q, which re-parses as %q", src, canon, got)
	}
	if a, b := fieldsTree(f.root), fieldsTree(g.root); a != b {
		t.Fatalf("ParseFields(%q) tree %s, canonical %q re-parses as %s", src, a, canon, b)
	}
}

// fieldsTree renders a projection tree for comparisons.
func fieldsTree(n *fieldNode) string {
	if n == nil {
		return "nil"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "{keep:%v", n.keep)
	if n.mod != nil {
		fmt.Fprintf(&sb, " mod:%d,%v", n.mod.max, n.mod.ellipsis)
	}
	for _, k := range sortedKeys(n.children) {
		fmt.Fprintf(&sb, " %q:%s", k, fieldsTree(n.children[k]))
	}
	sb.WriteByte('}')
	return sb.String()
}

func sortedKeys(m map[string]*fieldNode) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

var fieldsErrorTests = []struct {
	name, src string
	offset    int
	msg       string
}{
	{"excerpt zero", "message:excerpt(0)", 16, `excerpt maxLength "0" is not a positive integer`},
	{"excerpt no args", "message:excerpt()", 16, "excerpt needs 1 or 2 arguments (maxLength, withEllipsis), found none"},
	{"excerpt no parens", "message:excerpt", 15, `expected "(" after excerpt, found end of input`},
	{"unknown modifier", "message:unknown(1)", 8, `unknown modifier "unknown" (the only modifier is excerpt)`},
	{"modifier case", "message:Excerpt(1)", 8, `unknown modifier "Excerpt" (the only modifier is excerpt)`},
	{"three args", "message:excerpt(5,true,1)", 23, "excerpt takes at most 2 arguments (maxLength, withEllipsis), found 3"},
	{"non-numeric", "message:excerpt(abc)", 16, `excerpt maxLength "abc" is not a positive integer`},
	{"negative", "message:excerpt(-1)", 16, `excerpt maxLength "-1" is not a positive integer`},
	{"decimal", "message:excerpt(1.5)", 16, `excerpt maxLength "1.5" is not a positive integer`},
	{"huge", "message:excerpt(99999999999999999999)", 16, `excerpt maxLength "99999999999999999999" is not a positive integer`},
	{"bad bool", "message:excerpt(5,yes)", 18, `excerpt withEllipsis "yes" is not true, false, 1 or 0`},
	{"quoted bool", "message:excerpt(5,'true')", 18, `excerpt withEllipsis "'true'" is not true, false, 1 or 0`},
	{"space separated args", "message:excerpt(5 true)", 18, `expected "," or ")", found 't'`},
	{"trailing arg comma", "message:excerpt(5,)", 18, `expected excerpt argument, found ')'`},
	{"unclosed", "message:excerpt(5", 17, `expected ")" to close "(" at offset 15, found end of input`},
	{"unclosed with more", "message:excerpt(5,id", 20, `expected ")" to close "(" at offset 15, found end of input`},
	{"open paren item", "id,(a", 3, `expected field name, found '('`},
	{"stray close", "id)", 2, `expected "," or ":", found ')'`},
	{"quote", `id,"a"`, 3, `expected field name, found '"'`},
	{"empty segment", "a..b", 2, `expected field name, found '.'`},
	{"leading dot", ".a", 0, `expected field name, found '.'`},
	{"trailing dot", "a.", 2, "expected field name, found end of input"},
	{"star not last", "*.a", 0, `"*" must be the last key of a path`},
	{"star in key", "a*", 1, `expected "," or ":", found '*'`},
	{"space in path", "a b", 2, `expected "," or ":", found 'b'`},
	{"empty modifier", "a:", 2, "expected modifier name, found end of input"},
	{"text after modifier", "a:excerpt(1)x", 12, `expected "," or ":", found 'x'`},
}

func TestParseFieldsErrors(t *testing.T) {
	for _, tt := range fieldsErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFields(tt.src)
			se, ok := errors.AsType[*SyntaxError](err)
			if !ok {
				t.Fatalf("ParseFields(%q) = %v, %v; want *SyntaxError", tt.src, f, err)
			}
			if se.Offset != tt.offset || se.Msg != tt.msg {
				t.Errorf("ParseFields(%q) error = offset %d %q, want offset %d %q", tt.src, se.Offset, se.Msg, tt.offset, tt.msg)
			}
		})
	}
}

func TestFieldsString(t *testing.T) {
	tests := []struct{ src, want string }{
		{"b,a", "a,b"},
		{" data.status , data.method ", "data.method,data.status"},
		{"*,x:excerpt(5)", "*,x:excerpt(5,false)"},
		{"a:excerpt( 5 , 1 ),a.b", "a:excerpt(5,true),a.b"},
		{"", ""},
		{"é.ü", "é.ü"},
	}
	for _, tt := range tests {
		f, err := ParseFields(tt.src)
		if err != nil {
			t.Fatalf("ParseFields(%q): %v", tt.src, err)
		}
		if got := f.String(); got != tt.want {
			t.Errorf("ParseFields(%q).String() = %q, want %q", tt.src, got, tt.want)
		}
		checkFieldsRoundTrip(t, tt.src, f)
	}
}

// TestFieldsGolden pins the canonical form of every fields value in
// testdata/fields.input (one per line) in testdata/fields.golden.
func TestFieldsGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "fields.input"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(in), "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		fmt.Fprintf(&out, "input:  %q\n", line)
		f, err := ParseFields(line)
		if err != nil {
			fmt.Fprintf(&out, "error:  %v\n\n", err)
			continue
		}
		checkFieldsRoundTrip(t, line, f)
		fmt.Fprintf(&out, "string: %s\ntree:   %s\n\n", f, fieldsTree(f.root))
	}
	golden := filepath.Join("testdata", "fields.golden")
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
		t.Errorf("fields canonical forms differ from %s (run go test -update after checking the change):\n%s", golden, lineDiff(string(want), got))
	}
}
