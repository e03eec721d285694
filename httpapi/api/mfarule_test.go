package api

import (
	"regexp"
	"strings"
	"testing"
)

// TestMFARuleFlow: with mfa.rule set, a record that satisfies it gets the
// 401 {"mfaId"} challenge and one that does not signs in directly
// (as in PocketBase); a rule that does not compile is refused at save
// with validation_invalid_rule, and one that cannot be evaluated at
// sign-in answers 400 "Failed to authenticate.".
func TestMFARuleFlow(t *testing.T) {
	t.Parallel()
	e, _, _ := otpEnv(t, false)
	e.signUp("bob@example.org", "password1")
	mfaRe := regexp.MustCompile(`^\{"mfaId":"[a-z0-9]{15}"\}$`)
	login := func(email string) *response {
		return e.do("POST", "/api/collections/users/auth-with-password", "", map[string]string{"identity": email, "password": "password1"})
	}

	res := e.do("PATCH", "/api/collections/users", e.su, `{"mfa":{"enabled":true,"rule":"email ~ 'example.com' && verified = false"}}`)
	if res.Status != 200 {
		t.Fatalf("save mfa.rule: %d %s", res.Status, res.Body)
	}
	if got := res.JSON(t)["mfa"].(map[string]any)["rule"]; got != "email ~ 'example.com' && verified = false" {
		t.Errorf("reported mfa.rule = %q", got)
	}

	tests := []struct {
		email     string
		challenge bool
	}{
		{"ann@example.com", true},
		{"bob@example.org", false},
	}
	for _, tt := range tests {
		res := login(tt.email)
		switch body := strings.TrimSpace(string(res.Body)); {
		case tt.challenge && (res.Status != 401 || !mfaRe.MatchString(body)):
			t.Errorf("%s: %d %s, want 401 {\"mfaId\":…}", tt.email, res.Status, body)
		case !tt.challenge && (res.Status != 200 || res.JSON(t)["token"] == nil):
			t.Errorf("%s: %d %s, want 200 with a token", tt.email, res.Status, body)
		}
	}

	refusals := []struct {
		name, body, msg string
	}{
		{"syntax", `{"mfa":{"rule":"verified ="}}`, "Invalid rule. Raw error: offset 10: expected operand, found end of input."},
		{"unknown field", `{"mfa":{"rule":"nosuch = 1"}}`, `Invalid rule. Raw error: offset 0: unknown field "nosuch".`},
		{"hidden field", `{"mfa":{"rule":"tokenKey != ''"}}`, `Invalid rule. Raw error: offset 0: field "tokenKey" is hidden and cannot be used in a rule.`},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("PATCH", "/api/collections/users", e.su, tt.body)
			want := `{"data":{"mfa":{"rule":{"code":"validation_invalid_rule","message":` + mustMarshal(t, tt.msg) + `}}},"message":"Failed to update collection.","status":400}`
			if got := strings.TrimSpace(string(res.Body)); res.Status != 400 || got != want {
				t.Errorf("PATCH %s: %d %s\nwant 400 %s", tt.body, res.Status, got, want)
			}
		})
	}

	// A stored rule that no longer compiles, as a journal written by
	// another version could hold: the sign-in fails rather than skipping
	// the second factor.
	c := mustCollection(t, e, "users")
	c.MFA.Rule = "nosuch = 1"
	for _, email := range []string{"ann@example.com", "bob@example.org"} {
		wantError(t, login(email), 400, msgAuthFailed)
	}
}

// TestMFARuleRequestInfo: mfa.rule reads the sign-in's request, as the
// API rules do and as PocketBase evaluates it: its query, body, method and
// context.
func TestMFARuleRequestInfo(t *testing.T) {
	t.Parallel()
	e, _, _ := otpEnv(t, false)
	mfaRe := regexp.MustCompile(`^\{"mfaId":"[a-z0-9]{15}"\}$`)
	tests := []struct {
		rule, query string
		challenge   bool
	}{
		{"@request.query.strict = '1'", "?strict=1", true},
		{"@request.query.strict = '1'", "", false},
		{"@request.body.identity = 'ann@example.com' && @request.method = 'POST'", "", true},
		{"@request.body.identity:lower = 'bob@example.org'", "", false},
		{"@request.context = 'password' && @request.auth.id = ''", "", true},
		{"@request.context = 'otp'", "", false},
	}
	for _, tt := range tests {
		res := e.do("PATCH", "/api/collections/users", e.su, map[string]any{"mfa": map[string]any{"enabled": true, "rule": tt.rule}})
		if res.Status != 200 {
			t.Fatalf("save mfa.rule %q: %d %s", tt.rule, res.Status, res.Body)
		}
		res = e.do("POST", "/api/collections/users/auth-with-password"+tt.query, "", map[string]string{"identity": "ann@example.com", "password": "password1"})
		switch body := strings.TrimSpace(string(res.Body)); {
		case tt.challenge && (res.Status != 401 || !mfaRe.MatchString(body)):
			t.Errorf("%q%s: %d %s, want 401 {\"mfaId\":…}", tt.rule, tt.query, res.Status, body)
		case !tt.challenge && (res.Status != 200 || res.JSON(t)["token"] == nil):
			t.Errorf("%q%s: %d %s, want 200 with a token", tt.rule, tt.query, res.Status, body)
		}
	}
}
