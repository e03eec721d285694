package conformance

import (
	"encoding/json"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The suite's OAuth2 provider on its own: the authorization code grant
// with PKCE as a client performs it, and each refusal a server's mistake
// would meet.

// authorizeAt opens the provider's authorization endpoint with a state
// announced for u and returns the code of its redirect.
func authorizeAt(t *testing.T, p *oauthProvider, u *oauthUser, challenge, redirect string) string {
	t.Helper()
	state := newNonce(30)
	p.expect(state, u)
	q := url.Values{"client_id": {p.clientID}, "response_type": {"code"}, "state": {state}, "redirect_uri": {redirect}}
	if challenge != "" {
		q.Set("code_challenge", challenge)
		q.Set("code_challenge_method", "S256")
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(p.local + oauthPathAuthorize + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || loc.Query().Get("state") != state {
		t.Fatalf("authorize: %d Location %q%s", resp.StatusCode, resp.Header.Get("Location"), p.refused())
	}
	if !strings.HasPrefix(loc.String(), redirect+"?") {
		t.Fatalf("authorize redirected to %s, want %s?…", loc, redirect)
	}
	return loc.Query().Get("code")
}

// exchangeAt posts form to the token endpoint, with HTTP Basic when basic
// is set, and returns the status and the access token.
func exchangeAt(t *testing.T, p *oauthProvider, form url.Values, basic bool) (int, string) {
	t.Helper()
	return exchangeAs(t, p, form, basic, p.clientSecret)
}

// exchangeAs is exchangeAt with the given client secret.
func exchangeAs(t *testing.T, p *oauthProvider, form url.Values, basic bool, secret string) (int, string) {
	t.Helper()
	if !basic {
		form.Set("client_id", p.clientID)
		form.Set("client_secret", secret)
	}
	req, _ := http.NewRequest(http.MethodPost, p.local+oauthPathToken, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(p.clientID), url.QueryEscape(secret))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.AccessToken
}

func TestOAuthProvider(t *testing.T) {
	p, err := startOAuthProvider("127.0.0.1", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const redirect = "http://127.0.0.1:1/api/oauth2-redirect"
	verifier := newNonce(43)
	u := newOAuthUser(p)

	code := authorizeAt(t, p, u, pkceChallenge(verifier), redirect)
	grant := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
	status, access := exchangeAt(t, p, grant, true)
	if status != http.StatusOK || access == "" {
		t.Fatalf("token: %d %q%s", status, access, p.refused())
	}
	if status, _ := exchangeAt(t, p, grant, true); status != http.StatusBadRequest {
		t.Errorf("a used code: %d, want 400", status)
	}
	req, _ := http.NewRequest(http.MethodGet, p.local+oauthPathUserInfo, nil)
	req.Header.Set("Authorization", "Bearer "+access)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	json.NewDecoder(resp.Body).Decode(&claims)
	resp.Body.Close()
	if claims["sub"] != u.Sub || claims["email"] != u.Email || claims["email_verified"] != true || claims["picture"] != u.Picture {
		t.Errorf("userinfo %v, want the claims of %+v", claims, u)
	}
	resp, err = http.Get(strings.Replace(u.Picture, p.base, p.local, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(resp.Body); err != nil {
		t.Errorf("the avatar is no PNG: %v", err)
	}
	resp.Body.Close()

	// Credentials in the body work as well as HTTP Basic.
	code = authorizeAt(t, p, u, pkceChallenge(verifier), redirect)
	if status, _ := exchangeAt(t, p, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}}, false); status != http.StatusOK {
		t.Errorf("client credentials in the body: %d, want 200%s", status, p.refused())
	}

	for _, tc := range []struct {
		name   string
		mutate func(url.Values)
		status int
	}{
		{"wrong verifier", func(v url.Values) { v.Set("code_verifier", newNonce(43)) }, 400},
		{"no verifier", func(v url.Values) { v.Del("code_verifier") }, 400},
		{"other redirect_uri", func(v url.Values) { v.Set("redirect_uri", redirect+"x") }, 400},
		{"unknown code", func(v url.Values) { v.Set("code", "cf-code-unknown") }, 400},
		{"wrong grant_type", func(v url.Values) { v.Set("grant_type", "password") }, 400},
	} {
		code := authorizeAt(t, p, u, pkceChallenge(verifier), redirect)
		v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
		tc.mutate(v)
		if status, _ := exchangeAt(t, p, v, true); status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, status, tc.status)
		}
	}
	if !strings.Contains(p.refused(), "PKCE verification failed") {
		t.Errorf("refusals %q name no PKCE mismatch", p.refused())
	}

	// A wrong client secret is 401.
	code = authorizeAt(t, p, u, pkceChallenge(verifier), redirect)
	status, _ = exchangeAs(t, p, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}}, true, "other")
	if status != http.StatusUnauthorized {
		t.Errorf("a wrong client secret: %d, want 401", status)
	}

	// A failing user endpoint answers 500.
	bad := newOAuthUser(p)
	bad.FailUserInfo = true
	code = authorizeAt(t, p, bad, pkceChallenge(verifier), redirect)
	_, access = exchangeAt(t, p, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}}, true)
	req, _ = http.NewRequest(http.MethodGet, p.local+oauthPathUserInfo, nil)
	req.Header.Set("Authorization", "Bearer "+access)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("failing userinfo: %d, want 500", resp.StatusCode)
	}
}
