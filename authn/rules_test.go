package authn

import (
	"errors"
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

// TestCheckRule: every filter over the record's own fields (hidden ones
// too) and the request compiles; what names an unknown field, password or
// tokenKey, an @request.auth field no auth collection has, a join or an
// unknown modifier is validation_invalid_rule saying so.
func TestCheckRule(t *testing.T) {
	c := ruleTestCollection(t)
	str := func(s string) *string { return &s }
	others := authFields{"level": true} // a field of another auth collection
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
		{str("secret = ''"), "", ""}, // hidden fields may be read by a rule, as in PocketBase
		{str("@request.auth.secret = 's' && @request.auth.secret:lower != 'x'"), "", ""},
		{str("@request.auth.level > 3"), "", ""},
		{str("@request.auth.emailVisibility = true && @request.auth.created > @yesterday"), "", ""},
		{str("@request.auth.tokenKey = ''"), validation.CodeInvalidRule, "hidden"},
		{str("@request.auth.password != ''"), validation.CodeInvalidRule, "hidden"},
		{str("id != '' && @request.auth.nosuch = 1"), validation.CodeInvalidRule,
			`offset 12: unknown field "@request.auth.nosuch": no auth collection has a field "nosuch"`},
		{str("@request.auth.nosuch:lower = 'x'"), validation.CodeInvalidRule, "no auth collection has a field"},
		{str("@request.auth.nosuch:isset = true"), validation.CodeInvalidRule, "no auth collection has a field"},
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
		e := checkRule(c, tt.rule, others)
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
		{"@request.auth.secret = 's'", rec, signedIn(rec), true}, // hidden fields are read, as in PocketBase
		{"@request.auth.secret != 's'", rec, signedIn(rec), false},
		{"@request.auth.secret = 's'", rec, signedIn(other), false},
		{"@request.auth.secret != 's'", rec, guest, true}, // NULL for guests, which != passes (PocketBase: NULL IS NOT)
		{"secret = 's'", rec, guest, true},
		{"secret = 's'", other, guest, false},
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
		e := checkRule(c, &rule, nil)
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

// TestAuthFieldRules: a rule may name @request.auth.NAME only if some
// auth collection of the store has a field NAME (validation_invalid_rule
// at save otherwise); a hidden field is read (a banned member fails
// "@request.auth.banned != true"); and a stored rule whose field has
// since gone from every auth collection lets nobody through, after a
// restart too, until the field is back.
func TestAuthFieldRules(t *testing.T) {
	s, clk, path := newTestStore(t)
	const rule = `{"name":"staff","type":"auth","listRule":"@request.auth.banned != true"}`
	wantRefused := func(err error, key, msg string) {
		t.Helper()
		ce, _ := errors.AsType[validation.Errors](err)
		e, _ := ce[key].(*validation.Error)
		if e == nil || e.Code != validation.CodeInvalidRule || !strings.Contains(e.Message, msg) {
			t.Errorf("save: %v, want %s %s mentioning %q", err, key, validation.CodeInvalidRule, msg)
		}
	}
	_, err := s.CreateCollection(input(t, rule))
	wantRefused(err, "listRule", `unknown field "@request.auth.banned": no auth collection has a field "banned"`)

	// The bodies that give users its fields as they are and a hidden bool
	// banned, or without it.
	fields := func(c *Collection, banned bool) CollectionInput {
		var fs []any
		for _, f := range c.Fields {
			if f.Name != "banned" {
				fs = append(fs, f)
			}
		}
		if banned {
			fs = append(fs, map[string]any{"name": "banned", "type": FieldBool, "hidden": true})
		}
		return CollectionInput{Values: map[string]any{"fields": fs}}
	}
	withBanned := func(s *Store) CollectionInput { return fields(mustCollection(t, s, UsersName), true) }
	without := func(s *Store) CollectionInput { return fields(mustCollection(t, s, UsersName), false) }
	if _, err := s.UpdateCollection(mustCollection(t, s, UsersName), withBanned(s)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateCollection(input(t, rule)); err != nil {
		t.Fatalf("create staff once users has banned: %v", err)
	}
	member := &Record{ID: "m1", Fields: map[string]any{"banned": false}}
	banned := &Record{ID: "m2", Fields: map[string]any{"banned": true}}
	check := func(s *Store, when string, wantMember, wantBanned bool) {
		t.Helper()
		staff, users := mustCollection(t, s, "staff"), mustCollection(t, s, UsersName)
		for _, tc := range []struct {
			who  *Record
			want bool
		}{{member, wantMember}, {banned, wantBanned}} {
			req := &Request{Auth: tc.who, AuthCollection: users}
			if got := s.RuleAllows(staff, RuleList, &Record{ID: "r1"}, req); got != tc.want {
				t.Errorf("%s: the rule lets %s (banned %v) through: %v, want %v", when, tc.who.ID, tc.who.Fields["banned"], got, tc.want)
			}
		}
	}
	check(s, "with banned", true, false)

	// users' own rule names the field: dropping it from users is refused.
	users, err := s.UpdateCollection(mustCollection(t, s, UsersName), input(t, `{"updateRule":"@request.auth.banned = false"}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.UpdateCollection(users, without(s))
	wantRefused(err, "updateRule", `no auth collection has a field "banned"`)
	if _, err := s.UpdateCollection(users, input(t, `{"updateRule":"id = @request.auth.id"}`)); err != nil {
		t.Fatal(err)
	}
	// Only staff's rule names it now: the drop is accepted, and the rule
	// fails closed.
	if _, err := s.UpdateCollection(mustCollection(t, s, UsersName), without(s)); err != nil {
		t.Fatalf("drop banned from users: %v", err)
	}
	check(s, "banned dropped", false, false)
	_, err = s.UpdateCollection(mustCollection(t, s, "staff"), input(t, `{"viewRule":""}`))
	wantRefused(err, "listRule", `no auth collection has a field "banned"`)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTestStore(t, path, clk)
	defer s2.Close()
	check(s2, "banned dropped, reopened", false, false)
	if _, err := s2.UpdateCollection(mustCollection(t, s2, UsersName), withBanned(s2)); err != nil {
		t.Fatal(err)
	}
	check(s2, "banned back", true, false)

	// A field only another auth collection has: the rule holds for its
	// records until that collection is deleted, then for no one.
	crew, err := s2.CreateCollection(input(t, `{"name":"crew","type":"auth","fields":[{"name":"rank","type":"number"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	staff, err := s2.UpdateCollection(mustCollection(t, s2, "staff"), input(t, `{"updateRule":"@request.auth.rank > 1"}`))
	if err != nil {
		t.Fatalf("a rule naming a field of another auth collection: %v", err)
	}
	captain := &Request{Auth: &Record{ID: "c1", Fields: map[string]any{"rank": float64(3)}}, AuthCollection: crew}
	if !s2.RuleAllows(staff, RuleUpdate, &Record{ID: "r1"}, captain) {
		t.Error("rank 3 of crew does not pass @request.auth.rank > 1")
	}
	if err := s2.DeleteCollection(crew); err != nil {
		t.Fatal(err)
	}
	if s2.RuleAllows(staff, RuleUpdate, &Record{ID: "r1"}, captain) {
		t.Error("@request.auth.rank > 1 still holds once no auth collection has rank")
	}
}
