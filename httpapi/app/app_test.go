package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/httpapi/settings"
)

const (
	testEmail    = "admin@example.com"
	testPassword = "password123"
)

// testServer is a Server run by a test.
type testServer struct {
	*Server
	base   string
	dir    string
	client *http.Client
	stop   func() error // stops the server; the test's cleanup calls it too
}

// startServer runs a Server over dir on 127.0.0.1:0, with cfg edited by
// edit (if not nil), and waits until it is ready.
func startServer(t *testing.T, dir string, edit func(*Config), wrap func(*Server, http.Handler) http.Handler) *testServer {
	t.Helper()
	ready := make(chan Ready, 1)
	_, err := os.Stat(filepath.Join(dir, "auth.journal"))
	fresh := err != nil
	cfg := Config{
		Options:        Options{Dir: dir, BcryptCost: 4, BcryptSlots: 2},
		Addr:           "127.0.0.1:0",
		SuperuserEmail: testEmail, SuperuserPassword: testPassword,
	}
	if edit != nil {
		edit(&cfg)
	}
	onReady := cfg.OnReady // an edit's, called first
	cfg.OnReady = func(r Ready) {
		if onReady != nil {
			onReady(r)
		}
		ready <- r
	}
	s := New(cfg)
	if wrap != nil {
		s.wrap = func(h http.Handler) http.Handler { return wrap(s, h) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	ts := &testServer{Server: s, dir: dir}
	select {
	case r := <-ready:
		ts.base = "http://" + r.Addr.String()
		if fresh && (!r.Login.Created || r.Login.Email != testEmail || r.Login.Password != "") {
			t.Errorf("Ready.Login = %+v, want created %s with the password given (not echoed)", r.Login, testEmail)
		}
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before it was ready: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("the server was not ready within 20 s")
	}
	// A client of its own, whose timeout turns a hang into a failure.
	transport := &http.Transport{}
	ts.client = &http.Client{Transport: transport, Timeout: time.Minute} // a backup to S3 took over 15 s under the race detector on a busy machine
	var once sync.Once
	var stopErr error
	ts.stop = func() error {
		once.Do(func() {
			// A connection the client dialed but never used (it lost a race
			// to an idle one) is new to the server, and Shutdown waits 5 s
			// before it counts such a connection as idle: close them first.
			transport.CloseIdleConnections()
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(30 * time.Second):
				stopErr = errors.New("Run did not return within 30 s of being stopped")
			}
			transport.CloseIdleConnections()
		})
		return stopErr
	}
	t.Cleanup(func() { ts.stop() })
	return ts
}

// do sends a request with the token (if any) and returns the status and
// the body.
func (ts *testServer) do(t *testing.T, method, path, token, body string) (int, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(method, ts.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := ts.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// login returns a superuser token.
func (ts *testServer) login(t *testing.T) string {
	t.Helper()
	code, body, err := ts.do(t, "POST", "/api/collections/_superusers/auth-with-password", "",
		fmt.Sprintf(`{"identity":%q,"password":%q}`, testEmail, testPassword))
	if err != nil || code != 200 {
		t.Fatalf("login: %d %s %v", code, body, err)
	}
	var v struct{ Token string }
	json.Unmarshal(body, &v)
	return v.Token
}

// appName returns the meta.appName the server reports.
func (ts *testServer) appName(t *testing.T, token string) string {
	t.Helper()
	code, body, err := ts.do(t, "GET", "/api/settings", token, "")
	if err != nil || code != 200 {
		t.Fatalf("GET /api/settings: %d %s %v", code, body, err)
	}
	var v settings.Settings
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET /api/settings: %v in %s", err, body)
	}
	return v.Meta.AppName
}

// settingsJournal returns the bytes of a settings journal whose appName is
// name.
func settingsJournal(t *testing.T, name string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "settings.journal")
	st, err := settings.Open(path, settings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(func(v *settings.Settings) error { v.Meta.AppName = name; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// swapSettings is a restart step that replaces the settings journal with
// journal.
func swapSettings(journal []byte) func(dir string) error {
	return func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "settings.journal"), journal, 0o600)
	}
}

// isUnavailable reports whether a response is the 503 envelope with msg.
func isUnavailable(code int, body []byte, msg string) bool {
	var env struct {
		Data    map[string]any `json:"data"`
		Message string         `json:"message"`
		Status  int            `json:"status"`
	}
	return code == 503 && json.Unmarshal(body, &env) == nil && env.Status == 503 && env.Message == msg && env.Data != nil
}

// TestRunReadyRestartStop: the ready callback carries the real address;
// a restart runs its step with the stores closed and the dir still locked,
// and serves what the step left; a graceful stop releases the port and
// the dir; Restart after the stop is refused.
func TestRunReadyRestartStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := startServer(t, dir, nil, nil)
	if code, body, err := ts.do(t, "GET", "/api/health", "", ""); err != nil || code != 200 {
		t.Fatalf("GET /api/health at the ready address: %d %s %v", code, body, err)
	}
	token := ts.login(t)
	if got := ts.appName(t, token); got != "Acme" {
		t.Fatalf("appName = %q before the restart, want the default Acme", got)
	}

	restored := settingsJournal(t, "Restored")
	var lockErr error
	err := ts.Restart(t.Context(), func(dir string) error {
		_, lockErr = LockDir(dir)
		return swapSettings(restored)(dir)
	})
	if err != nil {
		t.Fatalf("Restart = %v", err)
	}
	if lockErr == nil || !strings.Contains(lockErr.Error(), "in use") {
		t.Errorf("LockDir during the step = %v, want the dir still locked by the server", lockErr)
	}
	// The auth store reopened with its keys: the token still works.
	if got := ts.appName(t, token); got != "Restored" {
		t.Errorf("appName = %q after a restart that swapped the settings journal, want Restored", got)
	}

	if err := ts.stop(); err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
	if _, _, err := ts.do(t, "GET", "/api/health", "", ""); err == nil {
		t.Errorf("GET /api/health after the stop succeeded, want the port closed")
	}
	lock, err := LockDir(dir)
	if err != nil {
		t.Errorf("LockDir after the stop: %v, want the dir released", err)
	} else {
		lock.Unlock()
	}
	if err := ts.Restart(t.Context(), nil); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Restart after the stop = %v, want ErrNotRunning", err)
	}
}

// TestRestartStepFails: a failed step leaves the server serving what is on
// disk; a step that leaves unreadable data leaves it answering 503 until a
// second restart rolls back.
func TestRestartStepFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := startServer(t, dir, nil, nil)
	token := ts.login(t)

	boom := errors.New("boom")
	if err := ts.Restart(t.Context(), func(string) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Restart with a failing step = %v, want it to wrap the step's error", err)
	}
	if got := ts.appName(t, token); got != "Acme" {
		t.Errorf("appName = %q after a failed step, want the old Acme", got)
	}
	if err := ts.Restart(t.Context(), func(string) error { panic("step panic") }); err == nil || !strings.Contains(err.Error(), "step panic") {
		t.Errorf("Restart with a panicking step = %v, want the panic as an error", err)
	}
	if got := ts.appName(t, token); got != "Acme" {
		t.Errorf("appName = %q after a panicking step, want the old Acme", got)
	}

	path := filepath.Join(dir, "settings.journal")
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	err = ts.Restart(t.Context(), func(dir string) error {
		os.WriteFile(path, []byte("not a journal"), 0o600)
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "reopen") {
		t.Fatalf("Restart over a corrupted journal = %v, want the step's error and the reopen's", err)
	}
	if code, body, err := ts.do(t, "GET", "/api/health", "", ""); err != nil || !isUnavailable(code, body, msgDown) {
		t.Errorf("GET /api/health with the stores down: %d %s %v, want the 503 envelope %q", code, body, err, msgDown)
	}
	if err := ts.Restart(t.Context(), swapSettings(saved)); err != nil {
		t.Fatalf("Restart that rolls back: %v", err)
	}
	if got := ts.appName(t, token); got != "Acme" {
		t.Errorf("appName = %q after the rollback, want Acme", got)
	}
	if err := ts.stop(); err != nil {
		t.Errorf("graceful stop after the rollback: %v", err)
	}
}

// TestStopWhileDown: a server stopped while its stores cannot be reopened
// says so.
func TestStopWhileDown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := startServer(t, dir, nil, nil)
	if err := ts.Restart(t.Context(), swapSettings([]byte("not a journal"))); err == nil {
		t.Fatal("Restart over a corrupted settings journal succeeded")
	}
	if err := ts.stop(); err == nil || !strings.Contains(err.Error(), "stopped with the data dir closed") {
		t.Errorf("stop while down = %v, want it to report the closed data dir", err)
	}
}

// TestRestartUnderLoad: requests sent during restarts get the old data,
// the new data or a 503 envelope, never a transport error or a hang (the
// client's timeout); with the default hold they all wait and get data.
func TestRestartUnderLoad(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		hold     time.Duration
		want503s bool
	}{
		{"requests wait for the restart", 0, false},
		{"requests held too long get 503", time.Millisecond, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, t.TempDir(), func(c *Config) { c.RestartHold = tt.hold }, nil)
			token := ts.login(t)
			journals := [][]byte{settingsJournal(t, "Old"), settingsJournal(t, "New")}
			if err := ts.Restart(t.Context(), swapSettings(journals[0])); err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			var ok, unavailable atomic.Int64
			for range 4 {
				wg.Go(func() {
					for ctx.Err() == nil {
						code, body, err := ts.do(t, "GET", "/api/settings", token, "")
						switch {
						case err != nil:
							t.Errorf("GET /api/settings during restarts: %v, want an answer", err)
							return
						case code == 200 && (bytes.Contains(body, []byte(`"appName":"Old"`)) || bytes.Contains(body, []byte(`"appName":"New"`))):
							ok.Add(1)
						case isUnavailable(code, body, msgRestarting):
							unavailable.Add(1)
						default:
							t.Errorf("GET /api/settings during restarts: %d %s, want the old or new settings or the 503 envelope", code, body)
							return
						}
					}
				})
			}
			for i := range 6 {
				want := []string{"Old", "New"}[(i+1)%2]
				err := ts.Restart(t.Context(), func(dir string) error {
					// Not a wait for a condition: a slow swap, so that
					// requests pile up at the gate.
					time.Sleep(30 * time.Millisecond)
					return swapSettings(journals[(i+1)%2])(dir)
				})
				if err != nil {
					t.Fatalf("Restart %d: %v", i, err)
				}
				if got := ts.appName(t, token); got != want {
					t.Errorf("appName = %q after restart %d, want %q", got, i, want)
				}
			}
			cancel()
			wg.Wait()
			t.Logf("%d answered with data, %d with 503", ok.Load(), unavailable.Load())
			if ok.Load() == 0 {
				t.Error("no request was answered with data")
			}
			if got := unavailable.Load() > 0; got != tt.want503s {
				t.Errorf("some requests got 503: %v, want %v", got, tt.want503s)
			}
		})
	}
}

// TestRestartFromAHandler: a handler given the Server as its restarter
// cannot restart with its request's context (it would wait for itself);
// it answers and then restarts with a context of its own, and the restart
// waits for its request to finish.
func TestRestartFromAHandler(t *testing.T) {
	t.Parallel()
	restarted := make(chan error, 1)
	var finished atomic.Bool // the restarting request has returned
	var stepSawFinished atomic.Bool
	wrap := func(s *Server, api http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/", api)
		mux.HandleFunc("POST /test/restart-inline", func(w http.ResponseWriter, r *http.Request) {
			if err := s.Restart(r.Context(), nil); !errors.Is(err, ErrInRequest) {
				http.Error(w, fmt.Sprintf("Restart = %v, want ErrInRequest", err), 500)
				return
			}
			if err := s.Restart(context.WithoutCancel(r.Context()), nil); !errors.Is(err, ErrInRequest) {
				http.Error(w, fmt.Sprintf("Restart with a detached request context = %v, want ErrInRequest", err), 500)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
		mux.HandleFunc("POST /test/restart-after", func(w http.ResponseWriter, r *http.Request) {
			defer finished.Store(true)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				restarted <- s.Restart(ctx, func(string) error {
					stepSawFinished.Store(finished.Load())
					return nil
				})
			}()
			// The restart starts while this request runs.
			if !eventually(10*time.Second, func() bool { return restartWaits(s) }) {
				http.Error(w, "the restart did not wait for this request within 10 s", 500)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
		return mux
	}
	ts := startServer(t, t.TempDir(), nil, wrap)
	if code, body, err := ts.do(t, "POST", "/test/restart-inline", "", ""); err != nil || code != 204 {
		t.Errorf("restart inline: %d %s %v", code, body, err)
	}
	if code, body, err := ts.do(t, "POST", "/test/restart-after", "", ""); err != nil || code != 204 {
		t.Errorf("restart after answering: %d %s %v", code, body, err)
	}
	select {
	case err := <-restarted:
		if err != nil {
			t.Errorf("Restart from the handler's goroutine: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the restart the handler started did not end within 20 s")
	}
	if !stepSawFinished.Load() {
		t.Error("the step ran before the request that asked for the restart had finished")
	}
	if code, _, err := ts.do(t, "GET", "/api/health", "", ""); err != nil || code != 200 {
		t.Errorf("GET /api/health after the handler's restart: %d %v", code, err)
	}
}

// TestRestartDrainTimeout: a restart whose context ends while a request
// is in flight changes nothing, and the requests held meanwhile are served.
func TestRestartDrainTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	wrap := func(s *Server, api http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/", api)
		mux.HandleFunc("GET /test/slow", func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
			w.WriteHeader(http.StatusNoContent)
		})
		return mux
	}
	ts := startServer(t, t.TempDir(), nil, wrap)
	slow := make(chan error, 1)
	go func() {
		code, _, err := ts.do(t, "GET", "/test/slow", "", "")
		if err == nil && code != 204 {
			err = fmt.Errorf("status %d", code)
		}
		slow <- err
	}()
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the slow request did not reach its handler within 20 s")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	stepRan := false
	held := make(chan int, 1)
	go func() {
		// It arrives while the restart waits.
		if !eventually(10*time.Second, func() bool { return restartWaits(ts.Server) }) {
			t.Error("the restart never waited for the request in flight")
			held <- 200 // reported above
			return
		}
		code, _, _ := ts.do(t, "GET", "/api/health", "", "")
		held <- code
	}()
	err := ts.Restart(ctx, func(string) error { stepRan = true; return nil })
	if !errors.Is(err, context.DeadlineExceeded) || stepRan {
		t.Errorf("Restart with a request in flight past its deadline = %v (step ran: %v), want DeadlineExceeded and no step", err, stepRan)
	}
	select {
	case code := <-held:
		if code != 200 {
			t.Errorf("the request held during the abandoned restart got %d, want 200", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the request held during the abandoned restart got no answer within 20 s")
	}
	close(release)
	select {
	case err := <-slow:
		if err != nil {
			t.Errorf("the slow request: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the slow request got no answer within 20 s")
	}
}

// TestRunBadAddress: a start that cannot bind returns the listen error,
// creates no superuser and releases the dir.
func TestRunBadAddress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := New(Config{Options: Options{Dir: dir, BcryptCost: 4}, Addr: "bogus", OnReady: func(Ready) { t.Error("OnReady called") }})
	done := make(chan error, 1)
	go func() { done <- s.Run(t.Context()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "bogus") {
			t.Errorf("Run on a bad address = %v, want the listen error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run on a bad address did not return within 20 s")
	}
	st, err := Open(Options{Dir: dir, BcryptCost: 4}, false)
	if err != nil {
		t.Fatalf("Open after the failed start: %v", err)
	}
	defer st.Close()
	if recs := st.Auth.Records(st.Auth.Superusers()); len(recs) != 0 {
		t.Errorf("a start that could not bind created %d superusers", len(recs))
	}
}

// BenchmarkGate is the cost the gate adds to every request: a lock, a
// count and a context value.
func BenchmarkGate(b *testing.B) {
	g := newGate(DefaultRestartHold)
	g.open(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r, _ := http.NewRequest("GET", "/api/health", nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			g.ServeHTTP(nil, r)
		}
	})
}
