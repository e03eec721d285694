package smtpsink

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// session is one SMTP session.
type session struct {
	s        *Sink
	raw      net.Conn // the TCP connection
	conn     net.Conn // raw, or TLS over it
	br       *bufio.Reader
	bw       *bufio.Writer
	end      time.Time // when the session must be over
	secure   bool
	authed   bool
	haveFrom bool
	m        Mail // the mail under way, with what is known of the session
}

// serve serves one connection.
func (s *Sink) serve(raw net.Conn) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	ss := &session{s: s, raw: raw, end: time.Now().Add(sessionTimeout)}
	ss.use(raw)
	if s.opts.ImplicitTLS && !ss.upgrade() {
		return
	}
	if s.opts.Hang == HangGreeting {
		<-s.closing
		return
	}
	if !ss.reply("220 " + greetingName + " ESMTP ready") {
		return
	}
	for range maxCommands {
		line, err := ss.read()
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				ss.reply("500 5.5.2 Line too long")
			}
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		if !ss.command(strings.ToUpper(verb), arg) {
			return
		}
	}
	ss.reply("421 4.7.0 Too many commands")
}

// command runs one command; false ends the session.
func (ss *session) command(verb, arg string) bool {
	switch verb {
	case "EHLO":
		return ss.ehlo(arg)
	case "HELO":
		ss.reset(arg)
		return ss.reply("250 " + greetingName)
	case "STARTTLS":
		return ss.startTLS()
	case "AUTH":
		return ss.auth(arg)
	case "MAIL":
		return ss.mailFrom(arg)
	case "RCPT":
		return ss.rcptTo(arg)
	case "DATA":
		return ss.data()
	case "RSET":
		ss.reset(ss.m.Helo)
		return ss.reply("250 2.0.0 OK")
	case "NOOP":
		return ss.reply("250 2.0.0 OK")
	case "QUIT":
		ss.reply("221 2.0.0 Bye")
		return false
	}
	return ss.reply("502 5.5.2 Command not implemented")
}

// use makes c the connection the session reads and writes.
func (ss *session) use(c net.Conn) {
	ss.conn, ss.br, ss.bw = c, bufio.NewReaderSize(c, maxLine), bufio.NewWriter(c)
}

// upgrade runs the TLS handshake on the connection.
func (ss *session) upgrade() bool {
	tc := tls.Server(ss.raw, ss.s.srvTLS)
	tc.SetDeadline(time.Now().Add(readTimeout))
	if tc.Handshake() != nil {
		return false
	}
	tc.SetDeadline(time.Time{})
	ss.use(tc)
	ss.secure = true
	return true
}

// reply writes lines, each ended by CRLF.
func (ss *session) reply(lines ...string) bool {
	ss.conn.SetWriteDeadline(time.Now().Add(readTimeout))
	for _, l := range lines {
		ss.bw.WriteString(l + "\r\n")
	}
	return ss.bw.Flush() == nil
}

// read reads one line, without its line end.
func (ss *session) read() (string, error) {
	dl := time.Now().Add(readTimeout)
	if ss.end.Before(dl) {
		dl = ss.end
	}
	ss.conn.SetReadDeadline(dl)
	b, err := readLine(ss.br, maxLine)
	return strings.TrimRight(string(b), "\r\n"), err
}

// reset starts a new mail, keeping what is known of the session.
func (ss *session) reset(helo string) {
	ss.m = Mail{Helo: helo, TLS: ss.secure, AuthMech: ss.m.AuthMech, AuthUser: ss.m.AuthUser}
	ss.haveFrom = false
}

func (ss *session) ehlo(arg string) bool {
	ss.reset(arg)
	lines := []string{greetingName + " greets " + arg}
	if ss.s.opts.StartTLS && !ss.secure {
		lines = append(lines, "STARTTLS")
	}
	lines = append(lines, "8BITMIME", fmt.Sprintf("SIZE %d", maxMessage), "AUTH PLAIN LOGIN")
	for i := range lines {
		sep := "-"
		if i == len(lines)-1 {
			sep = " "
		}
		lines[i] = "250" + sep + lines[i]
	}
	return ss.reply(lines...)
}

func (ss *session) startTLS() bool {
	if !ss.s.opts.StartTLS || ss.secure {
		return ss.reply("502 5.5.1 not offered")
	}
	if !ss.reply("220 2.0.0 go ahead") || !ss.upgrade() {
		return false
	}
	ss.m, ss.authed, ss.haveFrom = Mail{TLS: true}, false, false
	return true
}

// auth runs an AUTH exchange (PLAIN or LOGIN, RFC 4954).
func (ss *session) auth(arg string) bool {
	mech, initial, _ := strings.Cut(arg, " ")
	mech = strings.ToUpper(mech)
	if mech != "PLAIN" && mech != "LOGIN" {
		return ss.reply("504 5.5.4 Unrecognized authentication type")
	}
	user, pass, err := ss.credentials(mech, initial)
	switch o := ss.s.opts; {
	case errors.Is(err, errCancelled):
		return ss.reply("501 5.0.0 Authentication cancelled")
	case err != nil:
		return false
	case o.Username != "" && (user != o.Username || pass != o.Password):
		return ss.reply("535 5.7.8 authentication credentials invalid")
	}
	ss.authed, ss.m.AuthMech, ss.m.AuthUser = true, mech, user
	return ss.reply("235 2.7.0 Authentication successful")
}

var (
	errCancelled = errors.New("SMTP sink: authentication cancelled")
	errClosed    = errors.New("SMTP sink: connection failed")
)

// credentials reads the username and password of an AUTH exchange.
func (ss *session) credentials(mech, initial string) (user, pass string, err error) {
	if mech == "PLAIN" {
		resp := decode(initial)
		if initial == "" {
			if resp, err = ss.answer(""); err != nil {
				return "", "", err
			}
		}
		parts := strings.Split(resp, "\x00")
		if len(parts) != 3 {
			return "", "", nil
		}
		return parts[1], parts[2], nil
	}
	user = decode(initial)
	if initial == "" {
		if user, err = ss.answer("Username:"); err != nil {
			return "", "", err
		}
	}
	pass, err = ss.answer("Password:")
	return user, pass, err
}

// answer prompts the client with p (base64) and returns its decoded
// answer, or errCancelled if it sent "*".
func (ss *session) answer(p string) (string, error) {
	if !ss.reply("334 " + base64.StdEncoding.EncodeToString([]byte(p))) {
		return "", errClosed
	}
	line, err := ss.read()
	if err != nil {
		return "", err
	}
	if line == "*" {
		return "", errCancelled
	}
	return decode(line), nil
}

func decode(s string) string {
	b, _ := base64.StdEncoding.DecodeString(s)
	return string(b)
}

func (ss *session) mailFrom(arg string) bool {
	if ss.s.opts.Username != "" && !ss.authed {
		return ss.reply("530 5.7.0 authentication required")
	}
	addr, ok := path(arg, "FROM:")
	if !ok {
		return ss.reply("501 5.5.4 Syntax: MAIL FROM:<address>")
	}
	ss.haveFrom, ss.m.From, ss.m.To = true, addr, nil
	return ss.reply("250 2.1.0 OK")
}

func (ss *session) rcptTo(arg string) bool {
	addr, ok := path(arg, "TO:")
	switch {
	case !ss.haveFrom:
		return ss.reply("503 5.5.1 MAIL first")
	case ss.s.opts.RejectRcpt:
		return ss.reply("550 5.1.1 mailbox unavailable")
	case !ok || addr == "":
		return ss.reply("501 5.5.4 Syntax: RCPT TO:<address>")
	case len(ss.m.To) >= maxRcpt:
		return ss.reply("452 4.5.3 Too many recipients")
	}
	ss.m.To = append(ss.m.To, addr)
	return ss.reply("250 2.1.5 OK")
}

func (ss *session) data() bool {
	if len(ss.m.To) == 0 {
		return ss.reply("503 5.5.1 RCPT first")
	}
	if !ss.reply("354 End data with <CR><LF>.<CR><LF>") {
		return false
	}
	raw, tooBig, err := ss.readData()
	if err != nil {
		return false
	}
	if ss.s.opts.Hang == HangData {
		<-ss.s.closing
		return false
	}
	m := ss.m
	ss.reset(ss.m.Helo)
	switch {
	case tooBig:
		return ss.reply("552 5.3.4 Message too big")
	case !ss.s.deliver(parse(m, raw)):
		return ss.reply("452 4.3.1 Mailbox full")
	}
	return ss.reply("250 2.0.0 OK")
}

// readData reads a DATA section up to its "." line, undoing the dot
// stuffing. A message over maxMessage is read to its end and dropped
// (tooBig).
func (ss *session) readData() (raw []byte, tooBig bool, err error) {
	var buf bytes.Buffer
	for {
		line, err := ss.read()
		if err != nil {
			return nil, false, err
		}
		if line == "." {
			break
		}
		line = strings.TrimPrefix(line, ".")
		if buf.Len()+len(line)+2 > maxMessage {
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

// path reads the address of "FROM:<a> params" or "TO:<a> params".
func path(arg, prefix string) (string, bool) {
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

var errLineTooLong = errors.New("SMTP sink: line too long")

// readLine reads one line of at most max bytes, its LF included.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}
