package age

import (
	"bufio"
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
)

// intro is the first line of every age v1 file.
const intro = "age-encryption.org/v1\n"

// Bounds on what a header may hold, checked as it is read, so that a
// hostile file costs little memory or work: the header's bytes, its
// stanzas, and the arguments of one stanza. age itself sets none; a
// backup is encrypted to a handful of recipients.
const (
	MaxHeaderSize = 64 << 10
	MaxStanzas    = 256
	maxArgs       = 16
	bodyColumns   = 64 // a stanza body's full line, in base64 characters
)

// b64 is the base64 of the header: standard alphabet, no padding, and
// canonical (no stray bits in the last character).
var b64 = base64.RawStdEncoding.Strict()

// Stanza is one recipient stanza of a header: "-> Type Args…" and a
// body. A Recipient writes them and an Identity reads them.
type Stanza struct {
	Type string
	Args []string
	Body []byte
}

// header is a parsed header: its stanzas, its MAC, and the bytes the MAC
// covers (from the intro to the "---" of the last line).
type header struct {
	stanzas []*Stanza
	mac     []byte
	signed  []byte
	size    int64 // bytes from the start of the file to the payload
}

// HeaderError is why a header is refused: malformed, too large, or
// failing its MAC.
type HeaderError struct{ Reason string }

// Error returns "age: invalid header: " and the reason.
func (e *HeaderError) Error() string { return "age: invalid header: " + e.Reason }

func headerErr(format string, args ...any) error {
	return &HeaderError{Reason: fmt.Sprintf(format, args...)}
}

// validToken reports whether s is a stanza type or argument: one or more
// printable ASCII characters (VCHAR), no space.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < 33 || s[i] > 126 {
			return false
		}
	}
	return true
}

// headerReader reads a header line by line, counting its bytes.
type headerReader struct {
	br  *bufio.Reader
	buf bytes.Buffer // every byte read so far
}

// line reads one line, with its "\n", within MaxHeaderSize.
func (h *headerReader) line() (string, error) {
	var b []byte
	for {
		frag, err := h.br.ReadSlice('\n')
		b = append(b, frag...)
		if h.buf.Len()+len(b) > MaxHeaderSize {
			return "", headerErr("larger than %d bytes", MaxHeaderSize)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", fmt.Errorf("age: read header: %w", err)
		}
		break
	}
	h.buf.Write(b)
	return string(b), nil
}

// parseHeader reads a header from br, leaving br at the payload.
func parseHeader(br *bufio.Reader) (*header, error) {
	hr := &headerReader{br: br}
	l, err := hr.line()
	if err != nil {
		if _, ok := errors.AsType[*HeaderError](err); ok {
			return nil, err
		}
		return nil, ErrNotAge
	}
	if l != intro {
		return nil, ErrNotAge
	}
	h := &header{}
	for {
		l, err := hr.line()
		if err != nil {
			return nil, err
		}
		if mac, ok := strings.CutPrefix(l, "--- "); ok {
			h.signed = hr.buf.Bytes()[:hr.buf.Len()-len(l)+3]
			h.mac, err = b64.DecodeString(strings.TrimSuffix(mac, "\n"))
			if err != nil || len(h.mac) != sha256.Size {
				return nil, headerErr("a malformed MAC")
			}
			h.size = int64(hr.buf.Len())
			return h, nil
		}
		args, ok := strings.CutPrefix(l, "-> ")
		if !ok {
			return nil, headerErr("a line that is neither a stanza nor the MAC")
		}
		if len(h.stanzas) == MaxStanzas {
			return nil, headerErr("more than %d stanzas", MaxStanzas)
		}
		s, err := hr.stanza(strings.TrimSuffix(args, "\n"))
		if err != nil {
			return nil, err
		}
		h.stanzas = append(h.stanzas, s)
	}
}

// stanza reads the body of the stanza whose arguments line is args.
func (hr *headerReader) stanza(args string) (*Stanza, error) {
	fields := strings.Split(args, " ")
	if len(fields) > maxArgs {
		return nil, headerErr("a stanza of more than %d arguments", maxArgs)
	}
	for _, f := range fields {
		if !validToken(f) {
			return nil, headerErr("a stanza with an empty or invalid argument")
		}
	}
	s := &Stanza{Type: fields[0], Args: fields[1:]}
	for {
		l, err := hr.line()
		if err != nil {
			return nil, err
		}
		l = strings.TrimSuffix(l, "\n")
		if strings.Contains(l, "\r") {
			return nil, headerErr("a carriage return in a stanza body")
		}
		if len(l) > bodyColumns {
			return nil, headerErr("a stanza body line longer than %d columns", bodyColumns)
		}
		b, err := b64.DecodeString(l)
		if err != nil {
			return nil, headerErr("a stanza body that is not canonical base64")
		}
		s.Body = append(s.Body, b...)
		if len(l) < bodyColumns {
			return s, nil
		}
	}
}

// marshal writes the stanza in the header's text form.
func (s *Stanza) marshal(w *bytes.Buffer) {
	w.WriteString("->")
	for _, a := range append([]string{s.Type}, s.Args...) {
		w.WriteByte(' ')
		w.WriteString(a)
	}
	w.WriteByte('\n')
	enc := b64.EncodeToString(s.Body)
	for len(enc) >= bodyColumns {
		w.WriteString(enc[:bodyColumns])
		w.WriteByte('\n')
		enc = enc[bodyColumns:]
	}
	w.WriteString(enc)
	w.WriteByte('\n')
}

// headerMAC is the MAC of the header bytes signed under fileKey.
func headerMAC(fileKey, signed []byte) []byte {
	mac := hmac.New(sha256.New, hkdfKey(fileKey, nil, "header"))
	mac.Write(signed)
	return mac.Sum(nil)
}

// hkdfKey derives a 32-byte key with HKDF-SHA256.
func hkdfKey(secret, salt []byte, info string) []byte {
	key, err := hkdf.Key(sha256.New, secret, salt, info, 32) // crypto/hkdf
	if err != nil {
		panic("age: hkdf: " + err.Error()) // 32 bytes of SHA-256 are always allowed
	}
	return key
}
