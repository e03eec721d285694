package conformance

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The limit on the mails one client asks for (issue 30). A server may
// refuse the mail-sending routes beyond some number a minute per client
// whatever its rateLimits settings (strongbox answers 30 a minute with
// 429 "Too Many Requests."), and say in Retry-After (RFC 9110 §10.2.3)
// when to ask again. A run sends some 26 of them from the suite's own
// address, to make the fixtures of its mail and OTP checks, so a run
// right after another one meets that limit: those requests wait what the
// server names and are sent again, so that a second run reports what the
// first did. A check that expects a 429 sends from a client address of
// its own (clientAddrHeader, as the rate limit checks do), whose requests
// are never sent again: a 429 it checks for is never waited out.

// mailRoutes are the auth collection routes that send mail, by their last
// path segment.
var mailRoutes = []string{"request-otp", "request-verification", "request-password-reset", "request-email-change"}

const (
	// maxMailWait bounds one wait: a minute's window, with a margin for
	// the server's rounding.
	maxMailWait = 65 * time.Second
	// maxMailRetries bounds how often one request is sent again.
	maxMailRetries = 2
	// mailRetryMargin is the time a check must have left after a wait for
	// the request sent again and what follows it.
	mailRetryMargin = 10 * time.Second
)

// isMailRoute reports whether method and path (with any query) are a
// request to a mail route of a collection.
func isMailRoute(method, path string) bool {
	path, _, _ = strings.Cut(path, "?")
	parts := strings.Split(path, "/")
	return method == http.MethodPost && len(parts) == 5 && parts[1] == "api" && parts[2] == "collections" &&
		slices.Contains(mailRoutes, parts[4])
}

// mailRetry reports whether r, the answer to a request the suite sent, is
// a 429 to wait out and send again, and for how long: a mail route's 429
// to a request from the suite's own address (hdr names no
// clientAddrHeader) whose body can be sent again, with a Retry-After of
// delta-seconds up to maxMailWait, when ctx leaves the time to wait and
// go on (mailRetryMargin). A date in Retry-After is not waited for.
func mailRetry(ctx context.Context, method, path string, hdr http.Header, body any, r *response) (time.Duration, bool) {
	if r.status != http.StatusTooManyRequests || !isMailRoute(method, path) || hdr.Get(clientAddrHeader) != "" {
		return 0, false
	}
	if _, stream := body.(streamBody); stream {
		return 0, false
	}
	v := r.header.Values("Retry-After")
	if len(v) != 1 || v[0] == "" || strings.Trim(v[0], "0123456789") != "" || len(v[0]) > 3 {
		return 0, false
	}
	secs, _ := strconv.Atoi(v[0])
	wait := time.Duration(secs) * time.Second
	if wait > maxMailWait {
		return 0, false
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait+mailRetryMargin {
		return 0, false
	}
	return wait, true
}

// sleepCtx waits d, or until ctx ends (its error then).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
