package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Issue 23 serves a dashboard at /_/, as PocketBase v0.31.0 serves its
// own there: the default mail templates link to {APP_URL}/_/#/auth/…, so
// a server that answers /_/ with a 404 leaves those links dead. Beyond
// PocketBase, strongbox promises headers that keep the dashboard's pages
// from running anything but its own files (request logs it shows are
// attacker-controlled) and from being framed.

// sectionDashboard is what the dashboard checks cite.
const sectionDashboard = "issue 23 (the dashboard at /_/)"

var dashboardRequirements = []*Requirement{
	{
		ID:      "DASH-001",
		Source:  SourcePocketBase,
		Section: sectionDashboard + "; PocketBase v0.31.0 (its dashboard at /_/; GET /_ answers 307 to /_/)",
		Name:    "the dashboard is served at /_/",
		Text: "GET /_ (not following redirects) answers 307 with a Location ending in /_/, and GET /_/ answers " +
			"200 with an HTML page (Content-Type text/html).",
		Run: checkDashboardServed,
	},
	{
		ID:      "DASH-002",
		Source:  SourceStrongbox,
		Section: sectionDashboard + " (a strict Content-Security-Policy, nosniff, revalidation); a strongbox promise beyond PocketBase",
		Name:    "the dashboard's page runs only its own files",
		Text: "GET /_/ answers 200 with X-Content-Type-Options nosniff and a Content-Security-Policy holding " +
			"default-src 'self' and frame-ancestors 'none' and neither 'unsafe-inline' nor 'unsafe-eval'; it " +
			"carries an ETag, and the same GET with If-None-Match set to it answers 304.",
		Run: checkDashboardHeaders,
	},
}

// checkDashboardServed follows neither redirect: /_ must send the browser
// to /_/ itself.
func checkDashboardServed(ctx context.Context, c *Client) error {
	nc := c.forCheck()
	hc := *c.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	nc.hc = &hc
	r, err := nc.get(ctx, "/_", "")
	if err != nil {
		return err
	}
	if r.status != http.StatusTemporaryRedirect || !strings.HasSuffix(r.header.Get("Location"), "/_/") {
		return Mismatch("GET /_: 307 with a Location ending in /_/", r.String())
	}
	r, err = nc.get(ctx, "/_/", "")
	if err != nil {
		return err
	}
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		return Mismatch("GET /_/: 200 text/html", r.String())
	}
	return nil
}

// checkDashboardHeaders reads the page's headers, then revalidates it.
func checkDashboardHeaders(ctx context.Context, c *Client) error {
	r, err := c.get(ctx, "/_/", "")
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return Mismatch("GET /_/: 200", r.String())
	}
	csp := r.header.Get("Content-Security-Policy")
	switch {
	case !strings.EqualFold(r.header.Get("X-Content-Type-Options"), "nosniff"):
		return Mismatch("X-Content-Type-Options: nosniff", r.String())
	case !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
		strings.Contains(csp, "'unsafe-inline'") || strings.Contains(csp, "'unsafe-eval'"):
		return Mismatch("a Content-Security-Policy with default-src 'self' and frame-ancestors 'none', without 'unsafe-inline' or 'unsafe-eval'",
			fmt.Sprintf("Content-Security-Policy: %q", csp))
	}
	etag := r.header.Get("ETag")
	if etag == "" {
		return Mismatch("an ETag on GET /_/", r.String())
	}
	r, err = c.doWith(ctx, http.MethodGet, "/_/", http.Header{"If-None-Match": {etag}}, nil)
	if err != nil {
		return err
	}
	if r.status != http.StatusNotModified {
		return Mismatch("304 for GET /_/ with If-None-Match: "+etag, r.String())
	}
	return nil
}
