package api

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/logstore"
	"strongbox/logstore/journal"
	"strongbox/logstore/journal/journaltest"
)

// newFaultyEnv is newEnv with the stores on a journaltest.FS: one disk
// that tests can fill, break and free.
func newFaultyEnv(t *testing.T) (*env, *journaltest.FS, string) {
	t.Helper()
	fsys := journaltest.New()
	e := newEnvOn(t, Config{}, HTTPConfig{}, fsys)
	return e, fsys, filepath.Join(e.dir, "auth.journal")
}

// wantBody asserts a response's status and exact body.
func wantBody(t *testing.T, res *response, status int, body string) {
	t.Helper()
	if got := strings.TrimSuffix(string(res.Body), "\n"); res.Status != status || got != body {
		t.Errorf("got %d %s\nwant %d %s", res.Status, got, status, body)
	}
}

// writeLog makes the log store try a write, as the next request would.
func writeLog(e *env) error {
	e.logs.Add(logstore.Entry{Message: "probe", Level: 0})
	return e.logs.Flush()
}

// TestStorageFull fills the disk: writes answer 507 with a message that
// names no path, change nothing, and health answers 503 naming the stores;
// once space is freed everything works again without a restart, and the
// journal holds exactly the acknowledged changes.
func TestStorageFull(t *testing.T) {
	t.Parallel()
	e, fsys, authPath := newFaultyEnv(t)
	const healthy = `{"message":"API is healthy.","code":200,"data":{}}`
	wantBody(t, e.do("GET", "/api/health", "", nil), 200, healthy)
	before := e.signUp("before@example.com", "password123")

	fsys.SetFree(0)
	res := e.do("POST", "/api/collections/users/records", "", map[string]string{
		"email": "refused@example.com", "password": "password123", "passwordConfirm": "password123"})
	wantError(t, res, 507, "Storage is full: the change was not saved.")
	res = e.do("PATCH", "/api/collections/users/records/"+before, e.su, map[string]string{"name": "changed"})
	wantError(t, res, 507, "Storage is full: the change was not saved.")
	if got := e.do("GET", "/api/collections/users/records/"+before, e.su, nil).JSON(t)["name"]; got != "" {
		t.Errorf("name = %q after a refused update, want empty", got)
	}
	// The request log's writer runs in the background: make it try now, so
	// that what health reports does not depend on timing.
	if err := writeLog(e); err == nil {
		t.Fatal("log write on a full disk succeeded")
	}
	wantBody(t, e.do("GET", "/api/health", "", nil), 503,
		`{"message":"API is degraded: storage is full.","code":503,"data":{"degraded":["auth","logs"]}}`)
	wantBody(t, e.do("GET", "/api/health", e.su, nil), 503,
		`{"message":"API is degraded: storage is full.","code":503,"data":{"canBackup":true,"degraded":["auth","logs"],"possibleProxyHeader":"","realIP":"127.0.0.1"}}`)

	fsys.SetFree(-1)
	e.clock.Add(time.Second) // the auth store probes the disk at most once a second
	if err := writeLog(e); err != nil {
		t.Fatalf("log write after space was freed: %v", err)
	}
	wantBody(t, e.do("GET", "/api/health", "", nil), 200, healthy)
	after := e.signUp("after@example.com", "password123")

	// Only what was acknowledged is in the journal.
	hasher, _ := authn.NewHasher(bcrypt.MinCost, 0)
	e.auth.Close()
	s, err := authn.Open(authPath, authn.Options{Hasher: hasher})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	users, _ := s.Collection("users")
	for id, want := range map[string]bool{before: true, after: true} {
		if _, ok := s.Record(users, id); ok != want {
			t.Errorf("record %s present = %v after reopen, want %v", id, ok, want)
		}
	}
	if _, ok := s.FindByEmail(users, "refused@example.com"); ok {
		t.Errorf("the refused sign-up is in the journal")
	}
	if r, _ := s.Record(users, before); r.Fields["name"] != "" {
		t.Errorf("the refused update is in the journal: name = %v", r.Fields["name"])
	}
}

// TestStorageFailing breaks the disk (fsync fails with EIO): writes answer
// 503 "Storage is failing", health says so, and both recover once the disk
// works again.
func TestStorageFailing(t *testing.T) {
	t.Parallel()
	e, fsys, _ := newFaultyEnv(t)
	fsys.FailSyncs(syscall.EIO)
	res := e.do("POST", "/api/collections/users/records", "", map[string]string{
		"email": "a@example.com", "password": "password123", "passwordConfirm": "password123"})
	wantError(t, res, 503, "Storage is failing: the change was not saved.")
	if err := writeLog(e); err == nil {
		t.Fatal("log write on a failing disk succeeded")
	}
	wantBody(t, e.do("GET", "/api/health", "", nil), 503,
		`{"message":"API is degraded: storage is failing.","code":503,"data":{"degraded":["auth","logs"]}}`)
	fsys.FailSyncs(nil)
	e.signUp("a@example.com", "password123")
	if err := writeLog(e); err != nil {
		t.Fatal(err)
	}
	wantBody(t, e.do("GET", "/api/health", "", nil), 200, `{"message":"API is healthy.","code":200,"data":{}}`)
}

// TestSettingsStorageFull: a settings change on a full disk answers 507,
// changes nothing (the stored settings, nor what the server applies),
// health names the settings store, and once space is freed it recovers
// without a restart.
func TestSettingsStorageFull(t *testing.T) {
	t.Parallel()
	e, fsys, _ := newFaultyEnv(t)
	before := e.do("GET", "/api/settings", e.su, nil)
	const limit = `{"meta":{"appName":"Refused"},"rateLimits":{"enabled":true,"rules":[{"label":"/api/health","maxRequests":1,"duration":10}]}}`

	fsys.SetFree(0)
	wantError(t, e.do("PATCH", "/api/settings", e.su, limit), 507, "Storage is full: the change was not saved.")
	if after := e.do("GET", "/api/settings", e.su, nil); string(after.Body) != string(before.Body) {
		t.Errorf("a refused change is visible: %s\nwant %s", after.Body, before.Body)
	}
	for range 3 {
		if res := e.do("GET", "/api/health?m=unlimited", "", nil); res.Status != 503 {
			t.Fatalf("GET /api/health = %d %s, want 503 (degraded, not rate limited)", res.Status, res.Body)
		}
	}
	wantBody(t, e.do("GET", "/api/health", "", nil), 503,
		`{"message":"API is degraded: storage is full.","code":503,"data":{"degraded":["settings"]}}`)

	fsys.SetFree(-1)
	e.clock.Add(time.Second) // the settings store probes the disk at most once a second
	wantBody(t, e.do("GET", "/api/health", "", nil), 200, `{"message":"API is healthy.","code":200,"data":{}}`)
	if res := e.do("PATCH", "/api/settings", e.su, limit); res.Status != 200 {
		t.Fatalf("PATCH after space was freed: %d %s", res.Status, res.Body)
	}
	wantBody(t, e.do("GET", "/api/health", "", nil), 200, `{"message":"API is healthy.","code":200,"data":{}}`)
	if res := e.do("GET", "/api/health", "", nil); res.Status != 429 {
		t.Errorf("GET /api/health once the limit is saved = %d %s, want 429", res.Status, res.Body)
	}
}

// TestStorageFullLogsOnce: a flood of writes refused for a full disk makes
// one log line with their count, not one line each.
func TestStorageFullLogsOnce(t *testing.T) {
	t.Parallel()
	var log syncLog
	fsys := journaltest.New()
	e := newEnvOn(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}, HTTPConfig{}, fsys)
	fsys.SetFree(0)
	for i := range 20 {
		res := e.do("POST", "/api/collections/users/records", "", map[string]string{
			"email": fmt.Sprintf("u%d@example.com", i), "password": "password123", "passwordConfirm": "password123"})
		wantError(t, res, 507, "Storage is full: the change was not saved.")
	}
	if n := strings.Count(log.String(), "requests refused: storage cannot save changes"); n != 1 {
		t.Errorf("%d log lines about refused writes, want 1:\n%s", n, log.String())
	}
	if strings.Contains(log.String(), "request failed") {
		t.Errorf("a refused write was logged as a failed request:\n%s", log.String())
	}
}

// TestStorageLogsDegradedAndRecovered: the server's log says once when
// storage degrades (naming the stores) and once when it recovers.
func TestStorageLogsDegradedAndRecovered(t *testing.T) {
	t.Parallel()
	var log syncLog
	// Only the auth store's disk fills: the log store commits its entries
	// every 200 ms of real time, and on a busy machine a commit would fall
	// in the full window and be named too.
	fsys := authOnly{auth: journaltest.New(), rest: journaltest.New()}
	e := newEnvOn(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}, HTTPConfig{}, fsys)
	e.do("GET", "/api/health", "", nil)
	fsys.auth.SetFree(0)
	for range 3 {
		e.do("POST", "/api/collections/users/records", "", map[string]string{
			"email": "u@example.com", "password": "password123", "passwordConfirm": "password123"})
		e.do("GET", "/api/health", "", nil)
	}
	fsys.auth.SetFree(-1)
	e.clock.Add(time.Second) // the auth store probes the disk at most once a second
	for range 2 {
		e.do("GET", "/api/health", "", nil)
	}
	out := log.String()
	for msg, n := range map[string]int{
		`level=WARN msg="storage degraded: stores cannot save changes" stores=[auth] full=true`: 1,
		`level=INFO msg="storage recovered: every store saves changes again" was="auth (full)"`: 1,
	} {
		if got := strings.Count(out, msg); got != n {
			t.Errorf("%d lines %s, want %d:\n%s", got, msg, n, out)
		}
	}
}

// authOnly is a journal.FS that sends the auth store's journal (and its
// temporary files) to auth and every other file to rest.
type authOnly struct{ auth, rest *journaltest.FS }

func (f authOnly) of(name string) journal.FS {
	if strings.HasPrefix(filepath.Base(name), "auth.journal") {
		return f.auth
	}
	return f.rest
}

func (f authOnly) OpenFile(name string, flag int, perm os.FileMode) (journal.Handle, error) {
	return f.of(name).OpenFile(name, flag, perm)
}

func (f authOnly) Rename(oldpath, newpath string) error {
	return f.of(newpath).Rename(oldpath, newpath)
}
func (f authOnly) Remove(name string) error { return f.of(name).Remove(name) }
func (f authOnly) SyncDir(dir string) error { return f.rest.SyncDir(dir) }

// noNewFiles is a journaltest.FS that, while full is set, cannot create a
// file (ENOSPC) but lets existing files grow: a disk full but for the
// slack in the blocks its files hold, where the settings journal's next
// frame fits but a new log segment does not.
type noNewFiles struct {
	*journaltest.FS
	full atomic.Bool
}

func (f *noNewFiles) OpenFile(name string, flag int, perm os.FileMode) (journal.Handle, error) {
	if f.full.Load() && flag&os.O_CREATE != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	return f.FS.OpenFile(name, flag, perm)
}

// logCount returns the totalItems of GET /api/logs.
func logCount(t *testing.T, e *env) int {
	t.Helper()
	res := e.do("GET", "/api/logs", e.su, nil)
	if res.Status != 200 {
		t.Fatalf("GET /api/logs = %d %s", res.Status, res.Body)
	}
	n, _ := res.JSON(t)["totalItems"].(float64)
	return int(n)
}

// segmentsWithEntries returns the log segment files in dir holding more
// than a journal header.
func segmentsWithEntries(t *testing.T, dir string) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "logs", "*.seg"))
	var out []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Size() > journal.HeaderSize {
			out = append(out, filepath.Base(p))
		}
	}
	return out
}

// TestLogsOffOnFullDisk: PATCH /api/settings {"logs":{"maxDays":0}} on a
// full disk deletes the stored logs (deleting needs no space) and answers
// 200 with the change saved and in effect: on a disk with room for the
// settings' frame but not for a new segment, and on one with no free byte
// (the logs are deleted first to make room for the save). Once the disk
// has room, health and logging recover without a restart.
func TestLogsOffOnFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fill  func(fsys *noNewFiles)
		free  func(fsys *noNewFiles)
		trims int // "logs … deleted to make room" events
	}{
		{"no room for a new file", func(f *noNewFiles) { f.full.Store(true) }, func(f *noNewFiles) { f.full.Store(false) }, 0},
		{"no free byte", func(f *noNewFiles) { f.SetFree(0) }, func(f *noNewFiles) { f.SetFree(-1) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log syncLog
			fsys := &noNewFiles{FS: journaltest.New()}
			e := newEnvOn(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}, HTTPConfig{}, fsys)
			for range 20 {
				e.do("GET", "/api/health", "", nil)
			}
			if err := e.logs.Flush(); err != nil {
				t.Fatal(err)
			}
			if n := logCount(t, e); n < 20 {
				t.Fatalf("%d logs stored, want at least 20", n)
			}

			tc.fill(fsys)
			res := e.do("PATCH", "/api/settings", e.su, `{"logs":{"maxDays":0}}`)
			if res.Status != 200 {
				t.Fatalf("PATCH maxDays 0 on a full disk = %d %s, want 200", res.Status, res.Body)
			}
			if got := e.settings.Get().Logs.MaxDays; got != 0 {
				t.Errorf("stored maxDays = %d, want 0", got)
			}
			if n := logCount(t, e); n != 0 {
				t.Errorf("%d logs listed after maxDays 0, want none", n)
			}
			if segs := segmentsWithEntries(t, e.dir); len(segs) > 0 {
				t.Errorf("segments with entries left on disk: %v", segs)
			}
			if n := strings.Count(log.String(), "logs past the new retention deleted to make room"); n != tc.trims {
				t.Errorf("%d events about deleting logs to make room, want %d:\n%s", n, tc.trims, log.String())
			}

			tc.free(fsys)
			e.clock.Add(time.Second) // the stores probe the disk at most once a second
			wantBody(t, e.do("GET", "/api/health", "", nil), 200, `{"message":"API is healthy.","code":200,"data":{}}`)
			if res := e.do("PATCH", "/api/settings", e.su, `{"logs":{"maxDays":5}}`); res.Status != 200 {
				t.Fatalf("PATCH maxDays 5 = %d %s", res.Status, res.Body)
			}
			e.do("GET", "/api/health", "", nil)
			if err := e.logs.Flush(); err != nil {
				t.Fatalf("logging once the disk has room: %v", err)
			}
			if n := logCount(t, e); n == 0 {
				t.Error("no log stored once the disk has room again")
			}
		})
	}
}
