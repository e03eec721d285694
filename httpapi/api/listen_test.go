package api

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// dial opens a raw connection to e's server, closed at the end of the
// test, with a deadline so that no test can hang.
func (e *env) dial() net.Conn {
	e.t.Helper()
	c, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return c
}

// readRaw reads one response from br.
func readRaw(t *testing.T, br *bufio.Reader, method string) *response {
	t.Helper()
	res, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read response body: %v", err)
	}
	return &response{Status: res.StatusCode, Header: res.Header, Body: b, Close: res.Close}
}

// wantClosed asserts that the server closes c (without sending more)
// within d.
func wantClosed(t *testing.T, br *bufio.Reader, d time.Duration) {
	t.Helper()
	start := time.Now()
	b, err := io.ReadAll(br)
	if len(b) > 0 || err != nil {
		t.Errorf("after the response: read %q, %v; want the connection closed", b, err)
	}
	if took := time.Since(start); took > d {
		t.Errorf("connection closed after %v, want within %v", took, d)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(5 * time.Second); !cond(); <-tick.C {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestServerWrittenErrors sends the requests net/http or ServeMux would
// answer by themselves in plain text or HTML, and checks that each answer
// is the JSON envelope, with its length and the security headers, and
// whether the connection stays open.
func TestServerWrittenErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name     string
		req      string
		status   int
		msg      string
		location string
		closed   bool // the server closes the connection after the answer
	}{
		{"malformed request line", "GARBAGE\r\n\r\n", 400, msgBadRequest, "", true},
		{"malformed header", "GET /api/health HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", 400, msgBadRequest, "", true},
		{"missing host", "GET /api/health HTTP/1.1\r\n\r\n", 400, msgBadRequest + " Missing required Host header.", "", true},
		{"malformed host", "GET /api/health HTTP/1.1\r\nHost: a b\r\n\r\n", 400, msgBadRequest + " Malformed Host header.", "", true},
		{"headers too large", "GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", DefaultMaxHeaderBytes+8<<10) + "\r\n\r\n", 431, msgHeadersTooLarge, "", true},
		{"unsupported transfer encoding", "POST /api/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, msgUnsupportedEncoding, "", true},
		{"unsupported version", "GET /api/health HTTP/2.0\r\nHost: x\r\n\r\n", 505, msgUnsupportedVersion, "", true},
		{"unknown expectation", "GET /api/health HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\n\r\n", 417, msgExpectationFailed, "", true},
		{"options star", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400, msgBadRequest, "", true},
		{"double slash", "GET //api/health HTTP/1.1\r\nHost: x\r\n\r\n", 307, msgRedirect, "/api/health", false},
		{"dot segment", "GET /api/./health?a=b HTTP/1.1\r\nHost: x\r\n\r\n", 307, msgRedirect, "/api/health?a=b", false},
		{"dot-dot segment", "POST /api/logs/../health HTTP/1.1\r\nHost: x\r\n\r\n", 307, msgRedirect, "/api/health", false},
		{"dot-dot above root", "GET /../../api/health HTTP/1.1\r\nHost: x\r\n\r\n", 307, msgRedirect, "/api/health", false},
		{"trailing slash kept", "GET /api//health/ HTTP/1.1\r\nHost: x\r\n\r\n", 307, msgRedirect, "/api/health/", false},
		{"escaped", "GET /api/a%20b//c HTTP/1.1\r\nHost: x\r\n\r\n", 307, msgRedirect, "/api/a%20b/c", false},
		{"absolute form", "GET http://x//api/health HTTP/1.1\r\nHost: x\r\n\r\n", 307, msgRedirect, "/api/health", false},
		{"CONNECT authority form", "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", 404, msgNotFound, "", true},
		{"CONNECT path", "CONNECT /api/health HTTP/1.1\r\nHost: x\r\n\r\n", 404, msgNotFound, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := e.dial()
			if _, err := io.WriteString(c, tt.req); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			res := readRaw(t, br, "GET")
			wantError(t, res, tt.status, tt.msg)
			if got := res.Header.Get("Location"); got != tt.location {
				t.Errorf("Location: %q, want %q", got, tt.location)
			}
			if got, want := res.Header.Get("Content-Length"), strconv.Itoa(len(res.Body)); got != want {
				t.Errorf("Content-Length: %q, want %q", got, want)
			}
			for _, h := range securityHeaderValues {
				if got := res.Header.Get(h[0]); got != h[1] {
					t.Errorf("%s: %q, want %q", h[0], got, h[1])
				}
			}
			if res.Close != tt.closed {
				t.Errorf("Connection: close is %v, want %v", res.Close, tt.closed)
			}
			if tt.closed {
				wantClosed(t, br, 2*time.Second)
				return
			}
			// The connection stays usable.
			io.WriteString(c, "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
			if res := readRaw(t, br, "GET"); res.Status != 200 {
				t.Errorf("next request on the connection: %d %s, want 200", res.Status, res.Body)
			}
		})
	}
}

// TestRewriteServerError checks the recognition of net/http's own error
// writes, and that a handler's response is never taken for one.
func TestRewriteServerError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want int // status of the rewritten response; 0: left alone
	}{
		{"431", "HTTP/1.1 431 Request Header Fields Too Large" + textErrorHeaders + "431 Request Header Fields Too Large", 431},
		{"400 with detail", "HTTP/1.1 400 Bad Request: invalid header name" + textErrorHeaders + "400 Bad Request: invalid header name", 400},
		{"417", "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Mon, 23 Nov 2026 10:00:00 GMT\r\nContent-Length: 0\r\n\r\n", 417},
		{"handler text error", "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nDate: Mon, 23 Nov 2026 10:00:00 GMT\r\n\r\n", 0},
		{"handler json", "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nDate: Mon, 23 Nov 2026 10:00:00 GMT\r\nContent-Length: 2\r\n\r\n{}", 0},
		{"100 continue", "HTTP/1.1 100 Continue\r\n\r\n", 0},
		{"success status", "HTTP/1.1 200 OK" + textErrorHeaders + "ok", 0},
		{"body bytes", `{"data":{}}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := rewriteServerError([]byte(tt.in))
			if !ok {
				if tt.want != 0 {
					t.Errorf("rewriteServerError(%q) left it alone, want a %d envelope", tt.in, tt.want)
				}
				return
			}
			res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
			if err != nil {
				t.Fatalf("rewriteServerError(%q) = %q: %v", tt.in, b, err)
			}
			if res.StatusCode != tt.want || !res.Close {
				t.Errorf("rewriteServerError(%q) = %d (close %v), want %d and close", tt.in, res.StatusCode, res.Close, tt.want)
			}
		})
	}
}

// syncLog is a log destination tests can read while the server writes.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// busyConn opens a connection whose request is in progress: a body that
// has not arrived (the handler waits for it until the read deadline).
func (e *env) busyConn() net.Conn {
	e.t.Helper()
	c := e.dial()
	io.WriteString(c, "POST /api/collections/users/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	return c
}

// TestConnectionCap checks that when every slot holds a request in
// progress, connections over the cap are answered 503 and closed at once,
// with one log line for all of them, and that a slot is free again once a
// connection closes.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	var log syncLog
	e := newEnvWith(t, Config{}, HTTPConfig{MaxConns: 2, MaxConnsPerClient: 2, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	// newEnv's login left an idle keep-alive connection: drop it so the
	// test holds both slots itself.
	e.srv.Client().CloseIdleConnections()
	ln := e.srv.Listener.(*capListener)
	waitFor(t, "no connection open", func() bool { return ln.openConns() == 0 })
	held := []net.Conn{e.busyConn(), e.busyConn()}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	waitFor(t, "two requests in progress", func() bool { return ln.openConns() == 2 && ln.waitingConns() == 0 })
	for i := range 3 {
		c := e.dial()
		start := time.Now()
		br := bufio.NewReader(c)
		res := readRaw(t, br, "GET")
		wantError(t, res, 503, msgTooManyConns)
		if !res.Close {
			t.Error("no Connection: close")
		}
		wantClosed(t, br, time.Second)
		if took := time.Since(start); took > time.Second {
			t.Errorf("refusal %d took %v, want at once", i, took)
		}
	}
	if n := strings.Count(log.String(), "connection cap reached"); n != 1 {
		t.Errorf("%d log lines about the cap, want 1:\n%s", n, log.String())
	}

	held[0].Close()
	waitFor(t, "a slot freed", func() bool { return ln.openConns() < 2 })
	c := e.dial()
	io.WriteString(c, "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
	if res := readRaw(t, bufio.NewReader(c), "GET"); res.Status != 200 {
		t.Errorf("after a slot freed: %d %s, want 200", res.Status, res.Body)
	}
}

// TestConnectionCapEvictsWaiting checks that at the cap a new connection
// takes the slot of the one that has waited longest without a request (a
// connection flood that sends nothing, or idle keep-alives), not that a
// working client is refused.
func TestConnectionCapEvictsWaiting(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, Config{}, HTTPConfig{MaxConns: 3, MaxConnsPerClient: 10})
	e.srv.Client().CloseIdleConnections()
	ln := e.srv.Listener.(*capListener)
	waitFor(t, "no connection open", func() bool { return ln.openConns() == 0 })
	busy := e.busyConn()
	defer busy.Close()
	waitFor(t, "a request in progress", func() bool { return ln.openConns() == 1 && ln.waitingConns() == 0 })
	oldest, newer := e.dial(), e.dial()
	defer newer.Close()
	waitFor(t, "two waiting connections", func() bool { return ln.waitingConns() == 2 })

	c := e.dial()
	defer c.Close()
	io.WriteString(c, "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
	if res := readRaw(t, bufio.NewReader(c), "GET"); res.Status != 200 {
		t.Errorf("at the cap with waiting connections: %d %s, want 200", res.Status, res.Body)
	}
	wantClosed(t, bufio.NewReader(oldest), time.Second)
	if got := ln.openConns(); got != 3 {
		t.Errorf("%d connections open, want 3 (the busy one, the newer waiting one, the new one)", got)
	}
	// The busy connection was not touched: its request still completes
	// (with the 400 of a body that is not JSON) once the body arrives.
	io.WriteString(busy, strings.Repeat(" ", 98)+"}")
	if res := readRaw(t, bufio.NewReader(busy), "POST"); res.Status != 400 {
		t.Errorf("the busy connection's request: %d %s, want 400", res.Status, res.Body)
	}
}

// TestConnectionCapPerClient checks that one client address cannot take
// every slot: at its share, its connections that wait give way to its new
// ones, a new one is refused when all of its own are busy, and another
// address is served meanwhile.
func TestConnectionCapPerClient(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, Config{}, HTTPConfig{MaxConns: 8, MaxConnsPerClient: 2})
	e.srv.Client().CloseIdleConnections()
	ln := e.srv.Listener.(*capListener)
	waitFor(t, "no connection open", func() bool { return ln.openConns() == 0 })
	busy := e.busyConn()
	defer busy.Close()
	waiting := e.dial()
	waitFor(t, "one busy and one waiting connection", func() bool { return ln.openConns() == 2 && ln.waitingConns() == 1 })

	// At its share, the client's new connection takes its waiting one's slot.
	c := e.dial()
	defer c.Close()
	io.WriteString(c, "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
	if res := readRaw(t, bufio.NewReader(c), "GET"); res.Status != 200 {
		t.Errorf("at the client's share with a waiting connection: %d %s, want 200", res.Status, res.Body)
	}
	wantClosed(t, bufio.NewReader(waiting), time.Second)

	// With both of its connections busy, the next one is refused.
	c.Close()
	waitFor(t, "one busy connection", func() bool { return ln.openConns() == 1 })
	busy2 := e.busyConn()
	defer busy2.Close()
	waitFor(t, "two busy connections", func() bool { return ln.openConns() == 2 && ln.waitingConns() == 0 })
	wantError(t, readRaw(t, bufio.NewReader(e.dial()), "GET"), 503, msgTooManyConns)

	// Another loopback address is another client (Linux routes 127/8 to lo).
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: time.Second}
	other, err := d.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Skipf("cannot dial from 127.0.0.2: %v", err)
	}
	defer other.Close()
	io.WriteString(other, "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
	if res := readRaw(t, bufio.NewReader(other), "GET"); res.Status != 200 {
		t.Errorf("another client at the first one's share: %d %s, want 200", res.Status, res.Body)
	}
}

// TestMaxConns checks the default cap stays under the descriptor limit.
func TestMaxConns(t *testing.T) {
	t.Parallel()
	n := MaxConns()
	if n < 1 || n > DefaultMaxConns {
		t.Errorf("MaxConns() = %d, want 1 to %d", n, DefaultMaxConns)
	}
	if lim := fileLimit(); lim > 0 && n >= lim {
		t.Errorf("MaxConns() = %d, want under the descriptor limit %d", n, lim)
	}
}

// TestChunkedCloses: a chunked request, which may have carried a
// Content-Length as well (net/http drops it), is answered and its
// connection closed, so nothing smuggled after it is read as a request.
func TestChunkedCloses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.dial()
	defer c.Close()
	io.WriteString(c, "POST /api/collections/users/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
		"Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n2\r\n{}\r\n0\r\n\r\n"+
		"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	res := readRaw(t, br, "POST")
	if res.Status != 400 || !res.Close {
		t.Errorf("chunked request: %d, Connection: close %v; want 400 and close", res.Status, res.Close)
	}
	wantClosed(t, br, 2*time.Second)
}

// TestDrain: a connection accepted before the server stops, whose request
// arrives only afterwards, is answered, not cut: Drain waits for it before
// Shutdown, which would close it unanswered. Connections made after Drain
// began are not accepted (they wait in the socket's backlog for whoever
// holds the socket next).
func TestDrain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.Client().CloseIdleConnections()
	ln := e.srv.Listener.(*capListener)
	waitFor(t, "no connection open", func() bool { return ln.openConns() == 0 })

	early := e.dial() // accepted; its request comes later
	defer early.Close()
	waitFor(t, "the connection accepted", func() bool { return ln.openConns() == 1 })

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- Drain(ctx, ln) }()
	select {
	case err := <-drained:
		t.Fatalf("Drain returned %v while a connection waited for its request", err)
	case <-time.After(50 * time.Millisecond):
	}

	io.WriteString(early, "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
	if res := readRaw(t, bufio.NewReader(early), "GET"); res.Status != 200 {
		t.Errorf("the early request: %d %s, want 200", res.Status, res.Body)
	}
	if err := <-drained; err != nil && !errors.Is(err, net.ErrClosed) {
		t.Errorf("Drain = %v", err)
	}
	if err := e.srv.Config.Shutdown(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Errorf("Shutdown after Drain = %v", err)
	}
}
