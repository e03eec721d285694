package authn

import (
	"strings"
	"testing"
	"time"

	"strongbox/authn/validation"
)

// ruleTestCollection is the users collection with a number field "age",
// a bool field "admin" and a hidden text field "secret".
func ruleTestCollection(t *testing.T) *Collection {
	t.Helper()
	c, err := newUsersCollection(NewRandom(nil), time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	c.Fields = append(c.Fields,
		Field{Name: "age", Type: FieldNumber},
		Field{Name: "admin", Type: FieldBool},
		Field{Name: "secret", Type: FieldText, Hidden: true},
	)
	return c
}

// TestCheckRule: every filter over the record's own fields and the
// request compiles; what names an unknown or hidden field, a join or an
// unknown modifier is validation_invalid_rule saying so.
func TestCheckRule(t *testing.T) {
	c := ruleTestCollection(t)
	str := func(s string) *string { return &s }
	for _, tt := range []struct {
		rule *string
		code string // "" = accepted
		msg  string // part of the message
	}{
		{nil, "", ""},
		{str(""), "", ""},
		{str(OwnerRule), "", ""},
		{str("verified = true"), "", ""},
		{str("name ~ 'a' && age >= 18 || admin = true"), "", ""},
		{str("name:lower = 'bob'"), "", ""},
		{str("avatar:length = 0"), "", ""},
		{str("@request.auth.id != '' && @request.auth.collectionName = 'users'"), "", ""},
		{str("@request.auth.verified = true && @request.auth.name:lower ~ 'x'"), "", ""},
		{str("@request.body.email:isset = false && @request.body.age > 3"), "", ""},
		{str("@request.body.name:lower = 'x' && @request.body.avatar:length = 0"), "", ""},
		{str("@request.query.token = 'x' && @request.headers.x_token:isset = true"), "", ""},
		{str("@request.method = 'GET' && @request.context != 'oauth2'"), "", ""},
		{str("created > @todayStart && @hour < 12"), "", ""},
		{str("@request.body.tags ?= 'a'"), "", ""},
		{str("bad ==="), validation.CodeInvalidRule, "offset"},
		{str("(a = 1"), validation.CodeInvalidRule, "offset"},
		{str("nofield = 1"), validation.CodeInvalidRule, `unknown field "nofield"`},
		{str("password = ''"), validation.CodeInvalidRule, `"password" is hidden`},
		{str("tokenKey = ''"), validation.CodeInvalidRule, `"tokenKey" is hidden`},
		{str("secret = ''"), validation.CodeInvalidRule, `"secret" is hidden`},
		{str("@request.auth.tokenKey = ''"), validation.CodeInvalidRule, "hidden"},
		{str("@collection.users.id = id"), validation.CodeInvalidRule, "joins are not supported"},
		{str("name.id = 'x'"), validation.CodeInvalidRule, "joins are not supported"},
		{str("@request.auth.name.id = 'x'"), validation.CodeInvalidRule, "joins are not supported"},
		{str("name:upper = 'x'"), validation.CodeInvalidRule, "unknown modifier"},
		{str("name:each = 'x'"), validation.CodeInvalidRule, ":each"},
		{str("@request.body.name:length = 1"), validation.CodeInvalidRule, "multivalue"},
		{str("@request.data.x = 1"), validation.CodeInvalidRule, "unknown field"},
	} {
		name := "null"
		if tt.rule != nil {
			name = *tt.rule
		}
		e := checkRule(c, tt.rule)
		switch {
		case tt.code == "" && e != nil:
			t.Errorf("checkRule(%s) = %v, want accepted", name, e)
		case tt.code != "" && (e == nil || e.Code != tt.code || !strings.Contains(e.Message, tt.msg)):
			t.Errorf("checkRule(%s) = %v, want %s mentioning %q", name, e, tt.code, tt.msg)
		}
	}
}

// TestRuleEval evaluates rules against records and requests, one case per
// operand kind and modifier.
func TestRuleEval(t *testing.T) {
	c := ruleTestCollection(t)
	now := time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC)
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := &Record{ID: "r1", CollectionID: c.ID, Email: "Bob@Example.com", Verified: true, Created: created, Updated: created,
		Fields: map[string]any{"name": "Bob", "age": float64(30), "admin": false, "secret": "s"}}
	other := &Record{ID: "r2", CollectionID: c.ID, Email: "ann@example.com", Created: created, Updated: created,
		Fields: map[string]any{"name": "Ann", "age": float64(20), "admin": true}}
	signedIn := func(r *Record) *Request {
		return &Request{Auth: r, AuthCollection: c, Method: "GET", Now: now}
	}
	guest := &Request{Method: "POST", Now: now}
	withBody := &Request{Method: "POST", Now: now, Body: map[string]any{"name": "ANN", "age": "42", "tags": []any{"a", "b"}, "verified": true}}
	withHeaders := &Request{Method: "GET", Now: now, Context: ContextPassword,
		Headers: map[string]string{"x_token": "t0k"}, Query: map[string]string{"page": "2"}}
	for _, tt := range []struct {
		rule string
		rec  *Record
		req  *Request
		want bool
	}{
		{"id = @request.auth.id", rec, signedIn(rec), true},
		{"id = @request.auth.id", rec, signedIn(other), false},
		{"id = @request.auth.id", rec, guest, false},
		{"id != @request.auth.id", rec, guest, true},
		{"@request.auth.id = ''", rec, guest, true},
		{"@request.auth.id != ''", rec, signedIn(other), true},
		{"@request.auth.id:isset = false", rec, guest, false}, // NULL for guests, as in PocketBase
		{"@request.auth.collectionName = 'users' && @request.auth.verified = false", rec, signedIn(other), true},
		{"@request.auth.admin = true", rec, signedIn(other), true},
		{"@request.auth.admin = true", rec, signedIn(rec), false},
		{"@request.auth.name:lower = 'ann'", rec, signedIn(other), true},
		{"@request.auth.secret = 's'", rec, signedIn(rec), false}, // hidden: NULL
		{"@request.auth.email = 'ann@example.com'", rec, signedIn(other), true},
		{"verified = true", rec, guest, true},
		{"verified = true", other, guest, false},
		{"age > 25", rec, guest, true},
		{"age = '30'", rec, guest, true}, // numeric affinity
		{"name:lower = 'bob'", rec, guest, true},
		{"name = 'bob'", rec, guest, false},
		{"name ~ 'bo'", rec, guest, true},
		{"email ~ 'example.com'", rec, guest, true},
		{"avatar:length = 0", rec, guest, true},
		{"created < @now && created >= @todayStart && @hour = 10", rec, guest, true},
		{"created > @now", rec, guest, false},
		{"@request.method = 'POST'", rec, guest, true},
		{"@request.context = 'default'", rec, guest, true},
		{"@request.context = 'password'", rec, withHeaders, true},
		{"@request.headers.x_token = 't0k' && @request.query.page = 2", rec, withHeaders, false}, // '2' is text, 2 a number
		{"@request.headers.x_token = 't0k' && @request.query.page = '2'", rec, withHeaders, true},
		{"@request.headers.x_token:isset = true && @request.headers.other:isset = false", rec, withHeaders, true},
		{"@request.headers.other = null", rec, withHeaders, true},
		{"@request.body.age = 42", rec, withBody, true}, // a number field's text as a number
		{"@request.body.name:lower = 'ann'", rec, withBody, true},
		{"@request.body.name = name", other, withBody, false},
		{"@request.body.name:lower = name:lower", other, withBody, true},
		{"@request.body.verified:isset = true && @request.body.email:isset = false", rec, withBody, true},
		{"@request.body.verified = true", rec, withBody, true},
		{"@request.body.tags = '[\"a\",\"b\"]'", rec, withBody, true},
		{"@request.body.email:lower = ''", rec, withBody, true}, // a missing field's text is ""
		{"@request.body.avatar:length = 0", rec, withBody, true},
		{"name ?= 'Bob'", rec, guest, true},
		{"@request.auth.id = ''", rec, nil, true},
	} {
		s := &Store{now: func() time.Time { return now }}
		c.ListRule = &tt.rule
		if got := s.RuleAllows(c, RuleList, tt.rec, tt.req); got != tt.want {
			t.Errorf("%s for %s: %v, want %v", tt.rule, tt.rec.ID, got, tt.want)
		}
	}
}

// TestRuleKinds: null lets nobody, "" everybody, the manageRule never a
// guest, and a stored rule that does not compile nobody.
func TestRuleKinds(t *testing.T) {
	str := func(s string) *string { return &s }
	rec := &Record{ID: "r1"}
	user := &Request{Auth: rec}
	for _, tt := range []struct {
		kind RuleKind
		rule *string
		req  *Request
		want bool
	}{
		{RuleView, nil, user, false},
		{RuleView, str(""), nil, true},
		{RuleManage, str("id != ''"), nil, false},
		{RuleManage, str("id != ''"), user, true},
		{RuleAuth, str("nofield = 1"), user, false},
		{RuleDelete, str("id = 'r1'"), nil, true},
	} {
		c := ruleTestCollection(t)
		switch tt.kind {
		case RuleView:
			c.ViewRule = tt.rule
		case RuleManage:
			c.ManageRule = tt.rule
		case RuleAuth:
			c.AuthRule = tt.rule
		case RuleDelete:
			c.DeleteRule = tt.rule
		}
		s := &Store{now: time.Now}
		if got := s.RuleAllows(c, tt.kind, rec, tt.req); got != tt.want {
			t.Errorf("%s %v: %v, want %v", ruleKeys[tt.kind], tt.rule, got, tt.want)
		}
		got := s.FilterByRule(c, tt.kind, []*Record{rec}, tt.req)
		if tt.kind != RuleManage && (len(got) == 1) != tt.want {
			t.Errorf("FilterByRule %s %v: %d records, want %v", ruleKeys[tt.kind], tt.rule, len(got), tt.want)
		}
	}
}

// FuzzRule compiles arbitrary rules against a users collection: a rule
// either compiles or is refused with a validation_invalid_rule, never a
// panic, and a compiled rule evaluates against records and requests of
// every kind without panicking.
func FuzzRule(f *testing.F) {
	for _, seed := range []string{
		OwnerRule, "verified = true", "name:lower ~ 'a' || age > 3", "@request.body.tags ?= 'x'",
		"@request.headers.x_token:isset = true && @request.query.a.b = 1", "@collection.users.id = id",
		"created > @todayStart && @hour != 3", "@request.auth.name:lower = name:lower", "avatar:length = 0",
		"@request.body.name:length = 1", "x:each = 1", "@request.context ?!~ @request.method",
	} {
		f.Add(seed)
	}
	c := &Collection{}
	f.Fuzz(func(t *testing.T, rule string) {
		if c.ID == "" {
			c = ruleTestCollection(t)
		}
		e := checkRule(c, &rule)
		if e != nil {
			if e.Code != validation.CodeInvalidRule {
				t.Fatalf("checkRule(%q) = %v", rule, e)
			}
			return
		}
		n := *c
		n.ListRule = &rule
		s := &Store{now: time.Now}
		rec := &Record{ID: "r1", Fields: map[string]any{"name": "x", "age": float64(3)}}
		for _, req := range []*Request{nil, {Auth: rec, AuthCollection: c, Method: "GET",
			Body:  map[string]any{"name": []any{"a", 1.0}, "tags": map[string]any{"a": nil}, "age": "4"},
			Query: map[string]string{"a": "1"}, Headers: map[string]string{"x_token": ""}}} {
			s.RuleAllows(&n, RuleList, rec, req)
		}
	})
}
