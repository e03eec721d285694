package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/backup"
	"strongbox/backup/s3"
	"strongbox/httpapi/settings"
)

// hostileS3 is a loopback S3 server whose listing never ends, in one of
// three ways (mode): every page truncated with a fresh token ("fresh"),
// the same token again ("repeat"), or an answer trickled a byte every
// 20 ms, which no silence timeout notices ("trickle"). Every other call
// succeeds: a HEAD finds nothing, a PUT or a DELETE is done, so that a
// create works and only the listing is hostile. Its handlers end when
// the test does, so that closing it never waits.
type hostileS3 struct {
	srv   *httptest.Server
	mode  atomic.Value // string
	pages atomic.Int64 // listing requests
	stop  chan struct{}
}

func startHostileS3(t *testing.T, mode string) *hostileS3 {
	t.Helper()
	h := &hostileS3{stop: make(chan struct{})}
	h.mode.Store(mode)
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	var once sync.Once
	t.Cleanup(h.srv.Close)
	t.Cleanup(func() { once.Do(func() { close(h.stop) }) }) // runs first
	return h
}

func (h *hostileS3) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodHead:
		w.WriteHeader(http.StatusNotFound)
		return
	case r.Method == http.MethodPut:
		io.Copy(io.Discard, r.Body)
		w.Header().Set("ETag", `"e"`)
		return
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	case r.Method != http.MethodGet || r.URL.Query().Get("list-type") != "2":
		w.WriteHeader(http.StatusNotImplemented)
		return
	}
	n := h.pages.Add(1)
	switch h.mode.Load().(string) {
	case "fresh":
		fmt.Fprintf(w, "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t%d</NextContinuationToken></ListBucketResult>", n)
	case "repeat":
		io.WriteString(w, "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>same</NextContinuationToken></ListBucketResult>")
	case "trickle":
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte{' '}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-h.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// hostileSecret is the secret of the hostile bucket, which no answer or
// log line may show.
const hostileSecret = "hostile-secret-0123456789"

// hostileSettings enables backups.s3 on h.
func (h *hostileS3) settings() string {
	return fmt.Sprintf(`{"backups":{"s3":{"enabled":true,"bucket":"b-1","region":"us-east-1","endpoint":%q,"accessKey":"AK","secret":%q,"forcePathStyle":true}}}`,
		h.srv.URL, hostileSecret)
}

// shortBucket is an Options.ObjectStore: the S3 client of the settings
// with a call deadline of 300 ms (CallTimeout) and a silence timeout of
// 5 s, which a trickle never reaches.
func shortBucket(c settings.S3) (backup.ObjectStore, error) {
	cl, err := s3.New(s3.Config{Endpoint: c.Endpoint, Region: c.Region, Bucket: c.Bucket, AccessKey: c.AccessKey,
		Secret: c.Secret, ForcePathStyle: c.ForcePathStyle, Timeout: 5 * time.Second, CallTimeout: 300 * time.Millisecond, MaxRetries: 1})
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// runWithin runs f and reports whether it returned within d; if not, it
// is left running (the test fails, and its cleanup ends the server).
func runWithin(d time.Duration, f func()) (time.Duration, bool) {
	start := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return time.Since(start), true
	case <-time.After(d):
		return d, false
	}
}

// TestS3HostileListing: against a bucket whose listing never ends, GET
// /api/backups answers §7's "Failed to load backups filesystem." in
// bounded time, never the secret; an automatic backup's pruning gives up
// as fast and frees the backup lock, so that POST /api/backups is not
// refused with "Try again later" afterwards.
func TestS3HostileListing(t *testing.T) {
	t.Parallel()
	h := startHostileS3(t, "fresh")
	var logs bytes.Buffer
	var logMu sync.Mutex
	ts := startServer(t, t.TempDir(), func(c *Config) {
		c.ObjectStore = shortBucket
		c.Logger = slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))
	}, nil)
	// Past this the old server is still listing: fail, not hang.
	ts.client.Timeout = 5 * time.Second
	token := ts.login(t)
	if code, body, err := ts.do(t, "PATCH", "/api/settings", token, h.settings()); err != nil || code != 200 {
		t.Fatalf("enable S3: %d %s %v", code, body, err)
	}
	const listFailed = `{"data":{},"message":"Failed to load backups filesystem.","status":400}` + "\n"
	for _, mode := range []string{"fresh", "repeat", "trickle"} {
		t.Run(mode, func(t *testing.T) {
			h.mode.Store(mode)
			var code int
			var body []byte
			var err error
			took, _ := runWithin(10*time.Second, func() { code, body, err = ts.do(t, "GET", "/api/backups", token, "") })
			if err != nil || code != 400 || string(body) != listFailed {
				t.Fatalf("list: %d %s %v after %v, want 400 %s", code, body, err, took, listFailed)
			}
			if took > 2*time.Second {
				t.Errorf("list answered after %v", took)
			}

			// An automatic backup: the create succeeds (a PUT), the
			// pruning's listing fails, and the lock is free again.
			ts.auto.reload(settings.Settings{Backups: settings.Backups{Cron: "0 0 1 1 *", CronMaxKeep: 1}})
			took, ok := runWithin(3*time.Second, func() { ts.auto.run(time.Now()) })
			if !ok {
				t.Fatalf("the automatic backup still runs after %v", took)
			}
			if took > 2*time.Second {
				t.Errorf("the automatic backup took %v", took)
			}
			if kind, key, held := ts.block.Held(); held {
				t.Errorf("the backup lock is held (%s %s) after the automatic backup", kind, key)
			}
			logMu.Lock()
			log := logs.String()
			logMu.Unlock()
			if !strings.Contains(log, "auto backup: prune: list the backups") {
				t.Errorf("the log does not say the pruning failed:\n%s", log)
			}
			if strings.Contains(log, hostileSecret) {
				t.Errorf("the log shows the secret")
			}

			code, body, err = ts.do(t, "POST", "/api/backups", token, fmt.Sprintf(`{"name":"after-%s.zip"}`, mode))
			if err != nil || code != 204 {
				t.Errorf("create after the automatic backup: %d %s %v, want 204", code, body, err)
			}
		})
	}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestAutoBackupPruneDeadline: the pruning has a deadline of its own
// (pruneTimeout), whatever the bucket's client allows (here its defaults:
// 2 minutes a call, which a trickle reaches): the run ends and frees the
// lock when it passes.
func TestAutoBackupPruneDeadline(t *testing.T) {
	t.Parallel()
	h := startHostileS3(t, "trickle")
	cl, err := s3.New(s3.Config{Endpoint: h.srv.URL, Region: "us-east-1", Bucket: "b-1", AccessKey: "AK",
		Secret: hostileSecret, ForcePathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	d := openBackupDir(t, t.TempDir())
	st := backup.NewS3Storage(cl, d)
	var lock backup.Lock
	var logs bytes.Buffer
	var logMu sync.Mutex
	fc := &fakeCreate{d: d, st: st}
	a := newSchedule(slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil)), fixedNow, func() backup.Storage { return st }, &lock, fc.create)
	a.pruneTimeout = 300 * time.Millisecond
	a.reload(settings.Settings{Backups: settings.Backups{Cron: "* * * * *", CronMaxKeep: 1}})
	took, ok := runWithin(3*time.Second, func() { a.run(captureTime) })
	if !ok || took > 2*time.Second {
		t.Fatalf("the run took %v (ended: %v)", took, ok)
	}
	if _, _, held := lock.Held(); held {
		t.Error("the backup lock is held after the run")
	}
	if release, ok := lock.TryLock(backup.KindCreate, "next.zip"); !ok {
		t.Error("the lock cannot be taken after the run")
	} else {
		release()
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logs.String(), "auto backup: prune: list the backups") || !strings.Contains(logs.String(), context.DeadlineExceeded.Error()) {
		t.Errorf("the log does not say the pruning ran out of time:\n%s", logs.String())
	}
}
