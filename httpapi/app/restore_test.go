package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/backup"
)

// makeArchive writes the archive key into <dataDir>/backups from the data
// dir of a fresh server whose settings journal is journal (if not nil),
// whose appName is appName otherwise.
func makeArchive(t *testing.T, dataDir, key, appName string, journal []byte) {
	t.Helper()
	src := t.TempDir()
	st, err := Open(Options{Dir: src, BcryptCost: 4}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if journal == nil {
		journal = settingsJournal(t, appName)
	}
	if err := os.WriteFile(filepath.Join(src, "settings.journal"), journal, 0o600); err != nil {
		t.Fatal(err)
	}
	var files backup.Source
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && backup.Excluded(rel) {
			return filepath.SkipDir
		}
		if d.IsDir() || backup.Excluded(rel) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, backup.File{Name: filepath.ToSlash(rel), Size: fi.Size(), Open: func() (io.ReadCloser, error) { return os.Open(p) }})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := backup.OpenDir(filepath.Join(dataDir, "backups"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Create(t.Context(), key, files, backup.Meta{}); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects a server's log.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// execCall is what an injected Exec saw.
type execCall struct {
	path      string
	argv, env []string
	listenFD  int  // the descriptor the environment hands over; -1 if none
	forUs     bool // the environment hands it to this process's PID
	// inheritable: listenFD is open and not close-on-exec, so a real exec
	// keeps it.
	inheritable bool
	// leaked lists the other descriptors a real exec would keep, beyond
	// those the test process had when fakeExec was made.
	leaked []int
	// pending is a connection made at the exec, its request sent: the
	// kernel accepted it into the socket's backlog (nil if the dial
	// failed). answered: the old image answered it.
	pending  net.Conn
	answered bool
	lockFree bool // another LockDir on the data dir succeeded
}

// fakeExec returns an Exec that records its call into got and returns err.
// The handed-over descriptor stays open: the caller adopts it (a second
// Run) or, if err is not nil, the server serves on it again.
func fakeExec(t *testing.T, dir string, addr func() string, got chan<- execCall, err error) func(string, []string, []string) error {
	before := inheritableFDs()
	return func(path string, argv, env []string) error {
		c := execCall{path: path, argv: argv, env: env, listenFD: -1}
		vars := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		if fd, err := strconv.Atoi(vars[envListenFD]); err == nil {
			c.listenFD, c.inheritable = fd, inheritable(fd)
		}
		c.forUs = vars[envListenPID] == strconv.Itoa(os.Getpid())
		if before != nil {
			for fd := range inheritableFDs() {
				if !before[fd] && fd != c.listenFD {
					c.leaked = append(c.leaked, fd)
				}
			}
		}
		if conn, derr := net.DialTimeout("tcp", addr(), time.Second); derr == nil {
			io.WriteString(conn, "GET /api/health HTTP/1.1\r\nHost: strongbox\r\nConnection: close\r\n\r\n")
			conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if n, _ := conn.Read(make([]byte, 1)); n > 0 {
				c.answered = true
			}
			conn.SetReadDeadline(time.Time{})
			c.pending = conn
			t.Cleanup(func() { conn.Close() })
		}
		if l, lerr := LockDir(dir); lerr == nil {
			l.Unlock()
			c.lockFree = true
		}
		got <- c
		return err
	}
}

// checkHandover checks that the exec c was handed the listening socket,
// and no other descriptor, and that the old image served nothing on the
// connection made meanwhile.
func checkHandover(t *testing.T, c execCall) {
	t.Helper()
	if !canHandOver {
		return
	}
	if c.listenFD < 0 || !c.forUs {
		t.Errorf("the exec's environment lacks %s and %s=%d: %q", envListenFD, envListenPID, os.Getpid(), c.env)
	}
	if !c.inheritable {
		t.Errorf("the handed-over descriptor %d is not open, or close-on-exec: the new image would not have it", c.listenFD)
	}
	if len(c.leaked) > 0 {
		t.Errorf("descriptors %v would leak into the new image (not close-on-exec)", c.leaked)
	}
	if os.Getenv(envListenFD) != "" {
		t.Errorf("%s is set in this process's own environment: children would inherit it", envListenFD)
	}
	if c.pending == nil {
		t.Error("a connection made during the exec was refused: the socket must keep listening")
	}
	if c.answered {
		t.Error("the old image answered a request during the exec: its http.Server still served")
	}
}

// readPending reads the answer to the request fakeExec sent on c.pending.
func readPending(t *testing.T, c execCall) {
	t.Helper()
	if c.pending == nil {
		return
	}
	c.pending.SetReadDeadline(time.Now().Add(15 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c.pending), nil)
	if err != nil {
		t.Errorf("the request sent during the exec got no answer: %v", err)
		return
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("the request sent during the exec: %s, want 200", res.Status)
	}
}

func noPending(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(dir, backup.WorkDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the restore's work folder is still there (%v)", err)
	}
}

// TestRestoreExecFails: a restore whose exec fails puts the old data back
// and serves it again, on the same socket (the connection made during the
// exec gets its answer), and says why in its log; the kept descriptor does
// not leak.
func TestRestoreExecFails(t *testing.T) {
	// Not parallel: it lists the inheritable descriptors of the whole
	// process, and a parallel restore (TestRestoreFromS3) makes one.
	dir := t.TempDir()
	var log logBuffer
	calls := make(chan execCall, 1)
	var ts *testServer
	ts = startServer(t, dir, func(c *Config) {
		c.Logger = log.logger()
		c.Exec = fakeExec(t, dir, func() string { return strings.TrimPrefix(ts.base, "http://") }, calls, errors.New("exec format error"))
	}, nil)
	token := ts.login(t)
	makeArchive(t, dir, "r.zip", "Restored", nil)
	before := inheritableFDs()

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := restoreKey(ctx, ts.Server, "r.zip")
	if err == nil || !strings.Contains(err.Error(), "exec format error") {
		t.Fatalf("Restore with a failing exec = %v, want the exec's error", err)
	}
	c := <-calls
	if exe, _ := os.Executable(); c.path != exe || !slices.Equal(c.argv, os.Args) {
		t.Errorf("exec(%q, %q), want exec(%q, %q): the same executable and command line", c.path, c.argv, exe, os.Args)
	}
	checkHandover(t, c)
	if c.lockFree {
		t.Error("the data dir was unlocked before the exec: another process could have taken it")
	}
	readPending(t, c)
	if c.listenFD >= 0 && inheritable(c.listenFD) {
		t.Errorf("the kept descriptor %d is still inheritable after the failed exec", c.listenFD)
	}
	if before != nil {
		for fd := range inheritableFDs() {
			if !before[fd] {
				t.Errorf("descriptor %d is inheritable after the failed exec: the kept socket leaked", fd)
			}
		}
	}
	ts.client.CloseIdleConnections()
	if got := ts.appName(t, token); got != "Acme" {
		t.Errorf("appName = %q after the failed exec, want the old Acme", got)
	}
	noPending(t, dir)
	for _, want := range []string{"level=INFO msg=\"restore: extracted\" key=r.zip", "level=ERROR msg=\"restore: re-exec failed; rolling back to the old data\"", "restore: serving the old data again"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if err := ts.stop(); err != nil {
		t.Errorf("stop after the failed restore: %v", err)
	}
}

// TestRestoreExecSucceeds: the exec (simulated: Run again in this process
// on the same dir, with the environment the exec was given) adopts the
// socket, so it serves on the same address, the connection made during
// the exec included; it serves the restored data, and the old data is
// deleted only once it serves.
func TestRestoreExecSucceeds(t *testing.T) {
	for _, tt := range []struct {
		name    string
		journal []byte // the archive's settings journal; nil = a good one
		want    string // the appName served after the restart
		wantLog string
	}{
		{"restored data opens", nil, "Restored", "restore: complete, serving the restored data"},
		{"restored data does not open", []byte("not a journal, though the manifest's hash matches"), "Acme", "level=ERROR msg=\"restore: the restored data does not open; rolling back to the old data\""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			calls := make(chan execCall, 1)
			var ts *testServer
			ts = startServer(t, dir, func(c *Config) {
				c.Exec = fakeExec(t, dir, func() string { return strings.TrimPrefix(ts.base, "http://") }, calls, nil)
			}, nil)
			makeArchive(t, dir, "r.zip", "Restored", tt.journal)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if err := restoreKey(ctx, ts.Server, "r.zip"); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			c := <-calls
			checkHandover(t, c)
			// The "old image" ends: Run returns without an error.
			if err := ts.stop(); err != nil {
				t.Fatalf("Run after the exec: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, backup.WorkDir, "old", "settings.journal")); err != nil {
				t.Fatalf("the old data is not kept until the restored data serves: %v", err)
			}

			// The "new image", with the exec's environment.
			for _, k := range []string{envListenFD, envListenPID} {
				if v, ok := envValue(c.env, k); ok {
					t.Setenv(k, v)
				}
			}
			var log logBuffer
			var oldKept error
			ts2 := startServer(t, dir, func(c *Config) {
				c.Logger = log.logger()
				c.OnReady = func(Ready) {
					_, oldKept = os.Stat(filepath.Join(dir, backup.WorkDir, "old", "settings.journal"))
				}
			}, nil)
			if canHandOver {
				if ts2.base != ts.base {
					t.Errorf("the new image serves on %s, want the same address %s", ts2.base, ts.base)
				}
				for _, k := range []string{envListenFD, envListenPID} {
					if v, ok := os.LookupEnv(k); ok {
						t.Errorf("%s=%s is still in the environment after the start", k, v)
					}
				}
				if inheritable(c.listenFD) {
					t.Errorf("the inherited descriptor %d is still open and inheritable after the start", c.listenFD)
				}
				readPending(t, c)
			}
			if tt.want == "Restored" && oldKept != nil {
				t.Errorf("the old data was gone before the restored data served: %v", oldKept)
			}
			token := ts2.login(t)
			if got := ts2.appName(t, token); got != tt.want {
				t.Errorf("appName = %q after the restart, want %q", got, tt.want)
			}
			if tt.want == "Acme" {
				// The client got its 204 before the restart: the failure
				// is recorded where a superuser sees it.
				es := &eventsServer{testServer: ts2, stderr: &log, token: token, t: t}
				got := waitEvents(t, es, `level = 8 && message ~ "restore failed: the restored data did not open"`)
				if d, _ := got[0]["data"].(map[string]any); d["key"] != "r.zip" || d["err"] == nil {
					t.Errorf("the failed restore's event: %v, want data.key r.zip and data.err", got[0])
				}
				if !strings.Contains(log.String(), `level=ERROR msg="restore failed: the restored data did not open`) {
					t.Errorf("stderr lacks the failed restore:\n%s", log.String())
				}
			}
			if err := ts2.stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
			noPending(t, dir)
			if !strings.Contains(log.String(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, log.String())
			}
		})
	}
}

// envValue returns the value of key in env.
func envValue(env []string, key string) (string, bool) {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v, true
		}
	}
	return "", false
}

// TestRestoreExtractFails: an archive that cannot be extracted leaves the
// data as it was, served again; the lock stays the caller's.
func TestRestoreExtractFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := startServer(t, dir, func(c *Config) {
		c.Exec = func(string, []string, []string) error { t.Error("exec after a failed extraction"); return nil }
	}, nil)
	token := ts.login(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := restoreKey(ctx, ts.Server, "missing.zip"); !errors.Is(err, backup.ErrNotFound) {
		t.Fatalf("Restore of a missing archive = %v, want ErrNotFound", err)
	}
	if got := ts.appName(t, token); got != "Acme" {
		t.Errorf("appName = %q, want the old Acme", got)
	}
	noPending(t, dir)
}

// TestRestoreOffline: the CLI's restore on a stopped server's data dir.
func TestRestoreOffline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := Options{Dir: dir, BcryptCost: 4}
	st, err := Open(opts, true)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	makeArchive(t, dir, "good.zip", "Restored", nil)
	makeArchive(t, dir, "bad.zip", "", []byte("not a journal"))

	appName := func() string {
		st, err := Open(opts, false)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		return st.Settings.Get().Meta.AppName
	}
	if err := RestoreOffline(opts, "bad.zip"); err == nil || !strings.Contains(err.Error(), "does not open") {
		t.Errorf("RestoreOffline of data that does not open = %v", err)
	}
	if got := appName(); got != "Acme" {
		t.Errorf("appName = %q after a failed restore, want Acme", got)
	}
	if err := RestoreOffline(opts, "nope.zip"); !errors.Is(err, backup.ErrNotFound) {
		t.Errorf("RestoreOffline of a missing key = %v, want ErrNotFound", err)
	}
	if err := RestoreOffline(opts, "good.zip"); err != nil {
		t.Fatalf("RestoreOffline: %v", err)
	}
	if got := appName(); got != "Restored" {
		t.Errorf("appName = %q after the restore, want Restored", got)
	}
	noPending(t, dir)

	ts := startServer(t, dir, nil, nil)
	if err := RestoreOffline(opts, "good.zip"); err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), "API") {
		t.Errorf("RestoreOffline while a server runs = %v, want an in-use error pointing to the API", err)
	}
	ts.stop()
}

// TestGateStop: once a restore is about to re-exec, the requests held at
// the gate and any new one get the restarting 503 at once, without
// waiting for the hold; opening the gate again serves them.
func TestGateStop(t *testing.T) {
	t.Parallel()
	g := newGate(time.Hour) // a request that waited for the hold would hang the test
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	g.open(ok)
	if err := g.close(t.Context()); err != nil {
		t.Fatal(err)
	}
	serve := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		g.ServeHTTP(w, httptest.NewRequest("GET", "/api/health", nil))
		return w
	}
	held := make(chan *httptest.ResponseRecorder, 1)
	go func() { held <- serve() }() // held at the gate, or arrives after stop
	g.stop()
	var first *httptest.ResponseRecorder
	select {
	case first = <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("a request held at the gate was not answered within 10 s of stop")
	}
	for _, w := range []*httptest.ResponseRecorder{first, serve()} {
		if !isUnavailable(w.Code, w.Body.Bytes(), msgRestarting) {
			t.Errorf("during the re-exec: %d %s, want the 503 %q", w.Code, w.Body, msgRestarting)
		}
	}
	g.open(ok)
	if w := serve(); w.Code != http.StatusOK {
		t.Errorf("after reopening: %d %s, want 200", w.Code, w.Body)
	}
}

// TestStartRecovers: Run and Open finish what a restore left in the data
// dir before they open anything: an extraction a crash interrupted is
// discarded (the old data opens), a swap pending confirmation opens and is
// committed.
func TestStartRecovers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		swap  bool   // Swap after extracting
		want  string // appName after the start
		start func(t *testing.T, dir string) string
	}{
		{"Run, interrupted extraction", false, "Acme", runAppName},
		{"Run, swap pending", true, "Restored", runAppName},
		{"Open, interrupted extraction", false, "Acme", openAppName},
		{"Open, swap pending", true, "Restored", openAppName},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := Open(Options{Dir: dir, BcryptCost: 4}, true)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			makeArchive(t, dir, "r.zip", "Restored", nil)
			d, err := backup.OpenDir(filepath.Join(dir, "backups"))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			newDir, err := backup.Prepare(dir, "r.zip")
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Extract("r.zip", newDir, backup.Limits{}); err != nil {
				t.Fatal(err)
			}
			if tt.swap {
				if err := backup.Swap(dir); err != nil {
					t.Fatal(err)
				}
			}
			if got := tt.start(t, dir); got != tt.want {
				t.Errorf("appName = %q, want %q", got, tt.want)
			}
			noPending(t, dir)
		})
	}
}

func runAppName(t *testing.T, dir string) string {
	ts := startServer(t, dir, nil, nil)
	defer ts.stop()
	return ts.appName(t, ts.login(t))
}

func openAppName(t *testing.T, dir string) string {
	st, err := Open(Options{Dir: dir, BcryptCost: 4}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return st.Settings.Get().Meta.AppName
}

// restoreKey fetches the archive key from the storage in force and
// restores it, as the restore route does after its checks.
func restoreKey(ctx context.Context, s *Server, key string) error {
	a, err := s.storage().st.Fetch(ctx, key)
	if err != nil {
		return err
	}
	return backups{s}.Restore(ctx, a)
}
