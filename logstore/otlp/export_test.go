package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memSource is a log store in memory: records at positions 1 … n, the
// first `deleted` of them gone.
type memSource struct {
	mu      sync.Mutex
	n       int64
	deleted int64
	key     uint64
}

func (m *memSource) add(n int) { m.mu.Lock(); m.n += int64(n); m.mu.Unlock() }

func (m *memSource) read(after int64, n int) (Batch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := Batch{Last: after, Newest: m.n, Key: m.key}
	for seq := max(after+1, m.deleted+1); seq <= m.n && len(b.Records) < n; seq++ {
		b.Records = append(b.Records, Record{Time: time.Unix(seq, 0), Body: fmt.Sprint(seq)})
		b.Gap += seq - b.Last - 1
		b.Last = seq
	}
	return b, nil
}

// receiver is a fake OTLP receiver: it answers each request with the next
// status of answers (then 200), and keeps the bodies of those it took.
type receiver struct {
	mu      sync.Mutex
	answers []int
	got     []string // bodies of the records taken, in order
	headers []http.Header
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	zr, err := gzip.NewReader(r.Body)
	if err != nil || r.Header.Get("Content-Encoding") != "gzip" {
		http.Error(w, "want gzip", 415)
		return
	}
	raw, _ := io.ReadAll(zr)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.headers = append(rc.headers, r.Header.Clone())
	status := 200
	if len(rc.answers) > 0 {
		status, rc.answers = rc.answers[0], rc.answers[1:]
	}
	if status == 429 || status == 503 {
		w.Header().Set("Retry-After", "7")
	}
	if status != 200 {
		http.Error(w, "no", status)
		return
	}
	rl := sub(nil, raw, fRequestResourceLogs)[0]
	for _, lr := range sub(nil, sub(nil, rl, fResourceLogsScopeLogs)[0], fScopeLogsRecords) {
		rc.got = append(rc.got, string(sub(nil, sub(nil, lr, fRecordBody)[0], fAnyString)[0]))
	}
}

func (rc *receiver) bodies() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.got...)
}

// fakeClock records the waits asked for and returns at once (or when ctx
// ends).
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	time.Sleep(time.Millisecond) // let the test look
	return nil
}

func (c *fakeClock) retries(poll time.Duration) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, w := range c.waits {
		if w != poll {
			out = append(out, w)
		}
	}
	return out
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

const testPoll = 123 * time.Millisecond

// start runs an exporter of src to rc until the test ends.
func start(t *testing.T, src *memSource, rc *receiver, cursor string, clk *fakeClock, lb *logBuf) (*Exporter, func()) {
	t.Helper()
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	e := New(Options{
		Config: Config{Endpoint: srv.URL + "/v1/logs?k=secret", Protocol: ProtoProtobuf, Timeout: 5 * time.Second,
			Headers: [][2]string{{"Authorization", "Bearer topsecret"}}},
		Source: src.read, CursorPath: cursor, Batch: 10, Poll: testPoll,
		Logger: slog.New(slog.NewTextHandler(lb, nil)),
		Now:    clk.Now, Sleep: clk.Sleep, Jitter: func() float64 { return 0.5 },
		MinBackoff: time.Second, MaxBackoff: 8 * time.Second,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return e, stop
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func seqs(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

// TestExportRetries: 503 and 429 with Retry-After, 500 with the back-off
// (doubling, jittered, capped), a 400 skipping its batch, and everything
// else delivered in order, the cursor saved past each batch.
func TestExportRetries(t *testing.T) {
	src := &memSource{key: 7}
	src.add(35)
	rc := &receiver{answers: []int{500, 500, 500, 500, 500, 503, 429, 200, 400}}
	clk := &fakeClock{now: time.Unix(1000, 0)}
	cursor := filepath.Join(t.TempDir(), "export.cursor")
	lb := &logBuf{}
	e, stop := start(t, src, rc, cursor, clk, lb)
	waitUntil(t, "35 records through", func() bool { s := e.State(); return s.Exported+s.Failed == 35 })
	stop()
	want := append(seqs(1, 10), seqs(21, 35)...) // 11-20 refused with a 400
	if got := rc.bodies(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("received %v, want %v", got, want)
	}
	// 1 s, 2 s, 4 s, 8 s, 8 s (the cap), each 3/4 of it (the jitter's 0.5
	// of the random half), then the Retry-After of the 503 and the 429.
	wantWaits := []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second, 6 * time.Second, 6 * time.Second, 7 * time.Second, 7 * time.Second}
	if got := clk.retries(testPoll); fmt.Sprint(got) != fmt.Sprint(wantWaits) {
		t.Errorf("waits %v, want %v", got, wantWaits)
	}
	s := e.State()
	if s.Exported != 25 || s.Failed != 10 || s.Behind != 0 || s.LastSuccess.IsZero() || !strings.Contains(s.LastError, "400 Bad Request") {
		t.Errorf("state %+v", s)
	}
	if c, err := loadCursor(cursor); err != nil || c != (Cursor{Key: 7, Seq: 35}) {
		t.Errorf("cursor %+v, %v; want {7 35}", c, err)
	}
	for _, h := range rc.headers {
		if h.Get("Authorization") != "Bearer topsecret" || h.Get("Content-Type") != "application/x-protobuf" {
			t.Fatalf("request headers %v", h)
		}
	}
	for _, leak := range []string{"topsecret", "k=secret"} {
		if strings.Contains(lb.String(), leak) || strings.Contains(s.LastError, leak) || strings.Contains(s.Endpoint, leak) {
			t.Errorf("%q leaked: log %s; state %+v", leak, lb.String(), s)
		}
	}
	if !strings.Contains(lb.String(), "refused a batch: skipped") {
		t.Errorf("the 400 was not logged:\n%s", lb.String())
	}
}

// TestExportResumes: a second exporter over the cursor the first saved
// goes on where it stopped; entries deleted meanwhile are counted and
// logged once; another key starts over.
func TestExportResumes(t *testing.T) {
	src := &memSource{key: 7}
	src.add(20)
	rc := &receiver{}
	clk := &fakeClock{}
	cursor := filepath.Join(t.TempDir(), "export.cursor")
	e, stop := start(t, src, rc, cursor, clk, &logBuf{})
	waitUntil(t, "20 exported", func() bool { return e.State().Exported == 20 })
	stop()
	src.add(30)      // 21 … 50 stored while stopped
	src.deleted = 25 // and 21 … 25 deleted by retention
	lb := &logBuf{}
	e2, stop2 := start(t, src, rc, cursor, clk, lb)
	waitUntil(t, "25 more", func() bool { return e2.State().Exported == 25 })
	stop2()
	if got, want := rc.bodies(), append(seqs(1, 20), seqs(26, 50)...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("received %v, want %v", got, want)
	}
	if s := e2.State(); s.Lost != 5 || strings.Count(lb.String(), "deleted before they were exported") != 1 || !strings.Contains(lb.String(), "count=5") {
		t.Errorf("lost %d; log:\n%s", s.Lost, lb.String())
	}
	src.key = 8 // a new directory, sequence from 1
	src.n, src.deleted = 3, 0
	e3, stop3 := start(t, src, rc, cursor, clk, &logBuf{})
	waitUntil(t, "the new store's 3", func() bool { return e3.State().Exported == 3 })
	stop3()
	if got := rc.bodies(); fmt.Sprint(got[45:]) != fmt.Sprint(seqs(1, 3)) {
		t.Errorf("after a new key: %v", got[45:])
	}
}

// TestCursorCrashPoints: a save stopped at any step (as by a crash)
// leaves the old cursor or the new one, never a torn file; and a stale
// temporary file is ignored.
func TestCursorCrashPoints(t *testing.T) {
	for _, crashAt := range []string{"write", "sync", "rename", "syncdir", ""} {
		path := filepath.Join(t.TempDir(), "c")
		if err := saveCursor(path, Cursor{1, 10}); err != nil {
			t.Fatal(err)
		}
		cursorStep = func(s string) error {
			if s == crashAt {
				return errors.New("crash")
			}
			return nil
		}
		err := saveCursor(path, Cursor{1, 20})
		cursorStep = nil
		got, lerr := loadCursor(path)
		want := Cursor{1, 10}
		if crashAt == "syncdir" || crashAt == "" {
			want = Cursor{1, 20} // renamed: the new one (the dir's fsync makes it last)
		}
		if lerr != nil || got != want || (crashAt != "") != (err != nil) {
			t.Errorf("crash at %q: save %v; load %+v, %v; want %+v", crashAt, err, got, lerr, want)
		}
	}
	path := filepath.Join(t.TempDir(), "c")
	if c, err := loadCursor(path); err != nil || c != (Cursor{}) {
		t.Errorf("no cursor: %+v, %v", c, err)
	}
	for _, bad := range []string{"", "strongbox-otlp-cursor 1 0000000000000001 5", "strongbox-otlp-cursor 1 01 5\n", "strongbox-otlp-cursor 1 0000000000000001 -5\n", "x"} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, err := loadCursor(path); err == nil {
			t.Errorf("cursor %q accepted", bad)
		}
	}
}

// TestExportDeadline: a receiver that never answers costs one timeout per
// attempt, and the export retries.
func TestExportDeadline(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hang)
	src := &memSource{key: 1}
	src.add(1)
	clk := &fakeClock{}
	e := New(Options{Config: Config{Endpoint: srv.URL, Timeout: 50 * time.Millisecond}, Source: src.read,
		CursorPath: filepath.Join(t.TempDir(), "c"), Sleep: clk.Sleep, Now: clk.Now, Poll: testPoll})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	waitUntil(t, "two timeouts", func() bool { return len(clk.retries(testPoll)) >= 2 })
	cancel()
	<-done
	if s := e.State(); !strings.Contains(s.LastError, "no answer within 50ms") || s.Exported != 0 {
		t.Errorf("state %+v", s)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": 0, "0": 0, "12": 12 * time.Second, " 3 ": 3 * time.Second, "-1": 0, "soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		if got := retryAfter(in, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestExportOldest: while a batch waits for the receiver, State.Oldest is
// its first log's time (the lag's age grows) and State.Behind counts the
// logs stored meanwhile; caught up, Oldest is zero.
func TestExportOldest(t *testing.T) {
	var open sync.Mutex
	up := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open.Lock()
		defer open.Unlock()
		if !up {
			http.Error(w, "down", 503)
		}
	}))
	defer srv.Close()
	src := &memSource{key: 1}
	src.add(5)
	clk := &fakeClock{}
	e := New(Options{Config: Config{Endpoint: srv.URL, Timeout: time.Second}, Source: src.read, Batch: 2,
		CursorPath: filepath.Join(t.TempDir(), "c"), Sleep: clk.Sleep, Now: clk.Now, Poll: testPoll})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, "a retry", func() bool { return len(clk.retries(testPoll)) >= 1 })
	if s := e.State(); !s.Oldest.Equal(time.Unix(1, 0)) || s.Behind != 5 {
		t.Errorf("receiver down: Oldest %v, Behind %d, want %v, 5", s.Oldest, s.Behind, time.Unix(1, 0))
	}
	// Logs stored while it is down are behind too.
	src.add(3)
	n := len(clk.retries(testPoll))
	waitUntil(t, "another retry", func() bool { return len(clk.retries(testPoll)) > n })
	if s := e.State(); s.Behind != 8 || !s.Oldest.Equal(time.Unix(1, 0)) {
		t.Errorf("receiver down, 3 more stored: Behind %d, Oldest %v, want 8, %v", s.Behind, s.Oldest, time.Unix(1, 0))
	}
	open.Lock()
	up = true
	open.Unlock()
	waitUntil(t, "all 8 exported", func() bool { s := e.State(); return s.Exported == 8 && s.Behind == 0 })
	if s := e.State(); !s.Oldest.IsZero() {
		t.Errorf("caught up: Oldest %v, want zero", s.Oldest)
	}
}

// TestExportRefusesRedirects: a receiver that redirects is a failure (the
// export retries and says so), and the headers, an API key among them,
// never reach the redirect's target.
func TestExportRefusesRedirects(t *testing.T) {
	var leaked atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Api-Key") != "" {
			leaked.Add(1)
		}
	}))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/v1/logs", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	src := &memSource{key: 1}
	src.add(1)
	clk := &fakeClock{}
	e := New(Options{Config: Config{Endpoint: srv.URL, Timeout: time.Second, Headers: [][2]string{{"Api-Key", "k-secret"}}},
		Source: src.read, CursorPath: filepath.Join(t.TempDir(), "c"), Sleep: clk.Sleep, Now: clk.Now, Poll: testPoll})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	waitUntil(t, "two refused attempts", func() bool { return len(clk.retries(testPoll)) >= 2 || e.State().Exported > 0 })
	cancel()
	<-done
	if s := e.State(); !strings.Contains(s.LastError, "307 Temporary Redirect") || s.Exported != 0 {
		t.Errorf("state %+v, want a 307 error and nothing exported", s)
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the redirect's target got the API key %d times", n)
	}
}
