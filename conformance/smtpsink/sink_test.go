package smtpsink

import (
	"bufio"
	"bytes"
	"fmt"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"net/textproto"
	"strings"
	"testing"
	"time"
)

// message is a multipart/alternative mail whose HTML part is
// quoted-printable.
func message(from, to, subject, html string) []byte {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	pw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/plain; charset=utf-8"}})
	pw.Write([]byte("See the HTML part.\r\n"))
	pw, _ = mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/html; charset=utf-8"},
		"Content-Transfer-Encoding": {"quoted-printable"}})
	qw := quotedprintable.NewWriter(pw)
	qw.Write([]byte(html))
	qw.Close()
	mw.Close()
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "From: %s\r\nTo: %s\r\nSubject: %s\r\nMIME-Version: 1.0\r\n", from, to, subject)
	fmt.Fprintf(&msg, "Content-Type: multipart/alternative; boundary=%s\r\n\r\n", mw.Boundary())
	msg.Write(body.Bytes())
	return msg.Bytes()
}

// TestSMTPSink sends through net/smtp and over a raw session: a
// multipart mail with a quoted-printable HTML part, a plain one after
// RSET and NOOP, AUTH PLAIN and LOGIN, and the refusals of a session out
// of order, too long or too big.
func TestSMTPSink(t *testing.T) {
	sink, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	addr := sink.Addr()

	// net/smtp: no STARTTLS offered, so the mail goes in clear.
	msg := message("support@example.com", "a@example.com", "OTP for Acme",
		"<p>Your code: <strong>01234567</strong> and a long line "+strings.Repeat("x=", 60)+"</p>")
	if err := smtp.SendMail(addr, nil, "support@example.com", []string{"a@example.com"}, msg); err != nil {
		t.Fatalf("SendMail: %v", err)
	}
	m := sink.Wait(t.Context(), "A@example.com", time.Second)
	if m == nil {
		t.Fatal("no mail to a@example.com")
	}
	if m.ParseErr != nil || m.Subject != "OTP for Acme" || m.From != "support@example.com" {
		t.Errorf("mail = %s", m)
	}
	if !strings.Contains(m.Text, "<strong>01234567</strong>") || !strings.Contains(m.Text, strings.Repeat("x=", 60)) {
		t.Errorf("text %q lacks the decoded HTML part", m.Text)
	}
	if m := sink.Wait(t.Context(), "a@example.com", 50*time.Millisecond); m != nil {
		t.Errorf("a mail returned twice: %s", m)
	}

	// A raw session.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tc := textproto.NewConn(conn)
	expect := func(cmd string, code int) string {
		t.Helper()
		if cmd != "" {
			if err := tc.PrintfLine("%s", cmd); err != nil {
				t.Fatal(err)
			}
		}
		_, msg, err := tc.ReadResponse(code)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		return msg
	}
	expect("", 220)
	if ext := expect("EHLO client", 250); strings.Contains(ext, "STARTTLS") || !strings.Contains(ext, "AUTH PLAIN LOGIN") {
		t.Errorf("EHLO extensions %q", ext)
	}
	expect("AUTH PLAIN AHVzZXIAcGFzcw==", 235)
	expect("AUTH LOGIN", 334)
	expect("dXNlcg==", 334)
	expect("cGFzcw==", 235)
	expect("RCPT TO:<b@example.com>", 503)
	expect("DATA", 503)
	expect("MAIL FROM:<x@example.com>", 250)
	expect("RSET", 250)
	expect("NOOP", 250)
	expect("VRFY b@example.com", 502)
	expect("MAIL FROM:<x@example.com> SIZE=100", 250)
	expect("RCPT TO:<b@example.com>", 250)
	expect("DATA", 354)
	tc.PrintfLine("Subject: =?utf-8?q?caf=C3=A9?=\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n..dot=3D and soft=\r\nbreak\r\n.")
	expect("", 250)
	m = sink.Wait(t.Context(), "b@example.com", time.Second)
	if m == nil || m.Subject != "café" || m.Text != ".dot= and softbreak\r\n" {
		t.Errorf("plain quoted-printable mail = %v (text %q)", m, m.Text)
	}

	// A message over the size limit is refused; the session goes on.
	expect("MAIL FROM:<x@example.com>", 250)
	expect("RCPT TO:<c@example.com>", 250)
	expect("DATA", 354)
	line := strings.Repeat("y", 1000)
	w := bufio.NewWriter(conn)
	for range maxMessage/len(line) + 1 {
		w.WriteString(line + "\r\n")
	}
	w.WriteString(".\r\n")
	w.Flush()
	expect("", 552)
	expect("QUIT", 221)
	if m := sink.Wait(t.Context(), "c@example.com", 50*time.Millisecond); m != nil {
		t.Errorf("an oversized mail was delivered: %s", m)
	}

	// A line over the limit ends the session.
	conn2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	tc2 := textproto.NewConn(conn2)
	tc2.ReadResponse(220)
	tc2.PrintfLine("HELO %s", strings.Repeat("h", maxLine))
	if _, _, err := tc2.ReadResponse(500); err != nil {
		t.Errorf("a long line: %v", err)
	}

	// Close ends the sessions in progress and returns.
	conn3, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn3.Close()
	done := make(chan struct{})
	go func() { sink.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return with a session open")
	}
}
