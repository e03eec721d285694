package api

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"strongbox/authn/validation"
	"strongbox/filterlang"
	"strongbox/logstore"
)

// The logs routes (§4.3) are for superusers. A successful call is not itself
// logged (st.quiet), so that reading the logs does not fill them; failures
// are.

// handleLogsList handles GET /api/logs.
func (s *Server) handleLogsList(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	stateOf(r).quiet = true
	q := query(r)
	pg, err := parsePaging(q.Get("page"), q.Get("perPage"), q.Get("skipTotal"))
	if err != nil {
		return err
	}
	p, err := s.logs.List(logstore.Query{
		Filter: q.Get("filter"), Sort: q.Get("sort"),
		Page: pg.page, PerPage: pg.perPage, SkipTotal: pg.skipTotal,
	})
	if err != nil {
		return logsQueryError(err)
	}
	return writeJSON(w, r, http.StatusOK, p)
}

// logsQueryError maps a store query error: a malformed filter gets the
// document's message (§7), exactly, with data.filter saying what is wrong
// and where (filterError); any other bad parameter the generic 400.
func logsQueryError(err error) error {
	switch {
	case errors.Is(err, logstore.ErrInvalidFilter):
		return &Error{Status: http.StatusBadRequest, Message: msgInvalidFilter,
			Data: validation.Errors{"filter": filterError(err)}, Err: err}
	case errors.Is(err, logstore.ErrInvalidSort):
		return errBadRequest(msgBadRequest, err)
	}
	return err
}

// filterError is data.filter of a malformed logs filter: the parser's or
// compiler's message and byte offset (a *filterlang.SyntaxError, "expected
// operand, found end of input" at 8), or, for a failure with no position
// (none a client can cause today), no offset and a message that names no
// internals. PocketBase answers data {}; a client that reads only the
// message sees no difference.
func filterError(err error) *validation.Error {
	if se, ok := errors.AsType[*filterlang.SyntaxError](err); ok {
		return validation.InvalidFilter(se.Msg, se.Offset)
	}
	return validation.InvalidFilter("not a valid expression", -1)
}

// handleLogsStats handles GET /api/logs/stats.
func (s *Server) handleLogsStats(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	stateOf(r).quiet = true
	stats, err := s.logs.Stats(query(r).Get("filter"))
	if err != nil {
		return logsQueryError(err)
	}
	return writeJSON(w, r, http.StatusOK, stats)
}

// handleLogView handles GET /api/logs/{id}.
func (s *Server) handleLogView(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	stateOf(r).quiet = true
	e, err := s.logs.Get(r.PathValue("id"))
	if errors.Is(err, logstore.ErrNotFound) {
		return errNotFound(err)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, e)
}

// Request-log field limits, as PocketBase truncates them.
const (
	maxLoggedURL    = 3000
	maxLoggedMethod = 50
	maxLoggedHeader = 2000
	redactedValue   = "REDACTED"
	levelInfo       = 0
	levelError      = 8
)

// A parameter is secret, and its value never reaches the request log (in
// the URL or the Referer), when its name, decoded, lower-cased and with
// every character but a-z and 0-9 removed, contains one of secretWords or
// ends with one of secretSuffixes. So token, TOKEN, token[], access_token,
// refresh_token, newPassword, passphrase, client_secret, X-Api-Key,
// privateKey, sessionid, code_verifier, auth_code and resetCode are all
// secret, however their names are escaped; the rule does not depend on a
// spelling.
var (
	secretWords = []string{"token", "pass", "pwd", "secret", "apikey", "signature", "jwt", "session",
		"bearer", "hmac", "verifier", "credential"}
	secretSuffixes = []string{"code", "otp", "key", "sig", "sid", "pw", "auth", "authorization"}
)

// secretParam reports whether a decoded query parameter name is secret.
func secretParam(name string) bool {
	norm := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			norm = append(norm, c)
		case 'A' <= c && c <= 'Z':
			norm = append(norm, c+'a'-'A')
		}
	}
	n := string(norm)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, w := range secretSuffixes {
		if strings.HasSuffix(n, w) {
			return true
		}
	}
	return false
}

// logRequest hands the request's log entry to the store's batcher. It runs
// after the response is written and never waits for the disk.
func (s *Server) logRequest(r *http.Request, st *state) {
	if st.quiet && st.err == nil {
		return
	}
	cfg := s.applied.Load()
	if cfg.logs.MaxDays == 0 {
		return
	}
	uri := logText(redactURI(r.URL))
	req := &logstore.Request{
		ExecTime:  float64(s.now().Sub(st.start).Nanoseconds()) / 1e6,
		Method:    truncate(logText(strings.ToUpper(r.Method)), maxLoggedMethod),
		Referer:   truncate(logText(redactReferer(r.Referer())), maxLoggedHeader),
		Status:    st.status,
		URL:       truncate(uri, maxLoggedURL),
		UserAgent: truncate(logText(r.UserAgent()), maxLoggedHeader),
	}
	if st.col != nil {
		req.Auth = st.col.Name
		if cfg.logs.LogAuthID {
			req.AuthID = st.rec.ID
		}
	}
	if cfg.logs.LogIP {
		req.RemoteIP = remoteIP(r)
		req.UserIP = cfg.clientIP(r, req.RemoteIP)
	}
	level := levelInfo
	if e := st.err; e != nil {
		level = levelError
		req.Error = e.Message
		if req.Status == 0 {
			req.Status = e.Status
		}
		req.Details = errorDetails(e)
	}
	// The message is derived from the logged (truncated) URL, so the store
	// can rebuild it instead of keeping a second copy.
	s.logs.Add(logstore.Entry{Level: level, Message: req.Method + " " + messageURL(req.URL), Request: req})
}

// messageURL is the logged URL u as a request log's message shows it:
// unescaped, as PocketBase v0.31.0 writes it ("GET /api/a b" for
// /api/a%20b), but for the characters that are not printable (control
// characters such as a CR or LF sent as %0D%0A, line separators, format
// characters), which stay percent-encoded as %XX escapes (uppercase hex)
// of their UTF-8 bytes. A message is thus one line of text that cannot
// show a forged log line to a reader of plain text; PocketBase stores the
// CR LF itself. A URL with an invalid escape is its own message.
func messageURL(u string) string {
	d, err := url.PathUnescape(u)
	if err != nil {
		return u
	}
	d = logText(d)
	if !strings.ContainsFunc(d, unprintable) {
		return d
	}
	var b strings.Builder
	for _, r := range d {
		if !unprintable(r) {
			b.WriteRune(r)
			continue
		}
		for _, c := range []byte(string(r)) {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// unprintable reports whether a log message escapes r: every character
// strconv.IsPrint refuses but the space.
func unprintable(r rune) bool { return r != ' ' && !strconv.IsPrint(r) }

// errorDetails is the cause of a failed request for the log: per-field
// messages of a validation failure, or the internal error's text.
func errorDetails(e *Error) any {
	if len(e.Data) > 0 {
		out := make(map[string]any, len(e.Data))
		for k, v := range e.Data {
			if fe, ok := v.(*validation.Error); ok {
				out[k] = fe.Message
			} else {
				out[k] = v
			}
		}
		return out
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return nil
}

// redactURI returns the request URI with the values of secret parameters
// replaced (see redactParams).
func redactURI(u *url.URL) string {
	uri := u.EscapedPath()
	if u.RawQuery != "" {
		uri += "?" + u.RawQuery
	}
	return redactParams(uri)
}

// redactReferer redacts a Referer header's parameters as redactURI does,
// and its userinfo (http://user:pass@host/), whatever it holds: the part of
// the authority up to its last '@', in any of the forms a hand-made client
// may send (no scheme, "//host", backslashes for slashes).
func redactReferer(ref string) string {
	start := 0
	if i := strings.IndexByte(ref, ':'); i > 0 && isScheme(ref[:i]) {
		start = i + 1
	}
	for start < len(ref) && (ref[start] == '/' || ref[start] == '\\') {
		start++
	}
	end := start + strings.IndexAny(ref[start:], "/\\?#")
	if end < start {
		end = len(ref)
	}
	if at := strings.LastIndexByte(ref[start:end], '@'); at >= 0 {
		ref = ref[:start] + redactedValue + ref[start+at:]
	}
	return redactParams(ref)
}

// isScheme reports whether s is a URL scheme (RFC 3986 §3.1).
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// redactParams replaces the values of secret parameters (secretParam) in a
// URI. Everything from its first '?' or '#' (or an escaped "%23" in the
// path) is cut at '?', '&', ';', '#' and "%23", so a query, a fragment
// (the OAuth2 implicit flow's #access_token=…) and semicolon-separated
// pairs are all covered; every name=value piece with a secret name has its
// value replaced. Names are compared decoded, so an escaped name such as
// %74oken is caught too.
func redactParams(uri string) string {
	i := nextDelim(uri, true)
	if i < 0 {
		return uri
	}
	var b strings.Builder
	b.WriteString(uri[:i])
	for rest := uri[i:]; rest != ""; {
		d := 1
		if rest[0] == '%' {
			d = 3
		}
		b.WriteString(rest[:d])
		rest = rest[d:]
		j := nextDelim(rest, false)
		if j < 0 {
			j = len(rest)
		}
		piece := rest[:j]
		if k, _, ok := strings.Cut(piece, "="); ok {
			name, err := url.QueryUnescape(k)
			if err != nil {
				name = k
			}
			if secretParam(name) {
				// The value runs to the next '&': a '?', ';', '#' or %23
				// inside it (a password may hold any of them) is part of
				// the secret, not the start of another parameter.
				if amp := strings.IndexByte(rest[j:], '&'); amp >= 0 {
					j += amp
				} else {
					j = len(rest)
				}
				piece = k + "=" + redactedValue
			}
		}
		b.WriteString(piece)
		rest = rest[j:]
	}
	return b.String()
}

// nextDelim returns the index of the next parameter delimiter in s ('?',
// '#', "%23", and with pairs also '&' and ';'), or -1.
func nextDelim(s string, first bool) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '?', '#':
			return i
		case '&', ';':
			if !first {
				return i
			}
		case '%':
			if i+2 < len(s) && s[i+1] == '2' && s[i+2] == '3' {
				return i
			}
		}
	}
	return -1
}

// logText makes a client-supplied string valid UTF-8, replacing invalid
// bytes, as its JSON form would anyway; stored log text then never contains
// bytes such as the journal's frame marker.
func logText(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// truncate cuts s to at most n bytes (on a character boundary) plus "...",
// as the log store cuts the text of the server's events.
func truncate(s string, n int) string { return logstore.CutText(s, n) }

// clientIP returns the client's address: from the first configured trusted
// proxy header present (its rightmost address, or leftmost if asked), else
// the connection's address.
func clientIP(r *http.Request, remote string, headers []string, leftmost bool) string {
	for _, h := range headers {
		v := r.Header.Get(h)
		if v == "" {
			continue
		}
		ips := strings.Split(v, ",")
		pick := ips[len(ips)-1]
		if leftmost {
			pick = ips[0]
		}
		if ip := net.ParseIP(strings.TrimSpace(pick)); ip != nil {
			return ip.String()
		}
	}
	return remote
}
