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
	// it, and stays plain when it does not (as PocketBase v0.31.0's mailer
	// and Go's smtp.SendMail do).
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
	conn, err := dialSMTP(ctx, cfg, step)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The context ends the exchange wherever it is: closing the socket
	// fails the pending read or write.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	x := &exchange{ctx: ctx, conn: conn, step: step}
	client, err := x.hello(cfg)
	if err != nil {
		return err
	}
	if err := x.auth(client, cfg); err != nil {
		return err
	}
	if err := x.send(client, m, data.Bytes()); err != nil {
		return err
	}
	// The message is accepted; a failed QUIT changes nothing for it.
	x.deadline()
	client.Quit()
	return nil
}

// dialSMTP connects to cfg's server within one step.
func dialSMTP(ctx context.Context, cfg SMTPConfig, step time.Duration) (net.Conn, error) {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	dctx, cancel := context.WithTimeout(ctx, step)
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
		return nil, &SMTPError{"dial", err}
	}
	return conn, nil
}

// exchange is one SMTP exchange over conn: each step gets its own
// deadline, and a failed step says whether ctx ended it.
type exchange struct {
	ctx  context.Context
	conn net.Conn
	step time.Duration
}

// deadline gives the next step its time.
func (x *exchange) deadline() { x.conn.SetDeadline(time.Now().Add(x.step)) }

// fail is the SMTPError of the step s, naming ctx's cause when ctx ended.
func (x *exchange) fail(s string, err error) error {
	if x.ctx.Err() != nil {
		err = fmt.Errorf("%w (%w)", context.Cause(x.ctx), err)
	}
	return &SMTPError{s, err}
}

// hello starts TLS when cfg asks for implicit TLS, reads the greeting,
// sends EHLO (or HELO), and upgrades with STARTTLS when the connection
// is plain and the server offers it.
func (x *exchange) hello(cfg SMTPConfig) (*smtp.Client, error) {
	tlsConf := &tls.Config{}
	if cfg.TLSConfig != nil {
		tlsConf = cfg.TLSConfig.Clone()
	}
	tlsConf.ServerName = cfg.Host

	var c net.Conn = x.conn
	if cfg.TLS {
		tc := tls.Client(x.conn, tlsConf)
		x.deadline()
		if err := tc.HandshakeContext(x.ctx); err != nil {
			return nil, x.fail("tls", err)
		}
		c = tc
	}
	x.deadline()
	client, err := smtp.NewClient(c, cfg.Host)
	if err != nil {
		return nil, x.fail("hello", err)
	}
	local := cfg.LocalName
	if local == "" {
		local = "localhost"
	}
	x.deadline()
	if err := client.Hello(local); err != nil {
		return nil, x.fail("hello", err)
	}
	if !cfg.TLS {
		if ok, _ := client.Extension("STARTTLS"); ok {
			x.deadline()
			if err := client.StartTLS(tlsConf); err != nil {
				return nil, x.fail("starttls", err)
			}
		}
	}
	return client, nil
}

// auth authenticates with cfg's credentials and method, when either
// credential is set.
func (x *exchange) auth(client *smtp.Client, cfg SMTPConfig) error {
	if cfg.Username == "" && cfg.Password == "" {
		return nil
	}
	var a smtp.Auth
	switch strings.ToUpper(cfg.AuthMethod) {
	case AuthLogin:
		a = &loginAuth{cfg.Username, cfg.Password}
	case AuthPlain, "":
		a = &plainAuth{cfg.Username, cfg.Password}
	default:
		return &SMTPError{"auth", fmt.Errorf("unknown auth method %q", cfg.AuthMethod)}
	}
	x.deadline()
	if err := client.Auth(a); err != nil {
		return x.fail("auth", err)
	}
	return nil
}

// send gives the envelope (MAIL FROM, one RCPT TO for each of m.To) and
// the encoded message data, and returns once the server accepted it.
func (x *exchange) send(client *smtp.Client, m *Message, data []byte) error {
	x.deadline()
	if err := client.Mail(m.From.Address); err != nil {
		return x.fail("mail", err)
	}
	for _, to := range m.To {
		x.deadline()
		if err := client.Rcpt(to.Address); err != nil {
			return x.fail("rcpt", err)
		}
	}
	x.deadline()
	w, err := client.Data()
	if err != nil {
		return x.fail("data", err)
	}
	if _, err := w.Write(data); err != nil {
		return x.fail("data", err)
	}
	if err := w.Close(); err != nil {
		return x.fail("data", err)
	}
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
