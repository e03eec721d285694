package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"strongbox/conformance/smtpsink"
)

const (
	dashEmail    = "dashboard@example.com"
	dashPassword = "dashboard-superuser-pw"
	dashUserPW   = "user-password-1"
)

// TestDashboardBrowser walks through the dashboard's first slice in
// headless Chromium (testdata/dashboard/journey.mjs, driven by
// puppeteer-core): the superuser signs in and out; three users follow the
// links of real mails (sent to an SMTP sink, meta.appURL the server) to
// reset a password, verify an address and change an address; a used and a
// malformed token show their error; no console or page error on the way.
// The server then shows each change. It runs when STRONGBOX_CHROMIUM names
// the browser and STRONGBOX_PUPPETEER an installed puppeteer-core package
// (.ci/run installs both), and skips while the server answers GET /_/ with
// 404. Screenshots go to $STRONGBOX_ARTIFACTS (else a temporary dir):
//
//	apt-get install --no-install-recommends chromium
//	npm install --prefix /tmp/pptr puppeteer-core@24.43.1
//	STRONGBOX_CHROMIUM=/usr/bin/chromium STRONGBOX_PUPPETEER=/tmp/pptr/node_modules/puppeteer-core \
//	  go test -run TestDashboardBrowser -v .
func TestDashboardBrowser(t *testing.T) {
	chromium, pptr, node := browserTools(t)
	sink := smtpsink.Start(t, smtpsink.Options{})
	ts := startServer(t, t.TempDir(), map[string]string{
		"STRONGBOX_SUPERUSER_EMAIL": dashEmail, "STRONGBOX_SUPERUSER_PASSWORD": dashPassword,
	})
	walkDashboard(t, ts.base, node, chromium, pptr, sink)
}

// walkDashboard runs the journey against the server at base, whose mail
// goes to sink, and checks what the server then shows.
func walkDashboard(t *testing.T, base, node, chromium, pptr string, sink *smtpsink.Sink) {
	d := &dashAPI{t: t, base: base}
	if code, _ := d.call("GET", "/_/", "", ""); code == http.StatusNotFound {
		t.Skip("the dashboard is not served here: GET /_/ answered 404")
	}
	d.su = d.login("_superusers", dashEmail, dashPassword)
	d.mustCall("PATCH", "/api/settings", d.su, fmt.Sprintf(`{"smtp":{"enabled":true,"host":%q,"port":%d,"tls":false},"meta":{"appURL":%q}}`,
		sink.Host, sink.Port, base), 200)

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	reset, verify, change := d.newUser("reset"), d.newUser("verify"), d.newUser("change")
	newEmail := "changed-" + change.email
	d.mustCall("POST", "/api/collections/users/request-password-reset", "", fmt.Sprintf(`{"email":%q}`, reset.email), 204)
	d.mustCall("POST", "/api/collections/users/request-verification", "", fmt.Sprintf(`{"email":%q}`, verify.email), 204)
	d.mustCall("POST", "/api/collections/users/request-email-change", d.login("users", change.email, dashUserPW),
		fmt.Sprintf(`{"newEmail":%q}`, newEmail), 204)
	journey := map[string]string{
		"base": base, "chromium": chromium, "shots": dashArtifacts(t),
		"email": dashEmail, "password": dashPassword, "userPassword": dashUserPW, "newPassword": "new-password-2",
		"resetLink":       mailedLink(t, ctx, sink, reset.email, base, "confirm-password-reset"),
		"verifyLink":      mailedLink(t, ctx, sink, verify.email, base, "confirm-verification"),
		"emailChangeLink": mailedLink(t, ctx, sink, newEmail, base, "confirm-email-change"),
	}
	out := runJourney(t, ctx, node, pptr, journey)

	// The server shows what the pages did.
	d.login("users", reset.email, journey["newPassword"])
	if rec := d.record(verify.id); rec["verified"] != true {
		t.Errorf("after the verification page, the record reads verified %v, want true", rec["verified"])
	}
	if rec := d.record(change.id); rec["email"] != newEmail {
		t.Errorf("after the email change page, the record's email is %v, want %s", rec["email"], newEmail)
	}
	// The used link's page shows the envelope's message.
	tok := journey["resetLink"][strings.LastIndex(journey["resetLink"], "/")+1:]
	_, body := d.call("POST", "/api/collections/users/confirm-password-reset", "",
		fmt.Sprintf(`{"token":%q,"password":"x-again-123","passwordConfirm":"x-again-123"}`, tok))
	var env struct{ Message string }
	if json.Unmarshal(body, &env) != nil || env.Message == "" {
		t.Fatalf("confirm-password-reset with the used token answered %s, want an error envelope", body)
	}
	if alert := journeyAlert(out, "used-reset"); !strings.Contains(alert, env.Message) {
		t.Errorf("the used reset link's page alerts %q, want the envelope's message %q (%s)", alert, env.Message, body)
	}
}

// runJourney runs journey.mjs, whose 9 steps must all pass.
func runJourney(t *testing.T, ctx context.Context, node, pptr string, journey map[string]string) string {
	return runDashScript(t, ctx, node, pptr, "journey.mjs", journey, 9)
}

// runDashScript runs the browser script testdata/dashboard/NAME under node
// within ctx with cfg as its JOURNEY, logs its output and the screenshots
// it took, and fails the test unless it succeeded: with steps > 0, exactly
// that many steps reported ok (a script that stops early fails too);
// otherwise it took a screenshot at least.
func runDashScript(t *testing.T, ctx context.Context, node, pptr, name string, cfg any, steps int) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "dashboard", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "PUPPETEER_MODULE="+pptr, "JOURNEY="+string(b))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("node %s:\n%s", name, out.String())
	if err != nil {
		t.Fatalf("the browser script %s failed: %v", name, err)
	}
	if strings.Contains(out.String(), "\nFAIL ") {
		t.Fatal("a step failed")
	}
	if n := len(regexp.MustCompile(`(?m)^ok `).FindAllIndex(out.Bytes(), -1)); steps > 0 && n != steps {
		t.Fatalf("%d steps passed, want %d", n, steps)
	}
	shots := regexp.MustCompile(`(?m)^shot (.*)$`).FindAllStringSubmatch(out.String(), -1)
	if steps == 0 && len(shots) == 0 {
		t.Error("the script took no screenshot")
	}
	for _, shot := range shots {
		t.Logf("screenshot: %s", shot[1])
	}
	return out.String()
}

// journeyAlert is the alert text the journey reported for step name.
func journeyAlert(out, name string) string {
	m := regexp.MustCompile(`(?m)^alert ` + name + ` (.*)$`).FindStringSubmatch(out)
	var s string
	if m == nil || json.Unmarshal([]byte(m[1]), &s) != nil {
		return ""
	}
	return s
}

// browserTools returns the Chromium executable and the puppeteer-core
// package the browser tests drive (STRONGBOX_CHROMIUM, STRONGBOX_PUPPETEER)
// and node: it skips the test when either variable is unset, and fails it
// when they are set but node is missing.
func browserTools(t *testing.T) (chromium, pptr, node string) {
	t.Helper()
	chromium, pptr = os.Getenv("STRONGBOX_CHROMIUM"), os.Getenv("STRONGBOX_PUPPETEER")
	if chromium == "" || pptr == "" {
		t.Skip("no browser: set STRONGBOX_CHROMIUM to a Chromium executable and STRONGBOX_PUPPETEER to an installed puppeteer-core package (.ci/run installs both)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("STRONGBOX_PUPPETEER is set but node is not installed")
	}
	return chromium, pptr, node
}

// dashArtifacts is the dir the screenshots go to: $STRONGBOX_ARTIFACTS if
// set (created if need be), else a temporary dir of the test.
func dashArtifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("STRONGBOX_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, "dashboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// mailedLink waits for the mail to rcpt and returns its dashboard link of
// this action ({APP_URL}/_/#/auth/ACTION/TOKEN), which must start at base.
func mailedLink(t *testing.T, ctx context.Context, sink *smtpsink.Sink, rcpt, base, action string) string {
	t.Helper()
	m := sink.Wait(ctx, rcpt, 15*time.Second)
	if m == nil {
		t.Fatalf("no mail to %s within 15 s", rcpt)
	}
	link := regexp.MustCompile(`https?://[^\s"'<>]+/_/#/auth/` + action + `/[A-Za-z0-9_.-]+`).FindString(m.Text)
	if !strings.HasPrefix(link, base+"/_/#/auth/") {
		t.Fatalf("the mail to %s has no link %s/_/#/auth/%s/TOKEN: %s", rcpt, base, action, m)
	}
	return link
}

// dashServed starts a server whose first superuser is dashEmail, with the
// variables of extra too, and returns it with a dashAPI on it; it skips the
// test when this build serves no dashboard (GET /_/ answers 404).
func dashServed(t *testing.T, extra map[string]string) (*testServer, *dashAPI) {
	t.Helper()
	env := map[string]string{"STRONGBOX_SUPERUSER_EMAIL": dashEmail, "STRONGBOX_SUPERUSER_PASSWORD": dashPassword}
	maps.Copy(env, extra)
	ts := startServer(t, t.TempDir(), env)
	d := &dashAPI{t: t, base: ts.base}
	if code, _ := d.call("GET", "/_/", "", ""); code == http.StatusNotFound {
		t.Skip("the dashboard is not served here: GET /_/ answered 404")
	}
	return ts, d
}

// dashAPI calls the server's JSON API for TestDashboardBrowser.
type dashAPI struct {
	t    *testing.T
	base string
	su   string // the superuser's token
}

type dashUser struct{ id, email string }

func (d *dashAPI) call(method, path, token, body string) (int, []byte) {
	d.t.Helper()
	req, err := http.NewRequest(method, d.base+path, strings.NewReader(body))
	if err != nil {
		d.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	return res.StatusCode, b
}

func (d *dashAPI) mustCall(method, path, token, body string, want int) []byte {
	d.t.Helper()
	code, b := d.call(method, path, token, body)
	if code != want {
		d.t.Fatalf("%s %s %s = %d %s, want %d", method, path, body, code, b, want)
	}
	return b
}

// login signs in to collection and returns the token.
func (d *dashAPI) login(collection, email, password string) string {
	d.t.Helper()
	b := d.mustCall("POST", "/api/collections/"+collection+"/auth-with-password", "",
		fmt.Sprintf(`{"identity":%q,"password":%q}`, email, password), 200)
	var v struct{ Token string }
	if json.Unmarshal(b, &v) != nil || v.Token == "" {
		d.t.Fatalf("sign in %s %s: no token in %s", collection, email, b)
	}
	return v.Token
}

// newUser creates a user of users with the password dashUserPW.
func (d *dashAPI) newUser(name string) dashUser {
	d.t.Helper()
	email := name + "@example.com"
	b := d.mustCall("POST", "/api/collections/users/records", d.su,
		fmt.Sprintf(`{"email":%q,"password":%q,"passwordConfirm":%q}`, email, dashUserPW, dashUserPW), 200)
	var v struct{ ID string }
	if json.Unmarshal(b, &v) != nil || v.ID == "" {
		d.t.Fatalf("create user %s: no id in %s", email, b)
	}
	return dashUser{id: v.ID, email: email}
}

func (d *dashAPI) record(id string) map[string]any {
	d.t.Helper()
	var rec map[string]any
	if b := d.mustCall("GET", "/api/collections/users/records/"+id, d.su, "", 200); json.Unmarshal(b, &rec) != nil {
		d.t.Fatalf("record %s: %s", id, b)
	}
	return rec
}
