package filterlang

import (
	"strings"
	"testing"
	"time"
)

// guardedFields are the fields guardResolver guards, and guardOpen the
// fixture entries whose guard holds.
var (
	guardedFields = map[string]bool{"message": true, "level": true, "data.tags": true, "method": true}
	guardOpen     = map[string]bool{"c": true, "d": true}
)

// guardResolver is recResolver with a Guard on guardedFields that holds
// for the entries of guardOpen only.
func guardResolver(name string) (Field[*rec], bool) {
	f, ok := recResolver(name)
	if ok && guardedFields[name] {
		f.Guard = func(r *rec) bool { return guardOpen[r.id] }
	}
	return f, ok
}

// withGuards returns e with every comparison naming a guarded field
// joined to the guard written out: "(cmp && (id = 'c' || id = 'd'))".
func withGuards(e Expr) Expr {
	switch x := e.(type) {
	case *Binary:
		return &Binary{Op: x.Op, X: withGuards(x.X), Y: withGuards(x.Y)}
	case *Compare:
		names := func(o Operand) bool { id, ok := o.(Ident); return ok && guardedFields[id.Name] }
		if !names(x.Left) && !names(x.Right) {
			return x
		}
		open := &Binary{Op: Or,
			X: &Compare{Op: Eq, Left: Ident{Name: "id"}, Right: Str{Value: "c"}},
			Y: &Compare{Op: Eq, Left: Ident{Name: "id"}, Right: Str{Value: "d"}}}
		return &Binary{Op: And, X: x, Y: open}
	}
	return e
}

// TestGuard checks Field.Guard: for every operator, operand order and
// join, a filter over guarded fields matches exactly the entries that the
// same filter with each guarded comparison joined to the guard (written
// out as a filter) matches, by the predicate, the general closures and
// the selector; so an entry whose guard is false fails every comparison
// naming the field, != and !~ included, whatever the field holds.
func TestGuard(t *testing.T) {
	fields := []string{"message", "level", "data.tags", "method"}
	consts := []string{"''", "null", "'x'", "'GET /api'", "'%'", "0", "4", "'4'", "true"}
	ops := []string{"=", "!=", "<", "<=", ">", ">=", "~", "!~", "?=", "?!=", "?<", "?>=", "?~", "?!~"}
	var srcs []string
	for _, f := range fields {
		for _, k := range consts {
			for _, op := range ops {
				srcs = append(srcs, f+" "+op+" "+k, k+" "+op+" "+f)
			}
		}
		for _, op := range ops {
			srcs = append(srcs, f+" "+op+" "+f, f+" "+op+" id", "id "+op+" "+f)
		}
	}
	srcs = append(srcs,
		"message != 'x' || id = 'a'", "id = 'b' || message = ''", "(message = 'x' || level > 0) && message !~ 'zz'",
		"message != 'x' && level != 1 || id = 'a'", "(id = 'a' || message ~ '') && (level >= 0 || id = 'b')",
		"message = message && level = level", "id != 'zz' || (message != '' && id = 'c')")
	for _, src := range srcs {
		e, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		want := matchIDs(t, withGuards(e).String(), true)
		for _, fast := range []bool{true, false} {
			c := &compiler[*rec]{resolve: guardResolver, now: testNow.UTC(), fast: fast}
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
			if got := strings.Join(ids, ","); got != want {
				t.Errorf("%s (fast %v) matches [%s], want [%s] (as %s)", src, fast, got, want, withGuards(e))
			}
			if fast {
				c.batch = true
				sel, err := c.selector(e, 0)
				if err != nil {
					t.Fatalf("CompileSelector(%q): %v", src, err)
				}
				checkSelector(t, src, sel, p)
			}
		}
	}
	// The guard closes the comparison, not the whole filter.
	for _, tt := range []struct{ src, want string }{
		{"message != 'no such message'", "c,d"}, // c has no message: NULL passes !=
		{"message = ''", "c"},
		{"message ~ ''", "d"},
		{"message > ''", "d"},
		{"message != 'x' || id = 'a'", "a,c,d"},
	} {
		e, _ := Parse(tt.src)
		p, err := Compile(e, guardResolver, Options{Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range recs {
			if p(r) {
				ids = append(ids, r.id)
			}
		}
		if got := strings.Join(ids, ","); got != tt.want {
			t.Errorf("Compile(%q) matches [%s], want [%s]", tt.src, got, tt.want)
		}
	}
}
