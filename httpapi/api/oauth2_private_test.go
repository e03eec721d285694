package api

import (
	"log/slog"
	"strings"
	"testing"

	"strongbox/authn/oauth2"
	"strongbox/conformance/oauth2provider"
)

// TestOAuth2PrivateProvider: with the client's defaults, a provider on
// loopback gets no request: the sign-in answers the token step's 400, as
// any provider failure, and the server's log says why and how to allow
// it.
func TestOAuth2PrivateProvider(t *testing.T) {
	t.Parallel()
	p := oauth2provider.Start(t)
	var log syncLog
	e := newEnvWith(t, Config{OAuth2: oauth2.NewClient(oauth2.Options{}), Logger: slog.New(slog.NewTextHandler(&log, nil))}, HTTPConfig{})
	body := map[string]any{"oauth2": map[string]any{"enabled": true, "providers": []any{map[string]any{
		"name": "oidc", "clientId": p.ClientID, "clientSecret": p.ClientSecret,
		"authURL": p.URL + oauth2provider.PathAuthorize, "tokenURL": p.URL + oauth2provider.PathToken,
		"userInfoURL": p.URL + oauth2provider.PathUserInfo,
	}}}}
	if res := e.do("PATCH", "/api/collections/users", e.su, body); res.Status != 200 {
		t.Fatalf("enable OAuth2: %d %s", res.Status, res.Body)
	}
	code := p.Grant(oauth2provider.Grant{User: map[string]any{"sub": "1"}})
	res := e.do("POST", "/api/collections/users/auth-with-oauth2", "",
		map[string]any{"provider": "oidc", "code": code, "codeVerifier": "v", "redirectURL": "https://app.test/r"})
	if got, want := strings.TrimSpace(string(res.Body)), `{"data":{},"message":"Failed to fetch OAuth2 token.","status":400}`; res.Status != 400 || got != want {
		t.Errorf("auth-with-oauth2 = %d %s, want 400 %s", res.Status, got, want)
	}
	if n, _ := p.Stats(); n != 0 {
		t.Errorf("the provider served %d requests, want none", n)
	}
	host := strings.TrimPrefix(p.URL, "http://")
	for _, want := range []string{
		"level=WARN",
		"STRONGBOX_OAUTH2_ALLOW_PRIVATE=1",
		host + " is 127.0.0.1, a loopback address",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	for _, secret := range []string{code, p.ClientSecret} {
		if strings.Contains(log.String(), secret) {
			t.Errorf("log reveals %q:\n%s", secret, log.String())
		}
	}
}
