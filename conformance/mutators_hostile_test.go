package conformance

import (
	"net/http"
	"strings"
)

// The violations of the hostile clients checks and the body limits
// (hostile.go, http.go), committed by mutations in front of the real
// strongbox. The front is a plain net/http server: what net/http answers
// by itself (a malformed request) is plain text there, as on a server that
// does not rewrite net/http's own errors into the envelope.

// redirected selects the requests strongbox redirects: the paths that are
// not canonical.
func redirected(r *http.Request) bool {
	p := r.URL.EscapedPath()
	return strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") ||
		strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..")
}

// bigHeaders selects the requests with a header line over 16 KiB.
func bigHeaders(r *http.Request) bool {
	for k, vs := range r.Header {
		for _, v := range vs {
			if len(k)+len(v) > 16<<10 {
				return true
			}
		}
	}
	return false
}

// tooLarge answers a body strongbox refuses as too large (of the requests
// match selects) as if it were no JSON.
func tooLarge(match func(*http.Request) bool) mutation {
	return edit(match, func(_ *http.Request, res *answered) {
		if res.status == http.StatusRequestEntityTooLarge {
			*res = *envelopeAnswer(400, "An error occurred while loading the submitted data.")
		}
	})
}

var hostileMutators = []mutator{
	{"dashboard-missing", []string{"DASH-001"}, answer(func(r *http.Request) bool { return r.URL.Path == "/_" },
		envelopeAnswer(http.StatusNotFound, "The requested resource wasn't found."))},
	{"dashboard-inline-scripts", []string{"DASH-002"}, edit(func(r *http.Request) bool { return r.URL.Path == "/_/" }, func(_ *http.Request, res *answered) {
		res.header.Set("Content-Security-Policy", "default-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	})},
	{"no-body-limit", []string{"HTTP-LIMIT-001", "HTTP-LIMIT-002"}, tooLarge(func(*http.Request) bool { return true })},
	// What a ServeMux answers by itself.
	{"plain-text-redirect", []string{"HTTP-PATH-001"}, when(redirected, func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		if loc := res.header.Get("Location"); loc != "" {
			http.Redirect(w, r, loc, http.StatusMovedPermanently)
			return
		}
		res.write(w)
	})},
	{"redirect-drops-query", []string{"HTTP-PATH-001"}, edit(redirected, func(_ *http.Request, res *answered) {
		if loc, _, ok := strings.Cut(res.header.Get("Location"), "?"); ok {
			res.header.Set("Location", loc)
		}
	})},
	{"plain-text-431", []string{"HTTP-RAW-001"}, when(bigHeaders, func(_ *front, w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "431 Request Header Fields Too Large", http.StatusRequestHeaderFieldsTooLarge)
	})},
	// The front's net/http answers the malformed request itself.
	{"plain-text-400", []string{"HTTP-RAW-002"}, (*front).pass},
	{"auth-body-32mib", []string{"HTTP-LIMIT-002"}, tooLarge(loginRoute)},
}
