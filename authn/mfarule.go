package authn

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"strongbox/authn/validation"
	"strongbox/filterlang"
)

// mfaSubject is what an mfa.rule is evaluated against: the record signing
// in and the method of its current factor (@request.context).
type mfaSubject struct {
	r      *Record
	method string
}

// contextField is the one @request.* identifier an mfa.rule may use: the
// sign-in method of the factor being checked ("password", "otp",
// "oauth2"), as PocketBase v0.31.0 sets it for each factor.
const contextField = "@request.context"

// mfaResolver exposes the fields of c's records to an mfa.rule, as columns
// of the record's row, as PocketBase v0.31.0 does: text, email, url and
// single-file fields as text, number fields as numbers, bool fields as 1
// and 0, autodate fields as the stored date text, which the date macros
// compare with. Hidden fields (password, tokenKey, and any custom field
// marked hidden) are not exposed: a rule naming one is refused as naming an
// unknown field.
func mfaResolver(c *Collection) filterlang.Resolver[mfaSubject] {
	return func(name string) (filterlang.Field[mfaSubject], bool) {
		if name == contextField {
			return filterlang.Field[mfaSubject]{Type: filterlang.TypeString, Str: func(s mfaSubject) (string, bool) { return s.method, true }}, true
		}
		f := c.Field(name)
		if f == nil || f.Hidden {
			return filterlang.Field[mfaSubject]{}, false
		}
		return recordField(f, func(s mfaSubject) *Record { return s.r })
	}
}

// recordField returns the getter of field f, which is not hidden, of the
// record rec returns for a subject S, as a column. An unset custom field
// reads as its type's zero value, as PocketBase's row holds it (empty
// text, number 0, bool false), never as NULL.
func recordField[S any](f *Field, rec func(S) *Record) (filterlang.Field[S], bool) {
	str := func(get func(*Record) string) (filterlang.Field[S], bool) {
		return filterlang.Field[S]{Type: filterlang.TypeString, Str: func(s S) (string, bool) { return get(rec(s)), true }}, true
	}
	num := func(get func(*Record) float64) (filterlang.Field[S], bool) {
		return filterlang.Field[S]{Type: filterlang.TypeNumber, Num: func(s S) (float64, bool) { return get(rec(s)), true }}, true
	}
	boolean := func(get func(*Record) bool) (filterlang.Field[S], bool) {
		return num(func(r *Record) float64 {
			if get(r) {
				return 1
			}
			return 0
		})
	}
	name := f.Name
	if f.System {
		switch name {
		case "id":
			return str(func(r *Record) string { return r.ID })
		case "email":
			return str(func(r *Record) string { return r.Email })
		case "emailVisibility":
			return boolean(func(r *Record) bool { return r.EmailVisibility })
		case "verified":
			return boolean(func(r *Record) bool { return r.Verified })
		}
	}
	switch f.Type {
	case FieldText, FieldEmail, FieldURL, FieldFile:
		// Files are never stored (uploads are refused), so a file field
		// holds "" whatever its maxSelect.
		return str(func(r *Record) string { s, _ := r.Fields[name].(string); return s })
	case FieldNumber:
		return num(func(r *Record) float64 { n, _ := r.Fields[name].(float64); return n })
	case FieldBool:
		return boolean(func(r *Record) bool { b, _ := r.Fields[name].(bool); return b })
	case FieldAutodate:
		// As Record.Public reports them: "updated" is the last change,
		// every other autodate field the creation.
		if name == "updated" {
			return str(func(r *Record) string { return Time{r.Updated}.String() })
		}
		return str(func(r *Record) string { return Time{r.Created}.String() })
	}
	return filterlang.Field[S]{}, false
}

// mfaRule is the compiled mfa.rule of one version of a collection. A rule
// without clock macros is compiled once; one with them (@now, @todayStart,
// @hour …) is compiled again at each use, since Compile fixes the macros'
// values: its parse tree is kept, so the work per sign-in is bounded by
// filterlang's limits (MaxComparisons comparisons).
type mfaRule struct {
	col   *Collection // the version compiled; collections are immutable once stored
	rule  string      // its mfa.rule, compared too in case a caller changed it
	expr  filterlang.Expr
	pred  filterlang.Predicate[mfaSubject] // nil when clocked
	err   error                            // why the rule does not compile
	clock bool                             // names a clock macro
}

// ruleCache holds the compiled mfa.rule of each auth collection, by id.
// An entry is dropped when its collection is saved or deleted, and is only
// used for the very *Collection it was compiled from, so a stale one is
// never applied. It holds at most one entry per collection.
type ruleCache struct {
	mu sync.Mutex
	m  map[string]*mfaRule
}

// get returns the compiled rule of c, compiling it on first use.
func (rc *ruleCache) get(c *Collection, now func() time.Time) *mfaRule {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if e, ok := rc.m[c.ID]; ok && e.col == c && e.rule == c.MFA.Rule {
		return e
	}
	e := newMFARule(c, now)
	if rc.m == nil {
		rc.m = map[string]*mfaRule{}
	}
	rc.m[c.ID] = e
	return e
}

// drop forgets the compiled rule of collection id.
func (rc *ruleCache) drop(id string) {
	rc.mu.Lock()
	delete(rc.m, id)
	rc.mu.Unlock()
}

// newMFARule parses and compiles c's mfa.rule, which is not "".
func newMFARule(c *Collection, now func() time.Time) *mfaRule {
	e := &mfaRule{col: c, rule: c.MFA.Rule}
	e.expr, e.err = filterlang.Parse(c.MFA.Rule)
	if e.err != nil {
		return e
	}
	e.clock = hasClockMacro(e.expr)
	pred, err := filterlang.Compile(e.expr, mfaResolver(c), filterlang.Options{Now: now})
	if err != nil {
		e.err = err
		return e
	}
	if !e.clock {
		e.pred = pred
	}
	return e
}

// match reports whether s satisfies the rule.
func (e *mfaRule) match(s mfaSubject, now func() time.Time) (bool, error) {
	if e.err != nil {
		return false, e.err
	}
	pred := e.pred
	if pred == nil {
		var err error
		if pred, err = filterlang.Compile(e.expr, mfaResolver(e.col), filterlang.Options{Now: now}); err != nil {
			return false, err
		}
	}
	return pred(s), nil
}

// hasClockMacro reports whether x names an identifier starting with "@"
// other than @request.context: a date macro, whose value depends on when
// the rule is compiled.
func hasClockMacro(x filterlang.Expr) bool {
	switch x := x.(type) {
	case *filterlang.Binary:
		return hasClockMacro(x.X) || hasClockMacro(x.Y)
	case *filterlang.Compare:
		for _, o := range []filterlang.Operand{x.Left, x.Right} {
			if id, ok := o.(filterlang.Ident); ok && strings.HasPrefix(id.Name, "@") && id.Name != contextField {
				return true
			}
		}
	}
	return false
}

// ErrMFARule reports an mfa.rule that cannot be evaluated: a collection
// stored by another version, whose rule no longer compiles against its
// fields. The sign-in fails (PocketBase answers a rule error with 400
// "Failed to authenticate.").
var ErrMFARule = errors.New("authn: mfa.rule cannot be evaluated")

// mfaRequired reports whether a sign-in of r into c by method (one of the
// login methods) needs a second factor: MFA is enabled and r satisfies
// mfa.rule, the empty rule being satisfied by every record. A rule that
// does not compile is an error wrapping ErrMFARule.
func (s *Store) mfaRequired(c *Collection, r *Record, method string) (bool, error) {
	if !c.IsAuth() || !c.MFA.Enabled {
		return false, nil
	}
	if c.MFA.Rule == "" {
		return true, nil
	}
	ok, err := s.rules.get(c, s.now).match(mfaSubject{r: r, method: method}, s.now)
	if err != nil {
		return false, fmt.Errorf("%w: collection %s: %v", ErrMFARule, c.Name, err)
	}
	return ok, nil
}

// checkMFARule returns the validation failure of c's mfa.rule, or nil when
// it is "" or compiles against c's fields.
func checkMFARule(c *Collection) *validation.Error {
	if c.MFA.Rule == "" {
		return nil
	}
	e := newMFARule(c, nil)
	if e.err == nil {
		return nil
	}
	if se, ok := errors.AsType[*filterlang.SyntaxError](e.err); ok {
		return validation.InvalidRule(fmt.Sprintf("offset %d: %s", se.Offset, se.Msg))
	}
	return validation.InvalidRule(e.err.Error())
}
