package logstore

import (
	"encoding/binary"
	"errors"
	"math"
	"net/url"
	"strings"
)

// Record kinds: the first byte of every payload (see doc.go).
const (
	kindRequest byte = 1
	kindOther   byte = 2
)

// Record flags (the flags byte of a payload).
const (
	flagForeignID  byte = 1 << 0 // the id is stored (it is not derived from seq)
	flagDerivedMsg byte = 1 << 1 // request: message is method + " " + url, not stored
	flagAuthID     byte = 1 << 2 // request: authId stored
	flagError      byte = 1 << 3 // request: error and details stored
	flagUnescMsg   byte = 1 << 4 // request: message is method + " " + unescapeURL(url), not stored
	knownFlags          = flagForeignID | flagDerivedMsg | flagAuthID | flagError | flagUnescMsg

	// msgFlags are the flags of a derived (not stored) message.
	msgFlags = flagDerivedMsg | flagUnescMsg
)

// errBadRecord is returned by decodeRecord for a payload that is not a valid
// record. A payload whose frame checksum holds can only be invalid after a
// bug or a deliberate edit, so the store skips it with a warning.
var errBadRecord = errors.New("logstore: malformed record")

// record is a decoded payload. Its byte slices alias the payload.
type record struct {
	kind    byte
	flags   byte
	seq     int64
	created int64 // Unix ms
	level   int32
	id      []byte // only with flagForeignID

	// request logs
	status    int32
	execTime  float64
	method    []byte
	url       []byte
	auth      []byte
	referer   []byte
	remoteIP  []byte
	userIP    []byte
	userAgent []byte
	authID    []byte // only with flagAuthID
	errMsg    []byte // only with flagError
	details   []byte // JSON text, only with flagError

	// both kinds
	message []byte // request logs: only without flagDerivedMsg
	attrs   []byte // other logs: JSON object text, or empty for no attributes
}

// appendRecord appends the payload of e with sequence number seq. foreignID is
// the id to store, or "" when the id is derived from seq. Request details
// and other-log attributes must already be JSON text (detailsJSON, attrsJSON).
func appendRecord(b []byte, e *Entry, seq int64, createdMs int64, foreignID string, detailsJSON, attrsJSON []byte) []byte {
	var flags byte
	if foreignID != "" {
		flags |= flagForeignID
	}
	kind := kindOther
	r := e.Request
	if r != nil {
		kind = kindRequest
		flags |= derivation(e.Message, r.Method, r.URL)
		if r.AuthID != "" {
			flags |= flagAuthID
		}
		if r.Error != "" {
			flags |= flagError
		}
	}
	b = append(b, kind)
	b = binary.AppendUvarint(b, uint64(seq))
	b = binary.AppendVarint(b, createdMs)
	b = binary.AppendVarint(b, int64(clampInt32(e.Level)))
	b = append(b, flags)
	if foreignID != "" {
		b = appendBytes(b, foreignID)
	}
	if r == nil {
		b = appendBytes(b, e.Message)
		b = binary.AppendUvarint(b, uint64(len(attrsJSON)))
		return append(b, attrsJSON...)
	}
	b = binary.AppendVarint(b, int64(clampInt32(r.Status)))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.ExecTime))
	b = appendBytes(b, r.Method)
	b = appendBytes(b, r.URL)
	b = appendBytes(b, r.Auth)
	b = appendBytes(b, r.Referer)
	b = appendBytes(b, r.RemoteIP)
	b = appendBytes(b, r.UserIP)
	b = appendBytes(b, r.UserAgent)
	if flags&msgFlags == 0 {
		b = appendBytes(b, e.Message)
	}
	if flags&flagAuthID != 0 {
		b = appendBytes(b, r.AuthID)
	}
	if flags&flagError != 0 {
		b = appendBytes(b, r.Error)
		b = binary.AppendUvarint(b, uint64(len(detailsJSON)))
		b = append(b, detailsJSON...)
	}
	return b
}

// derivation returns the flag of the derived message that msg is, given
// the request's method and url: flagDerivedMsg for method + " " + url,
// flagUnescMsg for method + " " + unescapeURL(url) (the request logger's
// message), 0 when msg is neither and has to be stored.
func derivation(msg, method, url string) byte {
	if isDerivedMessage(msg, method, url) {
		return flagDerivedMsg
	}
	if len(msg) <= len(url)+len(method)+1 && strings.IndexByte(url, '%') >= 0 {
		if u, ok := unescapeURL(url); ok && isDerivedMessage(msg, method, u) {
			return flagUnescMsg
		}
	}
	return 0
}

// isDerivedMessage reports whether msg == method + " " + url.
func isDerivedMessage(msg, method, url string) bool {
	return len(msg) == len(method)+1+len(url) &&
		msg[:len(method)] == method && msg[len(method)] == ' ' && msg[len(method)+1:] == url
}

// unescapeURL returns url.PathUnescape(u) with invalid UTF-8 replaced by
// U+FFFD, as the request logger writes the message; ok is false when u has
// nothing to unescape or an invalid escape (then the message is u itself).
func unescapeURL(u string) (string, bool) {
	if strings.IndexByte(u, '%') < 0 {
		return u, false
	}
	s, err := url.PathUnescape(u)
	if err != nil {
		return u, false
	}
	return strings.ToValidUTF8(s, "\uFFFD"), true
}

// deriveMessage returns the derived message of a request log with the
// given message flags (one of msgFlags).
func deriveMessage(flags byte, method, url string) string {
	return string(appendMessage(make([]byte, 0, len(method)+1+len(url)), flags, method, url))
}

// validEscapes reports whether every '%' in b starts a %XX escape, that
// is whether url.PathUnescape accepts b.
func validEscapes[S ~string | ~[]byte](b S) bool {
	for i := 0; i < len(b); i++ {
		if b[i] == '%' {
			if i+2 >= len(b) || !ishex(b[i+1]) || !ishex(b[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func appendBytes(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func clampInt32(v int) int32 {
	return int32(min(max(v, math.MinInt32), math.MaxInt32))
}

// decoder reads a payload front to back. Every read checks the bytes left,
// so no length field can make it read or allocate past the payload.
type decoder struct {
	p   []byte
	bad bool
}

func (d *decoder) byte() byte {
	if len(d.p) < 1 {
		d.bad = true
		return 0
	}
	c := d.p[0]
	d.p = d.p[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) int32() int32 {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.bad = true
		return 0
	}
	return int32(v)
}

func (d *decoder) uint64() uint64 {
	if len(d.p) < 8 {
		d.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint64(d.p)
	d.p = d.p[8:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.p)) {
		d.bad = true
		return nil
	}
	s := d.p[:n:n]
	d.p = d.p[n:]
	return s
}

// decodeRecord decodes payload p into r. The slices in r alias p. It fails
// for anything appendRecord cannot have produced: an unknown kind or flag, a
// sequence number outside 1..maxSeq, a time outside the storable range, a
// NaN or infinite execTime, a
// length running past the payload, or bytes left over.
func decodeRecord(p []byte, r *record) error {
	*r = record{}
	d := decoder{p: p}
	r.kind = d.byte()
	seq := d.uvarint()
	r.created = d.varint()
	r.level = d.int32()
	r.flags = d.byte()
	if d.bad || (r.kind != kindRequest && r.kind != kindOther) || r.flags&^knownFlags != 0 ||
		seq < 1 || seq > maxSeq || r.created < minCreatedMs || r.created > maxCreatedMs {
		return errBadRecord
	}
	r.seq = int64(seq)
	if r.flags&flagForeignID != 0 {
		r.id = d.bytes()
		if !d.bad && !validID(r.id) {
			return errBadRecord
		}
	}
	if r.kind == kindOther {
		if r.flags&^flagForeignID != 0 {
			return errBadRecord
		}
		r.message = d.bytes()
		r.attrs = d.bytes()
	} else {
		r.status = d.int32()
		r.execTime = math.Float64frombits(d.uint64())
		if math.IsNaN(r.execTime) || math.IsInf(r.execTime, 0) {
			return errBadRecord // appendRecord never writes them (JSON has none)
		}
		r.method = d.bytes()
		r.url = d.bytes()
		r.auth = d.bytes()
		r.referer = d.bytes()
		r.remoteIP = d.bytes()
		r.userIP = d.bytes()
		r.userAgent = d.bytes()
		if r.flags&msgFlags == msgFlags || (r.flags&flagUnescMsg != 0 && !validEscapes(r.url)) {
			return errBadRecord // never written: one derivation, of a URL that has one
		}
		if r.flags&msgFlags == 0 {
			r.message = d.bytes()
		}
		if r.flags&flagAuthID != 0 {
			r.authID = d.bytes()
		}
		if r.flags&flagError != 0 {
			r.errMsg = d.bytes()
			r.details = d.bytes()
		}
	}
	if d.bad || len(d.p) != 0 {
		return errBadRecord
	}
	return nil
}

// messageString returns the record's message, deriving it for request logs
// that do not store it.
func (r *record) messageString() string {
	if r.kind == kindRequest && r.flags&msgFlags != 0 {
		return deriveMessage(r.flags, string(r.method), string(r.url))
	}
	return string(r.message)
}
