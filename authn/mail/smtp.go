package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// DefaultStepTimeout bounds each step of an SMTP exchange: the dial, the
// TLS handshake, each command and its reply, and the message data.
const DefaultStepTimeout = 10 * time.Second

// The values of SMTPConfig.AuthMethod (settings smtp.authMethod).
const (
	AuthPlain = "PLAIN" // RFC 4616; the default when a username or password is set
	AuthLogin = "LOGIN" // the draft-murchison-sasl-login exchange
)

// SMTPConfig says how to reach an SMTP server: the settings' smtp object
// (interface §7) and the knobs tests need.
type SMTPConfig struct {
	Host string
	Port int
	// Username and Password authenticate when either is set: with
	// AuthMethod, PLAIN when empty. Credentials are only sent over TLS
	// (implicit or STARTTLS), or to a loopback server, as net/smtp's
	// PlainAuth requires: never in clear over a network.
	Username, Password string
	AuthMethod         string
	// TLS: implicit TLS from the first byte (port 465 usually). Without
	// it, the connection is upgraded with STARTTLS when the server offers
	// it, and stays plain when it does not (as the reference's mailer and
	// Go's smtp.SendMail do).
	TLS bool
	// LocalName is the name sent with EHLO (or HELO); "localhost" when
	// empty.
	LocalName string
	// StepTimeout bounds each step; 0 = DefaultStepTimeout.
	StepTimeout time.Duration
	// TLSConfig is the base of the TLS configuration (tests trust their
	// own certificate with RootCAs); nil = the system roots. ServerName
	// is always Host.
	TLSConfig *tls.Config
}

// String describes c without its password, so that printing or logging a
// configuration (%v, %+v) never shows it.
func (c SMTPConfig) String() string {
	pw := ""
	if c.Password != "" {
		pw = "(set)"
	}
	return fmt.Sprintf("smtp{host:%s port:%d tls:%v username:%q password:%s authMethod:%q localName:%q}",
		c.Host, c.Port, c.TLS, c.Username, pw, c.AuthMethod, c.LocalName)
}

// LogValue is String for log/slog.
func (c SMTPConfig) LogValue() slog.Value { return slog.StringValue(c.String()) }

// SMTPError is a failed SMTP exchange: the step (dial, tls, hello,
// starttls, auth, mail, rcpt, data, quit) and why. Its text never holds
// the password, nor the message.
type SMTPError struct {
	Step string
	Err  error
}

func (e *SMTPError) Error() string {
	// A server's reply reads as it was sent ("535 5.7.8 ..."), not as
	// textproto quotes it.
	if te, ok := errors.AsType[*textproto.Error](e.Err); ok {
		return fmt.Sprintf("mail: smtp %s: %03d %s", e.Step, te.Code, te.Msg)
	}
	return "mail: smtp " + e.Step + ": " + e.Err.Error()
}
func (e *SMTPError) Unwrap() error { return e.Err }

// ErrUnencryptedAuth is returned (in an SMTPError of step auth) rather
// than send credentials in clear to a server that is not on loopback.
var ErrUnencryptedAuth = errors.New("refusing to send credentials over an unencrypted connection (set tls, or use a server that offers STARTTLS)")

// SendSMTP sends m through the server cfg names, now, and returns when
// the server has accepted the message (its reply to the data) or the
// exchange failed. Each step has cfg.StepTimeout; ctx can end it sooner.
// date is the message's Date header.
func SendSMTP(ctx context.Context, cfg SMTPConfig, m *Message, date time.Time) error {
	var data bytes.Buffer
	if err := m.Encode(&data, date); err != nil {
		return err
	}
	step := cfg.StepTimeout
	if step <= 0 {
		step = DefaultStepTimeout
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	dctx, cancel := context.WithTimeout(ctx, step)
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
		return &SMTPError{"dial", err}
	}
	defer conn.Close()
	// The context ends the exchange wherever it is: closing the socket
	// fails the pending read or write.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	deadline := func() { conn.SetDeadline(time.Now().Add(step)) }
	fail := func(s string, err error) error {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
		return &SMTPError{s, err}
	}

	tlsConf := &tls.Config{}
	if cfg.TLSConfig != nil {
		tlsConf = cfg.TLSConfig.Clone()
	}
	tlsConf.ServerName = cfg.Host

	var c net.Conn = conn
	if cfg.TLS {
		tc := tls.Client(conn, tlsConf)
		deadline()
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail("tls", err)
		}
		c = tc
	}
	deadline()
	client, err := smtp.NewClient(c, cfg.Host)
	if err != nil {
		return fail("hello", err)
	}
	local := cfg.LocalName
	if local == "" {
		local = "localhost"
	}
	deadline()
	if err := client.Hello(local); err != nil {
		return fail("hello", err)
	}
	if !cfg.TLS {
		if ok, _ := client.Extension("STARTTLS"); ok {
			deadline()
			if err := client.StartTLS(tlsConf); err != nil {
				return fail("starttls", err)
			}
		}
	}
	if cfg.Username != "" || cfg.Password != "" {
		var a smtp.Auth
		switch strings.ToUpper(cfg.AuthMethod) {
		case AuthLogin:
			a = &loginAuth{cfg.Username, cfg.Password}
		case AuthPlain, "":
			a = &plainAuth{cfg.Username, cfg.Password}
		default:
			return &SMTPError{"auth", fmt.Errorf("unknown auth method %q", cfg.AuthMethod)}
		}
		deadline()
		if err := client.Auth(a); err != nil {
			return fail("auth", err)
		}
	}
	deadline()
	if err := client.Mail(m.From.Address); err != nil {
		return fail("mail", err)
	}
	for _, to := range m.To {
		deadline()
		if err := client.Rcpt(to.Address); err != nil {
			return fail("rcpt", err)
		}
	}
	deadline()
	w, err := client.Data()
	if err != nil {
		return fail("data", err)
	}
	if _, err := w.Write(data.Bytes()); err != nil {
		return fail("data", err)
	}
	if err := w.Close(); err != nil {
		return fail("data", err)
	}
	// The message is accepted; a failed QUIT changes nothing for it.
	deadline()
	client.Quit()
	return nil
}

// secure reports whether credentials may be sent over this connection:
// it is TLS, or the server is on loopback (net/smtp's rule for PlainAuth).
func secure(server *smtp.ServerInfo) bool {
	if server.TLS {
		return true
	}
	if server.Name == "localhost" {
		return true
	}
	ip := net.ParseIP(server.Name)
	return ip != nil && ip.IsLoopback()
}

// plainAuth is AUTH PLAIN (RFC 4616) with an initial response.
type plainAuth struct{ username, password string }

func (a *plainAuth) Start(server *smtp.ServerInfo) (string, []byte, error) {
	if !secure(server) {
		return "", nil, ErrUnencryptedAuth
	}
	return AuthPlain, []byte("\x00" + a.username + "\x00" + a.password), nil
}

func (a *plainAuth) Next(fromServer []byte, more bool) ([]byte, error) {
	if more {
		return nil, errors.New("unexpected server challenge to AUTH PLAIN")
	}
	return nil, nil
}

// loginAuth is AUTH LOGIN: the server asks "Username:" then "Password:"
// (base64, which net/smtp decodes), and the client answers each.
type loginAuth struct{ username, password string }

func (a *loginAuth) Start(server *smtp.ServerInfo) (string, []byte, error) {
	if !secure(server) {
		return "", nil, ErrUnencryptedAuth
	}
	return AuthLogin, nil, nil
}

func (a *loginAuth) Next(fromServer []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	switch strings.ToLower(strings.TrimSpace(string(fromServer))) {
	case "username:", "user name", "username":
		return []byte(a.username), nil
	case "password:", "password":
		return []byte(a.password), nil
	}
	// The challenge is not echoed: a broken server could send anything.
	return nil, errors.New("unexpected server challenge to AUTH LOGIN")
}
