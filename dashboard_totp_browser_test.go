package main

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDashboardTOTPBrowser drives, in headless Chromium
// (testdata/dashboard/totp.mjs), a superuser turning TOTP on for
// _superusers in the collection options, enrolling an authenticator app
// in Settings › Security (Escape cancels a setup; a wrong code is refused;
// the ten recovery codes are shown once) and signing in again with the
// password and a code the script computes from the key shown, with
// screenshots at 1280 and 390 px (no sideways scroll). With
// STRONGBOX_ZBARIMG (Debian package zbar-tools: /usr/bin/zbarimg) the QR
// code the page drew is decoded and must be the otpauth URI of that key.
// It runs and skips as TestDashboardBrowser does.
func TestDashboardTOTPBrowser(t *testing.T) {
	chromium, pptr, node := browserTools(t)
	ts, d := dashServed(t, nil)
	d.su = d.login("_superusers", dashEmail, dashPassword)
	const appName = "Acme & Co"
	d.mustCall("PATCH", "/api/settings", d.su, `{"meta":{"appName":"`+appName+`"}}`, 200)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	cfg := map[string]string{"base": ts.base, "chromium": chromium, "shots": dashArtifacts(t), "email": dashEmail, "password": dashPassword}
	out := runDashScript(t, ctx, node, pptr, "totp.mjs", cfg, 5)

	// The code now guards the password.
	if code, body := d.call("POST", "/api/collections/_superusers/auth-with-password", "",
		`{"identity":"`+dashEmail+`","password":"`+dashPassword+`"}`); code != 401 || !strings.Contains(string(body), "mfaId") {
		t.Errorf("a password sign-in after the enrolment answered %d %s, want 401 {mfaId}", code, body)
	}

	zbar := os.Getenv("STRONGBOX_ZBARIMG")
	if zbar == "" {
		t.Log("STRONGBOX_ZBARIMG is unset (Debian package zbar-tools: STRONGBOX_ZBARIMG=/usr/bin/zbarimg): the QR code is not decoded")
		return
	}
	secret := regexp.MustCompile(`(?m)^secret (\S+)$`).FindStringSubmatch(out)
	qr := regexp.MustCompile(`(?m)^qr (.+)$`).FindStringSubmatch(out)
	if secret == nil || qr == nil {
		t.Fatalf("the script printed no secret or QR screenshot")
	}
	got, err := exec.CommandContext(ctx, zbar, "--quiet", "--raw", qr[1]).Output()
	if err != nil {
		t.Fatalf("zbarimg %s: %v", qr[1], err)
	}
	issuer := strings.ReplaceAll(url.PathEscape(appName), ":", "%3A")
	want := "otpauth://totp/" + issuer + ":" + dashEmail + "?secret=" + secret[1] + "&issuer=" + strings.ReplaceAll(url.QueryEscape(appName), "+", "%20")
	if strings.TrimSpace(string(got)) != want {
		t.Errorf("zbarimg read the QR code as\n %s, want\n %s", got, want)
	}
}
