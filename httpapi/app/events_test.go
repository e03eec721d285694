package app

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"strongbox/backup/age"
	"strongbox/conformance/smtpsink"
)

// eventsServer is a server whose stderr the test reads, with a superuser
// token and a helper that calls the API expecting a status.
type eventsServer struct {
	*testServer
	stderr *logBuffer
	token  string
	t      *testing.T
}

func startEventsServer(t *testing.T, edit func(*Config)) *eventsServer {
	t.Helper()
	stderr := &logBuffer{}
	ts := startServer(t, t.TempDir(), func(c *Config) {
		c.Logger = stderr.logger()
		c.Version = "v9.9.9-test"
		if edit != nil {
			edit(c)
		}
	}, nil)
	return &eventsServer{testServer: ts, stderr: stderr, token: ts.login(t), t: t}
}

func (es *eventsServer) call(method, path, body string, want int) []byte {
	es.t.Helper()
	code, b, err := es.do(es.t, method, path, es.token, body)
	if err != nil || code != want {
		es.t.Fatalf("%s %s %s = %d %s %v, want %d", method, path, body, code, b, err, want)
	}
	return b
}

// events returns the stored entries the filter selects, oldest first,
// once the log store has written what was added.
func (es *eventsServer) events(filter string) []map[string]any {
	es.t.Helper()
	if err := es.stores.Logs.Flush(); err != nil {
		es.t.Fatal(err)
	}
	b := es.call("GET", "/api/logs?perPage=500&sort=rowid&filter="+url.QueryEscape(filter), "", 200)
	var p struct{ Items []map[string]any }
	if err := json.Unmarshal(b, &p); err != nil {
		es.t.Fatal(err)
	}
	return p.Items
}

// TestEventsInLogStore: the server's events (start, audit trail, a failed
// restore with its reason) are in the log store with a level and no
// data.type, so that a filter tells them from the request logs; the
// settings change names the superuser and the keys changed.
func TestEventsInLogStore(t *testing.T) {
	t.Parallel()
	es := startEventsServer(t, nil)
	es.call("PATCH", "/api/settings", `{"meta":{"appName":"Audited"},"logs":{"logIP":false}}`, 200)
	es.call("POST", "/api/backups/cf_missing.zip/restore", "", 400)

	own := es.events(`data.type != "request"`)
	byMsg := map[string]map[string]any{}
	for _, e := range own {
		d, _ := e["data"].(map[string]any)
		if _, ok := d["type"]; ok {
			t.Errorf("event %v has data.type", e)
		}
		byMsg[e["message"].(string)] = e
	}
	want := []struct {
		msg   string
		level float64
		data  map[string]any
	}{
		{"server started", 0, map[string]any{"version": "v9.9.9-test"}},
		{"settings changed", 0, map[string]any{"superuserEmail": testEmail, "changed": []any{"logs", "meta"}}},
		{"backup restore failed", 4, map[string]any{"superuserEmail": testEmail, "key": "cf_missing.zip", "reason": "no backup by that key"}},
	}
	for _, w := range want {
		e, ok := byMsg[w.msg]
		if !ok {
			t.Errorf("no event %q among %v", w.msg, own)
			continue
		}
		d := e["data"].(map[string]any)
		if e["level"] != w.level {
			t.Errorf("%q: level %v, want %v", w.msg, e["level"], w.level)
		}
		for k, v := range w.data {
			if got, _ := json.Marshal(d[k]); string(got) != mustJSON(v) {
				t.Errorf("%q: data.%s = %s, want %s", w.msg, k, got, mustJSON(v))
			}
		}
	}
	audit := byMsg["settings changed"]
	if d, _ := audit["data"].(map[string]any); d["superuserId"] == "" || d["superuserId"] == nil {
		t.Errorf("settings changed: no superuserId in %v", d)
	}
	var one map[string]any
	json.Unmarshal(es.call("GET", fmt.Sprintf("/api/logs/%v", audit["id"]), "", 200), &one)
	if mustJSON(one) != mustJSON(audit) {
		t.Errorf("GET /api/logs/{id} = %v, listed as %v", one, audit)
	}
	// level > 0 selects the failure among every entry, the request
	// logs' included; stats count the events with the request logs.
	if got := es.events(`level > 0 && data.type != "request"`); len(got) != 1 || got[0]["message"] != "backup restore failed" {
		t.Errorf("level > 0 events: %v", got)
	}
	var stats []struct{ Total int }
	json.Unmarshal(es.call("GET", "/api/logs/stats", "", 200), &stats)
	total := 0
	for _, s := range stats {
		total += s.Total
	}
	if all := len(es.events("")); total != all {
		t.Errorf("stats count %d entries, the list %d", total, all)
	}

	// logs.minLevel applies to the events from the change on.
	es.call("PATCH", "/api/settings", `{"logs":{"minLevel":5}}`, 200)
	es.call("POST", "/api/backups/cf_missing.zip/restore", "", 400)
	es.call("PATCH", "/api/settings", `{"logs":{"minLevel":4}}`, 200)
	es.call("POST", "/api/backups/cf_missing.zip/restore", "", 400)
	if got := es.events(`message = "backup restore failed"`); len(got) != 2 {
		t.Errorf("%d restore failures stored, want 2 (none while minLevel was 5)", len(got))
	}
	if got := es.events(`message = "settings changed"`); len(got) != 1 {
		t.Errorf("%d settings changes stored, want 1 (info is below minLevel 5, then 4)", len(got))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEventsHoldNoSecrets sets every kind of secret (the superuser's
// password and token, the SMTP password, the S3 secrets, the age identity
// of encrypted backups, an OAuth2 client
// secret a provider echoes back), triggers the events that touch them (a
// settings and a collection change, mail through the outbox and through an
// SMTP server that refuses the password, a provider error, an OTP and a
// password reset, a failed and a successful (encrypted) backup) and scans every stored
// entry and stderr for them, and for the OTP code and the reset token the
// mails carried.
func TestEventsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	sink := smtpsink.Start(t, smtpsink.Options{StartTLS: true, Username: "mailer", Password: "the-right-one"})
	es := startEventsServer(t, func(c *Config) { c.MailTLSConfig = sink.ClientTLS })
	secret := func(what string) string { return "cfsecret-" + what + "-" + fmt.Sprint(time.Now().UnixNano()) }
	smtpPass, s3Secret, backupS3, clientSecret := secret("smtp"), secret("s3"), secret("backups3"), secret("client")
	ageID, err := age.GenerateX25519Identity(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	identity := ageID.String()

	// A provider that refuses the code and echoes the client secret.
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad secret %s"}`, r.PostForm.Get("client_secret"))
	}))
	t.Cleanup(provider.Close)
	es.call("PATCH", "/api/collections/users", fmt.Sprintf(`{"oauth2":{"enabled":true,"providers":[{"name":"oidc","clientId":"cid","clientSecret":%q,"authURL":%q,"tokenURL":%q,"userInfoURL":%q}]},"otp":{"enabled":true}}`,
		clientSecret, provider.URL+"/auth", provider.URL+"/token", provider.URL+"/userinfo"), 200)
	es.call("PATCH", "/api/settings", fmt.Sprintf(`{"smtp":{"enabled":false,"host":%q,"port":%d,"username":"mailer","password":%q,"authMethod":"PLAIN"},"s3":{"accessKey":"ak","secret":%q},"backups":{"s3":{"accessKey":"ak","secret":%q},"encryption":{"enabled":true,"identity":%q}}}`,
		sink.Host, sink.Port, smtpPass, s3Secret, backupS3, identity), 200)

	// Mail through the outbox: an OTP and a password reset.
	es.call("POST", "/api/collections/users/records", `{"email":"u@example.com","password":"user-password-1","passwordConfirm":"user-password-1"}`, 200)
	es.call("POST", "/api/collections/users/request-otp", `{"email":"u@example.com"}`, 200)
	es.call("POST", "/api/collections/users/request-password-reset", `{"email":"u@example.com"}`, 204)
	es.call("POST", "/api/collections/users/auth-with-oauth2", `{"provider":"oidc","code":"c","codeVerifier":"v","redirectURL":"http://127.0.0.1/cb"}`, 400)
	es.call("POST", "/api/backups/cf_missing.zip/restore", "", 400)
	es.call("POST", "/api/backups", `{"name":"cf_ok.zip"}`, 204)
	es.call("DELETE", "/api/backups/cf_ok.zip", "", 204)

	secrets := map[string]string{
		"the superuser password": testPassword, "the superuser token": es.token, "the user password": "user-password-1",
		"the SMTP password": smtpPass, "the S3 secret": s3Secret, "the backups S3 secret": backupS3, "the client secret": clientSecret,
		"the backups age identity": identity, "the age identity's key data": identity[15:60],
	}
	mails := waitOutbox(t, es.dir, 2)
	for i, m := range mails {
		for _, code := range regexp.MustCompile(`<strong>([^<]+)</strong>`).FindAllStringSubmatch(m, -1) {
			secrets[fmt.Sprintf("the OTP code of mail %d", i)] = code[1]
		}
		for _, tok := range regexp.MustCompile(`eyJ[\w-]+\.[\w-]+\.[\w-]+`).FindAllString(m, -1) {
			secrets[fmt.Sprintf("a token of mail %d", i)] = tok
		}
	}
	if len(secrets) < 11 {
		t.Fatalf("found no OTP code or reset token in the mails:\n%s", strings.Join(mails, "\n"))
	}

	// Mail through SMTP, which refuses the password.
	es.call("PATCH", "/api/settings", `{"smtp":{"enabled":true}}`, 200)
	es.call("POST", "/api/collections/users/records", `{"email":"v@example.com","password":"user-password-1","passwordConfirm":"user-password-1"}`, 200)
	es.call("POST", "/api/collections/users/request-password-reset", `{"email":"v@example.com"}`, 204)
	es.call("POST", "/api/settings/test/email", `{"email":"to@example.com","template":"otp"}`, 400)
	failed := waitEvents(t, es, `message = "mail: send failed"`)
	if d, _ := failed[0]["data"].(map[string]any); !strings.Contains(fmt.Sprint(d["err"]), "535") {
		t.Errorf("mail: send failed without the server's reason: %v", d)
	}
	wantEvents := []string{"settings changed", "collection updated", "mail: test email failed", "oauth2: provider error", "backup restore failed", "backup created", "backup deleted"}
	all := es.events("")
	var got []string
	for _, e := range all {
		got = append(got, e["message"].(string))
	}
	for _, w := range wantEvents {
		if !slices.Contains(got, w) {
			t.Errorf("no event %q among %q", w, got)
		}
	}
	raw, _ := json.Marshal(all)
	for what, s := range secrets {
		if strings.Contains(string(raw), s) {
			t.Errorf("the log store holds %s", what)
		}
		if strings.Contains(es.stderr.String(), s) {
			t.Errorf("stderr holds %s", what)
		}
	}
}

// waitOutbox returns the mails in the outbox once it holds n, as text with
// quoted-printable soft breaks and =3D undone.
func waitOutbox(t *testing.T, dir string, n int) []string {
	t.Helper()
	var names []os.DirEntry
	waitFor(t, fmt.Sprintf("%d mails in the outbox", n), func() bool {
		names, _ = os.ReadDir(filepath.Join(dir, MailDir))
		return len(names) >= n
	})
	var out []string
	for _, e := range names {
		b, err := os.ReadFile(filepath.Join(dir, MailDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.NewReplacer("=\r\n", "", "=\n", "", "=3D", "=").Replace(string(b)))
	}
	return out
}

// waitEvents returns the entries filter selects once there is one.
func waitEvents(t *testing.T, es *eventsServer, filter string) []map[string]any {
	t.Helper()
	var got []map[string]any
	waitFor(t, "an entry "+filter, func() bool {
		got = es.events(filter)
		return len(got) > 0
	})
	return got
}
