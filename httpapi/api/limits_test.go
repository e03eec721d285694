package api

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

const loginPath = "/api/collections/_superusers/auth-with-password"

// TestStalledBody checks that a body that stops arriving is cut at the
// route's read deadline, answered with the envelope where the route reads
// it, and its connection closed.
func TestStalledBody(t *testing.T) {
	t.Parallel()
	const deadline = 200 * time.Millisecond
	e := newEnvWith(t, Config{ReadTimeout: deadline}, HTTPConfig{ReadHeaderTimeout: deadline})
	tests := []struct {
		name   string
		req    string
		status int    // 0: no response at all
		msg    string // of an error envelope
	}{
		{"auth route", "POST " + loginPath + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id", 408, msgBodyTimeout},
		{"json route", "POST /api/collections/users/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"em", 408, msgBodyTimeout},
		{"chunked", "POST /api/collections/users/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"em\r\n", 408, msgBodyTimeout},
		{"multipart", "POST " + loginPath + " HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100\r\n\r\n--b\r\n", 408, msgBodyTimeout},
		{"unread body", "GET /api/health HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabcd", 200, ""},
		{"unknown route", "POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabcd", 404, msgNotFound},
		{"stalled headers", "GET /api/health HTTP/1.1\r\nHost: x\r\n", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := e.dial()
			start := time.Now()
			if _, err := io.WriteString(c, tt.req); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			if tt.status != 0 {
				res := readRaw(t, br, "POST")
				if tt.msg != "" {
					wantError(t, res, tt.status, tt.msg)
				} else if res.Status != tt.status {
					t.Errorf("status %d, want %d", res.Status, tt.status)
				}
				if tt.status == 408 {
					if !res.Close {
						t.Error("no Connection: close")
					}
					if took := time.Since(start); took < deadline {
						t.Errorf("answered after %v, before the deadline %v", took, deadline)
					}
				}
			}
			wantClosed(t, br, 2*time.Second)
			if took := time.Since(start); took > deadline+time.Second {
				t.Errorf("connection closed %v after the request, want about %v", took, deadline)
			}
		})
	}
	if n := e.api.budget.inUse(); n != 0 {
		t.Errorf("body budget in use after the requests: %d bytes", n)
	}
}

// TestRouteLimits checks that a route's own limits replace the defaults:
// a long read deadline lets a slow body through, and a short write
// deadline drops a slow response.
func TestRouteLimits(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, Config{ReadTimeout: 100 * time.Millisecond}, HTTPConfig{})
	long := Limits{Body: 1 << 10, Read: 3 * time.Second, Write: 3 * time.Second}
	e.api.mux.Handle("POST /test/long", e.api.route(long, func(w http.ResponseWriter, r *http.Request) error {
		b, err := bind(r)
		if err != nil {
			return err
		}
		return writeJSON(w, r, 200, b.vals)
	}))
	short := Limits{Body: 1 << 10, Read: time.Second, Write: 100 * time.Millisecond}
	e.api.mux.Handle("GET /test/slow", e.api.route(short, func(w http.ResponseWriter, r *http.Request) error {
		// Not a wait for a condition: a handler slower than its write
		// deadline, which is the socket's real time.
		time.Sleep(300 * time.Millisecond)
		return writeJSON(w, r, 200, map[string]any{})
	}))

	t.Run("long read deadline", func(t *testing.T) {
		c := e.dial()
		io.WriteString(c, "POST /test/long HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{\"a\"")
		// Not a wait for a condition: a client that sends the rest of its
		// body three times the default read deadline later (the socket's
		// real time).
		time.Sleep(300 * time.Millisecond)
		io.WriteString(c, ":\"b\"}")
		res := readRaw(t, bufio.NewReader(c), "POST")
		if res.Status != 200 || string(res.Body) != "{\"a\":\"b\"}\n" {
			t.Errorf("got %d %s, want 200 {\"a\":\"b\"}", res.Status, res.Body)
		}
	})
	t.Run("short write deadline", func(t *testing.T) {
		c := e.dial()
		io.WriteString(c, "GET /test/slow HTTP/1.1\r\nHost: x\r\n\r\n")
		b, err := io.ReadAll(c)
		if len(b) != 0 || err != nil {
			t.Errorf("read %q, %v; want the connection closed without a response", b, err)
		}
	})
}

// TestBodyLimits checks each route class's body limit, declared or not.
func TestBodyLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// pad is a JSON login body of exactly n bytes.
	pad := func(n int) string {
		s := `{"identity":"nobody@example.com","password":"wrong-password"}`
		return s + strings.Repeat(" ", n-len(s))
	}
	tests := []struct {
		name    string
		path    string
		body    string
		chunked bool
		status  int
		msg     string
	}{
		{"auth at limit", loginPath, pad(DefaultAuthBodyLimit), false, 400, msgAuthFailed},
		{"auth over limit", loginPath, pad(DefaultAuthBodyLimit + 1), false, 413, msgTooLarge},
		{"auth over limit chunked", loginPath, pad(DefaultAuthBodyLimit + 1), true, 413, msgTooLarge},
		{"json at limit", "/api/collections/users/records", pad(DefaultBodyLimit), false, 400, ""}, // validation
		{"json over limit", "/api/collections/users/records", pad(DefaultBodyLimit + 1), false, 413, msgTooLarge},
		{"json over limit chunked", "/api/collections/users/records", pad(DefaultBodyLimit + 1), true, 413, msgTooLarge},
		{"unknown route over limit", "/nowhere", pad(DefaultBodyLimit + 1), false, 413, msgTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rd io.Reader = strings.NewReader(tt.body)
			if tt.chunked {
				rd = io.MultiReader(rd) // hides the length: sent chunked
			}
			res := e.doRaw("POST", tt.path, "", "application/json", rd)
			if tt.msg == "" {
				if res.Status != tt.status {
					t.Errorf("status %d %s, want %d", res.Status, res.Body, tt.status)
				}
				return
			}
			wantError(t, res, tt.status, tt.msg)
		})
	}
}

// dialFrom connects to the server from the loopback address ip (any of
// 127.0.0.0/8), so that the server sees another client.
func (e *env) dialFrom(ip string) net.Conn {
	e.t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return c
}

// rawLogin sends a failed login on c and returns the answer.
func rawLogin(t *testing.T, c net.Conn) *response {
	t.Helper()
	body := `{"identity":"nobody@example.com","password":"wrong-password"}`
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", loginPath, len(body), body)
	return readRaw(t, bufio.NewReader(c), "POST")
}

// TestBodyBudgetLockOut checks that bodies declared and not sent take
// nothing from the budget: 32 connections that each declare the largest
// body (32 MiB in all, the whole budget) and send none of it leave every
// other request its body, from their address or another, until their
// deadline cuts them.
func TestBodyBudgetLockOut(t *testing.T) {
	t.Parallel()
	const deadline = time.Second
	e := newEnvWith(t, Config{ReadTimeout: deadline}, HTTPConfig{})
	start := time.Now()
	stalled := make([]net.Conn, 32)
	for i := range stalled {
		stalled[i] = e.dialFrom("127.0.0.1")
		fmt.Fprintf(stalled[i], "POST /api/collections/users/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", DefaultBodyLimit)
	}
	ln := e.srv.Listener.(*capListener)
	waitFor(t, "the 32 requests in progress", func() bool { return ln.openConns()-ln.waitingConns() >= len(stalled) })
	if n := e.api.budget.inUse(); n != 0 {
		t.Errorf("budget in use: %d bytes by bodies not sent", n)
	}
	for _, ip := range []string{"127.0.0.2", "127.0.0.1"} {
		wantError(t, rawLogin(t, e.dialFrom(ip)), 400, msgAuthFailed)
	}
	if took := time.Since(start); took >= deadline {
		t.Fatalf("the test took %v, past the stalled bodies' deadline: it proves nothing", took)
	}
	for _, c := range stalled {
		res := readRaw(t, bufio.NewReader(c), "POST")
		wantError(t, res, 408, msgBodyTimeout)
	}
	waitFor(t, "the budget given back", func() bool { return e.api.budget.inUse() == 0 })
}

// TestBodyBudget checks the bound on memory taken by request bodies: the
// bytes received of the bodies being read share a budget, one client
// address may hold at most a quarter of it, and a body whose bytes do not
// fit is refused with 503 at once, whatever the number of connections.
func TestBodyBudget(t *testing.T) {
	t.Parallel()
	const limit = 1 << 10
	e := newEnvWith(t, Config{BodyLimit: limit, BodyBudget: 8 * limit, ReadTimeout: 5 * time.Second}, HTTPConfig{})
	if e.api.budget.share != 2*limit {
		t.Fatalf("share %d, want a quarter of the budget, %d", e.api.budget.share, 2*limit)
	}
	// stall sends all but 4 bytes of a body of limit bytes from ip.
	const sent = limit - 4 // the 8 leave less than a login body free
	stall := func(ip string) net.Conn {
		c := e.dialFrom(ip)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"identity\":\"%s", loginPath, limit, strings.Repeat("a", sent-len(`{"identity":"`)))
		return c
	}
	var conns []net.Conn
	conns = append(conns, stall("127.0.0.1"), stall("127.0.0.1"))
	waitFor(t, "two stalled bodies in the budget", func() bool { return e.api.budget.heldBy("127.0.0.1") == 2*sent })

	// 127.0.0.1 has its share: its next body is refused, another
	// client's is read.
	res := rawLogin(t, e.dialFrom("127.0.0.1"))
	wantError(t, res, 503, msgServerBusy)
	if !res.Close {
		t.Error("no Connection: close")
	}
	wantError(t, rawLogin(t, e.dialFrom("127.0.0.2")), 400, msgAuthFailed)
	// A request without a body needs none of it.
	if res := e.do("GET", "/api/health", "", nil); res.Status != 200 {
		t.Errorf("GET /api/health = %d, want 200", res.Status)
	}

	// Four clients holding their share fill the budget: a fifth is refused.
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		conns = append(conns, stall(ip), stall(ip))
	}
	waitFor(t, "eight stalled bodies in the budget", func() bool { return e.api.budget.inUse() == 8*sent })
	wantError(t, rawLogin(t, e.dialFrom("127.0.0.5")), 503, msgServerBusy)

	for _, c := range conns {
		c.Close()
	}
	waitFor(t, "the budget given back", func() bool { return e.api.budget.inUse() == 0 })
	if len(e.api.budget.held) != 0 {
		t.Errorf("budget still keeps clients: %v", e.api.budget.held)
	}
	wantError(t, rawLogin(t, e.dialFrom("127.0.0.1")), 400, msgAuthFailed)
}

// TestMultipartLeavesNoTempFiles checks that multipart bodies sent to the
// JSON routes leave nothing in the temporary folder, whatever the outcome.
func TestMultipartLeavesNoTempFiles(t *testing.T) {
	e := newEnv(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// The spill route parses its body with no memory, so every file part
	// goes to disk, then ends as the query says.
	e.api.mux.Handle("POST /test/spill", e.api.route(e.api.jsonLimits, func(w http.ResponseWriter, r *http.Request) error {
		stateOf(r).limits.Body = 0
		if _, err := bind(r); err != nil {
			return err
		}
		if files, _ := os.ReadDir(tmp); len(files) == 0 {
			t.Error("spill route: no temporary file written, the test proves nothing")
		}
		switch r.URL.Query().Get("end") {
		case "panic":
			panic("spill route")
		case "error":
			return errBadRequest(msgBadRequest, nil)
		}
		return noContent(w)
	}))

	form := func(fileSize int, fields ...string) (string, []byte) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for i := 0; i+1 < len(fields); i += 2 {
			mw.WriteField(fields[i], fields[i+1])
		}
		fw, _ := mw.CreateFormFile("file", "big.bin")
		fw.Write(bytes.Repeat([]byte("x"), fileSize))
		mw.Close()
		return mw.FormDataContentType(), b.Bytes()
	}
	tests := []struct {
		name     string
		path     string
		fileSize int
		fields   []string
		truncate int // bytes cut from the end of the body
		chunked  bool
		status   int
	}{
		{"record with a file part", "/api/collections/users/records", 900 << 10, []string{"email", "a@example.com", "password", "password-123", "passwordConfirm", "password-123"}, 0, false, 400},
		{"record invalid", "/api/collections/users/records", 900 << 10, []string{"email", "bad"}, 0, false, 400},
		{"login failed", loginPath, 60 << 10, []string{"identity", suEmail, "password", "wrong"}, 0, false, 400},
		{"login over limit", loginPath, 100 << 10, nil, 0, true, 413},
		{"declared over limit", "/api/collections/users/records", 2 << 20, nil, 0, false, 413},
		{"truncated", "/api/collections/users/records", 500 << 10, nil, 100, false, 400},
		{"spilled, success", "/test/spill", 100 << 10, nil, 0, false, 204},
		{"spilled, error", "/test/spill?end=error", 100 << 10, nil, 0, false, 400},
		{"spilled, panic", "/test/spill?end=panic", 100 << 10, nil, 0, false, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := form(tt.fileSize, tt.fields...)
			body = body[:len(body)-tt.truncate]
			var rd io.Reader = bytes.NewReader(body)
			if tt.chunked {
				rd = io.MultiReader(rd)
			}
			res := e.doRaw("POST", tt.path, "", ct, rd)
			if res.Status != tt.status {
				t.Errorf("status %d %s, want %d", res.Status, res.Body, tt.status)
			}
			files, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				t.Errorf("left in the temporary folder: %s", f.Name())
			}
		})
	}
}

// TestBodyOverShare: a body whose charge alone is more than a client's
// share of the budget (a multipart text of 70,000 lines, each charged as a
// value) can never fit, so it is too large (413), not "busy, try again".
func TestBodyOverShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("name", strings.Repeat("a\n", 70000))
	mw.Close()
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/collections/users/records", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if got := strings.TrimSpace(string(b)); res.StatusCode != 413 || got != `{"data":{},"message":"`+msgTooLarge+`","status":413}` {
		t.Errorf("got %d %s, want 413 %q", res.StatusCode, b, msgTooLarge)
	}
}
