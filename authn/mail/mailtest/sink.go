package mailtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Hang points: where a sink stops answering (it keeps the connection open
// and reads nothing more) until it is closed.
const (
	HangGreeting = "greeting" // accept the connection, never greet
	HangData     = "data"     // take the whole message, never reply to it
)

// Options configures a Sink.
type Options struct {
	// ImplicitTLS speaks TLS from the first byte.
	ImplicitTLS bool
	// StartTLS offers STARTTLS in the EHLO reply.
	StartTLS bool
	// Username and Password, if Username is set, make AUTH (PLAIN and
	// LOGIN) required before MAIL; other credentials get 535.
	Username, Password string
	// RejectRcpt answers 550 to every RCPT.
	RejectRcpt bool
	// Hang is "", HangGreeting or HangData.
	Hang string
}

// Mail is one accepted mail and what the sink saw of its session.
type Mail struct {
	Helo     string   // the EHLO or HELO argument
	TLS      bool     // the session was encrypted when the mail was sent
	AuthMech string   // PLAIN or LOGIN, "" without AUTH
	AuthUser string   // the username that authenticated
	From     string   // MAIL FROM address
	To       []string // RCPT TO addresses
	Data     []byte   // the message, dot-unstuffed, lines ending in CRLF
}

// Sink is a running SMTP sink.
type Sink struct {
	Host string // 127.0.0.1
	Port int
	// ClientTLS trusts the sink's certificate: give it to the client.
	ClientTLS *tls.Config

	opts    Options
	srvTLS  *tls.Config
	ln      net.Listener
	mails   chan Mail
	started chan struct{} // one per session
	closing chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool
}

// Start runs a sink on a free loopback port until the test ends.
func Start(t testing.TB, opts Options) *Sink {
	t.Helper()
	cert, pool := certificate(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Sink{
		Host:      "127.0.0.1",
		Port:      ln.Addr().(*net.TCPAddr).Port,
		ClientTLS: &tls.Config{RootCAs: pool},
		opts:      opts,
		srvTLS:    &tls.Config{Certificates: []tls.Certificate{cert}},
		ln:        ln,
		mails:     make(chan Mail, 1000),
		started:   make(chan struct{}, 1000),
		closing:   make(chan struct{}),
		conns:     map[net.Conn]bool{},
	}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// Addr is host:port.
func (s *Sink) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Close stops the sink and closes every connection.
func (s *Sink) Close() {
	s.mu.Lock()
	select {
	case <-s.closing:
		s.mu.Unlock()
		return
	default:
	}
	close(s.closing)
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Next returns the next mail the sink accepted, failing the test if none
// comes within 10 seconds (a deadline, so that a broken client cannot hang
// the test).
func (s *Sink) Next(t testing.TB) Mail {
	t.Helper()
	select {
	case m := <-s.mails:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("mailtest: no mail within 10s")
		return Mail{}
	}
}

// WaitSession waits until a client has connected (one more session than
// the previous calls waited for), failing the test after 10 seconds.
func (s *Sink) WaitSession(t testing.TB) {
	t.Helper()
	select {
	case <-s.started:
	case <-time.After(10 * time.Second):
		t.Fatal("mailtest: no connection within 10s")
	}
}

// Pending returns how many accepted mails Next has not returned yet.
func (s *Sink) Pending() int { return len(s.mails) }

func (s *Sink) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		select {
		case <-s.closing:
			s.mu.Unlock()
			c.Close()
			return
		default:
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.session(c)
		}()
	}
}

// session serves one connection.
func (s *Sink) session(raw net.Conn) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	var c net.Conn = raw
	secure := false
	if s.opts.ImplicitTLS {
		tc := tls.Server(raw, s.srvTLS)
		if tc.Handshake() != nil {
			return
		}
		c, secure = tc, true
	}
	if s.opts.Hang == HangGreeting {
		<-s.closing
		return
	}
	tp := textproto.NewConn(c)
	reply := func(format string, args ...any) bool { return tp.PrintfLine(format, args...) == nil }
	if !reply("220 mailtest ESMTP") {
		return
	}
	var m Mail
	authed := false
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO":
			m = Mail{Helo: arg, TLS: secure, AuthMech: m.AuthMech, AuthUser: m.AuthUser}
			lines := []string{"mailtest"}
			if s.opts.StartTLS && !secure {
				lines = append(lines, "STARTTLS")
			}
			if s.opts.Username != "" {
				lines = append(lines, "AUTH PLAIN LOGIN")
			}
			lines = append(lines, "8BITMIME")
			for i, l := range lines {
				sep := "-"
				if i == len(lines)-1 {
					sep = " "
				}
				if !reply("250%s%s", sep, l) {
					return
				}
			}
		case "STARTTLS":
			if !s.opts.StartTLS || secure {
				reply("502 5.5.1 not offered")
				continue
			}
			reply("220 2.0.0 go ahead")
			tc := tls.Server(raw, s.srvTLS)
			if tc.Handshake() != nil {
				return
			}
			c, secure = tc, true
			tp = textproto.NewConn(c)
			m, authed = Mail{}, false
		case "AUTH":
			mech, initial, _ := strings.Cut(arg, " ")
			user, pass, ok := s.auth(tp, strings.ToUpper(mech), initial)
			if !ok {
				return
			}
			if s.opts.Username == "" || user != s.opts.Username || pass != s.opts.Password {
				reply("535 5.7.8 authentication credentials invalid")
				continue
			}
			authed, m.AuthMech, m.AuthUser = true, strings.ToUpper(mech), user
			reply("235 2.7.0 authentication successful")
		case "MAIL":
			if s.opts.Username != "" && !authed {
				reply("530 5.7.0 authentication required")
				continue
			}
			m.From = addr(arg)
			m.To = nil
			reply("250 2.1.0 ok")
		case "RCPT":
			if s.opts.RejectRcpt {
				reply("550 5.1.1 mailbox unavailable")
				continue
			}
			m.To = append(m.To, addr(arg))
			reply("250 2.1.5 ok")
		case "DATA":
			reply("354 end with <CRLF>.<CRLF>")
			data, err := tp.ReadDotBytes()
			if err != nil {
				return
			}
			if s.opts.Hang == HangData {
				<-s.closing
				return
			}
			m.Data = crlf(data)
			s.mails <- m
			m = Mail{Helo: m.Helo, TLS: m.TLS, AuthMech: m.AuthMech, AuthUser: m.AuthUser}
			reply("250 2.0.0 queued")
		case "RSET", "NOOP":
			reply("250 2.0.0 ok")
		case "QUIT":
			reply("221 2.0.0 bye")
			return
		default:
			reply("502 5.5.2 unknown command")
		}
	}
}

// auth reads the AUTH exchange of mech; ok is false when the connection
// failed.
func (s *Sink) auth(tp *textproto.Conn, mech, initial string) (user, pass string, ok bool) {
	read := func(prompt string) (string, bool) {
		if tp.PrintfLine("334 %s", base64.StdEncoding.EncodeToString([]byte(prompt))) != nil {
			return "", false
		}
		l, err := tp.ReadLine()
		if err != nil {
			return "", false
		}
		b, _ := base64.StdEncoding.DecodeString(l)
		return string(b), true
	}
	switch mech {
	case "PLAIN":
		resp := initial
		var b []byte
		if resp == "" {
			r, ok := read("")
			if !ok {
				return "", "", false
			}
			b = []byte(r)
		} else {
			b, _ = base64.StdEncoding.DecodeString(resp)
		}
		parts := strings.Split(string(b), "\x00")
		if len(parts) == 3 {
			return parts[1], parts[2], true
		}
		return "", "", true
	case "LOGIN":
		u, ok := read("Username:")
		if !ok {
			return "", "", false
		}
		p, ok := read("Password:")
		return u, p, ok
	}
	return "", "", true
}

func addr(arg string) string {
	_, a, _ := strings.Cut(arg, ":")
	a = strings.TrimSpace(a)
	if i := strings.IndexByte(a, ' '); i >= 0 {
		a = a[:i]
	}
	return strings.TrimSuffix(strings.TrimPrefix(a, "<"), ">")
}

// crlf turns the LF line ends ReadDotBytes leaves into CRLF.
func crlf(b []byte) []byte {
	return []byte(strings.ReplaceAll(string(b), "\n", "\r\n"))
}

// certificate makes a self-signed certificate for 127.0.0.1 and
// localhost, and a pool that trusts it.
func certificate(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mailtest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
