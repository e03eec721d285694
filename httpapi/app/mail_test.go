package app

import (
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	strongmail "strongbox/authn/mail"
	"strongbox/conformance/smtpsink"
)

// TestMailFollowsSettings: the server's mail goes to <data dir>/mail/
// while smtp is disabled and through SMTP once PATCH /api/settings enables
// it, from the start and after a restart (which subscribes anew); the
// password set is never reported back.
func TestMailFollowsSettings(t *testing.T) {
	t.Parallel()
	sink := smtpsink.Start(t, smtpsink.Options{StartTLS: true, Username: "mailer", Password: "smtp-pass"})
	dir := t.TempDir()
	ts := startServer(t, dir, func(c *Config) { c.MailTLSConfig = sink.ClientTLS }, nil)
	token := ts.login(t)
	call := func(method, path, body string, want int) string {
		t.Helper()
		code, b, err := ts.do(t, method, path, token, body)
		if err != nil || code != want {
			t.Fatalf("%s %s %s = %d %s %v, want %d", method, path, body, code, b, err, want)
		}
		return string(b)
	}
	outbox := func() int {
		t.Helper()
		es, err := os.ReadDir(filepath.Join(dir, MailDir))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return len(es)
	}
	testEmail := `{"email":"to@example.com","template":"otp"}`

	call("POST", "/api/settings/test/email", testEmail, 204)
	if n := outbox(); n != 1 {
		t.Fatalf("outbox holds %d mails, want 1", n)
	}
	smtp := fmt.Sprintf(`{"smtp":{"enabled":true,"host":%q,"port":%d,"username":"mailer","password":"smtp-pass","authMethod":"LOGIN"},"meta":{"senderName":"Acme Mail","senderAddress":"noreply@example.com"}}`, sink.Host, sink.Port)
	if b := call("PATCH", "/api/settings", smtp, 200); strings.Contains(b, "smtp-pass") {
		t.Errorf("PATCH answered the password: %s", b)
	}
	for round, restart := range []bool{false, true} {
		if restart {
			if err := ts.Restart(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
		}
		call("POST", "/api/settings/test/email", testEmail, 204)
		got := sink.Next(t)
		if got.AuthMech != "LOGIN" || got.From != "noreply@example.com" || !got.TLS {
			t.Errorf("round %d: sink got mech %q from %q TLS %v, want LOGIN noreply@example.com TLS", round, got.AuthMech, got.From, got.TLS)
		}
		if b := call("GET", "/api/settings", "", 200); strings.Contains(b, "smtp-pass") || strings.Contains(b, `"password"`) {
			t.Errorf("round %d: GET /api/settings reports the password: %s", round, b)
		}
	}
	call("PATCH", "/api/settings", `{"smtp":{"enabled":false}}`, 200)
	call("POST", "/api/settings/test/email", testEmail, 204)
	if n := outbox(); n != 2 {
		t.Errorf("outbox holds %d mails, want 2", n)
	}
	if n := sink.Pending(); n != 0 {
		t.Errorf("sink got %d more mails, want 0", n)
	}
}

// TestMailDrainedOnStop: a mail queued just before the server stops is
// delivered (here, into the outbox) before Run returns.
func TestMailDrainedOnStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := startServer(t, dir, nil, nil)
	m := &strongmail.Message{To: []mail.Address{{Address: "to@example.com"}}, Subject: "s", HTML: "<p>b</p>"}
	if err := ts.mail.Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	es, err := os.ReadDir(filepath.Join(dir, MailDir))
	if err != nil || len(es) != 1 {
		t.Fatalf("outbox = %v %v, want one mail", es, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, MailDir, es[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "From: \"Support\" <support@example.com>\r\n") {
		t.Errorf("mail = %s, want From the default sender", b)
	}
}
