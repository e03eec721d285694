package authn

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"strongbox/authn/validation"
	"strongbox/filterlang"
)

// RuleKind names one of the API rules of an auth collection.
type RuleKind uint8

// The API rules, in the order PocketBase lists them.
const (
	RuleList RuleKind = iota
	RuleView
	RuleCreate
	RuleUpdate
	RuleDelete
	RuleAuth
	RuleManage
	numRules
)

// ruleKeys are the JSON keys of the rules, by kind.
var ruleKeys = [numRules]string{"listRule", "viewRule", "createRule", "updateRule", "deleteRule", "authRule", "manageRule"}

// rule returns c's rule of kind k: nil means superusers only, "" anyone.
func (c *Collection) rule(k RuleKind) *string {
	switch k {
	case RuleList:
		return c.ListRule
	case RuleView:
		return c.ViewRule
	case RuleCreate:
		return c.CreateRule
	case RuleUpdate:
		return c.UpdateRule
	case RuleDelete:
		return c.DeleteRule
	}
	if c.AuthOptions == nil {
		return nil
	}
	if k == RuleAuth {
		return c.AuthRule
	}
	return c.ManageRule
}

// mfaRule returns a copy of c's mfa.rule ("" for everyone), or nil when c
// is not an auth collection. It is a copy so that a cached rule set still
// tells a rule changed in place from the one it was compiled from.
func (c *Collection) mfaRule() *string {
	if c.AuthOptions == nil {
		return nil
	}
	r := c.MFA.Rule
	return &r
}

// The values of @request.context, as PocketBase sets them.
const (
	ContextDefault       = "default"
	ContextOAuth2        = "oauth2"
	ContextOTP           = "otp"
	ContextPassword      = "password"
	ContextRealtime      = "realtime"
	ContextProtectedFile = "protectedFile"
)

// Request is what an API rule reads of the request it is checked for:
// the @request.* operands. A nil *Request is a guest's request with
// nothing in it, in the default context. A Request is used by one
// goroutine at a time: it caches the values it computes for a rule.
type Request struct {
	Method  string            // @request.method
	Context string            // @request.context; "" is ContextDefault
	Query   map[string]string // @request.query.*: the first value of each parameter
	Headers map[string]string // @request.headers.*: the first value of each header, named as PocketBase names it (x_api_key)
	Body    map[string]any    // @request.body.*: the submitted fields, with JSON types
	// Auth is the signed-in record (@request.auth.*) and AuthCollection
	// its collection; nil for guests.
	Auth           *Record
	AuthCollection *Collection
	// Now is the time of the date macros (@now, @todayStart …); the zero
	// time is filled in from the store's clock when a rule first reads it.
	Now time.Time

	macros   map[string]filterlang.Value
	authVals map[string]filterlang.Value
}

// macro returns the value of a date macro at q's time, computed once.
func (q *Request) macro(name string) filterlang.Value {
	if v, ok := q.macros[name]; ok {
		return v
	}
	v, _ := filterlang.MacroValue(name, q.Now)
	if q.macros == nil {
		q.macros = map[string]filterlang.Value{}
	}
	q.macros[name] = v
	return v
}

// authValue returns the value of field name (lowercased with lower) of
// the signed-in record, computed once: NULL for guests and for a field its
// collection lacks, as PocketBase resolves a missing @request.* field. A
// hidden field is read like any other, as PocketBase's rules read it
// (authField never lets password or tokenKey this far).
func (q *Request) authValue(name string, lower bool) filterlang.Value {
	key := name
	if lower {
		key += ":lower"
	}
	if v, ok := q.authVals[key]; ok {
		return v
	}
	var v filterlang.Value
	if q.Auth != nil && q.AuthCollection != nil {
		if f := q.AuthCollection.Field(name); f != nil {
			v = recordValue(f, q.Auth)
			if lower && v.Kind != filterlang.KindNull {
				v = filterlang.Value{Kind: filterlang.KindString, Str: strings.ToLower(valueText(v))}
			}
		}
	}
	if q.authVals == nil {
		q.authVals = map[string]filterlang.Value{}
	}
	q.authVals[key] = v
	return v
}

// ruleSubject is what a compiled rule is evaluated against: a record of
// the rule's collection and the request.
type ruleSubject struct {
	rec *Record
	req *Request
}

// subjectRecord is the record of a subject.
func subjectRecord(s ruleSubject) *Record { return s.rec }

// apiRule is one compiled rule: pred is nil for null and "".
type apiRule struct {
	src  *string
	pred filterlang.Predicate[ruleSubject]
	err  error // why a stored rule does not compile
}

// apiRuleSet holds the compiled rules of one version of a collection:
// its API rules and, for an auth collection, its mfa.rule, which
// PocketBase evaluates like them, against the record signing in and the
// sign-in's request. gen is the generation of the auth field names
// (apiRuleCache.names) they were compiled against.
type apiRuleSet struct {
	col   *Collection
	gen   uint64
	rules [numRules]apiRule
	mfa   apiRule
}

// authFields is a set of field names of auth collections: the names
// @request.auth.NAME may take besides the plain ones (authPlain). The
// signed-in record may be of any auth collection, so a name is known if
// one of them has it; a rule naming one that none has can only be a
// mistake, and is refused.
type authFields map[string]bool

// compileRules compiles every rule of c against the auth field names
// known.
func compileRules(c *Collection, known authFields) *apiRuleSet {
	set := &apiRuleSet{col: c}
	for k := range numRules {
		set.rules[k] = newAPIRule(c, c.rule(k), known)
	}
	set.mfa = newAPIRule(c, c.mfaRule(), known)
	return set
}

// newAPIRule compiles rule src of c.
func newAPIRule(c *Collection, src *string, known authFields) apiRule {
	r := apiRule{src: src}
	if src != nil && *src != "" {
		r.pred, r.err = compileRule(c, *src, known)
	}
	return r
}

// ruleText is a rule's text, null counting as "".
func ruleText(r *string) string {
	if r == nil {
		return ""
	}
	return *r
}

// current reports whether set was compiled from c as it stands, against
// the auth field names of generation gen.
func (set *apiRuleSet) current(c *Collection, gen uint64) bool {
	if set.col != c || set.gen != gen {
		return false
	}
	for k := range numRules {
		if !sameRule(set.rules[k].src, c.rule(k)) {
			return false
		}
	}
	return sameRule(set.mfa.src, c.mfaRule())
}

// apiRuleCache holds the compiled API rules of each auth collection, by
// id: compiled when a collection is stored (on save and at start) and
// used only for the very *Collection they were compiled from, and only
// while the auth collections' field names are those they were compiled
// against. When those change (a field or an auth collection is removed),
// every set is compiled again on its next use, so that a stored rule
// naming an @request.auth field that no auth collection has any more
// stops compiling and lets nobody through (ErrRule) instead of reading
// it as NULL, which "@request.auth.banned != true" would pass.
type apiRuleCache struct {
	mu    sync.Mutex
	m     map[string]*apiRuleSet
	names authFields // of the store's auth collections, as last set
	gen   uint64     // bumped whenever names changes
}

// setNames records the field names of the store's auth collections.
func (rc *apiRuleCache) setNames(names authFields) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !maps.Equal(rc.names, names) {
		rc.names = names
		rc.gen++
	}
}

// authFieldNames returns the field names of the store's auth collections
// (_superusers included) but the one of id except (a collection being
// saved, whose new fields compileRule adds). The caller holds s.mu.
func (s *Store) authFieldNames(except string) authFields {
	names := authFields{}
	for id, c := range s.cols {
		if id == except || !c.IsAuth() {
			continue
		}
		for _, f := range c.Fields {
			names[f.Name] = true
		}
	}
	return names
}

// get returns the compiled rules of c, compiling them if c is not the
// version stored or the auth field names changed since.
func (rc *apiRuleCache) get(c *Collection) *apiRuleSet {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if set, ok := rc.m[c.ID]; ok && set.current(c, rc.gen) {
		return set
	}
	set := compileRules(c, rc.names)
	set.gen = rc.gen
	if rc.m == nil {
		rc.m = map[string]*apiRuleSet{}
	}
	rc.m[c.ID] = set
	return set
}

// drop forgets the rules of collection id.
func (rc *apiRuleCache) drop(id string) {
	rc.mu.Lock()
	delete(rc.m, id)
	rc.mu.Unlock()
}

// ErrRule reports a stored rule that cannot be evaluated (a collection
// stored by another version, or a rule naming an @request.auth field that
// no auth collection has any more): it lets nobody but superusers
// through.
var ErrRule = errors.New("authn: API rule cannot be evaluated")

// bindRequest returns req with its clock set, or an empty guest request.
func (s *Store) bindRequest(req *Request) *Request {
	if req == nil {
		req = &Request{}
	}
	if req.Now.IsZero() {
		req.Now = s.now().UTC()
	}
	return req
}

// RuleAllows reports whether rule kind of c lets req act on rec (for
// create, the record as submitted): a null rule lets nobody (superusers
// are the caller's to let through, as they bypass every rule), "" anyone,
// a filter those that satisfy it. The manageRule is never satisfied by a
// guest. A stored rule that no longer compiles lets nobody.
func (s *Store) RuleAllows(c *Collection, kind RuleKind, rec *Record, req *Request) bool {
	r := &s.apiRules.get(c).rules[kind]
	switch {
	case r.src == nil || r.err != nil:
		return false
	case kind == RuleManage && (req == nil || req.Auth == nil):
		return false
	case *r.src == "":
		return true
	}
	return r.pred(ruleSubject{rec: rec, req: s.bindRequest(req)})
}

// FilterByRule returns the records of recs that rule kind of c lets req
// see, in order, in a new slice (see RuleAllows).
func (s *Store) FilterByRule(c *Collection, kind RuleKind, recs []*Record, req *Request) []*Record {
	r := &s.apiRules.get(c).rules[kind]
	switch {
	case r.src == nil || r.err != nil:
		return []*Record{}
	case *r.src == "":
		return append([]*Record(nil), recs...)
	}
	req = s.bindRequest(req)
	out := make([]*Record, 0, len(recs))
	for _, rec := range recs {
		if r.pred(ruleSubject{rec: rec, req: req}) {
			out = append(out, rec)
		}
	}
	return out
}

// compileRule parses and compiles rule src of c, with known the field
// names of the other auth collections (c's own count too). Its errors are
// *filterlang.SyntaxError values, with the refusals of what strongbox
// does not evaluate (joins) in their words.
func compileRule(c *Collection, src string, known authFields) (filterlang.Predicate[ruleSubject], error) {
	e, err := filterlang.Parse(src)
	if err != nil {
		return nil, err
	}
	var why string
	authKnown := func(name string) bool { return known[name] || (c.IsAuth() && c.Field(name) != nil) }
	pred, err := filterlang.Compile(e, ruleResolver(c, authKnown, &why), filterlang.Options{ParamMacros: true})
	if se, ok := errors.AsType[*filterlang.SyntaxError](err); ok && why != "" {
		return nil, &filterlang.SyntaxError{Offset: se.Offset, Msg: why}
	}
	return pred, err
}

// checkRule judges an API rule at save: null and "" are always valid; a
// filter must compile against c, with known the field names of the
// store's other auth collections (validation_invalid_rule otherwise, in
// PocketBase's words, saying why).
func checkRule(c *Collection, r *string, known authFields) *validation.Error {
	if r == nil || *r == "" {
		return nil
	}
	if _, err := compileRule(c, *r, known); err != nil {
		if se, ok := errors.AsType[*filterlang.SyntaxError](err); ok {
			return validation.InvalidRule(fmt.Sprintf("offset %d: %s", se.Offset, se.Msg))
		}
		return validation.InvalidRule(err.Error())
	}
	return nil
}

// errJoins is why a rule naming another collection or a related record
// is refused.
const errJoins = "joins are not supported by this server (%q): a rule may name the record's own fields and @request.* values"

// ruleModifiers are the modifiers PocketBase's rules accept.
var ruleModifiers = map[string]bool{"isset": true, "length": true, "lower": true, "each": true}

// ruleResolver resolves the identifiers of a rule of c, as PocketBase's
// record field resolver does, with authKnown telling the field names
// some auth collection has; a name it refuses for a reason other than
// being unknown sets *why.
func ruleResolver(c *Collection, authKnown func(string) bool, why *string) filterlang.Resolver[ruleSubject] {
	return func(name string) (filterlang.Field[ruleSubject], bool) {
		if _, ok := filterlang.MacroValue(name, time.Time{}); ok {
			return param(func(s ruleSubject) filterlang.Value { return s.req.macro(name) }), true
		}
		refuse := func(format string, args ...any) (filterlang.Field[ruleSubject], bool) {
			*why = fmt.Sprintf(format, args...)
			return filterlang.Field[ruleSubject]{}, false
		}
		path, mod, _ := strings.Cut(name, ":")
		if mod != "" && !ruleModifiers[mod] {
			return refuse("unknown modifier %q in %q", mod, name)
		}
		if mod == "each" {
			return refuse("the :each modifier is not supported (%q): no field here holds several values", name)
		}
		switch {
		case strings.HasPrefix(name, "@collection."):
			return refuse(errJoins, name)
		case name == "@request.context":
			return param(func(s ruleSubject) filterlang.Value {
				return strValue(cmp.Or(s.req.Context, ContextDefault))
			}), true
		case name == "@request.method":
			return param(func(s ruleSubject) filterlang.Value { return strValue(s.req.Method) }), true
		case strings.HasPrefix(path, "@request.headers."):
			return staticField(path, mod, func(q *Request, key string) (any, bool) { v, ok := q.Headers[key]; return v, ok }), true
		case strings.HasPrefix(path, "@request.query."):
			return staticField(path, mod, func(q *Request, key string) (any, bool) { v, ok := q.Query[key]; return v, ok }), true
		case strings.HasPrefix(path, "@request.body."):
			return bodyField(c, path, mod, refuse)
		case strings.HasPrefix(path, "@request.auth."):
			return authField(path, mod, authKnown, refuse)
		case strings.HasPrefix(name, "@"):
			return filterlang.Field[ruleSubject]{}, false
		}
		return ownField(c, path, mod, refuse)
	}
}

// refusal reports a refused name with a reason.
type refusal func(format string, args ...any) (filterlang.Field[ruleSubject], bool)

// param is a Param field: a value of the request, bound per evaluation.
func param(get func(ruleSubject) filterlang.Value) filterlang.Field[ruleSubject] {
	return filterlang.Field[ruleSubject]{Type: filterlang.TypeDynamic, Param: true, Dyn: get}
}

func strValue(s string) filterlang.Value {
	return filterlang.Value{Kind: filterlang.KindString, Str: s}
}

func numValue(f float64) filterlang.Value {
	return filterlang.Value{Kind: filterlang.KindNumber, Num: f}
}

func boolValue(b bool) filterlang.Value {
	if b {
		return numValue(1)
	}
	return numValue(0)
}

// staticField resolves @request.headers.*, @request.query.* and the body
// keys that are no field of the collection: a value of the request bound
// as a parameter (NULL when missing), :isset whether it is there, :lower
// its text lowercased; :length is ignored, as PocketBase ignores it there.
// A deeper path reads into a JSON object of the body.
func staticField(path, mod string, get func(q *Request, key string) (any, bool)) filterlang.Field[ruleSubject] {
	keys := strings.Split(path, ".")[2:]
	lookup := func(q *Request) (any, bool) {
		v, ok := get(q, keys[0])
		for _, k := range keys[1:] {
			m, isMap := v.(map[string]any)
			if !ok || !isMap {
				return nil, false
			}
			v, ok = m[k]
		}
		return v, ok
	}
	switch mod {
	case "isset":
		return param(func(s ruleSubject) filterlang.Value { _, ok := lookup(s.req); return boolValue(ok) })
	case "lower":
		return param(func(s ruleSubject) filterlang.Value {
			v, _ := lookup(s.req)
			if rv := ruleValue(v); rv.Kind != filterlang.KindNull {
				return strValue(strings.ToLower(valueText(rv)))
			}
			return filterlang.Value{}
		})
	}
	return param(func(s ruleSubject) filterlang.Value { v, _ := lookup(s.req); return ruleValue(v) })
}

// bodyField resolves @request.body.NAME: a field of the collection is
// read as PocketBase reads a submitted field (a number field's numeric
// text as a number; :lower on the value's text, "" when missing;
// :length the number of values of a file field); any other key as a
// static value.
func bodyField(c *Collection, path, mod string, refuse refusal) (filterlang.Field[ruleSubject], bool) {
	name := strings.TrimPrefix(path, "@request.body.")
	first, _, nested := strings.Cut(name, ".")
	f := c.Field(first)
	body := func(q *Request, key string) (any, bool) { v, ok := q.Body[key]; return v, ok }
	if f == nil {
		return staticField(path, mod, body), true
	}
	if nested {
		return refuse(errJoins, path)
	}
	switch mod {
	case "length":
		if f.Type != FieldFile {
			return refuse("field %q doesn't support multivalue operations", name)
		}
		return param(func(s ruleSubject) filterlang.Value {
			switch v := s.req.Body[name].(type) {
			case nil:
				return numValue(0)
			case []any:
				return numValue(float64(len(v)))
			}
			return numValue(1)
		}), true
	case "lower":
		return param(func(s ruleSubject) filterlang.Value {
			v := ruleValue(s.req.Body[name])
			if v.Kind == filterlang.KindNull {
				return strValue("")
			}
			if b, ok := s.req.Body[name].(bool); ok {
				return strValue(strconv.FormatBool(b))
			}
			return strValue(strings.ToLower(valueText(v)))
		}), true
	case "isset":
		return staticField(path, mod, body), true
	}
	return param(func(s ruleSubject) filterlang.Value {
		v := s.req.Body[name]
		if str, ok := v.(string); ok && f.Type == FieldNumber {
			if n, err := strconv.ParseFloat(str, 64); err == nil {
				return numValue(n)
			}
		}
		return ruleValue(v)
	}), true
}

// authPlain are the @request.auth fields PocketBase binds as values of
// the signed-in record; its other fields it reads as columns of that
// record's row.
var authPlain = map[string]func(q *Request) filterlang.Value{
	"id":              func(q *Request) filterlang.Value { return strValue(q.Auth.ID) },
	"collectionId":    func(q *Request) filterlang.Value { return strValue(q.AuthCollection.ID) },
	"collectionName":  func(q *Request) filterlang.Value { return strValue(q.AuthCollection.Name) },
	"email":           func(q *Request) filterlang.Value { return strValue(q.Auth.Email) },
	"emailVisibility": func(q *Request) filterlang.Value { return boolValue(q.Auth.EmailVisibility) },
	"verified":        func(q *Request) filterlang.Value { return boolValue(q.Auth.Verified) },
}

// authField resolves @request.auth.NAME: NULL for guests (whatever the
// modifier, as in PocketBase); the plain fields as values; any other
// field as a column of the signed-in record's row, hidden ones too (as
// PocketBase's rules read them: a superuser wrote the rule), NULL when
// its collection has no such field. password and tokenKey are never
// readable, and a name that is no field of any auth collection
// (authKnown) is refused, where PocketBase reads it as NULL.
func authField(path, mod string, authKnown func(string) bool, refuse refusal) (filterlang.Field[ruleSubject], bool) {
	name := strings.TrimPrefix(path, "@request.auth.")
	if strings.Contains(name, ".") {
		return refuse(errJoins, path)
	}
	if name == "password" || name == "tokenKey" {
		return refuse("field %q is hidden and cannot be used in a rule", path)
	}
	if _, plain := authPlain[name]; !plain && !authKnown(name) {
		return refuse("unknown field %q: no auth collection has a field %q", path, name)
	}
	guest := func(q *Request) bool { return q.Auth == nil || q.AuthCollection == nil }
	if get, ok := authPlain[name]; ok && mod == "" {
		return param(func(s ruleSubject) filterlang.Value {
			if guest(s.req) {
				return filterlang.Value{}
			}
			return get(s.req)
		}), true
	}
	lower := mod == "lower"
	return filterlang.Field[ruleSubject]{Type: filterlang.TypeDynamic, Dyn: func(s ruleSubject) filterlang.Value {
		return s.req.authValue(name, lower)
	}}, true
}

// ownField resolves a field of the record: a column (see recordField),
// hidden ones too, as PocketBase's rules read them (only password and
// tokenKey are refused); :lower its text lowercased, with no type
// affinity; :length of a file field its number of files; :isset is
// ignored, as PocketBase ignores it on a record's own field.
func ownField(c *Collection, path, mod string, refuse refusal) (filterlang.Field[ruleSubject], bool) {
	first, _, nested := strings.Cut(path, ".")
	f := c.Field(first)
	switch {
	case f == nil:
		return filterlang.Field[ruleSubject]{}, false
	case nested:
		return refuse(errJoins, path)
	case f.Name == "password" || f.Name == "tokenKey":
		return refuse("field %q is hidden and cannot be used in a rule", path)
	}
	col, ok := recordField(f, subjectRecord)
	if !ok {
		return filterlang.Field[ruleSubject]{}, false
	}
	switch {
	case mod == "lower":
		return filterlang.Field[ruleSubject]{Type: filterlang.TypeDynamic, Dyn: func(s ruleSubject) filterlang.Value {
			return strValue(strings.ToLower(valueText(fieldValue(col, s))))
		}}, true
	case mod == "length" && f.Type == FieldFile:
		return filterlang.Field[ruleSubject]{Type: filterlang.TypeNumber, Num: func(s ruleSubject) (float64, bool) {
			if v, _ := col.Str(s); v != "" {
				return 1, true
			}
			return 0, true
		}}, true
	}
	return col, true
}

// recordField returns the getter of field f (not password or tokenKey) of
// the record rec returns for a subject S, as a column. An unset custom field
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

// fieldValue reads a column as a Value.
func fieldValue[S any](f filterlang.Field[S], s S) filterlang.Value {
	switch f.Type {
	case filterlang.TypeString:
		if v, ok := f.Str(s); ok {
			return strValue(v)
		}
	case filterlang.TypeNumber:
		if v, ok := f.Num(s); ok {
			return numValue(v)
		}
	default:
		return f.Dyn(s)
	}
	return filterlang.Value{}
}

// recordValue returns field f of record r as a rule reads it.
func recordValue(f *Field, r *Record) filterlang.Value {
	col, ok := recordField(f, func(r *Record) *Record { return r })
	if !ok {
		return filterlang.Value{}
	}
	return fieldValue(col, r)
}

// ruleValue converts a submitted value as PocketBase binds it: NULL for
// nil, booleans as 1 and 0, numbers and strings as they are, anything
// else as its JSON text.
func ruleValue(v any) filterlang.Value {
	switch v := v.(type) {
	case nil:
		return filterlang.Value{}
	case string:
		return strValue(v)
	case bool:
		return boolValue(v)
	case float64:
		return numValue(v)
	case int:
		return numValue(float64(v))
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return numValue(f)
		}
		return strValue(v.String())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return filterlang.Value{}
	}
	return strValue(string(b))
}

// valueText is a scalar Value as SQLite's text of it.
func valueText(v filterlang.Value) string {
	if v.Kind == filterlang.KindNumber {
		return strconv.FormatFloat(v.Num, 'f', -1, 64)
	}
	return v.Str
}

// DraftRecord returns the record a create of values into c would store,
// as its createRule sees it: PocketBase checks the rule against the
// submitted record before validating it, with verified unset. A value
// of the wrong type reads as its field's zero value; created and updated
// are the clock's time.
func (s *Store) DraftRecord(c *Collection, values map[string]any) *Record {
	now := s.now().UTC()
	r := &Record{CollectionID: c.ID, Created: now, Updated: now, Fields: map[string]any{}}
	r.ID, _ = values["id"].(string)
	r.Email, _ = values["email"].(string)
	r.EmailVisibility, _ = toBool(values["emailVisibility"])
	s.setCustomFields(c, r, values, true, validation.Errors{})
	return r
}
