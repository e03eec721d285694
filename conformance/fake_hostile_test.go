package conformance

import (
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
)

// The fake's answers to hostile clients (hostile.go): a path that is not
// canonical is redirected with the envelope.

const fakeMsgRedirect = "Temporary Redirect."

// newFakeHTTPServer serves f on a loopback listener.
func newFakeHTTPServer(f *fakeServer) *httptest.Server {
	return httptest.NewServer(f)
}

// redirectPath answers a request whose path is not canonical (an empty
// segment, "." or "..") with 307 and the envelope, Location the cleaned
// path with the query kept; handled is false for a canonical path.
func (f *fakeServer) redirectPath(q *fakeReq) (handled bool, err error) {
	r := q.r
	p := r.URL.EscapedPath()
	if r.Method == http.MethodConnect || p == "" {
		return false, nil
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	if c == p {
		return false, nil
	}
	if r.URL.RawQuery != "" && !f.bug("redirect-drops-query") {
		c += "?" + r.URL.RawQuery
	}
	if f.bug("plain-text-redirect") {
		// What a ServeMux answers by itself.
		http.Redirect(q.w, r, c, http.StatusMovedPermanently)
		q.status = http.StatusMovedPermanently
		return true, nil
	}
	q.w.Header().Set("Location", c)
	return true, ferr(http.StatusTemporaryRedirect, fakeMsgRedirect)
}
