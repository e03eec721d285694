package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Hostile clients (issue 8, section 2): the answers a server gives to
// requests net/http would answer by itself in plain text or HTML (a path
// that is not canonical). The interface document says nothing of them and
// PocketBase answers net/http's there, so these are strongbox promises:
// PocketBase fails them.

const sectionRawEnvelope = "issue 8 (strongbox promise: every response is the JSON envelope, including the ones net/http would write by itself); §2.5"

var hostileRequirements = []*Requirement{
	{
		ID:      "HTTP-PATH-001",
		Section: sectionRawEnvelope,
		Name:    "a path that is not canonical is redirected with the envelope",
		Text: "A GET of a path with an empty segment, \".\" or \"..\" (//api/health?cf=…, /./api/health, " +
			"/api/cf/../health) answers 301, 307 or 308 in the error envelope (its status field the " +
			"HTTP status, Content-Type application/json) with a Location that leads to the cleaned path " +
			"on the same server, query kept (/api/health?cf=…). PocketBase's router (net/http's ServeMux) " +
			"answers 301 with an HTML body and fails this; the issue decides.",
		Run: checkPathRedirect,
	},
}

// checkPathRedirect sends three paths that are not canonical through a
// client that does not follow redirects.
func checkPathRedirect(ctx context.Context, c *Client) error {
	base, err := url.Parse(c.base)
	if err != nil {
		return err
	}
	nc := c.forCheck()
	hc := *c.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	nc.hc = &hc

	nonce := newNonce(10)
	want := base.Path + "/api/health"
	probes := []struct{ path, location string }{
		{"//api/health?cf=" + nonce, want + "?cf=" + nonce},
		{"/./api/health", want},
		{"/api/cf/../health", want},
	}
	for _, p := range probes {
		r, err := nc.get(ctx, p.path, "")
		if err != nil {
			return err
		}
		if !slices.Contains([]int{301, 307, 308}, r.status) {
			return Mismatch(fmt.Sprintf("301, 307 or 308 with the error envelope and Location %s", p.location), r.String())
		}
		if err := expectJSONEnvelope(r, r.status, ""); err != nil {
			return err
		}
		loc := r.header.Get("Location")
		u, err := url.Parse(loc)
		if err != nil {
			return Mismatch(fmt.Sprintf("a Location leading to %s", p.location), fmt.Sprintf("Location %q in %s", loc, r))
		}
		reqURL, _ := url.Parse(c.base + p.path)
		got := reqURL.ResolveReference(u)
		if got.Host != base.Host || got.RequestURI() != p.location {
			return Mismatch(fmt.Sprintf("a Location leading to %s", p.location), fmt.Sprintf("Location %q in %s", loc, r))
		}
	}
	return nil
}

// expectJSONEnvelope requires r to be the error envelope with the given
// status in its status field, served as application/json. A message that
// is not "" must begin the envelope's message.
func expectJSONEnvelope(r *response, status int, message string) error {
	if !isJSONContentType(r) {
		return Mismatch(fmt.Sprintf("the error envelope (%d) served as application/json", status),
			fmt.Sprintf("Content-Type %q in %s", r.header.Get("Content-Type"), r))
	}
	env, err := parseEnvelope(r)
	if err != nil {
		return err
	}
	if env.status != float64(status) {
		return Mismatch(fmt.Sprintf("envelope status %d (the HTTP status)", status), fmt.Sprintf("%v in %s", env.status, r))
	}
	if message != "" && !strings.HasPrefix(env.message, message) {
		return Mismatch(fmt.Sprintf("a message beginning %q", message), fmt.Sprintf("%q in %s", env.message, r))
	}
	return nil
}
