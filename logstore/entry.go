package logstore

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Entry is one log entry.
//
// A request log (data.type = "request") carries its data in Request; any other
// log carries it in Attrs, a JSON-compatible map. Exactly one of the two is
// used: when Request is set, Attrs is ignored.
//
// Entries are immutable once added: Add takes ownership of Request and Attrs,
// so the caller must not modify them afterwards.
type Entry struct {
	// ID is 15 characters of [a-z0-9]. Add keeps a caller-supplied ID only
	// when it has that form and is not in use; otherwise it assigns one.
	ID string

	// Created is the creation time. Add sets it from Options.Now when it is
	// zero. It is stored in UTC with millisecond precision, between the years
	// 1 and 9999.
	Created time.Time

	// Level is a log/slog level: -4 debug, 0 info, 4 warn, 8 error.
	Level int

	// Message is the log message; "METHOD URL" for request logs.
	Message string

	// Request is the data of a request log.
	Request *Request

	// Attrs is the data of any other log (values as produced by
	// encoding/json: nil, bool, float64, string, []any, map[string]any).
	Attrs map[string]any
}

// Request is the data of a request log. In the entry's JSON it becomes the
// data object with the keys listed in MarshalJSON.
type Request struct {
	Auth      string  // auth collection name of the caller, "" for guests
	AuthID    string  // id of the caller's record; only when settings.logs.logAuthId, omitted when ""
	ExecTime  float64 // milliseconds
	Method    string  // HTTP method
	Referer   string  // Referer header
	RemoteIP  string  // socket address; with UserIP: both "" when settings.logs.logIP is false
	Status    int     // HTTP status
	URL       string  // path and query of the request
	UserAgent string  // User-Agent header
	UserIP    string  // proxy-aware client address
	Error     string  // set for failed requests: data gains "error" and "details"
	Details   any     // raw cause (string, map …); JSON null when nil and Error != ""
}

// validUTF8 replaces the invalid UTF-8 in the strings of e by U+FFFD, as
// their JSON form would anyway, copying e.Request before it changes it.
// Stored text is then always valid UTF-8, so it never holds the byte 0xF5
// a journal frame marker starts with, and recovery cannot take a frame
// forged inside a logged string (say, a User-Agent) for a real one. Details
// and Attrs are stored as JSON, which encoding/json already makes valid.
func (e *Entry) validUTF8() {
	e.Message = validText(e.Message)
	r := e.Request
	if r == nil {
		return
	}
	fields := [...]*string{&r.Auth, &r.AuthID, &r.Method, &r.Referer, &r.RemoteIP, &r.URL, &r.UserAgent, &r.UserIP, &r.Error}
	for i, f := range fields {
		if !utf8.ValidString(*f) {
			c := *r
			fields = [...]*string{&c.Auth, &c.AuthID, &c.Method, &c.Referer, &c.RemoteIP, &c.URL, &c.UserAgent, &c.UserIP, &c.Error}
			for _, f := range fields[i:] {
				*f = validText(*f)
			}
			e.Request = &c
			return
		}
	}
}

func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// TimeLayout is the layout of every timestamp in the logs API:
// "YYYY-MM-DD HH:MM:SS.mmmZ", always UTC.
const TimeLayout = "2006-01-02 15:04:05.000Z"

// Range of storable creation times, in Unix milliseconds: the years 1 to
// 9999, where the formatted time has a fixed width and therefore sorts like
// the time itself.
const (
	minCreatedMs = -62135596800000 // 0001-01-01 00:00:00.000Z
	maxCreatedMs = 253402300799999 // 9999-12-31 23:59:59.999Z
)

// clampMs converts t to Unix milliseconds within the storable range.
func clampMs(t time.Time) int64 {
	ms := t.UnixMilli()
	return min(max(ms, minCreatedMs), maxCreatedMs)
}

// floorDiv is a/b rounded toward minus infinity, so that times before
// 1970 fall in the right day or hour.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// fromMs converts Unix milliseconds back to a UTC time.
func fromMs(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// appendTime appends the logs API form of the time ms (Unix milliseconds,
// within minCreatedMs … maxCreatedMs): TimeLayout, written digit by digit
// (a third of the time of time.Time.AppendFormat, for every entry of a
// page).
func appendTime(dst []byte, ms int64) []byte {
	t := fromMs(ms)
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, int(month), 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, day, 2)
	dst = append(dst, ' ')
	dst = appendDigits(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, minute, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, sec, 2)
	dst = append(dst, '.')
	dst = appendDigits(dst, t.Nanosecond()/1e6, 3)
	return append(dst, 'Z')
}

// appendDigits appends the n (at most 4) low decimal digits of v ≥ 0,
// zero-padded.
func appendDigits(dst []byte, v, n int) []byte {
	var d [4]byte
	for i := n - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(dst, d[:n]...)
}

// formatMs returns the logs API form of the time ms (Unix milliseconds).
func formatMs(ms int64) string { return string(appendTime(make([]byte, 0, 24), ms)) }

// MarshalJSON encodes the entry in PocketBase's shape:
//
//	{"id":…,"created":"YYYY-MM-DD HH:MM:SS.mmmZ","data":{…},"message":…,"level":N}
//
// The data keys come out alphabetically. For a request log they are auth,
// authId (only when not ""), details and error (only for a failed request;
// details is null when Details is nil), execTime, method, referer, remoteIP,
// status, type ("request"), url, userAgent, userIP; remoteIP and userIP are
// omitted when both are "" (logIP off).
func (e Entry) MarshalJSON() ([]byte, error) { return e.AppendJSON(make([]byte, 0, 512)) }

// AppendJSON appends the entry's JSON (MarshalJSON) to b. The text is
// compact and escaped as encoding/json escapes strings (<, > and & too),
// so it is byte for byte what encoding/json writes for the entry, without
// the pass in which encoding/json checks and compacts what a MarshalJSON
// method returns (most of the time of a page's encoding).
func (e Entry) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"created":"`...)
	b = appendTime(b, clampMs(e.Created))
	b = append(b, `","data":`...)
	b, err := e.appendData(b)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"message":`...)
	b = appendString(b, e.Message)
	b = append(b, `,"level":`...)
	b = strconv.AppendInt(b, int64(e.Level), 10)
	return append(b, '}'), nil
}

// appendData appends the entry's data object.
func (e Entry) appendData(b []byte) ([]byte, error) {
	if e.Request == nil {
		if len(e.Attrs) == 0 {
			return append(b, "{}"...), nil
		}
		a, err := json.Marshal(e.Attrs)
		if err != nil {
			return nil, err
		}
		return append(b, a...), nil
	}
	r := e.Request
	b = append(b, `{"auth":`...)
	b = appendString(b, r.Auth)
	if r.AuthID != "" {
		b = append(b, `,"authId":`...)
		b = appendString(b, r.AuthID)
	}
	if r.Error != "" {
		b = append(b, `,"details":`...)
		d, err := json.Marshal(r.Details)
		if err != nil {
			return nil, err
		}
		b = append(b, d...)
		b = append(b, `,"error":`...)
		b = appendString(b, r.Error)
	}
	b = append(b, `,"execTime":`...)
	b = appendFloat(b, r.ExecTime)
	b = append(b, `,"method":`...)
	b = appendString(b, r.Method)
	b = append(b, `,"referer":`...)
	b = appendString(b, r.Referer)
	logIP := r.RemoteIP != "" || r.UserIP != ""
	if logIP {
		b = append(b, `,"remoteIP":`...)
		b = appendString(b, r.RemoteIP)
	}
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"type":"request","url":`...)
	b = appendString(b, r.URL)
	b = append(b, `,"userAgent":`...)
	b = appendString(b, r.UserAgent)
	if logIP {
		b = append(b, `,"userIP":`...)
		b = appendString(b, r.UserIP)
	}
	return append(b, '}'), nil
}

// Data returns the entry's data object as generic JSON values (the form
// encoding/json produces), for callers that need the attributes as a map.
func (e Entry) Data() map[string]any {
	if e.Request == nil {
		if e.Attrs == nil {
			return map[string]any{}
		}
		return e.Attrs
	}
	r := e.Request
	m := map[string]any{
		"auth":      r.Auth,
		"execTime":  r.ExecTime,
		"method":    r.Method,
		"referer":   r.Referer,
		"status":    float64(r.Status),
		"type":      "request",
		"url":       r.URL,
		"userAgent": r.UserAgent,
	}
	if r.AuthID != "" {
		m["authId"] = r.AuthID
	}
	if r.Error != "" {
		m["error"] = r.Error
		m["details"] = r.Details
	}
	if r.RemoteIP != "" || r.UserIP != "" {
		m["remoteIP"] = r.RemoteIP
		m["userIP"] = r.UserIP
	}
	return m
}

// appendString appends s as a JSON string, escaped exactly as
// encoding/json escapes it (HTML escaping on): ", \\ and the control
// characters (\b, \f, \n, \r, \t by name, the others as \u00XX), <, > and
// & as \u003c, \u003e and \u0026, U+2028 and U+2029 as \u2028 and \u2029,
// and each byte of invalid UTF-8 as \ufffd. So the output is the same
// whether or not an outer encoder re-escapes it.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendFloat appends f the way encoding/json writes a float64. JSON has no
// NaN or infinity; they are written as 0 so the entry stays valid JSON.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// HourStat is the number of matching entries created in one UTC hour.
type HourStat struct {
	Date  time.Time // start of the hour, UTC
	Total int
}

// MarshalJSON encodes the statistic as {"date":"YYYY-MM-DD HH:00:00.000Z","total":N}.
func (h HourStat) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 56)
	b = append(b, `{"date":"`...)
	b = h.Date.UTC().AppendFormat(b, TimeLayout)
	b = append(b, `","total":`...)
	b = strconv.AppendInt(b, int64(h.Total), 10)
	return append(b, '}'), nil
}

// Page is one page of a List result. It marshals to PocketBase's list
// envelope {"items":[…],"page":…,"perPage":…,"totalItems":…,"totalPages":…};
// Items is never nil, so an empty page has "items":[].
type Page struct {
	Items      []Entry `json:"items"`
	Page       int     `json:"page"`
	PerPage    int     `json:"perPage"`
	TotalItems int     `json:"totalItems"` // -1 with Query.SkipTotal
	TotalPages int     `json:"totalPages"` // -1 with Query.SkipTotal
}

// AppendJSON appends the page's JSON to b: byte for byte what
// encoding/json writes for it (the envelope's keys in the order of the
// struct's fields, each entry as Entry.AppendJSON writes it), in one pass.
func (p Page) AppendJSON(b []byte) ([]byte, error) {
	b = slices.Grow(b, 100+400*len(p.Items)) // a typical request log: 280 bytes
	b = append(b, `{"items":`...)
	if p.Items == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range p.Items {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = e.AppendJSON(b); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	for _, f := range [...]struct {
		key string
		n   int
	}{{`,"page":`, p.Page}, {`,"perPage":`, p.PerPage}, {`,"totalItems":`, p.TotalItems}, {`,"totalPages":`, p.TotalPages}} {
		b = append(b, f.key...)
		b = strconv.AppendInt(b, int64(f.n), 10)
	}
	return append(b, '}'), nil
}
