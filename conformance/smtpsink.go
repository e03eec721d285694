package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"time"
)

// The SMTP sink: the mailbox of the checks that read mail (mail.go). It is
// a listener of the suite's own, on 127.0.0.1 and port 0 unless
// Config.SMTPHost names another address, that speaks just enough ESMTP
// (RFC 5321) for one plain session: EHLO or HELO, MAIL, RCPT, DATA, RSET,
// NOOP, QUIT, and AUTH PLAIN or LOGIN, whose credentials it accepts
// without looking at them. It offers no STARTTLS, so a client that
// upgrades whenever it can sends in clear. Each message it accepts is
// parsed (net/mail, mime/multipart, quoted-printable and base64 parts) and
// handed to the checks through a channel; a check waits for the mail of
// one recipient for a bounded time. Everything is bounded: the size of a
// line, of a message and of the queue, the recipients of a message, the
// commands of a session, the sessions at once, and the time of each read
// and of a whole session.

const (
	sinkMaxLine        = 4096    // bytes of a command or data line, CRLF included
	sinkMaxMessage     = 1 << 20 // bytes of a message's DATA
	sinkMaxRcpt        = 50      // recipients of one message
	sinkMaxCommands    = 200     // commands of one session
	sinkMaxSessions    = 16      // sessions served at once; more wait in the kernel's backlog
	sinkQueue          = 64      // parsed mails not yet taken by a check
	sinkReadTimeout    = 10 * time.Second
	sinkSessionTimeout = 60 * time.Second
	sinkGreetingName   = "strongbox-conformance-sink"
)

// sinkMail is one message the sink accepted.
type sinkMail struct {
	From     string      // the MAIL FROM address
	To       []string    // the RCPT TO addresses
	Header   mail.Header // the message's header (nil when it did not parse)
	Subject  string      // decoded (RFC 2047)
	Text     string      // the decoded text of every text/* part, joined by newlines
	ParseErr error       // why the message could not be parsed as RFC 5322 + MIME, if so
}

// smtpSink is a running sink. Close stops it.
type smtpSink struct {
	ln    net.Listener
	mails chan *sinkMail

	mu      sync.Mutex
	pending []*sinkMail // taken off the channel, not yet claimed by a wait
	conns   map[net.Conn]bool

	sem       chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// startSMTPSink listens on host (an IP address; "" means every
// interface) at a free port and serves until Close.
func startSMTPSink(host string) (*smtpSink, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("SMTP sink: %w", err)
	}
	s := &smtpSink{ln: ln, mails: make(chan *sinkMail, sinkQueue), conns: map[net.Conn]bool{},
		sem: make(chan struct{}, sinkMaxSessions)}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// port is the port the sink listens on.
func (s *smtpSink) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops listening, ends the sessions in progress and waits for them.
func (s *smtpSink) Close() error {
	s.closeOnce.Do(func() {
		s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
	})
	s.wg.Wait()
	return nil
}

func (s *smtpSink) serve() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return // closed
		}
		s.sem <- struct{}{}
		s.mu.Lock()
		s.conns[conn] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.sem }()
			defer func() {
				s.mu.Lock()
				delete(s.conns, conn)
				s.mu.Unlock()
				conn.Close()
			}()
			s.session(conn)
		}()
	}
}

// session serves one SMTP session on conn.
func (s *smtpSink) session(conn net.Conn) {
	end := time.Now().Add(sinkSessionTimeout)
	br := bufio.NewReaderSize(conn, sinkMaxLine)
	bw := bufio.NewWriter(conn)
	reply := func(lines ...string) bool {
		conn.SetWriteDeadline(time.Now().Add(sinkReadTimeout))
		for _, l := range lines {
			bw.WriteString(l + "\r\n")
		}
		return bw.Flush() == nil
	}
	read := func() (string, error) {
		dl := time.Now().Add(sinkReadTimeout)
		if end.Before(dl) {
			dl = end
		}
		conn.SetReadDeadline(dl)
		b, err := readSinkLine(br, sinkMaxLine)
		return strings.TrimRight(string(b), "\r\n"), err
	}
	if !reply("220 " + sinkGreetingName + " ESMTP ready") {
		return
	}
	var from string
	var rcpt []string
	haveFrom := false
	for range sinkMaxCommands {
		line, err := read()
		if err != nil {
			if errors.Is(err, errSinkLineTooLong) {
				reply("500 5.5.2 Line too long")
			}
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			haveFrom, from, rcpt = false, "", nil
			if !reply("250-"+sinkGreetingName+" greets "+arg, "250-8BITMIME",
				fmt.Sprintf("250-SIZE %d", sinkMaxMessage), "250 AUTH PLAIN LOGIN") {
				return
			}
		case "HELO":
			haveFrom, from, rcpt = false, "", nil
			if !reply("250 " + sinkGreetingName) {
				return
			}
		case "AUTH":
			if !s.auth(arg, read, reply) {
				return
			}
		case "MAIL":
			addr, ok := sinkPath(arg, "FROM:")
			if !ok {
				reply("501 5.5.4 Syntax: MAIL FROM:<address>")
				continue
			}
			haveFrom, from, rcpt = true, addr, nil
			reply("250 2.1.0 OK")
		case "RCPT":
			addr, ok := sinkPath(arg, "TO:")
			switch {
			case !haveFrom:
				reply("503 5.5.1 MAIL first")
			case !ok || addr == "":
				reply("501 5.5.4 Syntax: RCPT TO:<address>")
			case len(rcpt) >= sinkMaxRcpt:
				reply("452 4.5.3 Too many recipients")
			default:
				rcpt = append(rcpt, addr)
				reply("250 2.1.5 OK")
			}
		case "DATA":
			if len(rcpt) == 0 {
				reply("503 5.5.1 RCPT first")
				continue
			}
			if !reply("354 End data with <CR><LF>.<CR><LF>") {
				return
			}
			raw, tooBig, err := readSinkData(read)
			if err != nil {
				return
			}
			switch {
			case tooBig:
				reply("552 5.3.4 Message too big")
			case !s.deliver(parseSinkMail(from, rcpt, raw)):
				reply("452 4.3.1 Mailbox full")
			default:
				reply("250 2.0.0 OK")
			}
			haveFrom, from, rcpt = false, "", nil
		case "RSET":
			haveFrom, from, rcpt = false, "", nil
			reply("250 2.0.0 OK")
		case "NOOP":
			reply("250 2.0.0 OK")
		case "QUIT":
			reply("221 2.0.0 Bye")
			return
		default:
			reply("502 5.5.2 Command not implemented")
		}
	}
	reply("421 4.7.0 Too many commands")
}

// auth runs an AUTH exchange (PLAIN or LOGIN, RFC 4954) and accepts any
// credentials. It reports whether the session goes on.
func (s *smtpSink) auth(arg string, read func() (string, error), reply func(...string) bool) bool {
	mech, initial, _ := strings.Cut(arg, " ")
	steps := 0
	switch strings.ToUpper(mech) {
	case "PLAIN":
		if initial == "" {
			steps = 1
		}
	case "LOGIN":
		steps = 2
		if initial != "" {
			steps = 1
		}
	default:
		return reply("504 5.5.4 Unrecognized authentication type")
	}
	prompts := []string{"334 VXNlcm5hbWU6", "334 UGFzc3dvcmQ6"} // "Username:", "Password:"
	if strings.ToUpper(mech) == "PLAIN" {
		prompts = []string{"334 "}
	}
	for i := range steps {
		if !reply(prompts[len(prompts)-steps+i]) {
			return false
		}
		line, err := read()
		if err != nil {
			return false
		}
		if line == "*" {
			return reply("501 5.0.0 Authentication cancelled")
		}
	}
	return reply("235 2.7.0 Authentication successful")
}

// deliver queues m for the checks; false when the queue is full.
func (s *smtpSink) deliver(m *sinkMail) bool {
	select {
	case s.mails <- m:
		return true
	default:
		return false
	}
}

// wait returns the first mail addressed to rcpt (case-insensitively) that
// no earlier wait returned, waiting at most d. It returns nil when none
// came in time or ctx ended.
func (s *smtpSink) wait(ctx context.Context, rcpt string, d time.Duration) *sinkMail {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for i, m := range s.pending {
			if m.sentTo(rcpt) {
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

// sentTo reports whether rcpt is one of m's envelope recipients.
func (m *sinkMail) sentTo(rcpt string) bool {
	for _, to := range m.To {
		if strings.EqualFold(to, rcpt) {
			return true
		}
	}
	return false
}

// String summarises m for failure details.
func (m *sinkMail) String() string {
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

// sinkPath reads the address of "FROM:<a> params" or "TO:<a> params".
func sinkPath(arg, prefix string) (string, bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimSpace(arg[len(prefix):])
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	addr, _, ok := strings.Cut(rest[1:], ">")
	return addr, ok
}

var errSinkLineTooLong = errors.New("SMTP sink: line too long")

// readSinkLine reads one line of at most max bytes, its LF included.
func readSinkLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, errSinkLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

// readSinkData reads a DATA section up to its "." line, undoing the dot
// stuffing. A message over sinkMaxMessage is read to its end and dropped
// (tooBig).
func readSinkData(read func() (string, error)) (raw []byte, tooBig bool, err error) {
	var buf bytes.Buffer
	for {
		line, err := read()
		if err != nil {
			return nil, false, err
		}
		if line == "." {
			break
		}
		line = strings.TrimPrefix(line, ".")
		if buf.Len()+len(line)+2 > sinkMaxMessage {
			tooBig = true
			continue
		}
		buf.WriteString(line)
		buf.WriteString("\r\n")
	}
	if tooBig {
		return nil, true, nil
	}
	return buf.Bytes(), false, nil
}

// parseSinkMail parses raw as an RFC 5322 message with MIME parts.
func parseSinkMail(from string, to []string, raw []byte) *sinkMail {
	m := &sinkMail{From: from, To: to}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		m.ParseErr = err
		m.Text = string(raw)
		return m
	}
	m.Header = msg.Header
	dec := new(mime.WordDecoder)
	if subj, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
		m.Subject = subj
	} else {
		m.Subject = msg.Header.Get("Subject")
	}
	var texts []string
	m.ParseErr = collectText(partHeader(msg.Header), msg.Body, 0, &texts)
	m.Text = strings.Join(texts, "\n")
	return m
}

// partHeader adapts a mail.Header to the lookups collectText makes.
type partHeader map[string][]string

func (h partHeader) get(key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// collectText appends the decoded text of every text/* part of a body with
// header h to texts, descending into multipart bodies (at most 5 deep).
func collectText(h partHeader, body io.Reader, depth int, texts *[]string) error {
	ctype := h.get("Content-Type")
	if ctype == "" {
		ctype = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return fmt.Errorf("Content-Type %q: %w", ctype, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		if depth >= 5 {
			return errors.New("multipart nested too deep")
		}
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("multipart: %w", err)
			}
			// NextPart already decodes a quoted-printable part (and drops
			// its Content-Transfer-Encoding).
			if err := collectText(partHeader(p.Header), p, depth+1, texts); err != nil {
				return err
			}
		}
	}
	if !strings.HasPrefix(mt, "text/") {
		return nil
	}
	var r io.Reader = body
	switch strings.ToLower(strings.TrimSpace(h.get("Content-Transfer-Encoding"))) {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, newlineStripper{body})
	}
	b, err := io.ReadAll(io.LimitReader(r, sinkMaxMessage))
	if err != nil {
		return fmt.Errorf("%s part: %w", mt, err)
	}
	*texts = append(*texts, string(b))
	return nil
}

// newlineStripper drops CR and LF, as base64 bodies are line-wrapped.
type newlineStripper struct{ r io.Reader }

func (n newlineStripper) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	j := 0
	for _, c := range p[:k] {
		if c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	return j, err
}
