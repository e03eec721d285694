package oauth2provider

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestAuthorize: what the authorization endpoint answers, and that the
// code it issues is bound to the request's challenge and redirect_uri.
func TestAuthorize(t *testing.T) {
	p := Start(t)
	p.RedirectURIs = []string{"http://127.0.0.1:1/cb?app=1"}
	const (
		cb        = "http://127.0.0.1:1/cb?app=1"
		verifier  = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
		challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" // RFC 7636 Appendix B
	)
	client := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	authorize := func(q url.Values) (int, string) {
		t.Helper()
		res, err := client.Get(p.URL + PathAuthorize + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Location")
	}
	good := func(edit func(url.Values)) url.Values {
		q := url.Values{"client_id": {"client-id"}, "response_type": {"code"}, "redirect_uri": {cb},
			"state": {"st"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}
		if edit != nil {
			edit(q)
		}
		return q
	}
	tests := []struct {
		name     string
		q        url.Values
		status   int
		location string // "" = none
	}{
		{"unknown client", good(func(q url.Values) { q.Set("client_id", "other") }), 400, ""},
		{"unregistered redirect_uri", good(func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:1/cb") }), 400, ""},
		{"no redirect_uri", good(func(q url.Values) { q.Del("redirect_uri") }), 400, ""},
		{"denied", good(nil), 302, "http://127.0.0.1:1/cb?app=1&error=access_denied&state=st"},
		{"token response type", good(func(q url.Values) { q.Set("response_type", "token") }), 302,
			"http://127.0.0.1:1/cb?app=1&error=unsupported_response_type&state=st"},
		{"plain challenge", good(func(q url.Values) { q.Set("code_challenge_method", "plain") }), 302,
			"http://127.0.0.1:1/cb?app=1&error=invalid_request&error_description=transform+algorithm+not+supported&state=st"},
		{"short challenge", good(func(q url.Values) { q.Set("code_challenge", "abc") }), 302,
			"http://127.0.0.1:1/cb?app=1&error=invalid_request&error_description=code_challenge+is+not+43+base64url+characters&state=st"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, loc := authorize(tt.q); status != tt.status || loc != tt.location {
				t.Errorf("authorize = %d %q, want %d %q", status, loc, tt.status, tt.location)
			}
		})
	}

	p.SignIn(Grant{User: map[string]any{"sub": "1"}})
	status, loc := authorize(good(nil))
	back, err := url.Parse(loc)
	if err != nil || status != 302 || !strings.HasPrefix(loc, cb+"&code=code-") || back.Query().Get("state") != "st" {
		t.Fatalf("signed in: authorize = %d %q, want 302 to %s with code and state", status, loc, cb)
	}
	code := back.Query().Get("code")
	exchange := func(code, verifier, redirect string) int {
		t.Helper()
		res, err := client.PostForm(p.URL+PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"code_verifier": {verifier}, "redirect_uri": {redirect}, "client_id": {"client-id"}, "client_secret": {"client-secret"}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := exchange(code, verifier, "http://127.0.0.1:1/other"); got != 400 {
		t.Errorf("exchange with another redirect_uri = %d, want 400", got)
	}
	_, loc = authorize(good(nil))
	back, _ = url.Parse(loc)
	if got := exchange(back.Query().Get("code"), "wrong-verifier-wrong-verifier-wrong-verifie", cb); got != 400 {
		t.Errorf("exchange with another verifier = %d, want 400", got)
	}
	_, loc = authorize(good(nil))
	back, _ = url.Parse(loc)
	if got := exchange(back.Query().Get("code"), verifier, cb); got != 200 {
		t.Errorf("exchange = %d, want 200", got)
	}
}
