package httpapi

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"strongbox/authn/validation"
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
	q := r.URL.Query()
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
// document's message (§7), any other bad parameter the generic 400.
func logsQueryError(err error) error {
	switch {
	case errors.Is(err, logstore.ErrInvalidFilter):
		return errBadRequest(msgInvalidFilter, err)
	case errors.Is(err, logstore.ErrInvalidSort):
		return errBadRequest(msgBadRequest, err)
	}
	return err
}

// handleLogsStats handles GET /api/logs/stats.
func (s *Server) handleLogsStats(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	stateOf(r).quiet = true
	stats, err := s.logs.Stats(r.URL.Query().Get("filter"))
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

// Request-log field limits, as the reference truncates them.
const (
	maxLoggedURL    = 3000
	maxLoggedMethod = 50
	maxLoggedHeader = 2000
	redactedValue   = "REDACTED"
	levelInfo       = 0
	levelError      = 8
)

// A query parameter is secret, and its value never reaches the request log
// (in the URL or the Referer), when its name, decoded, lower-cased and with
// every character but a-z and 0-9 removed, contains one of secretWords or
// is one of secretNames. So token, Token, TOKEN, token[], access_token,
// refresh_token, newPassword, client_secret and X-Api-Key are all secret,
// however their names are escaped; the rule does not depend on a spelling.
var (
	secretWords = []string{"token", "password", "passwd", "secret", "apikey", "signature"}
	secretNames = []string{"code", "otp", "key", "sig", "auth", "authorization", "credential", "credentials"}
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
	return slices.Contains(secretNames, n)
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
	msg := req.URL
	if u, err := url.PathUnescape(req.URL); err == nil {
		msg = logText(u)
	}
	s.logs.Add(logstore.Entry{Level: level, Message: req.Method + " " + msg, Request: req})
}

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

// redactURI returns the request URI with the values of secret query
// parameters replaced.
func redactURI(u *url.URL) string {
	if u.RawQuery == "" {
		return u.RequestURI()
	}
	return u.EscapedPath() + "?" + redactQuery(u.RawQuery)
}

// redactReferer redacts the query of a Referer header the same way, and
// its userinfo (http://user:pass@host/), whatever it holds.
func redactReferer(ref string) string {
	base, query, hasQuery := strings.Cut(ref, "?")
	if scheme, rest, ok := strings.Cut(base, "://"); ok {
		authority, path, _ := strings.Cut(rest, "/")
		if i := strings.LastIndexByte(authority, '@'); i >= 0 {
			base = scheme + "://" + redactedValue + authority[i:]
			if len(rest) > len(authority) {
				base += "/" + path
			}
		}
	}
	if !hasQuery {
		return base
	}
	return base + "?" + redactQuery(query)
}

// redactQuery replaces the values of secret parameters (secretParam) in a
// raw query. Names are compared decoded, so an escaped name such as %74oken
// is caught too.
func redactQuery(raw string) string {
	parts := strings.Split(raw, "&")
	for i, part := range parts {
		k, _, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if secretParam(name) {
			parts[i] = k + "=" + redactedValue
		}
	}
	return strings.Join(parts, "&")
}

// logText makes a client-supplied string valid UTF-8, replacing invalid
// bytes, as its JSON form would anyway; stored log text then never contains
// bytes such as the journal's frame marker.
func logText(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// truncate cuts s to at most n bytes (on a character boundary) plus "...".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

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
