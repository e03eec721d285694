package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"strongbox/authn"
	"strongbox/httpapi/ratelimit"
	"strongbox/httpapi/settings"
)

// msgTooManyLogins answers a password login the login throttle refuses
// because failures reached a limit. PocketBase has no such throttle; the
// message is strongbox's own. A login whose turn did not come in time gets
// PocketBase's rate-limit answer, msgTooManyRequests, instead.
const msgTooManyLogins = "Too many failed login attempts, please try again later."

// rateLimiter is the limiter of enabled rateLimits settings: the rules
// and the counters.
type rateLimiter struct {
	cfg   []settings.RateLimitRule // the rules it was built from (own copy)
	rules []ratelimit.Rule
	lim   *ratelimit.Limiter
}

// newRateLimiter builds the limiter of the rules cfg, with fresh counters.
func newRateLimiter(cfg []settings.RateLimitRule, now func() time.Time) *rateLimiter {
	l := &rateLimiter{cfg: slices.Clone(cfg), rules: make([]ratelimit.Rule, len(cfg))}
	for i, r := range cfg {
		l.rules[i] = ratelimit.Rule{Label: r.Label, Audience: r.Audience, MaxRequests: r.MaxRequests,
			Duration: time.Duration(r.Duration) * time.Second}
	}
	l.lim = ratelimit.NewLimiter(ratelimit.DefaultMaxWindows, now)
	return l
}

// collectionRoute lists the tags of a collection route, as PocketBase
// registers them (apis/record_auth.go, apis/record_crud.go). On the auth
// routes (own) the collection check replaces the path-labelled one; on
// the records routes both apply, the path-labelled one first.
type collectionRoute struct {
	tags []string
	own  bool
}

var collectionRoutes = map[string]collectionRoute{
	"GET /api/collections/{collection}/auth-methods":        {[]string{"listAuthMethods"}, true},
	"POST /api/collections/{collection}/auth-refresh":       {[]string{"authRefresh"}, true},
	"POST /api/collections/{collection}/auth-with-password": {[]string{"authWithPassword", "auth"}, true},
	"POST /api/collections/{collection}/request-otp":        {[]string{"requestOTP"}, true},
	"POST /api/collections/{collection}/auth-with-otp":      {[]string{"authWithOTP", "auth"}, true},
	"POST /api/collections/{collection}/auth-with-oauth2":   {[]string{"authWithOAuth2", "auth"}, true},
	// strongbox's own routes, tagged in PocketBase's manner.
	"POST /api/collections/{collection}/auth-with-totp": {[]string{"authWithTOTP", "auth"}, true},
	"GET /api/collections/{collection}/totp":            {[]string{"totp"}, true},
	"POST /api/collections/{collection}/totp/setup":     {[]string{"totp"}, true},
	"POST /api/collections/{collection}/totp/confirm":   {[]string{"totp"}, true},
	"POST /api/collections/{collection}/totp/disable":   {[]string{"totp"}, true},

	"POST /api/collections/{collection}/request-verification":   {[]string{"requestVerification"}, true},
	"POST /api/collections/{collection}/confirm-verification":   {[]string{"confirmVerification"}, true},
	"POST /api/collections/{collection}/request-password-reset": {[]string{"requestPasswordReset"}, true},
	"POST /api/collections/{collection}/confirm-password-reset": {[]string{"confirmPasswordReset"}, true},
	"POST /api/collections/{collection}/request-email-change":   {[]string{"requestEmailChange"}, true},
	"POST /api/collections/{collection}/confirm-email-change":   {[]string{"confirmEmailChange"}, true},

	"GET /api/collections/{collection}/records":         {[]string{"list"}, false},
	"POST /api/collections/{collection}/records":        {[]string{"create"}, false},
	"GET /api/collections/{collection}/records/{id}":    {[]string{"view"}, false},
	"PATCH /api/collections/{collection}/records/{id}":  {[]string{"update"}, false},
	"DELETE /api/collections/{collection}/records/{id}": {[]string{"delete"}, false},
}

// rateLimit applies the rateLimits settings when they are enabled, as
// PocketBase v0.31.0's rate-limit middleware does. It runs after the token
// is loaded, since superusers are never limited and a rule's audience
// depends on whether the request is authenticated, and before the body is
// read.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.checkRateLimits(r); err != nil {
			s.renderError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkRateLimits returns the 429 for a request over a rule's limit. A
// rule's requests are counted per client address (ClientKey) in one bucket
// per rule for path labels, and one per collection, route and tags for
// collection labels, as PocketBase keys them. A collection route naming
// no existing collection is left to its handler's 404.
func (s *Server) checkRateLimits(r *http.Request) error {
	cfg := s.applied.Load()
	st := stateOf(r)
	if cfg.limiter == nil || st.isSuperuser() {
		return nil
	}
	rules, lim := cfg.limiter.rules, cfg.limiter.lim
	client := st.client
	authed := st.rec != nil
	_, pattern := s.mux.Handler(r)
	route, tagged := collectionRoutes[pattern]
	if !route.own {
		if rule, ok := ratelimit.Find(rules, ratelimit.PathLabels(r.Method, r.URL.Path), authed); ok {
			if err := take(lim, rule.Label+rule.Audience, client, rule); err != nil {
				return err
			}
		}
	}
	if !tagged {
		return nil
	}
	c, ok := s.auth.Collection(collectionSegment(r.URL.Path))
	if !ok {
		return nil
	}
	rule, ok := ratelimit.Find(rules, ratelimit.CollectionLabels(c.Name, route.tags, r.Method, r.URL.Path), authed)
	if !ok {
		return nil
	}
	return take(lim, c.ID+" "+pattern+" "+strings.Join(route.tags, ",")+rule.Audience, client, rule)
}

// take counts a request of client against rule in bucket and returns the
// 429 of a request over the limit.
func take(lim *ratelimit.Limiter, bucket, client string, rule ratelimit.Rule) error {
	if ok, wait := lim.Take(bucket, client, rule); !ok {
		return errRateLimited(rule, wait)
	}
	return nil
}

// errRateLimited is PocketBase's 429 for a request over rule's limit. Its
// Retry-After, wait, is the time left in the client's window: PocketBase
// v0.31.0 sends none, and the header changes nothing else of the answer.
func errRateLimited(rule ratelimit.Rule, wait time.Duration) *Error {
	e := throttled(newError(http.StatusTooManyRequests, msgTooManyRequests,
		fmt.Errorf("httpapi: rate limit rule %q (audience %q) exceeded", rule.Label, rule.Audience)), "rate_limit")
	e.RetryAfter = wait
	return e
}

// collectionSegment returns {collection} of a /api/collections/{collection}/… path.
func collectionSegment(path string) string {
	parts := strings.SplitN(path, "/", 5)
	if len(parts) < 4 {
		return ""
	}
	return parts[3]
}

// loginAttempt is one password login under the login throttle.
type loginAttempt struct{ a *ratelimit.Attempt }

// beginLogin applies the login throttle (ratelimit.DefaultPolicy unless
// Config.LoginPolicy says otherwise) to a password login, whatever the
// rateLimits settings say, before any password hashing is done: the
// attempt waits its turn if need be, then either goes ahead, and the
// returned attempt's end records the outcome, or is refused with 429 and
// a Retry-After header: msgTooManyLogins when failures reached a limit,
// msgTooManyRequests when its turn did not come in time. The handler
// defers the attempt's abandon, for the paths that never get to its end (a
// panic); not the request's context, which net/http cancels when the
// client merely half-closes its side after sending the body, while a check
// that still runs and answers must still count. That cancellation does end
// a wait for a turn, as a refusal: a half-closed client is never let
// through early. The password never reaches the throttle.
func (s *Server) beginLogin(r *http.Request, c *authn.Collection, identity string) (*loginAttempt, error) {
	a, no := s.login.Begin(r.Context(), c.ID, identity, stateOf(r).client)
	if no != nil {
		msg, cause := msgTooManyLogins, fmt.Errorf("httpapi: login throttled for %v", no.RetryAfter.Round(time.Second))
		if !no.Locked {
			msg, cause = msgTooManyRequests, fmt.Errorf("httpapi: login waited too long for its turn (retry in %v)", no.RetryAfter.Round(time.Second))
		}
		e := throttled(newError(http.StatusTooManyRequests, msg, cause), "login")
		e.RetryAfter = no.RetryAfter
		return nil, e
	}
	return &loginAttempt{a}, nil
}

// abandon ends the attempt without counting it, unless end recorded it.
func (l *loginAttempt) abandon() { l.a.Abandon() }

// end records the outcome of the attempt: err from authn.AuthWithPassword.
// Only a wrong password or unknown identity counts as a failure; other
// errors (the server busy, the request cancelled) say nothing about the
// credentials.
func (l *loginAttempt) end(err error) {
	switch {
	case err == nil:
		l.a.Succeeded()
	case errors.Is(err, authn.ErrAuthFailed):
		l.a.Failed()
	default:
		l.a.Abandon()
	}
}
