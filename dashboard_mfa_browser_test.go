package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"strongbox/conformance/smtpsink"
)

// TestDashboardMFABrowser drives, in headless Chromium
// (testdata/dashboard/mfa.mjs), the superuser's sign-in when _superusers
// asks for MFA with OTP: the password, then the code
// the test reads from the mail (sent to an SMTP sink) typed in the Code
// step, reaching #/logs. The page then switches OTP on for users in the
// Collections screen's options, and the test shows the saved option works:
// request-otp for a user, the mailed code, auth-with-otp answers 200. At
// 360 px wide the Collections screen does not scroll sideways. It runs and
// skips as TestDashboardBrowser does (same variables).
func TestDashboardMFABrowser(t *testing.T) {
	chromium, pptr, node := browserTools(t)
	sink := smtpsink.Start(t, smtpsink.Options{})
	ts, d := dashServed(t, nil)
	d.su = d.login("_superusers", dashEmail, dashPassword)
	u := d.newUser("otp-user")
	d.mustCall("PATCH", "/api/settings", d.su, fmt.Sprintf(`{"smtp":{"enabled":true,"host":%q,"port":%d,"tls":false}}`, sink.Host, sink.Port), 200)
	d.mustCall("PATCH", "/api/collections/_superusers", d.su, `{"mfa":{"enabled":true},"otp":{"enabled":true}}`, 200)
	d.mustCall("PATCH", "/api/collections/users", d.su, `{"otp":{"enabled":false}}`, 200)

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cfg := map[string]string{"base": ts.base, "chromium": chromium, "shots": dashArtifacts(t), "email": dashEmail, "password": dashPassword}
	out := runMFAScript(t, ctx, node, pptr, cfg, func() string { return mailedOTP(t, ctx, sink, dashEmail) })
	if n := len(regexp.MustCompile(`(?m)^ok `).FindAllString(out, -1)); n != 4 {
		t.Fatalf("%d steps passed, want 4", n)
	}

	// The OTP switch the page saved works.
	var otp struct{ OtpID string }
	if b := d.mustCall("POST", "/api/collections/users/request-otp", "", fmt.Sprintf(`{"email":%q}`, u.email), 200); json.Unmarshal(b, &otp) != nil || otp.OtpID == "" {
		t.Fatalf("request-otp after the page enabled OTP = %s, want an otpId", b)
	}
	d.mustCall("POST", "/api/collections/users/auth-with-otp", "",
		fmt.Sprintf(`{"otpId":%q,"password":%q}`, otp.OtpID, mailedOTP(t, ctx, sink, u.email)), 200)
}

// mailedOTP waits for the OTP mail to rcpt and returns its code.
func mailedOTP(t *testing.T, ctx context.Context, sink *smtpsink.Sink, rcpt string) string {
	t.Helper()
	for {
		m := sink.Wait(ctx, rcpt, 15*time.Second)
		if m == nil {
			t.Fatalf("no OTP mail to %s within 15 s", rcpt)
		}
		if !strings.HasPrefix(m.Subject, "OTP") {
			continue // another mail (a new login alert)
		}
		code := regexp.MustCompile(`\b\d{6,}\b`).FindString(m.Text)
		if code == "" {
			t.Fatalf("the OTP mail to %s has no code: %s", rcpt, m.Text)
		}
		return code
	}
}

// runMFAScript runs mfa.mjs under node with cfg, answering its "need-code"
// with code(), logs its output, and fails the test if it fails.
func runMFAScript(t *testing.T, ctx context.Context, node, pptr string, cfg map[string]string, code func() string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "dashboard", "mfa.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "PUPPETEER_MODULE="+pptr, "JOURNEY="+string(b))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if sc.Text() == "need-code" {
			if _, err := io.WriteString(stdin, code()+"\n"); err != nil {
				t.Errorf("writing the code to mfa.mjs: %v", err)
			}
		}
	}
	stdin.Close()
	err = cmd.Wait()
	t.Logf("node mfa.mjs:\n%s%s", out.String(), stderr.String())
	if err != nil {
		t.Fatalf("the MFA browser script failed: %v", err)
	}
	return out.String()
}
