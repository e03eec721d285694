package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/httpapi/app"
	"strongbox/httpapi/ratelimit"
)

// The real strongbox, served in process, and a front that stands between
// it and the suite: a reverse proxy whose mutation may rewrite a request
// before strongbox sees it, answer in its place, or rewrite its response
// (mutators_test.go uses it to prove the checks able to fail).

const (
	testEmail    = "admin@example.com"
	testPassword = "Passw0rd!123"
)

// quickThrottle is strongbox's login throttle with a slowed identity's
// checks spaced 10 ms apart instead of a second: the checks' logic is the
// same (LOGIN-THROTTLE-004 allows a wait, it does not need one), and a run
// is 15 s shorter. The root package's TestConformance runs the suite
// against the default policy.
var quickThrottle = func() *ratelimit.Policy {
	p := ratelimit.DefaultPolicy
	p.SlowEvery = 10 * time.Millisecond
	return &p
}()

// startStrongbox serves strongbox on 127.0.0.1:0 over a data dir of its
// own, with the superuser testEmail, OAuth2 provider URLs allowed on
// private addresses (the suite's provider is on 127.0.0.1) and
// quickThrottle, and stops it when the test ends. It returns the base URL.
func startStrongbox(t testing.TB) string {
	t.Helper()
	return startStrongboxWith(t, true)
}

// startStrongboxWith is startStrongbox with private OAuth2 provider
// addresses allowed or not, as strongbox's STRONGBOX_OAUTH2_ALLOW_PRIVATE.
func startStrongboxWith(t testing.TB, oauth2AllowPrivate bool) string {
	t.Helper()
	return startStrongboxIn(t, t.TempDir(), func(c *app.Config) { c.OAuth2AllowPrivate = oauth2AllowPrivate })
}

// startStrongboxIn is startStrongbox on the data dir dir, its Config
// changed by edit (nil: as it is) before it starts: the hook for a run on
// other settings, such as backups on S3 (startStrongboxS3).
func startStrongboxIn(t testing.TB, dir string, edit func(*app.Config)) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	cfg := app.Config{
		Options: app.Options{Dir: dir, BcryptCost: 4},
		Addr:    "127.0.0.1:0", SuperuserEmail: testEmail, SuperuserPassword: testPassword,
		OnReady:   func(r app.Ready) { ready <- r.Addr },
		NoExec:    errors.New("strongbox serves inside the conformance tests"),
		MailDrain: time.Second, ShutdownTimeout: 5 * time.Second,
		OAuth2AllowPrivate: true,
		LoginPolicy:        quickThrottle,
	}
	if edit != nil {
		edit(&cfg)
	}
	srv := app.New(cfg)
	go func() { done <- srv.Run(ctx) }()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("strongbox stopped: %v", err)
			}
		})
		return "http://" + addr.String()
	case err := <-done:
		cancel()
		t.Fatalf("strongbox did not start: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("strongbox did not start within 20 s")
	}
	return ""
}

// mutation handles a request that reached the front: it may pass it on
// (x.pass), change it first, answer it itself, or rewrite what strongbox
// answered (x.forward, then answered.write).
type mutation func(x *front, w http.ResponseWriter, r *http.Request)

// front is the reverse proxy in front of one strongbox.
type front struct {
	base   string // strongbox's base URL
	proxy  http.Handler
	mutate mutation

	mu   sync.Mutex
	seen []string // the request URIs that reached the front, oldest first
}

// startFront serves m in front of the strongbox at base and returns the
// front's base URL.
func startFront(t testing.TB, base string, m mutation) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = nil
	x := &front{base: base, proxy: proxy, mutate: m}
	srv := httptest.NewServer(x)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (x *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x.mu.Lock()
	x.seen = append(x.seen, r.RequestURI)
	x.mu.Unlock()
	if x.mutate == nil {
		x.pass(w, r)
		return
	}
	x.mutate(x, w, r)
}

// pass hands r to strongbox and its answer to the client unchanged.
func (x *front) pass(w http.ResponseWriter, r *http.Request) {
	rewind(r)
	x.proxy.ServeHTTP(w, r)
}

// rewind keeps the body of r, read once, so that it can be sent again,
// and sets it back to its start.
func rewind(r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody && r.GetBody == nil {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	if r.GetBody != nil {
		r.Body, _ = r.GetBody()
	}
}

// answered is strongbox's answer, held for a mutation to rewrite.
type answered struct {
	status int
	header http.Header
	body   []byte
}

// forward hands r to strongbox and returns its answer. The body of r is
// read once and kept, so that a mutation may send r again.
func (x *front) forward(r *http.Request) *answered {
	rewind(r)
	rec := httptest.NewRecorder()
	x.proxy.ServeHTTP(rec, r)
	return &answered{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// forwardAs sends r again with the Authorization header auth ("" for a
// guest).
func (x *front) forwardAs(r *http.Request, auth string) *answered {
	rewind(r)
	r2 := r.Clone(r.Context())
	r2.Header.Del("Authorization")
	if auth != "" {
		r2.Header.Set("Authorization", auth)
	}
	return x.forward(r2)
}

// superuser returns a fresh token of the superuser.
func (x *front) superuser() string {
	body := fmt.Sprintf(`{"identity":%q,"password":%q}`, testEmail, testPassword)
	return x.token("/api/collections/_superusers/auth-with-password", "", body)
}

// fileToken returns a file token of the superuser.
func (x *front) fileToken() string { return x.token("/api/files/token", x.superuser(), "") }

// token POSTs the JSON body to strongbox's path with the Authorization
// auth and returns the token it answers ("" if none).
func (x *front) token(path, auth, body string) string {
	req, _ := http.NewRequest(http.MethodPost, x.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	var out struct{ Token string }
	json.NewDecoder(res.Body).Decode(&out)
	return out.Token
}

// write sends the answer to the client.
func (res *answered) write(w http.ResponseWriter) {
	for k, v := range res.header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(res.status)
	w.Write(res.body)
}

// json decodes the body (nil if it is no JSON).
func (res *answered) json() any {
	var v any
	if json.Unmarshal(res.body, &v) != nil {
		return nil
	}
	return v
}

// setJSON replaces the body with v.
func (res *answered) setJSON(v any) {
	res.body, _ = json.Marshal(v)
	res.header.Set("Content-Type", "application/json")
}

// object returns the body as a JSON object (nil if it is none).
func (res *answered) object() map[string]any {
	m, _ := res.json().(map[string]any)
	return m
}

// envelopeAnswer is an error envelope (§2.5) in PocketBase's key order.
func envelopeAnswer(status int, msg string) *answered {
	body := fmt.Sprintf(`{"data":{},"message":%q,"status":%d}`, msg, status)
	return &answered{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(body)}
}

// when applies m to the requests match selects and passes the others on.
func when(match func(*http.Request) bool, m mutation) mutation {
	return func(x *front, w http.ResponseWriter, r *http.Request) {
		if match(r) {
			m(x, w, r)
		} else {
			x.pass(w, r)
		}
	}
}

// edit rewrites strongbox's answers to the requests match selects.
func edit(match func(*http.Request) bool, fn func(r *http.Request, res *answered)) mutation {
	return when(match, func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		fn(r, res)
		res.write(w)
	})
}

// answer answers the requests match selects with res, without asking
// strongbox.
func answer(match func(*http.Request) bool, res *answered) mutation {
	return when(match, func(_ *front, w http.ResponseWriter, _ *http.Request) { res.write(w) })
}

// rewrite changes the requests match selects before strongbox sees them.
func rewrite(match func(*http.Request) bool, fn func(r *http.Request)) mutation {
	return when(match, func(x *front, w http.ResponseWriter, r *http.Request) {
		fn(r)
		x.pass(w, r)
	})
}

// editQuery changes the query of the requests match selects.
func editQuery(match func(*http.Request) bool, fn func(q url.Values)) mutation {
	return rewrite(match, func(r *http.Request) {
		q := r.URL.Query()
		before := q.Encode()
		fn(q)
		if after := q.Encode(); after != before {
			r.URL.RawQuery = after
		}
	})
}

// The requests of one route.
func route(method, path string) func(*http.Request) bool {
	return func(r *http.Request) bool { return (method == "" || r.Method == method) && r.URL.Path == path }
}

func under(method, prefix string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return (method == "" || r.Method == method) && strings.HasPrefix(r.URL.Path, prefix)
	}
}

func both(a, b func(*http.Request) bool) func(*http.Request) bool {
	return func(r *http.Request) bool { return a(r) && b(r) }
}

func guest(r *http.Request) bool { return r.Header.Get("Authorization") == "" }
