package conformance

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path"
	"strconv"
	"strings"
)

// The fake's answers to hostile clients (hostile.go): the requests net/http
// answers by itself in plain text before any handler runs (oversized
// headers, a malformed request line) are rewritten into the error envelope
// on the way out of the connection; a path that is not canonical is
// redirected with the envelope; an auth action takes a small body.

const (
	// fakeMaxHeaderBytes is the fake's header limit (net/http allows 4 KiB
	// more): well under HTTP-RAW-001's 40,000-byte line.
	fakeMaxHeaderBytes = 16 << 10
	// fakeAuthBodyLimit is the largest body of an auth action.
	fakeAuthBodyLimit = 64 << 10

	fakeMsgRedirect        = "Temporary Redirect."
	fakeMsgHeadersTooLarge = "Request header fields too large."
)

// newFakeHTTPServer serves f on a loopback listener whose connections
// rewrite net/http's own plain-text errors into the envelope.
func newFakeHTTPServer(f *fakeServer) *httptest.Server {
	srv := httptest.NewUnstartedServer(f)
	srv.Config.MaxHeaderBytes = fakeMaxHeaderBytes
	srv.Listener = &fakeListener{Listener: srv.Listener, f: f}
	srv.Start()
	return srv
}

type fakeListener struct {
	net.Listener
	f *fakeServer
}

func (l *fakeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &fakeConn{Conn: c, f: l.f}, nil
}

// fakeConn rewrites the errors net/http writes by itself.
type fakeConn struct {
	net.Conn
	f *fakeServer
}

// CloseWrite lets net/http half-close after a 431, as on a *net.TCPConn.
func (c *fakeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *fakeConn) Write(p []byte) (int, error) {
	b, ok := c.f.rewriteServerError(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// netHTTPErrorHeaders follow the status line of every error net/http
// writes by itself (net/http's conn.serve), status line, headers and body
// in one Write; a handler's response always carries a Date header first.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// rewriteServerError returns p, when it is one of net/http's own error
// responses ("HTTP/1.1 431 Request Header Fields Too Large", "HTTP/1.1 400
// Bad Request[: detail]", …), as a response carrying the envelope.
func (f *fakeServer) rewriteServerError(p []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	line, _, ok := bytes.Cut(p, []byte("\r\n"))
	if !ok || !bytes.HasPrefix(line, []byte(proto)) || !bytes.HasPrefix(p[len(line):], []byte(netHTTPErrorHeaders)) {
		return nil, false
	}
	status := string(line[len(proto):])
	code, err := strconv.Atoi(status[:min(3, len(status))])
	if err != nil || code < 400 {
		return nil, false
	}
	msg := http.StatusText(code) + "."
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		if f.bug("plain-text-431") {
			return nil, false
		}
		msg = fakeMsgHeadersTooLarge
	case http.StatusBadRequest:
		if f.bug("plain-text-400") {
			return nil, false
		}
		msg = msgGenericBad
	}
	body := fmt.Sprintf(`{"data":{},"message":%q,"status":%d}`, msg, code)
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %d\r\n",
		code, http.StatusText(code), len(body))
	for _, h := range securityHeaders {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	b.WriteString("\r\n" + body)
	return []byte(b.String()), true
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

// bodyTooLarge reports whether r's body is over the limit of its route:
// 64 KiB for an auth action, 32 MiB for the others.
func (f *fakeServer) bodyTooLarge(r *http.Request) bool {
	if f.bug("no-body-limit") {
		return false
	}
	if reAuthRoute.MatchString(r.URL.Path) && !f.bug("auth-body-32mib") {
		return r.ContentLength > fakeAuthBodyLimit
	}
	return r.ContentLength > bodyLimit
}
