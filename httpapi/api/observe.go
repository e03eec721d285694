package api

import (
	"net/http"
	"strings"
	"time"
)

// Observer learns how each request ended, for the server's metrics;
// strongbox/httpapi/metrics's API implements it, and outlives the API
// the server builds at each restart. Its methods are called on the
// request's goroutine once it is answered, so they must be quick. Every
// value it is given is the server's own (a route pattern, a method
// name from a fixed set or "_OTHER", a fixed word), never user input.
type Observer interface {
	// Request: the method as sent (the observer bounds it), the route
	// (the ServeMux pattern without its method, such as
	// /api/collections/{collection}/records; "" when no route matched),
	// the status code sent and the time from arrival to answer.
	Request(method, route string, status int, d time.Duration)
	// SignIn: a sign-in by a login method (password, otp, oauth2, totp, passkey) and its
	// outcome (success, mfa_required, failure, throttled, error).
	SignIn(method, outcome string)
	// Refused: a 429 of a limit (rate_limit, login, otp, totp, mail, busy, other).
	Refused(limit string)
}

// signInRoutes are the routes of the login methods, by pattern.
var signInRoutes = map[string]string{
	"POST /api/collections/{collection}/auth-with-password": "password",
	"POST /api/collections/{collection}/auth-with-otp":      "otp",
	"POST /api/collections/{collection}/auth-with-oauth2":   "oauth2",
	"POST /api/collections/{collection}/auth-with-totp":     "totp",
	"POST /api/collections/{collection}/auth-with-passkey":  "passkey",
}

// observe tells the Observer how the request r ended.
func (s *Server) observe(r *http.Request, st *state) {
	status := st.status
	if status == 0 {
		status = http.StatusOK // nothing written: net/http sends 200
		if st.err != nil {
			status = st.err.Status
		}
	}
	pattern := st.route
	if pattern == "" {
		// Answered before the mux chose a route (a rate limit, a bad
		// query, a redirect): the route it would have chosen.
		_, pattern = s.mux.Handler(r)
	}
	route := ""
	if pattern != "/" { // the catch-all JSON 404: no route matched
		_, route, _ = strings.Cut(pattern, " ")
	}
	s.metrics.Request(r.Method, route, status, time.Since(st.arrived))
	if status == http.StatusTooManyRequests {
		limit := "other"
		if st.err != nil && st.err.throttle != "" {
			limit = st.err.throttle
		}
		s.metrics.Refused(limit)
	}
	if method, ok := signInRoutes[pattern]; ok {
		s.metrics.SignIn(method, signInOutcome(status, st.err))
	}
}

// signInOutcome is the outcome of a sign-in answered status.
func signInOutcome(status int, err *Error) string {
	switch {
	case status == http.StatusOK:
		return "success"
	case status == http.StatusUnauthorized && err != nil && err.Message == msgMFARequired:
		return "mfa_required"
	case status == http.StatusTooManyRequests:
		return "throttled"
	case status >= 500:
		return "error"
	}
	return "failure"
}

// RealtimeStreams returns the number of realtime streams (GET
// /api/realtime) open now, for the server's metrics.
func (s *Server) RealtimeStreams() int { return s.realtime.open() }
