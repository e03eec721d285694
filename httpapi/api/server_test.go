package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
	"strongbox/logstore/journal"
	"strongbox/logstore/journal/journaltest"
)

// clock is an injectable time source tests can move.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is a running API backed by a fresh data dir, with one superuser,
// served as strongbox serves it (NewHTTPServer).
type env struct {
	t        *testing.T
	srv      *httptest.Server
	api      *Server
	auth     *authn.Store
	hasher   *authn.Hasher // the auth store's
	logs     *logstore.Store
	settings *settings.Store
	clock    *clock
	dir      string // the data dir of the stores
	su       string // superuser auth token
}

const (
	suEmail    = "root@example.com"
	suPassword = "root-password"
)

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, Config{}, HTTPConfig{})
}

// newEnvWith is newEnv with limits and timeouts from cfg and hc (the
// stores and clock are the env's own; so is the logger unless cfg has one).
func newEnvWith(t *testing.T, cfg Config, hc HTTPConfig) *env {
	t.Helper()
	return newEnvOn(t, cfg, hc, nil)
}

// newEnvOn is newEnvWith with the stores' files on fsys (nil: the
// operating system's).
func newEnvOn(t *testing.T, cfg Config, hc HTTPConfig, fsys journal.FS) *env {
	t.Helper()
	return newEnvSeeded(t, cfg, hc, fsys, nil)
}

// newEnvSeeded is newEnvOn with seed, if not nil, run on the path of the
// auth journal before the store opens it (a data dir an older version
// wrote).
func newEnvSeeded(t *testing.T, cfg Config, hc HTTPConfig, fsys journal.FS, seed func(t *testing.T, path string)) *env {
	t.Helper()
	clk := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	if fsys == nil {
		// The API's tests are not of durability (the stores' crash tests
		// are): no fsync at each commit.
		fsys = journaltest.New().SkipSyncs()
	}
	hasher, err := authn.NewHasher(bcrypt.MinCost, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if seed != nil {
		seed(t, filepath.Join(dir, "auth.journal"))
	}
	auth, err := authn.Open(filepath.Join(dir, "auth.journal"), authn.Options{Hasher: hasher, Now: clk.Now, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close() })
	if _, err := auth.CreateSuperuser(t.Context(), suEmail, suPassword); err != nil {
		t.Fatal(err)
	}
	set, err := settings.Open(filepath.Join(dir, "settings.journal"), settings.Options{FS: fsys, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	logs, err := logstore.Open(filepath.Join(dir, "logs"), logstore.Options{Now: clk.Now, MaxDays: 5, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	followLogSettings(t, set, logs)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	cfg.Auth, cfg.Logs, cfg.Settings, cfg.Now, cfg.Logger = auth, logs, set, clk.Now, logger
	if hc.Logger == nil {
		hc.Logger = logger
	}
	api := NewServer(cfg)
	// The server applies every settings change, as strongbox/httpapi/app
	// subscribes it.
	t.Cleanup(set.Subscribe(api.ApplySettings))
	srv := httptest.NewUnstartedServer(nil)
	srv.Config, srv.Listener = NewHTTPServer(api, srv.Listener, hc)
	srv.Start()
	t.Cleanup(srv.Close)
	// A request the server never answers fails the test with the client's
	// timeout error instead of hanging it until go test's timeout.
	srv.Client().Timeout = 30 * time.Second
	e := &env{t: t, srv: srv, api: api, auth: auth, hasher: hasher, logs: logs, settings: set, clock: clk, dir: dir}
	e.su = e.login("_superusers", suEmail, suPassword)
	return e
}

// followLogSettings makes the log store apply settings.logs at once and on
// every change, as strongbox/httpapi/app subscribes it.
func followLogSettings(t *testing.T, set *settings.Store, logs *logstore.Store) {
	t.Helper()
	t.Cleanup(set.Subscribe(func(v settings.Settings) {
		if err := logs.SetRetention(v.Logs.MaxDays, v.Logs.MinLevel); err != nil {
			t.Errorf("apply the log settings: %v", err)
		}
	}))
}

// testWriter sends the server's own log to the test's output.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// response is a decoded response.
type response struct {
	Status int
	Header http.Header
	Body   []byte
	Close  bool // the server said it closes the connection
}

// JSON decodes the body into a generic value.
func (r *response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.Body, err)
	}
	return m
}

// do sends a request; body may be nil, a string (sent as JSON), or url.Values-like
// pre-encoded form (use doRaw for that).
func (e *env) do(method, path, token string, body any) *response {
	e.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd, ct = bytes.NewReader(j), "application/json"
	}
	return e.doRaw(method, path, token, ct, rd)
}

func (e *env) doRaw(method, path, token, contentType string, body io.Reader) *response {
	e.t.Helper()
	return e.doHeader(method, path, token, contentType, body, nil)
}

// doHeader is doRaw with more request headers.
func (e *env) doHeader(method, path, token, contentType string, body io.Reader, header map[string]string) *response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return &response{Status: res.StatusCode, Header: res.Header, Body: b, Close: res.Close}
}

// login authenticates with a password and returns the token.
func (e *env) login(collection, identity, password string) string {
	e.t.Helper()
	res := e.do("POST", "/api/collections/"+collection+"/auth-with-password", "", map[string]string{"identity": identity, "password": password})
	if res.Status != 200 {
		e.t.Fatalf("login %s: %d %s", identity, res.Status, res.Body)
	}
	return res.JSON(e.t)["token"].(string)
}

// signUp creates a users record and returns its id.
func (e *env) signUp(email, password string) string {
	e.t.Helper()
	res := e.do("POST", "/api/collections/users/records", "", map[string]string{"email": email, "password": password, "passwordConfirm": password})
	if res.Status != 200 {
		e.t.Fatalf("sign up %s: %d %s", email, res.Status, res.Body)
	}
	return res.JSON(e.t)["id"].(string)
}

// wantError asserts an error envelope, byte for byte.
func wantError(t *testing.T, res *response, status int, msg string) {
	t.Helper()
	want, _ := json.Marshal(envelope{Data: map[string]any{}, Message: msg, Status: status})
	if res.Status != status || strings.TrimSpace(string(res.Body)) != string(want) {
		t.Errorf("got %d %s\nwant %d %s", res.Status, res.Body, status, want)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
}
