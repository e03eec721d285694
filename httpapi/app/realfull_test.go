//go:build linux

package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"strongbox/logstore/journal/journaltest"
)

// fill writes a file in dir until the file system is full, and returns
// its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for range 1 << 20 { // bounded: far more than the file system holds
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return p
		}
	}
	t.Fatal("the disk did not fill")
	return ""
}

// TestRealFullDiskServer runs a server on a real 2 MiB tmpfs, mounted in a
// user and mount namespace (unshare -rm, no root needed; skipped where
// that is not allowed), as logstore/journal's TestRealFullDisk does. With
// the disk full: PATCH maxDays 0 answers 200 and the logs are gone; a
// restart serves /api/health (503 once the log store has failed a write)
// and GET /api/logs; once the disk is freed, health is 200 at once and
// requests are logged again, without a restart.
func TestRealFullDiskServer(t *testing.T) {
	t.Parallel()
	mnt := journaltest.SmallDisk(t, "2m", "STRONGBOX_FULLDISK")
	if mnt == "" {
		return
	}

	dir := filepath.Join(mnt, "data")
	clk := &fdClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	stderr := &logBuffer{}
	edit := func(c *Config) {
		c.Logger = stderr.logger()
		c.Now = clk.Now
	}
	ts := startServer(t, dir, edit, nil)
	token := ts.login(t)
	for range 200 {
		ts.do(t, "GET", "/api/health?padding="+strings.Repeat("x", 200), "", "")
	}
	if n := logTotal(t, ts, token); n < 200 {
		t.Fatalf("%d logs, want at least 200", n)
	}

	filler := fill(t, mnt)
	start := time.Now()
	code, body, err := ts.do(t, "PATCH", "/api/settings", token, `{"logs":{"maxDays":0}}`)
	took := time.Since(start)
	if err != nil || code != 200 {
		t.Fatalf("PATCH maxDays 0 on a full disk = %d %s %v, want 200", code, body, err)
	}
	t.Logf("PATCH maxDays 0 on the full disk: %v", took)
	if n := logTotal(t, ts, token); n != 0 {
		t.Errorf("%d logs listed after maxDays 0, want none", n)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.seg"))
	for _, p := range segs {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 8 {
			t.Errorf("segment %s of %d bytes left", filepath.Base(p), fi.Size())
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := ts.do(t, "PATCH", "/api/settings", token, `{"logs":{"maxDays":5}}`); code != 200 {
		t.Fatalf("PATCH maxDays 5 = %d %s, want 200", code, body)
	}
	for range 50 {
		ts.do(t, "GET", "/api/health", "", "")
	}
	kept := logTotal(t, ts, token)
	if kept < 50 {
		t.Fatalf("%d logs, want at least 50", kept)
	}
	ts.stop()

	filler = fill(t, mnt)
	ts = startServer(t, dir, edit, nil)
	// The active segment's last page may take a few more entries.
	for i := 0; ts.stores.Logs.Flush() == nil; i++ {
		if i == 10000 {
			t.Fatal("the log store still writes on a full disk")
		}
		ts.do(t, "GET", "/api/health", "", "")
	}
	code, body, err = ts.do(t, "GET", "/api/health", "", "")
	if err != nil || code != 503 || !strings.Contains(string(body), "storage is full") {
		t.Errorf("GET /api/health on a full disk = %d %s %v, want 503 storage is full", code, body, err)
	}
	token = ts.login(t)
	if n := logTotal(t, ts, token); n < kept {
		t.Errorf("%d logs listed on the full disk, want at least %d", n, kept)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second) // the stores probe the disk at most once a second
	code, body, err = ts.do(t, "GET", "/api/health", "", "")
	if err != nil || code != 200 {
		t.Errorf("GET /api/health once the disk is freed = %d %s %v, want 200", code, body, err)
	}
	before := logTotal(t, ts, token)
	ts.do(t, "GET", "/api/health", "", "")
	if n := logTotal(t, ts, token); n <= before {
		t.Errorf("%d logs after a request, %d before: not logged once the disk is freed", n, before)
	}
	if t.Failed() {
		t.Logf("server log:\n%s", stderr.String())
	}
}
