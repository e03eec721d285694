package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestDashboardOAuth2Browser drives the OAuth2 options of users in
// headless Chromium (testdata/dashboard/oauth2.mjs): the redirect URL
// under the application URL the test sets, copied to the clipboard; the
// picker of the 32 presets (Escape closes it); GitHub found by "git",
// given a client id and secret and saved (the page checks it through the
// API); an OIDC provider with an auth URL the server refuses shows the
// server's message beside the field and in the banner, and is removed;
// screenshots at 1280x900 and 390x844, no sideways scroll at 390; no
// console error, page error or dialog. The test then checks that users has
// GitHub only, with the secret the page typed kept: a PATCH that sends it
// back without one is accepted. It runs and skips as TestDashboardBrowser
// does (same variables).
func TestDashboardOAuth2Browser(t *testing.T) {
	chromium, pptr, node := browserTools(t)
	ts, d := dashServed(t, nil)
	d.su = d.login("_superusers", dashEmail, dashPassword)
	const appURL = "https://app.example.test/"
	d.mustCall("PATCH", "/api/settings", d.su, `{"meta":{"appURL":"`+appURL+`"}}`, 200)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cfg := map[string]string{
		"base": ts.base, "chromium": chromium, "shots": dashArtifacts(t),
		"email": dashEmail, "password": dashPassword,
		"redirect": "https://app.example.test/api/oauth2-redirect",
		"clientId": "github-client-of-the-test", "clientSecret": "github-secret-of-the-test",
		"badURL": "not a url", "badURLError": "Must be a valid URL.",
	}
	runDashScript(t, ctx, node, pptr, "oauth2.mjs", cfg, 7)

	var users struct {
		OAuth2 struct {
			Enabled   bool
			Providers []map[string]any
		}
	}
	b := d.mustCall("GET", "/api/collections/users", d.su, "", 200)
	if err := json.Unmarshal(b, &users); err != nil {
		t.Fatal(err)
	}
	if o := users.OAuth2; !o.Enabled || len(o.Providers) != 1 || o.Providers[0]["name"] != "github" ||
		o.Providers[0]["clientId"] != cfg["clientId"] || o.Providers[0]["clientSecret"] != nil {
		t.Fatalf("after the journey, users.oauth2 = %s, want GitHub alone, enabled, with its client id and no secret shown", b)
	}
	// Sent back without a secret, GitHub keeps the stored one; with none
	// stored, the server would answer 400 "Cannot be blank.".
	d.mustCall("PATCH", "/api/collections/users", d.su,
		`{"oauth2":{"providers":[{"name":"github","clientId":"`+cfg["clientId"]+`"}]}}`, 200)
}
