package smtpsink

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of a sink.
const (
	maxLine        = 4096    // bytes of a command or data line, CRLF included
	maxMessage     = 1 << 20 // bytes of a message's DATA
	maxRcpt        = 50      // recipients of one message
	maxCommands    = 200     // commands of one session
	maxSessions    = 16      // sessions served at once; more wait in the kernel's backlog
	queueSize      = 1000    // accepted mails not yet taken
	readTimeout    = 10 * time.Second
	sessionTimeout = 60 * time.Second
	greetingName   = "strongbox-smtpsink"
)

// Hang points: where a sink stops answering (it keeps the connection open
// and reads nothing more) until it is closed.
const (
	HangGreeting = "greeting" // accept the connection, never greet
	HangData     = "data"     // take the whole message, never reply to it
)

// Options configures a Sink.
type Options struct {
	// Host is the IP address to listen on: "" is 127.0.0.1, "*" every
	// interface.
	Host string
	// ImplicitTLS speaks TLS from the first byte.
	ImplicitTLS bool
	// StartTLS offers STARTTLS in the EHLO reply.
	StartTLS bool
	// Username and Password, if Username is set, make AUTH required
	// before MAIL, and other credentials get 535; without them any
	// credentials are accepted.
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

	Header   mail.Header // the message's header (nil when it did not parse)
	Subject  string      // decoded (RFC 2047)
	Text     string      // the decoded text of every text/* part, joined by newlines
	ParseErr error       // why the message could not be parsed as RFC 5322 + MIME, if so
}

// Sink is a running SMTP sink. Close stops it.
type Sink struct {
	Host string // the address it listens on, as given in Options (127.0.0.1 by default)
	Port int
	// ClientTLS trusts the sink's certificate: give it to the client.
	ClientTLS *tls.Config

	opts    Options
	srvTLS  *tls.Config
	ln      net.Listener
	mails   chan *Mail
	started chan struct{} // one per session
	closing chan struct{}
	sem     chan struct{} // sessions at once
	wg      sync.WaitGroup

	mu      sync.Mutex
	conns   map[net.Conn]bool
	pending []*Mail // taken off mails by Wait, not yet claimed
}

// TB is the part of testing.TB the helpers for tests use.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// New starts a sink on a free port of opts.Host; it serves until Close.
func New(opts Options) (*Sink, error) {
	cert, pool, err := certificate()
	if err != nil {
		return nil, fmt.Errorf("SMTP sink: %w", err)
	}
	host, listen := opts.Host, opts.Host
	switch host {
	case "":
		host, listen = "127.0.0.1", "127.0.0.1"
	case "*":
		listen = ""
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(listen, "0"))
	if err != nil {
		return nil, fmt.Errorf("SMTP sink: %w", err)
	}
	s := &Sink{
		Host: host, Port: ln.Addr().(*net.TCPAddr).Port,
		ClientTLS: &tls.Config{RootCAs: pool},
		opts:      opts, srvTLS: &tls.Config{Certificates: []tls.Certificate{cert}}, ln: ln,
		mails: make(chan *Mail, queueSize), started: make(chan struct{}, queueSize),
		closing: make(chan struct{}), sem: make(chan struct{}, maxSessions), conns: map[net.Conn]bool{},
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Start runs a sink on a free loopback port (unless opts.Host names
// another address) until the test ends.
func Start(t TB, opts Options) *Sink {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Addr is host:port.
func (s *Sink) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Close stops listening, ends the sessions in progress and waits for them.
func (s *Sink) Close() {
	s.mu.Lock()
	select {
	case <-s.closing:
	default:
		close(s.closing)
		s.ln.Close()
		for c := range s.conns {
			c.Close()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Next returns the next mail the sink accepted, failing the test if none
// comes within 10 seconds (a deadline, so that a broken client cannot hang
// the test).
func (s *Sink) Next(t TB) Mail {
	t.Helper()
	s.mu.Lock()
	if len(s.pending) > 0 {
		m := s.pending[0]
		s.pending = s.pending[1:]
		s.mu.Unlock()
		return *m
	}
	s.mu.Unlock()
	select {
	case m := <-s.mails:
		return *m
	case <-time.After(10 * time.Second):
		t.Fatal("smtpsink: no mail within 10s")
		return Mail{}
	}
}

// WaitSession waits until a client has connected (one more session than
// the previous calls waited for), failing the test after 10 seconds.
func (s *Sink) WaitSession(t TB) {
	t.Helper()
	select {
	case <-s.started:
	case <-time.After(10 * time.Second):
		t.Fatal("smtpsink: no connection within 10s")
	}
}

// Pending returns how many accepted mails no Next or Wait has returned.
func (s *Sink) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mails) + len(s.pending)
}

// Wait returns the first mail addressed to rcpt (case-insensitively) that
// no earlier Wait or Next returned, waiting at most d. It returns nil when
// none came in time or ctx ended.
func (s *Sink) Wait(ctx context.Context, rcpt string, d time.Duration) *Mail {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for i, m := range s.pending {
			if m.SentTo(rcpt) {
				s.pending = append(s.pending[:i:i], s.pending[i+1:]...)
				s.mu.Unlock()
				return m
			}
		}
		s.mu.Unlock()
		select {
		case m := <-s.mails:
			s.mu.Lock()
			s.pending = append(s.pending, m)
			s.mu.Unlock()
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// SentTo reports whether rcpt is one of m's envelope recipients.
func (m *Mail) SentTo(rcpt string) bool {
	for _, to := range m.To {
		if strings.EqualFold(to, rcpt) {
			return true
		}
	}
	return false
}

// String summarises m for failure details.
func (m *Mail) String() string {
	text := strings.Join(strings.Fields(m.Text), " ")
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	s := fmt.Sprintf("mail from <%s> to %v, subject %q: %s", m.From, m.To, m.Subject, text)
	if m.ParseErr != nil {
		s += " (unparseable: " + m.ParseErr.Error() + ")"
	}
	return s
}

func (s *Sink) accept() {
	defer s.wg.Done()
	for {
		select {
		case s.sem <- struct{}{}:
		case <-s.closing:
			return
		}
		c, err := s.ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				<-s.sem
				continue
			}
			return // closed
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
			defer func() { <-s.sem }()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.serve(c)
		}()
	}
}

// deliver queues m; false when the queue is full.
func (s *Sink) deliver(m *Mail) bool {
	select {
	case s.mails <- m:
		return true
	default:
		return false
	}
}
