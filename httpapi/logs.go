package httpapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"strongbox/authn"
	"strongbox/httpapi/settings"
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

// secretParams are query parameters whose values never reach the request
// log: file tokens on downloads, and anything that looks like a password.
var secretParams = []string{"token", "password", "passwordConfirm", "oldPassword"}

// logRequest hands the request's log entry to the store's batcher. It runs
// after the response is written and never waits for the disk.
func (s *Server) logRequest(r *http.Request, st *state) {
	if s.logs == nil || (st.quiet && st.err == nil) {
		return
	}
	cfg := s.settings.Get()
	if cfg.Logs.MaxDays == 0 {
		return
	}
	uri := redactURI(r.URL)
	req := &logstore.Request{
		ExecTime:  float64(s.now().Sub(st.start).Nanoseconds()) / 1e6,
		Method:    truncate(strings.ToUpper(r.Method), maxLoggedMethod),
		Referer:   truncate(r.Referer(), maxLoggedHeader),
		Status:    st.status,
		URL:       truncate(uri, maxLoggedURL),
		UserAgent: truncate(r.UserAgent(), maxLoggedHeader),
	}
	if st.col != nil {
		req.Auth = st.col.Name
		if cfg.Logs.LogAuthID {
			req.AuthID = st.rec.ID
		}
	}
	if cfg.Logs.LogIP {
		req.RemoteIP = remoteIP(r)
		req.UserIP = clientIP(r, req.RemoteIP, cfg.TrustedProxy.Headers, cfg.TrustedProxy.UseLeftmostIP)
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
	msg := uri
	if u, err := url.PathUnescape(uri); err == nil {
		msg = u
	}
	s.logs.Add(logstore.Entry{Level: level, Message: req.Method + " " + msg, Request: req})
}

// errorDetails is the cause of a failed request for the log: per-field
// messages of a validation failure, or the internal error's text.
func errorDetails(e *Error) any {
	if len(e.Data) > 0 {
		out := make(map[string]any, len(e.Data))
		for k, v := range e.Data {
			if fe, ok := v.(*authn.FieldError); ok {
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
	uri := u.RequestURI()
	if u.RawQuery == "" {
		return uri
	}
	secret := false
	for _, p := range secretParams {
		if strings.Contains(u.RawQuery, p+"=") {
			secret = true
			break
		}
	}
	if !secret {
		return uri
	}
	parts := strings.Split(u.RawQuery, "&")
	for i, part := range parts {
		k, _, _ := strings.Cut(part, "=")
		if name, err := url.QueryUnescape(k); err == nil {
			for _, p := range secretParams {
				if name == p {
					parts[i] = k + "=" + redactedValue
				}
			}
		}
	}
	return u.EscapedPath() + "?" + strings.Join(parts, "&")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
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

// handleSettingsView handles GET /api/settings.
func (s *Server) handleSettingsView(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, s.settings.Get().Public())
}

// handleSettingsUpdate handles PATCH /api/settings. New log settings apply
// to the log store at once: maxDays 0 turns logging off and drops the stored
// logs, as the reference does.
func (s *Server) handleSettingsUpdate(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	v, err := s.settings.Patch(b)
	if data := validationData(err); data != nil {
		return errValidation("An error occurred while saving the new settings.", data)
	}
	if errors.Is(err, settings.ErrInvalidJSON) {
		return errBadRequest(msgLoadFailed, err)
	}
	if err != nil {
		return err
	}
	if s.logs != nil {
		if err := s.logs.SetRetention(v.Logs.MaxDays, v.Logs.MinLevel); err != nil {
			return fmt.Errorf("apply log settings: %w", err)
		}
	}
	return writeJSON(w, r, http.StatusOK, v.Public())
}
