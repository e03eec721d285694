package api

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"strongbox/httpapi/ratelimit"
)

// The default limits of the mail-sending requests, whatever the rateLimits
// settings say (a strongbox promise beyond PocketBase v0.31.0, which sends
// a mail per request). A real user asks for a code or a link or two at a
// time; a flood from one address, or aimed at one address, stops here.
var (
	// DefaultMailPerClient: the mail-sending requests of one client
	// address (ratelimit.ClientKey), counted whatever the address asked
	// for exists, so a refusal tells nothing about it.
	DefaultMailPerClient = ratelimit.Rule{Label: "mail per client", MaxRequests: 30, Duration: time.Minute}
	// DefaultMailPerTarget: the mails to one address (lower-cased), from
	// all clients and collections together.
	DefaultMailPerTarget = ratelimit.Rule{Label: "mail per target", MaxRequests: 5, Duration: time.Minute}
)

// mailLimits counts the mail-sending requests per client address and per
// target address, in a limiter of their own.
type mailLimits struct {
	client, target ratelimit.Rule
	lim            *ratelimit.Limiter
}

func newMailLimits(client, target ratelimit.Rule, now func() time.Time) mailLimits {
	if client.MaxRequests <= 0 {
		client = DefaultMailPerClient
	}
	if target.MaxRequests <= 0 {
		target = DefaultMailPerTarget
	}
	return mailLimits{client: client, target: target, lim: ratelimit.NewLimiter(ratelimit.DefaultMaxWindows, now)}
}

// allowMailClient counts a mail-sending request of r's client and returns
// the 429 PocketBase's rate limiter answers once the client is over its
// limit, with a Retry-After of the time left until its window frees
// (issue 30: a client that honours it, such as the conformance suite run
// twice in a row, gets through without guessing).
func (s *Server) allowMailClient(r *http.Request) error {
	l := s.mailLimits
	err := take(l.lim, "mail client", stateOf(r).client, l.client)
	if e, ok := err.(*Error); ok {
		e.throttle = "mail"
	}
	return err
}

// allowMailTarget counts a mail to addr and reports whether it is within
// the per-target limit.
func (s *Server) allowMailTarget(addr string) bool {
	l := s.mailLimits
	return l.lim.Allow("mail target", strings.ToLower(addr), l.target)
}

// errMailTarget is the 429 of a target address over its limit, for the
// routes whose answer may say so. Its Retry-After is the limit's whole
// window, which the address's current one closes within: an upper bound,
// since allowMailTarget keeps the time left to itself.
func (s *Server) errMailTarget() error {
	e := throttled(newError(http.StatusTooManyRequests, msgTooManyRequests,
		fmt.Errorf("httpapi: mail rule %q exceeded", s.mailLimits.target.Label)), "mail")
	e.RetryAfter = s.mailLimits.target.Duration
	return e
}
