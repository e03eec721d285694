package api

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"strongbox/httpapi/dashboard"
)

// dashboardGet sends method to path of e with the request headers hdr, not
// following redirects and not decompressing.
func dashboardGet(t *testing.T, e *env, method, path string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := *e.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func slurpDashboard(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantDashboardHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for k, v := range map[string]string{
		"Content-Security-Policy": dashboard.CSP,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
	} {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
	if csp := h.Get("Content-Security-Policy"); strings.Contains(csp, "unsafe-") {
		t.Errorf("%s: the CSP allows %q", what, csp)
	}
}

// TestDashboardAssets: every file of the dashboard, plain and gzip'd, GET
// and HEAD, with its type, the headers of every answer under /_/, an ETag
// of its own per form, and 304 for a matching If-None-Match.
func TestDashboardAssets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	types := map[string]string{
		"html": "text/html; charset=utf-8",
		"css":  "text/css; charset=utf-8",
		"js":   "text/javascript; charset=utf-8",
		"svg":  "image/svg+xml",
	}
	paths := []string{"/_/"}
	for _, name := range dashboard.Names() {
		paths = append(paths, "/_/"+name)
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) { testDashboardAsset(t, e, p, types) })
	}
}

func testDashboardAsset(t *testing.T, e *env, p string, types map[string]string) {
	t.Helper()
	name := strings.TrimPrefix(p, "/_/")
	if name == "" {
		name = "index.html"
	}
	wantType := types[name[strings.LastIndex(name, ".")+1:]]
	var plain []byte
	tags := map[string]bool{}
	for _, tc := range []struct {
		method, encoding string
		gzipped          bool
	}{
		{"GET", "identity", false},
		{"GET", "gzip, deflate, br", true},
		{"GET", "gzip;q=0", false},
		{"HEAD", "identity", false},
		{"HEAD", "gzip", true},
	} {
		what := tc.method + " " + p + " (" + tc.encoding + ")"
		res := dashboardGet(t, e, tc.method, p, map[string]string{"Accept-Encoding": tc.encoding})
		if res.StatusCode != 200 {
			t.Fatalf("%s: status %d", what, res.StatusCode)
		}
		h := res.Header
		wantDashboardHeaders(t, what, h)
		if got := h.Get("Content-Type"); got != wantType {
			t.Errorf("%s: Content-Type %q, want %q", what, got, wantType)
		}
		if got := h.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s: Cache-Control %q, want no-cache", what, got)
		}
		if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("%s: Vary %q lacks Accept-Encoding", what, h.Values("Vary"))
		}
		if got, want := h.Get("Content-Encoding") == "gzip", tc.gzipped; got != want {
			t.Errorf("%s: Content-Encoding %q", what, h.Get("Content-Encoding"))
		}
		tag := h.Get("ETag")
		if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || len(tag) < 4 {
			t.Errorf("%s: ETag %q", what, tag)
		}
		tags[tag] = true
		body := slurpDashboard(t, res.Body)
		switch {
		case tc.method == "HEAD":
			if len(body) != 0 {
				t.Errorf("%s: a body of %d bytes", what, len(body))
			}
		case tc.gzipped:
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if b := slurpDashboard(t, zr); plain != nil && !bytes.Equal(b, plain) {
				t.Errorf("%s: decompressed body differs from the plain one", what)
			}
		default:
			if len(body) == 0 {
				t.Errorf("%s: empty body", what)
			}
			plain = body
		}

		res = dashboardGet(t, e, "GET", p, map[string]string{"Accept-Encoding": tc.encoding, "If-None-Match": `"other", ` + tag})
		if res.StatusCode != http.StatusNotModified {
			t.Errorf("%s with If-None-Match: status %d, want 304", what, res.StatusCode)
		}
		wantDashboardHeaders(t, what+" 304", res.Header)
		if got := res.Header.Get("ETag"); got != tag {
			t.Errorf("%s 304: ETag %q, want %q", what, got, tag)
		}
		if b := slurpDashboard(t, res.Body); len(b) != 0 {
			t.Errorf("%s 304: a body of %d bytes", what, len(b))
		}
	}
	if len(tags) != 2 {
		t.Errorf("%s: ETags %v, want one for the plain form and one for the gzip'd", p, tags)
	}
}

// TestDashboardNotFound: a path under /_/ that is no file of the dashboard,
// or a method other than GET and HEAD, is the JSON 404; the headers of
// /_/ come with it.
func TestDashboardNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/_/nope.js"},
		{"GET", "/_/ui/index.html"},
		{"GET", "/_/index.html/"},
		{"GET", "/_/app.js.map"},
		{"HEAD", "/_/missing.css"},
		{"POST", "/_/"},
		{"DELETE", "/_/app.js"},
	} {
		res := e.doHeader(tc.method, tc.path, "", "", nil, map[string]string{"Accept-Encoding": "gzip"})
		if tc.method == "HEAD" {
			if res.Status != 404 || res.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: %d %q", tc.method, tc.path, res.Status, res.Header.Get("Content-Type"))
			}
		} else {
			wantError(t, res, 404, msgNotFound)
		}
		if tc.method == "GET" || tc.method == "HEAD" {
			wantDashboardHeaders(t, tc.method+" "+tc.path, res.Header)
		}
	}
}

// TestDashboardRedirect: /_ is redirected to /_/ (307, query kept), as
// PocketBase's router does; GET /_/ then is the app.
func TestDashboardRedirect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/_", "/_/"},
		{"HEAD", "/_", "/_/"},
		{"GET", "/_?a=1", "/_/?a=1"},
	} {
		res := dashboardGet(t, e, tc.method, tc.path, nil)
		if res.StatusCode != http.StatusTemporaryRedirect || res.Header.Get("Location") != tc.want {
			t.Errorf("%s %s: %d Location %q, want 307 %q", tc.method, tc.path, res.StatusCode, res.Header.Get("Location"), tc.want)
		}
	}
	res := dashboardGet(t, e, "GET", "/_/", nil)
	if body := slurpDashboard(t, res.Body); res.StatusCode != 200 || !bytes.Contains(body, []byte(`<script type="module" src="app.js">`)) {
		t.Errorf("GET /_/: %d %.80q", res.StatusCode, body)
	}
}

// TestDashboardNotLogged: a file served (200 or 304) is not request-logged,
// as PocketBase does not log its dashboard's files; a 404 under /_/ is.
func TestDashboardNotLogged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dashboardGet(t, e, "GET", "/_/?m=page", nil)
	res := dashboardGet(t, e, "GET", "/_/app.js?m=file", nil)
	dashboardGet(t, e, "GET", "/_/app.js?m=revalidated", map[string]string{"If-None-Match": res.Header.Get("ETag")})
	dashboardGet(t, e, "GET", "/_/nope.js?m=missing", nil)
	var got []string
	for _, it := range e.listLogs(`data.url ~ "m="`) {
		got = append(got, it["data"].(map[string]any)["url"].(string))
	}
	if want := []string{"/_/nope.js?m=missing"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("logged %q, want %q", got, want)
	}
}
