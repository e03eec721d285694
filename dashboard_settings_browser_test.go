package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"strongbox/conformance/smtpsink"
)

// TestDashboardSettingsBrowser drives the Settings screens in headless
// Chromium (testdata/dashboard/settings.mjs): the superuser signs in; an
// invalid app URL shows the envelope's error next to its field; the app
// name and URL, a new rate limit rule and the trusted proxy headers are
// saved; the mail screen sets SMTP to a sink that requires the password,
// which is never shown back; "Send test email" reaches the sink; no
// console error but the expected 400. GET /api/settings then shows every
// change. It runs and skips as TestDashboardBrowser does (same variables).
func TestDashboardSettingsBrowser(t *testing.T) {
	chromium, pptr, node := browserTools(t)
	const smtpUser, smtpPassword, testTo = "mailer", "sink-secret-pw-7", "settings-test@example.com"
	sink := smtpsink.Start(t, smtpsink.Options{Username: smtpUser, Password: smtpPassword})
	ts, d := dashServed(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	cfg := map[string]any{
		"base": ts.base, "chromium": chromium, "shots": dashArtifacts(t),
		"email": dashEmail, "password": dashPassword,
		"appName": "Strongbox <b>Test</b>", "appURL": "https://box.example.com", "badURL": "not a url",
		"ruleLabel": "/api/zzsettings/", "proxyHeaders": "X-Real-IP, X-Forwarded-For",
		"smtpHost": sink.Host, "smtpPort": sink.Port, "smtpUser": smtpUser, "smtpPassword": smtpPassword,
		"testTo": testTo,
	}
	out := runDashScript(t, ctx, node, pptr, "settings.mjs", cfg, 0)
	if n := len(regexp.MustCompile(`(?m)^ok `).FindAllString(out, -1)); n != 12 {
		t.Fatalf("%d steps passed, want 12", n)
	}
	if !strings.Contains(out, `outbox-message "Not sent: SMTP is off`) {
		t.Error("with SMTP off, the test email's banner did not say the mail went to the outbox")
	}
	if !strings.Contains(out, `field-error meta.appURL "Must be a valid URL."`) {
		t.Error(`the invalid URL's error "Must be a valid URL." was not shown next to the field`)
	}
	if m := sink.Wait(ctx, testTo, 30*time.Second); m == nil {
		t.Error("the test email did not reach the SMTP sink")
	} else if m.AuthMech != "PLAIN" {
		t.Errorf("the test email was sent with AUTH %q, want PLAIN", m.AuthMech)
	}
	d.su = d.login("_superusers", dashEmail, dashPassword)
	b := d.mustCall("GET", "/api/settings", d.su, "", 200)
	checkSavedSettings(t, b, cfg)
	if bytes.Contains(b, []byte(smtpPassword)) {
		t.Errorf("GET /api/settings shows the SMTP password: %s", b)
	}
}

// checkSavedSettings compares GET /api/settings (b) with what the script
// saved.
func checkSavedSettings(t *testing.T, b []byte, cfg map[string]any) {
	t.Helper()
	var v struct {
		Meta struct{ AppName, AppURL, SenderAddress string }
		SMTP struct {
			Enabled        bool
			Host, Username string
			Port           int
		}
		TrustedProxy struct {
			Headers       []string
			UseLeftmostIP bool
		}
		RateLimits struct {
			Enabled bool
			Rules   []struct {
				Label, Audience string
				Duration        int64
				MaxRequests     int
			}
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("GET /api/settings: %v: %s", err, b)
	}
	got := []string{v.Meta.AppName, v.Meta.AppURL, v.Meta.SenderAddress, v.SMTP.Host, strconv.Itoa(v.SMTP.Port), v.SMTP.Username}
	want := []string{cfg["appName"].(string), cfg["appURL"].(string), "sender@example.com", cfg["smtpHost"].(string), strconv.Itoa(cfg["smtpPort"].(int)), cfg["smtpUser"].(string)}
	if !slices.Equal(got, want) || !v.SMTP.Enabled {
		t.Errorf("saved meta and smtp = %q (enabled %v), want %q (enabled)", got, v.SMTP.Enabled, want)
	}
	if !slices.Equal(v.TrustedProxy.Headers, []string{"X-Real-IP", "X-Forwarded-For"}) || !v.TrustedProxy.UseLeftmostIP {
		t.Errorf("saved trustedProxy = %+v", v.TrustedProxy)
	}
	found := false
	for _, r := range v.RateLimits.Rules {
		found = found || (r.Label == cfg["ruleLabel"] && r.Audience == "@guest" && r.Duration == 11 && r.MaxRequests == 7)
	}
	if !v.RateLimits.Enabled || !found {
		t.Errorf("saved rateLimits = %+v, want enabled with the rule %s @guest 7 per 11 s", v.RateLimits, cfg["ruleLabel"])
	}
}
