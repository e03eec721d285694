package authn

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"strongbox/authn/validation"
)

// newRuleCollection creates the auth collection "members", with password
// and OTP sign-in, custom fields of every type a rule reads and a hidden
// one, and two records: ann, created on 2026-01-01 and filled in, and bob,
// created at the clock's time (2026-11-22 10:00 UTC) with every custom
// field unset.
func newRuleCollection(t *testing.T) (s *Store, clk *testClock, c *Collection, ann, bob *Record) {
	t.Helper()
	s, clk, _ = newTestStore(t)
	c, err := s.CreateCollection(input(t, `{"name":"members","type":"auth","otp":{"enabled":true},"fields":[
		{"name":"name","type":"text"},{"name":"level","type":"number"},{"name":"admin","type":"bool"},
		{"name":"site","type":"url"},{"name":"secret","type":"text","hidden":true},
		{"name":"created","type":"autodate","onCreate":true},{"name":"updated","type":"autodate","onCreate":true,"onUpdate":true}]}`))
	if err != nil {
		t.Fatalf("create members: %v", err)
	}
	ctx := context.Background()
	now := clk.t
	clk.t = time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	ann, err = s.CreateRecord(ctx, c, RecordInput{Manager: true, Values: map[string]any{
		"email": "ann@example.com", "password": "password1", "passwordConfirm": "password1", "verified": true,
		"name": "Ann Smith", "level": 5.0, "admin": true, "site": "https://ann.example.com", "secret": "s3",
	}})
	if err != nil {
		t.Fatalf("create ann: %v", err)
	}
	clk.t = now
	bob, err = s.CreateRecord(ctx, c, RecordInput{Values: map[string]any{
		"email": "bob@example.org", "password": "password1", "passwordConfirm": "password1",
	}})
	if err != nil {
		t.Fatalf("create bob: %v", err)
	}
	return s, clk, c, ann, bob
}

// setMFARule saves mfa (enabled) with rule on c and returns the new c.
func setMFARule(t *testing.T, s *Store, c *Collection, rule string) *Collection {
	t.Helper()
	in := input(t, `{"mfa":{"enabled":true}}`)
	in.Values["mfa"].(map[string]any)["rule"] = rule
	c, err := s.UpdateCollection(c, in)
	if err != nil {
		t.Fatalf("save mfa.rule %q: %v", rule, err)
	}
	return c
}

// TestMFARule evaluates rules against the records' rows: whether ann and
// bob need a second factor when signing in with a password.
func TestMFARule(t *testing.T) {
	s, _, c, ann, bob := newRuleCollection(t)
	tests := []struct {
		rule     string
		ann, bob bool
	}{
		{"", true, true},
		{"email = 'ann@example.com'", true, false},
		{"email != 'ann@example.com'", false, true},
		{"email ~ 'example.org'", false, true},
		{"email ~ 'ANN@%'", true, false},
		{"email !~ 'ann'", false, true},
		{"name ~ 'smith'", true, false},
		{"name = ''", false, true},
		{"name = null", false, true},
		{"name != null", true, false},
		{"site ~ 'https://'", true, false},
		{"level > 3", true, false},
		{"level = 0", false, true},
		{"level >= 5 && level < 6", true, false},
		{"level = '5'", true, false},
		{"admin = true", true, false},
		{"admin = false", false, true},
		{"verified = true", true, false},
		{"verified = false || admin = true", true, true},
		{"emailVisibility = false", true, true},
		{"id = '" + ann.ID + "'", true, false},
		{"(admin = true || level > 10) && verified = true", true, false},
		{"admin = true || (level > 10 && verified = true)", true, false},
		{"level > 10 || email ~ 'bob'", false, true},
		{"created < @todayStart", true, false},
		{"created >= @yesterday", false, true},
		{"created < '2026-06-01 00:00:00.000Z'", true, false},
		{"updated > '2026-06-01'", false, true},
		{"@request.context = 'password'", true, true},
		{"@request.context = 'otp'", false, false},
		{"@hour = 10 && admin = true", true, false},
		{"@year = 2025", false, false},
		{"email ?= 'ann@example.com'", true, false},
		{"admin = true // admins only\n|| level = 0", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			c = setMFARule(t, s, c, tt.rule)
			for _, r := range []struct {
				rec  *Record
				want bool
			}{{ann, tt.ann}, {bob, tt.bob}} {
				got, err := s.mfaRequired(c, r.rec, &Request{Context: MethodPassword})
				if err != nil || got != r.want {
					t.Errorf("mfaRequired(%q, %s) = %v, %v, want %v, nil", tt.rule, r.rec.Email, got, err, r.want)
				}
			}
		})
	}
}

// TestMFARuleOff: with MFA disabled no rule applies, and a base collection
// never asks for MFA.
func TestMFARuleOff(t *testing.T) {
	s, _, c, ann, _ := newRuleCollection(t)
	c, err := s.UpdateCollection(c, input(t, `{"mfa":{"enabled":false,"rule":"verified = true"}}`))
	if err != nil {
		t.Fatalf("save a rule with MFA off: %v", err)
	}
	if got, err := s.mfaRequired(c, ann, &Request{Context: MethodPassword}); got || err != nil {
		t.Errorf("mfaRequired with MFA off = %v, %v, want false, nil", got, err)
	}
}

// TestMFARuleClock: a rule with a date macro is evaluated at the time of
// the sign-in, not at the time it was first compiled and cached.
func TestMFARuleClock(t *testing.T) {
	s, clk, c, _, bob := newRuleCollection(t)
	c = setMFARule(t, s, c, "created > @yesterday")
	for _, step := range []struct {
		at   time.Time
		want bool
	}{
		{clk.t, true},
		{clk.t.Add(23 * time.Hour), true},
		{clk.t.Add(25 * time.Hour), false},
	} {
		clk.t = step.at
		if got, err := s.mfaRequired(c, bob, &Request{Context: MethodOTP}); err != nil || got != step.want {
			t.Errorf("at %v: mfaRequired = %v, %v, want %v, nil", step.at, got, err, step.want)
		}
	}
}

// TestMFARuleRefused: a rule that does not compile against the collection
// is refused at save, on create and on update, with PocketBase's code.
func TestMFARuleRefused(t *testing.T) {
	s, _, c, _, _ := newRuleCollection(t)
	tests := []struct {
		name, rule, msg string
		createMsg       string // on create, into a collection without the custom fields, when not msg
	}{
		{"syntax", "verified = ", `Invalid rule. Raw error: offset 11: expected operand, found end of input.`, ""},
		{"unknown field", "nosuch = 1", `Invalid rule. Raw error: offset 0: unknown field "nosuch".`, ""},
		{"password", "password = 'x'", `Invalid rule. Raw error: offset 0: field "password" is hidden and cannot be used in a rule.`, ""},
		{"tokenKey", "tokenKey != ''", `Invalid rule. Raw error: offset 0: field "tokenKey" is hidden and cannot be used in a rule.`, ""},
		{"unknown auth field", "@request.auth.nosuch = 1",
			`Invalid rule. Raw error: offset 0: unknown field "@request.auth.nosuch": no auth collection has a field "nosuch".`, ""},
		{"request auth password", "@request.auth.password != ''", `Invalid rule. Raw error: offset 0: field "@request.auth.password" is hidden and cannot be used in a rule.`, ""},
		{"join", "@collection.users.id != ''", ``, ""},
		{"unbalanced", "(verified = true", ``, ""},
		{"double equals", "verified == true", ``, ""},
	}
	check := func(t *testing.T, op string, err error, msg string) {
		t.Helper()
		ve, ok := errors.AsType[validation.Errors](err)
		if !ok {
			t.Fatalf("%s: %v, want validation errors", op, err)
		}
		mfa, _ := ve["mfa"].(validation.Errors)
		e, _ := mfa["rule"].(*validation.Error)
		if e == nil || e.Code != validation.CodeInvalidRule || !strings.HasPrefix(e.Message, "Invalid rule. Raw error: ") || (msg != "" && e.Message != msg) {
			t.Fatalf("%s: %v, want mfa.rule %s %q", op, err, validation.CodeInvalidRule, msg)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(t, `{"mfa":{"enabled":true}}`)
			in.Values["mfa"].(map[string]any)["rule"] = tt.rule
			_, err := s.UpdateCollection(c, in)
			check(t, "update", err, tt.msg)
			in = input(t, `{"name":"other","type":"auth","otp":{"enabled":true},"mfa":{"enabled":false}}`)
			in.Values["mfa"].(map[string]any)["rule"] = tt.rule
			_, err = s.CreateCollection(in)
			check(t, "create", err, cmp.Or(tt.createMsg, tt.msg))
		})
	}
	// A change of fields that would break a saved rule is refused with it.
	c = setMFARule(t, s, c, "level > 3")
	_, err := s.UpdateCollection(c, input(t, `{"fields":[{"name":"name","type":"text"}]}`))
	check(t, "drop the rule's field", err, `Invalid rule. Raw error: offset 0: unknown field "level".`)
}

// TestMFARuleBroken: a stored rule that no longer compiles (a collection
// written by another version) fails the sign-in with ErrMFARule instead of
// skipping MFA, and the cached predicate of the previous rule is not used.
func TestMFARuleBroken(t *testing.T) {
	s, _, c, ann, _ := newRuleCollection(t)
	c = setMFARule(t, s, c, "verified = true")
	if got, err := s.mfaRequired(c, ann, &Request{Context: MethodPassword}); !got || err != nil {
		t.Fatalf("mfaRequired = %v, %v, want true, nil", got, err)
	}
	broken := *c
	opts := *c.AuthOptions
	opts.MFA.Rule = "nosuch = 1"
	broken.AuthOptions = &opts
	if got, err := s.mfaRequired(&broken, ann, &Request{Context: MethodPassword}); got || !errors.Is(err, ErrMFARule) {
		t.Errorf("mfaRequired(broken rule) = %v, %v, want false, %v", got, err, ErrMFARule)
	}
}

// TestMFARuleCache: a collection's rule is compiled once per version,
// with its API rules; a save compiles the new version's, and a delete of
// the collection drops them.
func TestMFARuleCache(t *testing.T) {
	s, _, c, ann, _ := newRuleCollection(t)
	c = setMFARule(t, s, c, "verified = true")
	first := s.apiRules.get(c)
	if again := s.apiRules.get(c); again != first || first.mfa.pred == nil {
		t.Fatalf("second get: %p, want the cached %p with a predicate", again, first)
	}
	c = setMFARule(t, s, c, "verified = false")
	if set := s.apiRules.m[c.ID]; set == first || set == nil || set.col != c {
		t.Errorf("entry after the collection was saved: %p, want one compiled from the new version", set)
	}
	if got, err := s.mfaRequired(c, ann, &Request{Context: MethodPassword}); got || err != nil {
		t.Errorf("mfaRequired after the change = %v, %v, want false, nil", got, err)
	}
	if err := s.DeleteCollection(c); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, cached := s.apiRules.m[c.ID]; cached {
		t.Errorf("entry kept after the collection was deleted")
	}
}

// TestMFARuleRequest: mfa.rule reads the sign-in's request as the API
// rules do (PocketBase evaluates it with the full request info): the
// caller, the method, query and headers, besides @request.context.
func TestMFARuleRequest(t *testing.T) {
	s, _, c, ann, bob := newRuleCollection(t)
	guest := &Request{Method: "POST", Context: MethodPassword, Headers: map[string]string{"x_mfa": "yes"}}
	signedIn := &Request{Method: "POST", Context: MethodOTP, Query: map[string]string{"strict": "1"}, Auth: ann, AuthCollection: c}
	tests := []struct {
		rule            string
		guest, signedIn bool
	}{
		{"@request.auth.id != ''", false, true},
		{"@request.auth.id = id", false, true},
		{"@request.auth.admin = true", false, true},
		{"@request.headers.x_mfa = 'yes'", true, false},
		{"@request.query.strict = '1' && verified = true", false, true},
		{"@request.method = 'POST' && @request.context = 'otp'", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			c = setMFARule(t, s, c, tt.rule)
			signedIn.AuthCollection = c
			for _, r := range []struct {
				name string
				req  *Request
				want bool
			}{{"guest", guest, tt.guest}, {"signed in", signedIn, tt.signedIn}} {
				// Each call has a request of its own, as each sign-in does.
				req := *r.req
				if got, err := s.mfaRequired(c, ann, &req); err != nil || got != r.want {
					t.Errorf("mfaRequired(%q, %s) = %v, %v, want %v, nil", tt.rule, r.name, got, err, r.want)
				}
			}
			if got, err := s.mfaRequired(c, bob, &Request{Context: MethodPassword}); err != nil || got {
				t.Errorf("mfaRequired(%q, bob, empty request) = %v, %v, want false, nil", tt.rule, got, err)
			}
		})
	}
}
