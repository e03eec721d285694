package conformance

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"net/textproto"
	"strconv"
	"time"
)

// The fake's mail: sent at once (under the fake's lock; the sink it goes
// to never calls the fake) with net/smtp to the host and port of its smtp
// settings, when they are enabled, as multipart/alternative with a plain
// text part and a quoted-printable HTML part, so that the suite's sink
// parses what real servers send. With smtp off the mail is dropped.

func (f *fakeServer) sendMail(to, subject, html string) {
	s := f.settings["smtp"].(map[string]any)
	if on, _ := s["enabled"].(bool); !on {
		return
	}
	host, _ := s["host"].(string)
	port, _ := s["port"].(float64)
	if err := fakeSMTPSend(net.JoinHostPort(host, strconv.Itoa(int(port))), "support@example.com", to, subject, html); err != nil {
		fmt.Printf("fake: mail to %s: %v\n", to, err)
	}
}

func fakeSMTPSend(addr, from, to, subject, html string) error {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	host, _, _ := net.SplitHostPort(addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if err := c.Mail(from); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(fakeMessage(from, to, subject, html)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// fakeMessage builds an RFC 5322 message with a text and an HTML part.
func fakeMessage(from, to, subject, html string) []byte {
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
