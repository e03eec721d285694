package api

import (
	"net/mail"
	"strings"
	"testing"
	"time"

	strongmail "strongbox/authn/mail"
	"strongbox/conformance/smtpsink"
)

// TestAuthAlertMail: sign-ins through a real mail queue and a loopback
// SMTP sink. The record's first sign-in and a device it used before send
// nothing; a new device (another User-Agent) sends exactly one alert, the
// collection's authAlert template rendered for the record; with authAlert
// disabled a new device sends none. A later mail to the same address,
// queued behind, shows that nothing else was sent before it.
func TestAuthAlertMail(t *testing.T) {
	t.Parallel()
	sink := smtpsink.Start(t, smtpsink.Options{})
	e := newMailEnv(t, nil)
	e.transport.Store(&strongmail.Transport{SMTPEnabled: true,
		SMTP: strongmail.SMTPConfig{Host: sink.Host, Port: sink.Port, StepTimeout: 10 * time.Second},
		From: mail.Address{Name: "Support", Address: "support@example.com"}})
	const email = "ann@example.com"
	e.signUp(email, "password123")
	signIn := func(ua string) {
		t.Helper()
		body := `{"identity":"` + email + `","password":"password123"}`
		res := e.doWith("POST", "/api/collections/users/auth-with-password", "", body, map[string]string{"User-Agent": ua})
		if res.Status != 200 {
			t.Fatalf("sign-in with User-Agent %q = %d %s", ua, res.Status, res.Body)
		}
	}
	// next returns the next mail, which must be to email.
	next := func(step string) smtpsink.Mail {
		t.Helper()
		m := sink.Next(t)
		if strings.Join(m.To, ",") != email {
			t.Fatalf("%s: mail to %v, want %s", step, m.To, email)
		}
		return m
	}
	// nothingBefore queues another account mail to email (flow is
	// request-verification or request-password-reset, each once) and
	// checks it is the next mail the sink gets.
	nothingBefore := func(step, flow, subject string) {
		t.Helper()
		if res := e.do("POST", "/api/collections/users/"+flow, "", map[string]string{"email": email}); res.Status != 204 {
			t.Fatalf("%s = %d %s", flow, res.Status, res.Body)
		}
		if m := next(step); m.Subject != subject {
			t.Errorf("%s: sink got %q before the %s mail, want no mail", step, m.Subject, flow)
		}
	}
	checkAlert := func(step string) {
		t.Helper()
		m := next(step)
		if m.Subject != "Login from a new location" || m.From != "support@example.com" {
			t.Errorf("%s: alert subject %q from %q, want %q from support@example.com", step, m.Subject, m.From, "Login from a new location")
		}
		if want := "We noticed a login to your Acme account from a new location."; !strings.Contains(m.Text, want) {
			t.Errorf("%s: alert body = %s, want it to hold %q", step, m.Text, want)
		}
	}

	signIn("phone/1.0")
	signIn("phone/1.0")
	nothingBefore("first sign-in, then the same device", "request-verification", "Verify your Acme email")

	signIn("laptop/2.0")
	checkAlert("new device")
	signIn("laptop/2.0")
	nothingBefore("the new device again", "request-password-reset", "Reset your Acme password")

	for _, enabled := range []string{"false", "true"} {
		if res := e.do("PATCH", "/api/collections/users", e.su, `{"authAlert":{"enabled":`+enabled+`}}`); res.Status != 200 {
			t.Fatalf("authAlert enabled %s: %d %s", enabled, res.Status, res.Body)
		}
		signIn("tablet/3.0") // with authAlert disabled, not recorded either
	}
	checkAlert("authAlert disabled, then enabled again: the alert is the next mail")
	if n := sink.Pending(); n != 0 {
		t.Errorf("sink holds %d more mails, want 0", n)
	}
}

// TestAuthAlertMethod: a template holding {AUTH_METHOD} names the
// methods of the sign-in the alert is about.
func TestAuthAlertMethod(t *testing.T) {
	t.Parallel()
	sink := smtpsink.Start(t, smtpsink.Options{})
	e := newMailEnv(t, nil)
	e.transport.Store(&strongmail.Transport{SMTPEnabled: true,
		SMTP: strongmail.SMTPConfig{Host: sink.Host, Port: sink.Port, StepTimeout: 10 * time.Second},
		From: mail.Address{Name: "Support", Address: "support@example.com"}})
	const email = "bo@example.com"
	e.signUp(email, "password123")
	if res := e.do("PATCH", "/api/collections/users", e.su,
		`{"authAlert":{"enabled":true,"emailTemplate":{"subject":"New sign-in","body":"<p>By {AUTH_METHOD}.</p>"}}}`); res.Status != 200 {
		t.Fatalf("template: %d %s", res.Status, res.Body)
	}
	for _, ua := range []string{"one/1", "two/2"} {
		body := `{"identity":"` + email + `","password":"password123"}`
		if res := e.doWith("POST", "/api/collections/users/auth-with-password", "", body, map[string]string{"User-Agent": ua}); res.Status != 200 {
			t.Fatalf("sign-in: %d %s", res.Status, res.Body)
		}
	}
	if m := sink.Next(t); !strings.Contains(m.Text, "By password.") {
		t.Errorf("alert body = %q, want it to name the method: By password.", m.Text)
	}
}
