package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
)

// ErrHeaderInjection is returned for a message whose subject or address
// holds a CR, LF or NUL: written into a header, it would end the header
// and start another (or the body). Such a message is refused whole, never
// cleaned up.
var ErrHeaderInjection = errors.New("mail: CR, LF or NUL in a header value")

// ErrInvalidMessage is returned for a message without a sender, without a
// recipient, or with an address that is not one.
var ErrInvalidMessage = errors.New("mail: invalid message")

// Validate reports whether m can be sent: ErrHeaderInjection or
// ErrInvalidMessage (wrapped, naming the field) if not.
func (m *Message) Validate() error {
	if badHeader(m.Subject) {
		return fmt.Errorf("%w: subject", ErrHeaderInjection)
	}
	if err := checkAddress("from", m.From); err != nil {
		return err
	}
	if len(m.To) == 0 {
		return fmt.Errorf("%w: no recipient", ErrInvalidMessage)
	}
	for _, a := range m.To {
		if err := checkAddress("to", a); err != nil {
			return err
		}
	}
	return nil
}

func badHeader(s string) bool { return strings.ContainsAny(s, "\r\n\x00") }

// checkAddress refuses an address that is not exactly one addr-spec, or a
// name or address that could break a header or an SMTP command line.
func checkAddress(field string, a mail.Address) error {
	if badHeader(a.Name) || badHeader(a.Address) {
		return fmt.Errorf("%w: %s", ErrHeaderInjection, field)
	}
	if a.Address == "" {
		return fmt.Errorf("%w: %s: empty address", ErrInvalidMessage, field)
	}
	p, err := mail.ParseAddress(a.Address)
	if err != nil || p.Address != a.Address || p.Name != "" || strings.ContainsAny(a.Address, "<> ") {
		return fmt.Errorf("%w: %s: not an address: %q", ErrInvalidMessage, field, a.Address)
	}
	return nil
}

// Encode writes m as an RFC 5322 message: From, To, Subject (RFC 2047
// encoded when not ASCII), Date (date), Message-ID (random, at the
// sender's domain), MIME-Version, and a multipart/alternative body with a
// text/plain part (m.Text, or the text of m.HTML) and a text/html part,
// both UTF-8, each 7bit when it is ASCII in short lines and
// quoted-printable otherwise. Lines end in CRLF. A message that does
// not Validate is not written.
func (m *Message) Encode(w io.Writer, date time.Time) error {
	if err := m.Validate(); err != nil {
		return err
	}
	var idb [16]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return fmt.Errorf("mail: message id: %w", err)
	}
	domain := m.From.Address[strings.LastIndexByte(m.From.Address, '@')+1:]

	var body bytes.Buffer
	mp := multipart.NewWriter(&body)
	text := m.Text
	if text == "" {
		text = HTMLToText(m.HTML)
	}
	for _, part := range []struct{ typ, content string }{{"text/plain", text}, {"text/html", m.HTML}} {
		content := crlf(part.content)
		enc := "7bit"
		if !sevenBit(content) {
			enc = "quoted-printable"
		}
		pw, err := mp.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.typ + "; charset=UTF-8"},
			"Content-Transfer-Encoding": {enc},
		})
		if err != nil {
			return err
		}
		if enc == "7bit" {
			if _, err := io.WriteString(pw, content); err != nil {
				return err
			}
			continue
		}
		qp := quotedprintable.NewWriter(pw)
		if _, err := io.WriteString(qp, content); err != nil {
			return err
		}
		if err := qp.Close(); err != nil {
			return err
		}
	}
	if err := mp.Close(); err != nil {
		return err
	}

	to := make([]string, len(m.To))
	for i, a := range m.To {
		to[i] = a.String()
	}
	var h strings.Builder
	header := func(k, v string) { h.WriteString(fold(k+": "+v) + "\r\n") }
	header("From", m.From.String())
	header("To", strings.Join(to, ", "))
	header("Subject", mime.QEncoding.Encode("UTF-8", m.Subject))
	header("Date", date.Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(idb[:])+"@"+domain+">")
	header("MIME-Version", "1.0")
	header("Content-Type", `multipart/alternative; boundary="`+mp.Boundary()+`"`)
	h.WriteString("\r\n")
	if _, err := io.WriteString(w, h.String()); err != nil {
		return err
	}
	_, err := w.Write(body.Bytes())
	return err
}

// fold folds a header line longer than 78 characters at its spaces
// (RFC 5322 §2.2.3), so that no line nears the 998-byte limit: a reader
// unfolds it back to the same value. A run of text without a space stays
// whole.
func fold(line string) string {
	if len(line) <= 78 {
		return line
	}
	var b strings.Builder
	n := 0 // length of the current line
	for i, word := range strings.Split(line, " ") {
		switch {
		case i == 0:
		case n+1+len(word) > 78 && n > 0 && word != "":
			b.WriteString("\r\n")
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		if n == 0 && i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

// crlf makes every line end CRLF.
func crlf(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "\n", "\r\n")
}

// sevenBit reports whether s can go as it is (RFC 2045 7bit): ASCII
// without NUL, in lines of at most 998 bytes. A part that is, is written
// unencoded, so that an .eml file reads (and greps) as the mail's text;
// any other is quoted-printable.
func sevenBit(s string) bool {
	for _, line := range strings.Split(s, "\r\n") {
		if len(line) > 998 {
			return false
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; c == 0 || c >= 0x80 || c == '\r' || c == '\n' {
				return false
			}
		}
	}
	return true
}

// HTMLToText returns the text of an HTML body for a mail's text/plain
// part: tags are dropped (a <br> and the end of a list item become a line
// end, the end of a paragraph, div or heading a blank line; a link keeps its address in parentheses),
// entities are unescaped, and the lines trimmed, with at most one blank
// line in a row.
func HTMLToText(s string) string {
	// As in HTML, a line end in the source is a space; only tags break lines.
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	var b strings.Builder
	var href string // of the link being read
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		tag := s[i+1 : i+j]
		s = s[i+j+1:]
		closing := strings.HasPrefix(tag, "/")
		name := strings.ToLower(strings.TrimPrefix(tag, "/"))
		if k := strings.IndexAny(name, " \t\r\n/"); k >= 0 {
			name = name[:k]
		}
		switch {
		case name == "br", closing && (name == "li" || name == "tr"):
			b.WriteString("\n")
		case closing && (name == "p" || name == "div" || name == "h1" || name == "h2" || name == "h3"):
			b.WriteString("\n\n")
		case name == "a" && !closing:
			href = hrefOf(tag)
		case name == "a" && closing && href != "":
			b.WriteString(" (" + href + ")")
			href = ""
		}
	}
	lines := strings.Split(html.UnescapeString(b.String()), "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// hrefOf returns the quoted href attribute of an <a> tag, or "".
func hrefOf(tag string) string {
	i := strings.Index(strings.ToLower(tag), "href=")
	if i < 0 || i+5 >= len(tag) {
		return ""
	}
	v := tag[i+5:]
	q := v[0]
	if q != '"' && q != '\'' {
		return ""
	}
	j := strings.IndexByte(v[1:], q)
	if j < 0 {
		return ""
	}
	return v[1 : 1+j]
}
