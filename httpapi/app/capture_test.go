package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/backup"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
)

var captureTime = time.Date(2026, 11, 23, 16, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return captureTime }

// openTestStores opens the stores of a new data dir, logs included.
func openTestStores(t testing.TB, dir string) *Stores {
	t.Helper()
	st, err := Open(Options{Dir: dir, BcryptCost: 4, BcryptSlots: 2, Now: fixedNow}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openBackupDir opens <dir>/backups.
func openBackupDir(t testing.TB, dir string) *backup.Dir {
	t.Helper()
	d, err := openBackups(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// restored extracts the archive key of d into a new data dir and opens its
// stores.
func restored(t *testing.T, d *backup.Dir, key string) *Stores {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "restored")
	if err := d.Extract(key, dst, backup.Limits{}); err != nil {
		t.Fatalf("Extract(%q): %v", key, err)
	}
	st, err := Open(Options{Dir: dst, BcryptCost: 4, BcryptSlots: 2, Now: fixedNow}, true)
	if err != nil {
		t.Fatalf("open the restored data dir: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// counter is a writer's progress: started counts the writes begun, acked
// those acknowledged, in order (one writer per counter).
type counter struct{ started, acked atomic.Int64 }

// writers runs one sequential writer per store until stop is closed: it
// signs up superusers u<i>@example.com, sets the app name to app-<i>, and
// adds log entries m-<i>, flushing every few (a flushed entry is
// acknowledged).
type writers struct {
	auth, settings, logs counter
	wg                   sync.WaitGroup
	errs                 chan error
}

func startWriters(t *testing.T, st *Stores, stop <-chan struct{}) *writers {
	t.Helper()
	w := &writers{errs: make(chan error, 3)}
	ctx := context.Background()
	loop := func(c *counter, write func(i int64) error) {
		w.wg.Go(func() {
			for i := int64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c.started.Store(i + 1)
				if err := write(i); err != nil {
					w.errs <- err
					return
				}
			}
		})
	}
	loop(&w.auth, func(i int64) error {
		_, err := st.Auth.CreateSuperuser(ctx, fmt.Sprintf("u%d@example.com", i), "password123")
		if err == nil {
			w.auth.acked.Store(i + 1)
		}
		return err
	})
	loop(&w.settings, func(i int64) error {
		_, err := st.Settings.Update(func(v *settings.Settings) error {
			v.Meta.AppName = fmt.Sprintf("app-%d", i)
			return nil
		})
		if err == nil {
			w.settings.acked.Store(i + 1)
		}
		return err
	})
	loop(&w.logs, func(i int64) error {
		st.Logs.Add(logstore.Entry{Message: fmt.Sprintf("m-%d", i), Created: captureTime})
		if i%8 == 7 {
			if err := st.Logs.Flush(); err != nil {
				return err
			}
			w.logs.acked.Store(i + 1)
		}
		return nil
	})
	return w
}

// waitFor polls cond until it holds, failing after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !eventually(10*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// eventually polls cond until it holds, for up to d, and reports whether
// it held: waitFor for a goroutine other than the test's, which may not
// end the test.
func eventually(d time.Duration, cond func() bool) bool {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(d); !cond(); <-tick.C {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// restartWaits reports whether a restart of s waits at its gate for the
// requests in flight.
func restartWaits(s *Server) bool {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	return s.gate.idle != nil
}

// seq parses the number after prefix in s, or -1.
func seq(s, prefix string) int64 {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// checkPrefix checks that got holds exactly 0..n-1 for some n between lo
// and hi.
func checkPrefix(t *testing.T, store string, got []int64, lo, hi int64) {
	t.Helper()
	slices.Sort(got)
	for i, v := range got {
		if v != int64(i) {
			t.Errorf("%s: restored %v, not a prefix of the writes (%d at position %d)", store, got, v, i)
			return
		}
	}
	if n := int64(len(got)); n < lo || n > hi {
		t.Errorf("%s: restored %d writes; want at least the %d acknowledged before the capture and at most the %d begun by its end", store, n, lo, hi)
	}
}

// TestCaptureUnderWriters: a backup taken while every store is being
// written holds, for each store, a prefix of what was written, and at least
// everything acknowledged before the capture began.
func TestCaptureUnderWriters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := openTestStores(t, dir)
	d := openBackupDir(t, dir)
	stop := make(chan struct{})
	w := startWriters(t, st, stop)
	defer func() {
		close(stop)
		w.wg.Wait()
	}()
	waitFor(t, "some writes of each store", func() bool {
		return w.auth.acked.Load() >= 3 && w.settings.acked.Load() >= 3 && w.logs.acked.Load() >= 16
	})

	authLo, setLo, logLo := w.auth.acked.Load(), w.settings.acked.Load(), w.logs.acked.Load()
	c, err := st.Capture(fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	authHi, setHi, logHi := w.auth.started.Load(), w.settings.started.Load(), w.logs.started.Load()
	const key = "under-writers.zip"
	if _, err := writeArchive(t.Context(), d.Storage(), key, c, "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.errs:
		t.Fatalf("a writer failed: %v", err)
	default:
	}

	got := restored(t, d, key)
	var emails []int64
	for _, r := range got.Auth.Records(got.Auth.Superusers()) {
		emails = append(emails, seq(strings.TrimSuffix(r.Email, "@example.com"), "u"))
	}
	checkPrefix(t, "auth", emails, authLo, authHi)

	// Settings hold one document: the last change captured.
	n := seq(got.Settings.Get().Meta.AppName, "app-")
	if n+1 < setLo || n+1 > setHi {
		t.Errorf("settings: restored app-%d; want a change from app-%d (acknowledged before the capture) to app-%d", n, setLo-1, setHi-1)
	}

	// Every page: a fast writer logs more than one page's worth before
	// the capture.
	var msgs []int64
	for p := 1; ; p++ {
		page, err := got.Logs.List(logstore.Query{Page: p, PerPage: logstore.MaxPerPage})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Items {
			msgs = append(msgs, seq(e.Message, "m-"))
		}
		if len(page.Items) < logstore.MaxPerPage {
			break
		}
	}
	checkPrefix(t, "logs", msgs, logLo, logHi)
}

// TestCaptureSurvivesCompactionAndRetention: once captured, the copy reads
// what was captured although a journal is compacted (renamed over) and
// the log segments are deleted by retention before the copy starts.
func TestCaptureSurvivesCompactionAndRetention(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := openTestStores(t, dir)
	d := openBackupDir(t, dir)
	if _, err := st.Settings.Update(func(v *settings.Settings) error { v.Meta.AppName = "captured"; return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		st.Logs.Add(logstore.Entry{Message: fmt.Sprintf("m-%d", i), Created: time.Now()})
	}
	if err := st.Logs.Flush(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.seg"))
	if len(segs) == 0 {
		t.Fatal("no log segment")
	}

	c, err := st.Capture(fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// Compaction: the settings store rewrites its journal into a new file
	// renamed over the old one once it grows past its bound.
	before, err := os.Stat(filepath.Join(dir, "settings.journal"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := st.Settings.Update(func(v *settings.Settings) error { v.Meta.AppName = fmt.Sprintf("later-%d", i); return nil }); err != nil {
			t.Fatal(err)
		}
		after, err := os.Stat(filepath.Join(dir, "settings.journal"))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before, after) {
			break
		}
		if i > 20000 {
			t.Fatal("the settings journal was never compacted")
		}
	}
	// Retention: maxDays 0 deletes every segment.
	if err := st.Logs.SetRetention(0, 0); err != nil {
		t.Fatal(err)
	}
	for _, p := range segs {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("segment %s still there after retention: %v", p, err)
		}
	}

	if _, err := writeArchive(t.Context(), d.Storage(), "after.zip", c, "test"); err != nil {
		t.Fatal(err)
	}
	got := restored(t, d, "after.zip")
	if name := got.Settings.Get().Meta.AppName; name != "captured" {
		t.Errorf("restored app name %q, want the captured one", name)
	}
	if n := got.Logs.Len(); n != 50 {
		t.Errorf("restored %d log entries, want the 50 captured", n)
	}
}

// openFDs counts the open descriptors of the process, or -1 where that
// cannot be read.
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestCaptureFailedCreate: a create that fails, early (the key is taken)
// or during the copy (cancelled), leaves no archive and no temporary file,
// and closes every descriptor of the capture.
func TestCaptureFailedCreate(t *testing.T) {
	// Not parallel: it counts the descriptors of the whole process, which
	// any test running beside it opens and closes.
	dir := t.TempDir()
	st := openTestStores(t, dir)
	d := openBackupDir(t, dir)
	st.Logs.Add(logstore.Entry{Message: "x", Created: time.Now()})
	if err := st.Logs.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "backups", "taken.zip"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		key  string
		want error
	}{
		{"cancelled", cancelled, "new.zip", context.Canceled},
		{"key taken", t.Context(), "taken.zip", backup.ErrExists},
		{"bad key", t.Context(), "Bad.zip", backup.ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fds := openFDs()
			c, err := st.Capture(fixedNow)
			if err != nil {
				t.Fatal(err)
			}
			if fds >= 0 && openFDs() <= fds {
				t.Fatalf("the capture holds no descriptor (%d before, %d after)", fds, openFDs())
			}
			_, err = writeArchive(tt.ctx, d.Storage(), tt.key, c, "test")
			if !errors.Is(err, tt.want) {
				t.Errorf("writeArchive(%q) = %v, want %v", tt.key, err, tt.want)
			}
			if got := openFDs(); got != fds {
				t.Errorf("%d descriptors open after the failed create, %d before", got, fds)
			}
			ents, err := os.ReadDir(filepath.Join(dir, "backups"))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, []string{"taken.zip"}) {
				t.Errorf("backups folder holds %q, want only the archive there before", names)
			}
		})
	}
}

// TestCaptureManifest: the archive holds exactly the files of the stores,
// named relative to the data dir, and nothing else that lies in it.
func TestCaptureManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := openTestStores(t, dir)
	d := openBackupDir(t, dir)
	st.Logs.Add(logstore.Entry{Message: "x", Created: time.Now()})
	if err := st.Logs.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, junk := range []string{"backups/old.zip", "tmp-restore/auth.journal", "notes.txt"} {
		p := filepath.Join(dir, filepath.FromSlash(junk))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"auth.journal", "settings.journal"}
	segs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.seg"))
	for _, p := range segs {
		want = append(want, "logs/"+filepath.Base(p))
	}
	if len(segs) == 0 {
		t.Fatal("no log segment")
	}

	c, err := st.Capture(fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writeArchive(t.Context(), d.Storage(), "m.zip", c, "9.9.9"); err != nil {
		t.Fatal(err)
	}
	m, err := d.Verify("m.zip", backup.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m.Files {
		got = append(got, f.Name)
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Name)))
		if err != nil || f.Size > fi.Size() || f.Size < 8 {
			t.Errorf("%s: size %d in the manifest, file %v %v", f.Name, f.Size, fi, err)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("manifest files %q, want %q", got, want)
	}
	if m.Strongbox != "9.9.9" || !m.Created.Equal(captureTime) {
		t.Errorf("manifest version %q created %v, want 9.9.9 and %v", m.Strongbox, m.Created, captureTime)
	}
}

// BenchmarkCapturePause measures how long a capture pauses the writers of
// the stores (Capture.Paused: from taking the first store's lock to
// releasing the last), over log stores of many segments and entries: one
// segment per UTC day at least, so days sets the segment count. It
// reports the mean and the longest pause; ns/op also counts closing the
// descriptors, which happens after the pause.
//
//	go test ./httpapi/app -run '^$' -bench CapturePause -benchtime 200x
func BenchmarkCapturePause(b *testing.B) {
	for _, tc := range []struct{ days, perDay int }{{1, 100_000}, {30, 5_000}, {365, 1_000}} {
		b.Run(fmt.Sprintf("days=%d/entries=%d", tc.days, tc.days*tc.perDay), func(b *testing.B) {
			dir := b.TempDir()
			end := captureTime
			for day := tc.days - 1; day >= 0; day-- {
				now := end.Add(-time.Duration(day) * 24 * time.Hour)
				err := logstore.Seed(filepath.Join(dir, "logs"), tc.perDay, logstore.Options{MaxDays: tc.days + 2, Now: func() time.Time { return now }})
				if err != nil {
					b.Fatal(err)
				}
			}
			st, err := Open(Options{Dir: dir, BcryptCost: 4, BcryptSlots: 2}, false)
			if err != nil {
				b.Fatal(err)
			}
			for i := range 100 {
				if _, err := st.Auth.CreateSuperuser(b.Context(), fmt.Sprintf("u%d@example.com", i), "password123"); err != nil {
					b.Fatal(err)
				}
			}
			if st.Logs, err = logstore.Open(filepath.Join(dir, "logs"), logstore.Options{MaxDays: tc.days + 2, Now: func() time.Time { return end }}); err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			segs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.seg"))

			var total, longest time.Duration
			for b.Loop() {
				c, err := st.Capture(nil)
				if err != nil {
					b.Fatal(err)
				}
				total += c.Paused
				longest = max(longest, c.Paused)
				c.Close()
			}
			b.ReportMetric(float64(len(segs)), "segments")
			b.ReportMetric(float64(st.Logs.Len()), "entries")
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "pause-µs/op")
			b.ReportMetric(float64(longest.Microseconds()), "max-pause-µs")
		})
	}
}
