package api

import (
	"io"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	strongmail "strongbox/authn/mail"
	"strongbox/conformance/smtpsink"
)

// mailEnv is an env whose Mail is a real Queue with an outbox in the
// test's folder and a transport the test sets.
type mailEnv struct {
	*env
	outbox    string
	transport atomic.Pointer[strongmail.Transport]
}

func newMailEnv(t *testing.T, tlsSink *smtpsink.Sink) *mailEnv {
	t.Helper()
	return newMailEnvSeeded(t, tlsSink, nil)
}

// newMailEnvSeeded is newMailEnv with newEnvSeeded's seed.
func newMailEnvSeeded(t *testing.T, tlsSink *smtpsink.Sink, seed func(t *testing.T, path string)) *mailEnv {
	t.Helper()
	me := &mailEnv{outbox: filepath.Join(t.TempDir(), "mail")}
	me.transport.Store(&strongmail.Transport{})
	cfg := strongmail.QueueConfig{
		Transport: func() strongmail.Transport { return *me.transport.Load() },
		Outbox:    &strongmail.Outbox{Dir: me.outbox},
		Logger:    slog.New(slog.DiscardHandler),
	}
	if tlsSink != nil {
		cfg.TLSConfig = tlsSink.ClientTLS
	}
	q := strongmail.NewQueue(cfg)
	t.Cleanup(func() { q.Close(t.Context()) })
	me.env = newEnvSeeded(t, Config{Mail: q}, HTTPConfig{}, nil, seed)
	return me
}

// TestSettingsTestEmailStatuses: who may call the route, and the
// validation of its body.
func TestSettingsTestEmailStatuses(t *testing.T) {
	t.Parallel()
	e := newMailEnvSeeded(t, nil, withBaseCollection("posts"))
	user := e.userToken()
	tests := []struct {
		name, token, body string
		status            int
		want              string // the exact body
	}{
		{"guest", "", `{"email":"a@example.com","template":"otp"}`, 401,
			`{"data":{},"message":"The request requires valid record authorization token.","status":401}`},
		{"user", user, `{"email":"a@example.com","template":"otp"}`, 403,
			`{"data":{},"message":"The authorized record is not allowed to perform this action.","status":403}`},
		{"empty", e.su, `{}`, 400,
			`{"data":{"email":{"code":"validation_required","message":"Cannot be blank."},"template":{"code":"validation_required","message":"Cannot be blank."}},"message":"Failed to send the test email.","status":400}`},
		{"bad values", e.su, `{"email":"nope","template":"welcome","collection":"posts"}`, 400,
			`{"data":{"collection":{"code":"validation_invalid_auth_collection","message":"Must be a valid auth collection id or name."},"email":{"code":"validation_is_email","message":"Must be a valid email address."},"template":{"code":"validation_in_invalid","message":"Must be a valid value."}},"message":"Failed to send the test email.","status":400}`},
		{"unknown collection", e.su, `{"email":"a@example.com","template":"otp","collection":"nope"}`, 400,
			`{"data":{"collection":{"code":"validation_invalid_auth_collection","message":"Must be a valid auth collection id or name."}},"message":"Failed to send the test email.","status":400}`},
		{"not a string", e.su, `{"email":1,"template":"otp"}`, 400,
			`{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`},
		{"ok", e.su, `{"email":"a@example.com","template":"otp"}`, 204, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("POST", "/api/settings/test/email", tt.token, tt.body)
			if res.Status != tt.status || strings.TrimSpace(string(res.Body)) != tt.want {
				t.Errorf("POST %s = %d %s, want %d %s", tt.body, res.Status, res.Body, tt.status, tt.want)
			}
		})
	}
}

// TestSettingsTestEmailOutbox: with SMTP disabled the mail is in the
// outbox when the route answers, rendered from the collection's template.
func TestSettingsTestEmailOutbox(t *testing.T) {
	t.Parallel()
	e := newMailEnv(t, nil)
	res := e.do("POST", "/api/settings/test/email", e.su, `{"email":"to@example.com","template":"verification","collection":"users"}`)
	if res.Status != 204 {
		t.Fatalf("POST = %d %s, want 204", res.Status, res.Body)
	}
	es, err := os.ReadDir(e.outbox)
	if err != nil || len(es) != 1 {
		t.Fatalf("outbox = %v %v, want one mail", es, err)
	}
	// The 204 names the file, and only its name (no server path).
	if got := res.Header.Get("Strongbox-Outbox-File"); got != es[0].Name() {
		t.Errorf("Strongbox-Outbox-File = %q, want the outbox file's name %q", got, es[0].Name())
	}
	f, err := os.Open(filepath.Join(e.outbox, es[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msg, err := mail.ReadMessage(f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(msg.Body)
	checks := []struct{ name, got, want string }{
		{"Subject", msg.Header.Get("Subject"), "Verify your Acme email"},
		{"From", msg.Header.Get("From"), `"Support" <support@example.com>`},
		{"To", msg.Header.Get("To"), "<to@example.com>"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if want := "http://localhost:8090/_/#/auth/confirm-verification/__pb_test_token__"; !strings.Contains(string(b), want) {
		t.Errorf("body = %s, want it to hold %s", b, want)
	}
}

// TestSettingsTestEmailSMTP sends through a loopback sink, and reports a
// failure with the server's reply and without the password.
func TestSettingsTestEmailSMTP(t *testing.T) {
	t.Parallel()
	sink := smtpsink.Start(t, smtpsink.Options{StartTLS: true, Username: "u", Password: "right"})
	e := newMailEnv(t, sink)
	smtp := strongmail.SMTPConfig{Host: sink.Host, Port: sink.Port, Username: "u", Password: "right", StepTimeout: 10 * time.Second}
	from := mail.Address{Name: "Support", Address: "support@example.com"}
	e.transport.Store(&strongmail.Transport{SMTPEnabled: true, SMTP: smtp, From: from})
	res := e.do("POST", "/api/settings/test/email", e.su, `{"email":"to@example.com","template":"otp"}`)
	if res.Status != 204 {
		t.Fatalf("POST = %d %s, want 204", res.Status, res.Body)
	}
	if h := res.Header.Get("Strongbox-Outbox-File"); h != "" {
		t.Errorf("a mail SMTP took has Strongbox-Outbox-File %q, want none", h)
	}
	got := sink.Next(t)
	if !got.TLS || got.AuthMech != "PLAIN" || strings.Join(got.To, ",") != "to@example.com" {
		t.Errorf("sink session TLS %v mech %q to %q", got.TLS, got.AuthMech, got.To)
	}
	if !strings.Contains(string(got.Data), "Subject: OTP for Acme\r\n") || !strings.Contains(string(got.Data), "123456") {
		t.Errorf("mail = %s, want the OTP template with code 123456", got.Data)
	}

	smtp.Password = "s3cret-wrong"
	e.transport.Store(&strongmail.Transport{SMTPEnabled: true, SMTP: smtp, From: from})
	res = e.do("POST", "/api/settings/test/email", e.su, `{"email":"to@example.com","template":"otp"}`)
	want := `{"data":{},"message":"Failed to send the test email: mail: smtp auth: 535 5.7.8 authentication credentials invalid.","status":400}`
	if res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("POST with a wrong password = %d %s, want 400 %s", res.Status, res.Body, want)
	}
}

// TestSettingsTestEmailNoSender: without a Sender the route says so.
func TestSettingsTestEmailNoSender(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.do("POST", "/api/settings/test/email", e.su, `{"email":"to@example.com","template":"otp"}`)
	want := `{"data":{},"message":"Failed to send the test email: mail: no mail transport is configured.","status":400}`
	if res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("POST = %d %s, want 400 %s", res.Status, res.Body, want)
	}
}
