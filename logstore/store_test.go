package logstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clock is a settable clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: t0} }

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

// logRecorder is a slog.Handler that keeps the messages of the records it
// receives.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }
func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var sb strings.Builder
	sb.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&sb, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	h.msgs = append(h.msgs, sb.String())
	h.mu.Unlock()
	return nil
}

func (h *logRecorder) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.msgs)
}

// testOptions returns options with a fixed clock, deterministic ids and a
// recorded server log.
func testOptions(c *clock, h *logRecorder) Options {
	return Options{
		Now:     c.Now,
		Rand:    bytes.NewReader(bytes.Repeat([]byte{7}, 64)),
		Logger:  slog.New(h),
		MaxDays: 5,
	}
}

// smallChunks returns opts with chunks of n rows.
func smallChunks(opts Options, n int) Options {
	opts.tune.chunkRows = n
	return opts
}

func mustOpen(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { within(t, waitLimit, "Close in cleanup", func() { s.Close() }) })
	return s
}

// waitLimit bounds the waits of the tests: far longer than any of them
// takes, far shorter than go test's timeout.
const waitLimit = 30 * time.Second

// waitFor polls cond until it holds, failing the test past waitLimit.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(waitLimit); !cond(); <-tick.C {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitLimit, what)
		}
	}
}

// within runs fn and waits for it to return, at most d: past that it marks
// the test failed, naming what, and returns false, leaving fn running. A
// stuck writer or lock then fails the test with a message instead of
// hanging it until go test's timeout.
func within(t testing.TB, d time.Duration, what string, fn func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		t.Errorf("%s: not done after %v", what, d)
		return false
	}
}

// req returns a request log entry.
func req(method, url string, status int) Entry {
	e := Entry{Message: method + " " + url, Request: &Request{
		Method: method, URL: url, Status: status, ExecTime: float64(status) / 100,
		RemoteIP: "127.0.0.1", UserIP: "127.0.0.1", UserAgent: "curl/8.5.0",
	}}
	if status >= 400 {
		e.Level = 8
		e.Request.Error = "failed " + url
	}
	return e
}

// all lists every entry in insertion order.
func all(t testing.TB, s *Store) []Entry {
	t.Helper()
	var out []Entry
	for page := 1; ; page++ {
		p, err := s.List(Query{Page: page, PerPage: MaxPerPage})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		out = append(out, p.Items...)
		if len(p.Items) < MaxPerPage {
			return out
		}
	}
}

func messages(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Message
	}
	return out
}

func TestAddFlushGet(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	s := mustOpen(t, dir, testOptions(c, h))
	in := []Entry{
		req("GET", "/api/health", 200),
		req("POST", "/api/backups", 401),
		{Level: 4, Message: "Failed to restore backup", Attrs: map[string]any{"key": "a.zip", "n": 3}},
	}
	in[1].Request.Details = map[string]any{"x": "y"}
	for _, e := range in {
		s.Add(e)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	got := all(t, s)
	if len(got) != len(in) {
		t.Fatalf("List returned %d entries, want %d", len(got), len(in))
	}
	ids := map[string]bool{}
	for i, e := range got {
		if !validID(e.ID) || ids[e.ID] {
			t.Errorf("entry %d: id %q invalid or duplicate", i, e.ID)
		}
		ids[e.ID] = true
		want := normalise(t, in[i])
		want.ID, want.Created = e.ID, t0
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("entry %d (-want +got):\n%s", i, diff)
		}
		g, err := s.Get(e.ID)
		if err != nil {
			t.Fatalf("Get(%s): %v", e.ID, err)
		}
		if diff := cmp.Diff(e, g); diff != "" {
			t.Errorf("Get(%s) differs from List (-list +get):\n%s", e.ID, diff)
		}
	}
	for _, id := range []string{"", "stats", "doesnotexist123", got[0].ID[:14] + "z", "000000000zzzzzz"} {
		if _, err := s.Get(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) error = %v, want ErrNotFound", id, err)
		}
	}

	// Everything survives a reopen, ids included.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, dir, testOptions(c, h))
	if diff := cmp.Diff(got, all(t, s2)); diff != "" {
		t.Errorf("after reopen (-before +after):\n%s", diff)
	}
	s2.Add(req("GET", "/after", 200))
	if err := s2.Flush(); err != nil {
		t.Fatal(err)
	}
	after := all(t, s2)
	if n := len(after); n != 4 || ids[after[3].ID] {
		t.Errorf("after reopen and Add: %d entries, last id %q (must be new)", n, after[3].ID)
	}
	if msgs := h.messages(); len(msgs) != 0 {
		t.Errorf("unexpected warnings: %q", msgs)
	}
}

func TestCallerIDs(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	s := mustOpen(t, dir, testOptions(c, h))
	e := req("GET", "/a", 200)
	e.ID = "s5ewyljico6say8"
	s.Add(e)
	s.Add(e)           // duplicate: gets a fresh id
	e.ID = "NOT-VALID" // invalid: gets a fresh id
	s.Add(e)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	got := all(t, s)
	if got[0].ID != "s5ewyljico6say8" {
		t.Errorf("caller id not kept: %q", got[0].ID)
	}
	for _, g := range got[1:] {
		if g.ID == "s5ewyljico6say8" || !validID(g.ID) {
			t.Errorf("id %q: want a fresh valid id", g.ID)
		}
	}
	// The caller's id is found, survives a reopen, and sorts and filters.
	s.Close()
	s = mustOpen(t, dir, testOptions(c, h))
	if g, err := s.Get("s5ewyljico6say8"); err != nil || g.Message != "GET /a" {
		t.Errorf("Get(caller id) = %v, %v", g, err)
	}
	p, err := s.List(Query{Filter: `id = "s5ewyljico6say8"`})
	if err != nil || p.TotalItems != 1 {
		t.Errorf("filter by caller id: %d items, %v", p.TotalItems, err)
	}
	p, err = s.List(Query{Sort: "-id"})
	if err != nil || p.Items[0].ID != "s5ewyljico6say8" {
		t.Errorf("sort -id: first %q, %v", p.Items[0].ID, err)
	}
}

func TestGroupCommitWithoutFlush(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	opts := testOptions(c, h)
	opts.FlushInterval = 20 * time.Millisecond
	s := mustOpen(t, t.TempDir(), opts)
	s.Add(req("GET", "/x", 200))
	waitFor(t, "the entry committed without Flush", func() bool { return s.Len() > 0 })
	// Committed means durable: the active segment's committed length
	// covers it.
	secs, release, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	release()
	for _, sec := range secs {
		defer sec.Close()
	}
	if len(secs) != 1 || secs[0].Size <= 8 {
		t.Errorf("Capture = %d sections, want one segment with a committed frame", len(secs))
	}
}

func TestCloseLosesNothing(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2500 {
				s.Add(req("GET", fmt.Sprintf("/w%d/%d", w, i), 200))
			}
		})
	}
	if !within(t, waitLimit, "the writers to stop", wg.Wait) {
		t.FailNow()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if err := s.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
	if _, err := s.List(Query{}); !errors.Is(err, ErrClosed) {
		t.Errorf("List after Close = %v, want ErrClosed", err)
	}
	s.Add(req("GET", "/late", 200)) // a no-op, no panic
	s2 := mustOpen(t, dir, opts)
	if n := s2.Len(); n != 10000 {
		t.Errorf("after Close and reopen: %d entries, want 10000", n)
	}
	// Per writer, insertion order is Add order.
	last := map[string]int{}
	for _, e := range all(t, s2) {
		var w, i int
		fmt.Sscanf(e.Request.URL, "/w%d/%d", &w, &i)
		k := fmt.Sprint(w)
		if prev, ok := last[k]; ok && i != prev+1 {
			t.Fatalf("writer %d: entry %d follows %d", w, i, prev)
		}
		last[k] = i
	}
}

func TestMinLevelAndLoggingOff(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	opts.MinLevel = 4
	s := mustOpen(t, dir, opts)
	for _, lvl := range []int{-4, 0, 4, 8} {
		s.Add(Entry{Level: lvl, Message: fmt.Sprint(lvl)})
	}
	s.Flush()
	if got := messages(all(t, s)); !slices.Equal(got, []string{"4", "8"}) {
		t.Errorf("minLevel 4 kept %q, want [4 8]", got)
	}
	if err := s.SetRetention(5, -4); err != nil {
		t.Fatal(err)
	}
	s.Add(Entry{Level: -4, Message: "debug"})
	s.Flush()
	if n := s.Len(); n != 3 {
		t.Errorf("after minLevel -4: %d entries, want 3", n)
	}

	// maxDays 0: everything stored is dropped (files too) and Add is a no-op.
	if err := s.SetRetention(0, 0); err != nil {
		t.Fatal(err)
	}
	s.Add(Entry{Message: "ignored"})
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n != 0 {
		t.Errorf("after maxDays 0: %d entries, want 0", n)
	}
	if p, _ := s.List(Query{}); len(p.Items) != 0 || p.TotalItems != 0 {
		t.Errorf("after maxDays 0: List = %+v", p)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) != 1 {
		t.Errorf("after maxDays 0: %d segment files, want 1 (empty, active)", len(segs))
	}
	if fi, err := os.Stat(segs[0]); err != nil || fi.Size() != 8 {
		t.Errorf("remaining segment: %v, %v; want an empty journal", fi, err)
	}

	// Logging back on: new entries get new ids, never reused ones.
	s.SetRetention(5, 0)
	s.Add(Entry{Message: "back"})
	s.Flush()
	got := all(t, s)
	if len(got) != 1 || got[0].Message != "back" {
		t.Fatalf("after logging back on: %q", messages(got))
	}
	if seq, _ := idSeq(got[0].ID); seq != 4 {
		t.Errorf("sequence restarted: id %s has seq %d, want 4", got[0].ID, seq)
	}
	s.Close()

	// Open with MaxDays 0 drops what is stored.
	opts.MaxDays = 0
	s3 := mustOpen(t, dir, opts)
	if n := s3.Len(); n != 0 {
		t.Errorf("Open with MaxDays 0: %d entries, want 0", n)
	}
}

func TestRetentionAndRotation(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	opts.MaxDays = 2
	opts.segmentSize = 4096
	s := mustOpen(t, dir, opts)
	// Three days of traffic, 50 entries an hour.
	for range 3 * 24 {
		for range 50 {
			s.Add(req("GET", "/x", 200))
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		c.Add(time.Hour)
	}
	if n := s.Len(); n != 3*24*50 {
		t.Fatalf("%d entries, want %d", n, 3*24*50)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	for _, p := range segs {
		if fi, _ := os.Stat(p); fi.Size() > 4096 {
			t.Errorf("segment %s is %d bytes, over the 4096 limit", p, fi.Size())
		}
	}
	// Day boundaries: no segment holds entries of two UTC days.
	s.mu.RLock()
	for _, seg := range s.segs {
		days := map[int64]bool{}
		for _, ch := range s.idx.chunks {
			if ch.seg == seg {
				for i := range ch.n {
					days[floorDiv(ch.createdAt(i), dayMs)] = true
				}
			}
		}
		if len(days) > 1 {
			t.Errorf("segment %s holds entries of %d days", seg.path, len(days))
		}
	}
	s.mu.RUnlock()

	// Now is 3 days after t0; the window is 2 days: the first day goes.
	if err := s.SetRetention(2, 0); err != nil {
		t.Fatal(err)
	}
	cutoff := c.Now().Add(-48 * time.Hour)
	got := all(t, s)
	for _, e := range got {
		if e.Created.Before(cutoff.Add(-24 * time.Hour)) {
			t.Fatalf("entry of %v kept, more than maxDays+1 days old", e.Created)
		}
	}
	if len(got) == 3*24*50 {
		t.Errorf("nothing dropped")
	}
	var newest time.Time
	for _, e := range got {
		if e.Created.After(newest) {
			newest = e.Created
		}
	}
	// Whatever is dropped is dropped from disk too.
	s.Close()
	s2 := mustOpen(t, dir, opts)
	if n := s2.Len(); n != len(got) {
		t.Errorf("after reopen: %d entries, want %d", n, len(got))
	}
	// Every entry older than the window is gone a day later at the latest.
	c.Add(24 * time.Hour)
	if err := s2.SetRetention(2, 0); err != nil {
		t.Fatal(err)
	}
	for _, e := range all(t, s2) {
		if e.Created.Before(cutoff) {
			t.Fatalf("entry of %v kept after the window passed it by a day", e.Created)
		}
	}
	// And far in the future nothing is left.
	c.Add(10 * 24 * time.Hour)
	s2.SetRetention(2, 0)
	if n := s2.Len(); n != 0 {
		t.Errorf("10 days later: %d entries left", n)
	}
	_ = newest
}

func TestQueueBound(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("fills the queue with a million entries")
	}
	c, h := newClock(), &logRecorder{}
	opts := testOptions(c, h)
	s := mustOpen(t, t.TempDir(), opts)
	// Hold the writer so that the queue only grows (it may take one batch
	// before it blocks).
	s.wmu.Lock()
	e := Entry{Message: "x"}
	for range MaxPending + maxBatch + 10 {
		s.Add(e)
	}
	s.qmu.Lock()
	queued, dropped := len(s.queue), s.dropped
	s.qmu.Unlock()
	s.wmu.Unlock()
	if queued > MaxPending || dropped == 0 {
		t.Errorf("queue %d (max %d), dropped %d", queued, MaxPending, dropped)
	}
	if !slices.ContainsFunc(h.messages(), func(m string) bool { return strings.Contains(m, "dropped") }) {
		t.Errorf("no warning about dropped entries: %q", h.messages())
	}
	// Discard the queue, which Close would otherwise spend a while
	// committing for nobody to read.
	if err := s.SetRetention(0, 0); err != nil {
		t.Fatal(err)
	}
}

func TestCaptureCopiesOpen(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	opts.segmentSize = 2048
	s := mustOpen(t, dir, opts)
	stop := atomic.Bool{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			s.Add(req("GET", fmt.Sprintf("/%d", i), 200))
			if i%50 == 0 {
				s.Flush()
			}
		}
	})
	// Capture while the writer is well into its segments.
	waitFor(t, "500 entries indexed", func() bool { return s.Len() >= 500 })
	// What is indexed before the capture starts: the writer goes on, so
	// a count taken after it may hold entries the capture does not.
	want := s.Len()
	secs, release, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	release()
	// Copy the committed prefixes while the writer goes on.
	cp := t.TempDir()
	for _, sec := range secs {
		buf := make([]byte, sec.Size)
		if _, err := sec.ReadAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		sec.Close()
		if err := os.WriteFile(filepath.Join(cp, filepath.Base(sec.Path)), buf, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	if !within(t, waitLimit, "the writer to stop", wg.Wait) {
		t.FailNow()
	}
	h2 := &logRecorder{}
	s2 := mustOpen(t, cp, testOptions(c, h2))
	if n := s2.Len(); n < want {
		t.Errorf("snapshot holds %d entries, want at least the %d indexed before it", n, want)
	}
	if msgs := h2.messages(); len(msgs) != 0 {
		t.Errorf("snapshot is not clean: %q", msgs)
	}
}

func TestJSONShapes(t *testing.T) {
	t.Parallel()
	// Entries as PocketBase v0.31.0 writes them.
	e := Entry{ID: "clhscr32sxp1c6s", Created: time.Date(2026, 11, 22, 9, 40, 54, 461e6, time.UTC), Level: 8,
		Message: "GET /api/backups", Request: &Request{ExecTime: 0.053429, Method: "GET", RemoteIP: "127.0.0.1",
			Status: 401, URL: "/api/backups", UserAgent: "curl/7.88.1", UserIP: "127.0.0.1",
			Error: "The request requires valid record authorization token."}}
	want := `{"id":"clhscr32sxp1c6s","created":"2026-11-22 09:40:54.461Z","data":{"auth":"","details":null,"error":"The request requires valid record authorization token.","execTime":0.053429,"method":"GET","referer":"","remoteIP":"127.0.0.1","status":401,"type":"request","url":"/api/backups","userAgent":"curl/7.88.1","userIP":"127.0.0.1"},"message":"GET /api/backups","level":8}`
	got, err := json.Marshal(e)
	if err != nil || string(got) != want {
		t.Errorf("Marshal = %s, %v\nwant %s", got, err, want)
	}
	o := Entry{ID: "nmchc3nzndu9swu", Created: time.Date(2026, 11, 22, 9, 41, 25, 472e6, time.UTC), Level: 8,
		Message: "Failed to restore backup", Attrs: map[string]any{"key": "real_upload.zip", "error": "x<y"}}
	want = `{"id":"nmchc3nzndu9swu","created":"2026-11-22 09:41:25.472Z","data":{"error":"x\u003cy","key":"real_upload.zip"},"message":"Failed to restore backup","level":8}`
	if got, err := json.Marshal(o); err != nil || string(got) != want {
		t.Errorf("Marshal = %s, %v\nwant %s", got, err, want)
	}
	// logIP off (no IPs) and authId.
	e.Request.RemoteIP, e.Request.UserIP, e.Request.AuthID = "", "", "u1"
	got, _ = json.Marshal(e)
	if bytes.Contains(got, []byte("IP")) || !bytes.Contains(got, []byte(`"authId":"u1","details"`)) {
		t.Errorf("Marshal without IPs = %s", got)
	}
	st, _ := json.Marshal([]HourStat{{Date: time.Date(2022, 5, 1, 10, 0, 0, 0, time.UTC), Total: 1}})
	if string(st) != `[{"date":"2022-05-01 10:00:00.000Z","total":1}]` {
		t.Errorf("HourStat = %s", st)
	}
	pg, _ := json.Marshal(Page{Items: []Entry{}, Page: 999, PerPage: 2, TotalItems: 85, TotalPages: 43})
	if string(pg) != `{"items":[],"page":999,"perPage":2,"totalItems":85,"totalPages":43}` {
		t.Errorf("Page = %s", pg)
	}
	// Floats as encoding/json writes them.
	for _, f := range []float64{0, 1, 0.140419, 1e21, 1e-7, 123456789.125} {
		want, _ := json.Marshal(f)
		if got := appendFloat(nil, f); string(got) != string(want) {
			t.Errorf("appendFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestConcurrentReadersAndWriters(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	opts := testOptions(c, h)
	opts.FlushInterval = 5 * time.Millisecond
	opts.segmentSize = 8192
	s := mustOpen(t, t.TempDir(), opts)
	var wg sync.WaitGroup
	stop := atomic.Bool{}
	// Each writer waits for its entries every 4096 (about what the writer
	// commits during the test), so the backlog stays bounded: unbounded, it
	// grew to some 150,000 entries that Close then spent seconds committing
	// with nothing left to inspect them.
	for w := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 1; !stop.Load(); i++ {
				s.Add(req("GET", fmt.Sprintf("/%d", r.IntN(50)), 200+r.IntN(4)*100))
				if i%4096 == 0 {
					if err := s.Flush(); err != nil {
						t.Errorf("Flush: %v", err)
						return
					}
				}
			}
		})
	}
	var reads, retentions atomic.Int64 // rounds begun
	for range 2 {
		wg.Go(func() {
			for ; !stop.Load(); reads.Add(1) {
				p, err := s.List(Query{Filter: "data.status >= 400", Sort: "-created,data.url", PerPage: 20})
				if err != nil {
					t.Error(err)
					return
				}
				for _, e := range p.Items {
					if e.Request.Status < 400 {
						t.Errorf("filter let status %d through", e.Request.Status)
					}
					if _, err := s.Get(e.ID); err != nil {
						t.Errorf("Get(%s): %v", e.ID, err)
					}
				}
				if _, err := s.Stats("level > 0"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Go(func() {
		for !stop.Load() {
			c.Add(6 * time.Hour)
			retentions.Add(1)
			if err := s.SetRetention(1, 0); err != nil {
				t.Error(err)
			}
			// Not a wait for a condition: it spaces the retention runs, as
			// the store's own timer does, so that the writers and readers
			// work between them instead of queueing behind each one.
			time.Sleep(10 * time.Millisecond)
		}
	})
	// Run for an amount of work, not of time: a retention run begun (one
	// can take seconds, waiting for the busy writer; stopping waits for
	// it), and four hundred reads and two thousand entries meanwhile. Under
	// the race detector a read (a filtered, sorted list of some 40,000
	// entries, its Gets and a Stats) takes some 10 ms, so four hundred is
	// seconds, not the half minute two thousand took on a busy CI machine.
	// Past waitLimit the workers are stopped and waited for before the
	// test fails, so none of them logs after it has ended.
	done := func() bool { return retentions.Load() >= 1 && reads.Load() >= 400 && s.Len() >= 2000 }
	deadline := time.Now().Add(waitLimit)
	for !done() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	reached := done()
	stop.Store(true)
	if !within(t, waitLimit, "the writers, readers and retention to stop", wg.Wait) {
		t.FailNow()
	}
	if !reached {
		t.Fatalf("after %v: %d retention runs, %d reads, %d entries; want 1, 400, 2000",
			waitLimit, retentions.Load(), reads.Load(), s.Len())
	}
}

// TestDictCompaction: when retention drops most rows, the dictionary is
// rebuilt from the remaining ones, and every string still reads back.
func TestDictCompaction(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	opts.MaxDays = 1
	s := mustOpen(t, dir, opts)
	add := func(day, n int) {
		for i := range n {
			e := req("GET", fmt.Sprintf("/day%d/%d", day, i), 200+i%3*100)
			e.Request.UserAgent = fmt.Sprintf("agent %d/%d", day, i%7)
			if i%5 == 0 {
				e.Request.AuthID = fmt.Sprintf("user%d", i%11)
			}
			s.Add(e)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	add(0, 3000)
	c.Add(24 * time.Hour)
	add(1, 200)
	c.Add(12 * time.Hour) // day 0 is out of the window, day 1 in
	before := len(s.idx.dict.strs)
	want := all(t, s)[3000:]
	if err := s.SetRetention(1, 0); err != nil {
		t.Fatal(err)
	}
	after := len(s.idx.dict.strs)
	if after*2 > before {
		t.Errorf("dictionary not compacted: %d strings before, %d after", before, after)
	}
	if diff := cmp.Diff(want, all(t, s)); diff != "" {
		t.Fatalf("entries after compaction (-want +got):\n%s", diff)
	}
	// The index columns agree with the entries read from disk.
	s.mu.RLock()
	var mem []Entry
	each(s.idx.chunks, false, func(r row) bool {
		e := s.idx.memEntry(r)
		e.ID = s.idx.id(r)
		mem = append(mem, e)
		return true
	})
	s.mu.RUnlock()
	if diff := cmp.Diff(want, mem); diff != "" {
		t.Fatalf("index after compaction (-disk +index):\n%s", diff)
	}
	// Filters on dictionary columns still work, and new strings intern.
	p, err := s.List(Query{Filter: `data.userAgent = "agent 1/3" && data.authId != null`})
	if err != nil || p.TotalItems == 0 {
		t.Errorf("filter after compaction: %d items, %v", p.TotalItems, err)
	}
	add(2, 10)
	if got := all(t, s); len(got) != 210 || got[209].Request.URL != "/day2/9" {
		t.Errorf("after adding: %d entries", len(got))
	}
}
