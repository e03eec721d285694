package mail_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"strings"
	"testing"
	"time"

	strongmail "strongbox/authn/mail"
	"strongbox/conformance/smtpsink"
)

var testDate = time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)

func testMessage() *strongmail.Message {
	return &strongmail.Message{
		From:    mail.Address{Name: "Support", Address: "support@example.com"},
		To:      []mail.Address{{Address: "user@example.com"}},
		Subject: "OTP for Acme",
		HTML:    "<p>Hello,</p>\n<p>Your one-time password is: <strong>12345678</strong></p>",
	}
}

func config(s *smtpsink.Sink) strongmail.SMTPConfig {
	return strongmail.SMTPConfig{Host: s.Host, Port: s.Port, TLSConfig: s.ClientTLS, LocalName: "client.test"}
}

func TestSendSMTP(t *testing.T) {
	tests := []struct {
		name     string
		sink     smtpsink.Options
		cfg      func(*strongmail.SMTPConfig)
		wantTLS  bool
		wantMech string
	}{
		{"plain", smtpsink.Options{}, nil, false, ""},
		{"starttls", smtpsink.Options{StartTLS: true}, nil, true, ""},
		{"implicit tls", smtpsink.Options{ImplicitTLS: true}, func(c *strongmail.SMTPConfig) { c.TLS = true }, true, ""},
		{"auth plain default", smtpsink.Options{StartTLS: true, Username: "u", Password: "p@ss"}, func(c *strongmail.SMTPConfig) { c.Username, c.Password = "u", "p@ss" }, true, "PLAIN"},
		{"auth plain", smtpsink.Options{ImplicitTLS: true, Username: "u", Password: "p@ss"}, func(c *strongmail.SMTPConfig) {
			c.TLS, c.Username, c.Password, c.AuthMethod = true, "u", "p@ss", "PLAIN"
		}, true, "PLAIN"},
		{"auth login", smtpsink.Options{StartTLS: true, Username: "u", Password: "p@ss"}, func(c *strongmail.SMTPConfig) {
			c.Username, c.Password, c.AuthMethod = "u", "p@ss", "LOGIN"
		}, true, "LOGIN"},
		{"auth on loopback without tls", smtpsink.Options{Username: "u", Password: "p"}, func(c *strongmail.SMTPConfig) { c.Username, c.Password = "u", "p" }, false, "PLAIN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := smtpsink.Start(t, tt.sink)
			c := config(s)
			if tt.cfg != nil {
				tt.cfg(&c)
			}
			if err := strongmail.SendSMTP(t.Context(), c, testMessage(), testDate); err != nil {
				t.Fatalf("SendSMTP = %v, want nil", err)
			}
			got := s.Next(t)
			if got.TLS != tt.wantTLS || got.AuthMech != tt.wantMech || got.Helo != "client.test" {
				t.Errorf("session TLS=%v mech=%q helo=%q, want TLS=%v mech=%q helo=client.test", got.TLS, got.AuthMech, got.Helo, tt.wantTLS, tt.wantMech)
			}
			if got.From != "support@example.com" || strings.Join(got.To, ",") != "user@example.com" {
				t.Errorf("envelope %q -> %q", got.From, got.To)
			}
			msg, err := mail.ReadMessage(strings.NewReader(string(got.Data)))
			if err != nil {
				t.Fatalf("ReadMessage: %v", err)
			}
			if g, w := msg.Header.Get("Subject"), "OTP for Acme"; g != w {
				t.Errorf("Subject = %q, want %q", g, w)
			}
			if g, w := msg.Header.Get("From"), `"Support" <support@example.com>`; g != w {
				t.Errorf("From = %q, want %q", g, w)
			}
		})
	}
}

func TestSendSMTPFailures(t *testing.T) {
	tests := []struct {
		name     string
		sink     smtpsink.Options
		cfg      func(*strongmail.SMTPConfig)
		wantStep string
		wantText string
		wantIs   error
	}{
		{"wrong password", smtpsink.Options{StartTLS: true, Username: "u", Password: "right"}, func(c *strongmail.SMTPConfig) { c.Username, c.Password = "u", "s3cret-wrong" }, "auth", "535 5.7.8 authentication credentials invalid", nil},
		{"wrong password login", smtpsink.Options{StartTLS: true, Username: "u", Password: "right"}, func(c *strongmail.SMTPConfig) {
			c.Username, c.Password, c.AuthMethod = "u", "s3cret-wrong", "LOGIN"
		}, "auth", "535 5.7.8", nil},
		{"auth required", smtpsink.Options{Username: "u", Password: "p"}, nil, "mail", "530 5.7.0 authentication required", nil},
		{"recipient rejected", smtpsink.Options{RejectRcpt: true}, nil, "rcpt", "550 5.1.1 mailbox unavailable", nil},
		{"untrusted certificate", smtpsink.Options{StartTLS: true}, func(c *strongmail.SMTPConfig) { c.TLSConfig = nil }, "starttls", "certificate", nil},
		{"tls to a plain server", smtpsink.Options{}, func(c *strongmail.SMTPConfig) { c.TLS = true }, "tls", "", nil},
		{"unknown auth method", smtpsink.Options{}, func(c *strongmail.SMTPConfig) { c.Username, c.AuthMethod = "u", "CRAM-MD5" }, "auth", `unknown auth method "CRAM-MD5"`, nil},
		{"hang at greeting", smtpsink.Options{Hang: smtpsink.HangGreeting}, func(c *strongmail.SMTPConfig) { c.StepTimeout = 50 * time.Millisecond }, "hello", "", os.ErrDeadlineExceeded},
		{"hang after data", smtpsink.Options{Hang: smtpsink.HangData}, func(c *strongmail.SMTPConfig) { c.StepTimeout = 50 * time.Millisecond }, "data", "", os.ErrDeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := smtpsink.Start(t, tt.sink)
			c := config(s)
			if tt.cfg != nil {
				tt.cfg(&c)
			}
			err := strongmail.SendSMTP(t.Context(), c, testMessage(), testDate)
			se, ok := errors.AsType[*strongmail.SMTPError](err)
			if !ok {
				t.Fatalf("SendSMTP = %v, want an *SMTPError", err)
			}
			if se.Step != tt.wantStep || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("SendSMTP = %q (step %s), want step %s containing %q", err, se.Step, tt.wantStep, tt.wantText)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("SendSMTP = %v, want errors.Is %v", err, tt.wantIs)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("SendSMTP = %q: holds the password", err)
			}
			if n := s.Pending(); n != 0 {
				t.Errorf("sink accepted %d mails, want 0", n)
			}
		})
	}
}

func TestSendSMTPContext(t *testing.T) {
	s := smtpsink.Start(t, smtpsink.Options{Hang: smtpsink.HangGreeting})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- strongmail.SendSMTP(ctx, config(s), testMessage(), testDate) }()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("SendSMTP = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SendSMTP did not return after its context ended")
	}
}

func TestSendSMTPHeaderInjection(t *testing.T) {
	tests := []struct {
		name string
		edit func(*strongmail.Message)
		want error
	}{
		{"subject CRLF", func(m *strongmail.Message) { m.Subject = "hi\r\nBcc: victim@example.com" }, strongmail.ErrHeaderInjection},
		{"subject LF", func(m *strongmail.Message) { m.Subject = "hi\nX: y" }, strongmail.ErrHeaderInjection},
		{"to CR", func(m *strongmail.Message) { m.To[0].Address = "a@example.com\rRCPT TO:<b@example.com>" }, strongmail.ErrHeaderInjection},
		{"from name LF", func(m *strongmail.Message) { m.From.Name = "Support\nBcc: x@example.com" }, strongmail.ErrHeaderInjection},
		{"to two addresses", func(m *strongmail.Message) { m.To[0].Address = "a@example.com, b@example.com" }, strongmail.ErrInvalidMessage},
		{"to angle", func(m *strongmail.Message) { m.To[0].Address = "a@example.com>" }, strongmail.ErrInvalidMessage},
		{"no recipient", func(m *strongmail.Message) { m.To = nil }, strongmail.ErrInvalidMessage},
		{"no sender", func(m *strongmail.Message) { m.From = mail.Address{} }, strongmail.ErrInvalidMessage},
	}
	s := smtpsink.Start(t, smtpsink.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMessage()
			tt.edit(m)
			if err := strongmail.SendSMTP(t.Context(), config(s), m, testDate); !errors.Is(err, tt.want) {
				t.Errorf("SendSMTP = %v, want %v", err, tt.want)
			}
		})
	}
	if n := s.Pending(); n != 0 {
		t.Errorf("sink accepted %d mails, want 0", n)
	}
}

func TestEncode(t *testing.T) {
	m := testMessage()
	m.From.Name = "Équipe"
	m.Subject = "Vérifiez {x}"
	var b strings.Builder
	if err := m.Encode(&b, testDate); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ReplaceAll(b.String(), "\r\n", ""), "\n") {
		t.Errorf("Encode wrote a bare LF")
	}
	msg, err := mail.ReadMessage(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	subj, err := mimeDecoder.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	from, err := msg.Header.AddressList("From")
	if err != nil {
		t.Fatal(err)
	}
	date, err := msg.Header.Date()
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ name, got, want string }{
		{"Subject", subj, "Vérifiez {x}"},
		{"From", from[0].String(), m.From.String()},
		{"To", msg.Header.Get("To"), "<user@example.com>"},
		{"Date", date.UTC().String(), testDate.String()},
		{"MIME-Version", msg.Header.Get("MIME-Version"), "1.0"},
		{"Message-ID at", strings.SplitN(msg.Header.Get("Message-ID"), "@", 2)[1], "example.com>"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	parts := readParts(t, msg)
	if want := "Hello,\r\n\r\nYour one-time password is: 12345678"; parts["text/plain"] != want {
		t.Errorf("text part = %q, want %q", parts["text/plain"], want)
	}
	if want := strings.ReplaceAll(m.HTML, "\n", "\r\n"); parts["text/html"] != want {
		t.Errorf("html part = %q, want %q", parts["text/html"], want)
	}
}

func TestHTMLToText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"<p>a</p><p>b</p>", "a\n\nb"},
		{"<p>a</p>\n\n\n<p>b</p>\n", "a\n\nb"},
		{"<ul><li>a</li><li>b</li></ul>", "a\nb"},
		{"one\ntwo", "one two"},
		{"a<br/>b<BR>c", "a\nb\nc"},
		{`<a class="btn" href="http://x/_/#/auth/confirm-verification/T" target="_blank">Verify</a>`, "Verify (http://x/_/#/auth/confirm-verification/T)"},
		{"<p>\n  Thanks,<br/>\n  Acme team\n</p>", "Thanks,\nAcme team"},
		{"Tom &amp; Jerry &lt;3", "Tom & Jerry <3"},
		{"a < b", "a < b"},
	}
	for _, tt := range tests {
		if got := strongmail.HTMLToText(tt.in); got != tt.want {
			t.Errorf("HTMLToText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

var mimeDecoder mime.WordDecoder

// readParts returns the decoded parts of a multipart/alternative message
// by content type.
func readParts(t *testing.T, msg *mail.Message) map[string]string {
	t.Helper()
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type = %q (%v), want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	parts := map[string]string{}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart() // decodes quoted-printable
		if err == io.EOF {
			return parts
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		parts[ct] = string(b)
	}
}

func TestSMTPConfigHidesPassword(t *testing.T) {
	c := strongmail.SMTPConfig{Host: "smtp.example.com", Port: 587, Username: "u", Password: "s3cret"}
	tr := strongmail.Transport{SMTPEnabled: true, SMTP: c}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("t", "smtp", c)
	for _, got := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", tr), fmt.Sprintf("%v", &tr), logged.String()} {
		if strings.Contains(got, "s3cret") {
			t.Errorf("printed %q: holds the password", got)
		}
	}
	want := `smtp{host:smtp.example.com port:587 tls:false username:"u" password:(set) authMethod:"" localName:""}`
	if got := c.String(); got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
}

// TestEncodeLongHeaders: long subjects and recipient lists are folded
// into short lines and read back the same.
func TestEncodeLongHeaders(t *testing.T) {
	tests := []string{
		strings.Repeat("word ", 120) + "end",
		strings.Repeat("mot accentué ", 60),
		strings.Repeat("x", 200),
	}
	for _, subject := range tests {
		m := testMessage()
		m.Subject = subject
		for i := range 30 {
			m.To = append(m.To, mail.Address{Address: fmt.Sprintf("user%d@example.com", i)})
		}
		var b strings.Builder
		if err := m.Encode(&b, testDate); err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(b.String(), "\r\n\r\n")
		for _, line := range strings.Split(head, "\r\n") {
			if len(line) > 998 || (len(line) > 78 && strings.Contains(strings.TrimSpace(line), " ")) {
				t.Errorf("header line of %d bytes: %q", len(line), line)
			}
		}
		msg, err := mail.ReadMessage(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := mimeDecoder.DecodeHeader(msg.Header.Get("Subject"))
		if err != nil || got != subject {
			t.Errorf("Subject read back = %q (%v), want %q", got, err, subject)
		}
		to, err := msg.Header.AddressList("To")
		if err != nil || len(to) != 31 {
			t.Errorf("To read back = %d addresses (%v), want 31", len(to), err)
		}
	}
}
