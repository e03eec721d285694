package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDashboardPasskeyBrowser drives, in headless Chromium with its
// virtual authenticator (testdata/dashboard/passkey.mjs), the passkeys of
// the dashboard from its own origin http://localhost:PORT (meta.appURL):
// the superuser turns passkeys on for _superusers in the Collections
// screen's options, registers a passkey on the Passkeys screen, signs out
// and signs in usernameless with it; the server refuses a tampered
// signature, a replayed challenge and an assertion for another origin.
// (A wrong RP ID hash cannot be made in a browser, which signs for the
// page's own: the Go tests of authn/webauthn and httpapi/api refuse one.)
// The server then lists the passkey, used, and logged its registration.
// It runs and skips as TestDashboardBrowser does (same variables).
func TestDashboardPasskeyBrowser(t *testing.T) {
	chromium, pptr, node := browserTools(t)
	ts := startServer(t, t.TempDir(), map[string]string{
		"STRONGBOX_SUPERUSER_EMAIL": dashEmail, "STRONGBOX_SUPERUSER_PASSWORD": dashPassword,
	})
	u, err := url.Parse(ts.base)
	if err != nil {
		t.Fatal(err)
	}
	// The page must be at localhost (a domain, and a secure context):
	// browsers refuse an IP address as the relying party.
	base := "http://localhost:" + u.Port()
	d := &dashAPI{t: t, base: ts.base}
	if code, _ := d.call("GET", "/_/", "", ""); code == 404 {
		t.Skip("the dashboard is not served here: GET /_/ answered 404")
	}
	d.su = d.login("_superusers", dashEmail, dashPassword)
	d.mustCall("PATCH", "/api/settings", d.su, fmt.Sprintf(`{"meta":{"appURL":%q}}`, base), 200)

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	runDashScript(t, ctx, node, pptr, "passkey.mjs", map[string]string{
		"base": base, "otherApp": "http://localhost:1", "chromium": chromium, "shots": dashArtifacts(t),
		"email": dashEmail, "password": dashPassword,
	}, 6)

	var list []struct{ Name, LastUsed string }
	b := d.mustCall("GET", "/api/collections/_superusers/passkeys", d.su, "", 200)
	if err := json.Unmarshal(b, &list); err != nil || len(list) != 1 || list[0].Name != "Virtual authenticator" || list[0].LastUsed == "" {
		t.Fatalf("the superuser's passkeys = %s, want the one registered, used", b)
	}
	// The events, in the log store beside the request logs.
	for _, event := range []string{"passkey: registered", "passkey: sign-in refused"} {
		var found bool
		for end := time.Now().Add(10 * time.Second); !found && time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			b := d.mustCall("GET", "/api/logs?perPage=500&filter="+url.QueryEscape(`message="`+event+`"`), d.su, "", 200)
			found = strings.Contains(string(b), `"message":"`+event+`"`)
		}
		if !found {
			t.Errorf("the server logged no %q event", event)
		}
	}
}
