package app

import (
	"encoding/json"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"strongbox/logstore/journal/journaltest"
)

// fdClock is a settable clock for the stores.
type fdClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fdClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fdClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// logTotal returns the totalItems of GET /api/logs, once the log store
// has written what it was given.
func logTotal(t *testing.T, ts *testServer, token string) int {
	t.Helper()
	ts.stores.Logs.Flush()
	code, body, err := ts.do(t, "GET", "/api/logs", token, "")
	if err != nil || code != 200 {
		t.Fatalf("GET /api/logs = %d %s %v, want 200", code, body, err)
	}
	var v struct{ TotalItems int }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET /api/logs: %v in %s", err, body)
	}
	return v.TotalItems
}

// TestStartOnFullDisk restarts a server on a disk that refuses every
// write (deleting still works) when its request logs are past retention,
// so that opening the log store deletes its active segment and has no
// room for a new one. The server starts and serves: /api/health answers
// 503 naming the log store, a superuser logs in and reads the logs and the
// settings, the server's log says that log entries are lost. Once the
// disk takes writes again, health is 200 and requests are logged again,
// without a restart.
func TestStartOnFullDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fsys := journaltest.New()
	clk := &fdClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	stderr := &logBuffer{}
	edit := func(c *Config) {
		c.Logger = stderr.logger()
		c.Now = clk.Now
		c.fs = fsys
	}
	ts := startServer(t, dir, edit, nil)
	token := ts.login(t)
	for range 5 {
		ts.do(t, "GET", "/api/health", "", "")
	}
	if n := logTotal(t, ts, token); n < 5 {
		t.Fatalf("%d logs before the restart, want at least 5", n)
	}
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}

	clk.Add(10 * 24 * time.Hour) // past the default retention of 5 days
	fsys.FailWrites(syscall.ENOSPC)
	ts = startServer(t, dir, edit, nil)
	ts.stores.Logs.Flush() // the server's start event, lost
	code, body, err := ts.do(t, "GET", "/api/health", "", "")
	if want := `{"message":"API is degraded: storage is full.","code":503,"data":{"degraded":["logs"]}}`; err != nil || code != 503 || strings.TrimSpace(string(body)) != want {
		t.Errorf("GET /api/health on a full disk = %d %s %v, want 503 %s", code, body, err, want)
	}
	token = ts.login(t)
	if n := logTotal(t, ts, token); n != 0 {
		t.Errorf("%d logs listed, want none (past retention)", n)
	}
	if name := ts.appName(t, token); name == "" {
		t.Error("GET /api/settings on a full disk: no appName")
	}
	if out := stderr.String(); !strings.Contains(out, "new entries are lost until there is room") {
		t.Errorf("the server's log does not say that log entries are lost:\n%s", out)
	}

	fsys.FailWrites(nil)
	clk.Add(time.Second) // the stores probe the disk at most once a second
	code, body, err = ts.do(t, "GET", "/api/health", "", "")
	if want := `{"message":"API is healthy.","code":200,"data":{}}`; err != nil || code != 200 || strings.TrimSpace(string(body)) != want {
		t.Errorf("GET /api/health once the disk takes writes = %d %s %v, want 200 %s", code, body, err, want)
	}
	ts.do(t, "GET", "/api/health", "", "")
	if n := logTotal(t, ts, token); n == 0 {
		t.Error("no request logged once the disk takes writes again")
	}
}
