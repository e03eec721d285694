package logstore

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"strongbox/logstore/journal"
	"strongbox/logstore/journal/journaltest"
)

// faultyOptions returns test options with the segments on a journaltest.FS.
func faultyOptions(c *clock, h *logRecorder) (Options, *journaltest.FS) {
	opts := testOptions(c, h)
	fsys := journaltest.New()
	opts.FS = fsys
	opts.FlushInterval = 5 * time.Millisecond
	return opts, fsys
}

// addFlush adds one request entry per URL and flushes.
func addFlush(s *Store, urls ...string) error {
	for _, u := range urls {
		s.Add(req("GET", u, 200))
	}
	return s.Flush()
}

func urls(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("/%s%04d", prefix, i)
	}
	return out
}

// storedURLs lists the URLs of the stored entries in insertion order.
func storedURLs(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	for _, e := range all(t, s) {
		out = append(out, e.Request.URL)
	}
	return out
}

// segmentFiles returns the sizes of the segment files in dir, by name.
func segmentFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, de := range ents {
		if _, _, ok := parseSegmentName(de.Name()); !ok {
			continue // a sidecar, written (and renamed) in the background
		}
		fi, err := de.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[de.Name()] = fi.Size()
	}
	return out
}

// activeSegment returns the segment the writer appends to.
func activeSegment(s *Store) *segment {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.segs[len(s.segs)-1]
}

func countMessages(h *logRecorder, prefix string) int {
	n := 0
	for _, m := range h.messages() {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// TestFullDiskThenFreed: while the disk is full every batch fails (Flush
// and Health say storage is full), no file is created, the failure is
// logged once; once space is freed the next batch is stored, Health is nil
// again, and every entry stored before and after survives a reopen.
func TestFullDiskThenFreed(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts, fsys := faultyOptions(c, h)
	s := mustOpen(t, dir, opts)
	if err := addFlush(s, urls("a", 5)...); err != nil {
		t.Fatal(err)
	}
	files := segmentFiles(t, dir)
	fsys.SetFree(0)
	for range 20 { // 20 group commits
		err := addFlush(s, urls("b", 5)...)
		if !errors.Is(err, journal.ErrStorageFull) {
			t.Fatalf("Flush on a full disk: err = %v, want journal.ErrStorageFull", err)
		}
	}
	if err := s.Health(); !errors.Is(err, journal.ErrStorageFull) {
		t.Errorf("Health() = %v while full, want journal.ErrStorageFull", err)
	}
	if got := segmentFiles(t, dir); !maps.Equal(got, files) {
		t.Errorf("segment files changed while the disk was full: %v, was %v", got, files)
	}
	if n := countMessages(h, "logstore: write failed"); n != 1 {
		t.Errorf("write failure logged %d times, want once: %q", n, h.messages())
	}

	fsys.SetFree(-1)
	if err := addFlush(s, urls("c", 5)...); err != nil {
		t.Fatalf("Flush after space was freed: %v", err)
	}
	if err := s.Health(); err != nil {
		t.Errorf("Health() = %v after space was freed, want nil", err)
	}
	if n := countMessages(h, "logstore: writes work again entriesLost=100"); n != 1 {
		t.Errorf("recovery logged %d times, want once: %q", n, h.messages())
	}
	want := append(urls("a", 5), urls("c", 5)...)
	if got := storedURLs(t, s); !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after recovery = %v, want nil", err)
	}
	opts.FS = nil
	s2 := mustOpen(t, dir, opts)
	if got := storedURLs(t, s2); !slices.Equal(got, want) {
		t.Errorf("after reopen: stored %q, want %q", got, want)
	}
}

// TestFullDuringRotation fills the disk when the active segment is due for
// rotation. Creating the next segment fails and leaves no file; rotation
// backs off instead of trying every commit; once space is freed the entries
// go to the active segment until the back-off ends, then to a new one.
// With room for a segment header but not an entry, at most one empty
// segment (the active one) exists, however many commits fail.
func TestFullDuringRotation(t *testing.T) {
	t.Parallel()
	for _, free := range []int64{0, journal.HeaderSize + 4} {
		t.Run(fmt.Sprint("free=", free), func(t *testing.T) {
			c, h := newClock(), &logRecorder{}
			dir := t.TempDir()
			opts, fsys := faultyOptions(c, h)
			opts.segmentSize = 2048
			s := mustOpen(t, dir, opts)
			// Fill the active segment until the next entry does not fit: the
			// next commit rotates. All URLs have the same width, so all
			// frames have the same size.
			var want []string
			for i := 0; ; i++ {
				seg := activeSegment(s)
				size := seg.f.Size()
				u := fmt.Sprintf("/a%04d", i)
				if err := addFlush(s, u); err != nil {
					t.Fatal(err)
				}
				want = append(want, u)
				if delta := seg.f.Size() - size; seg == activeSegment(s) && seg.f.Size()+delta > 2048 {
					break
				}
			}
			before := segmentFiles(t, dir)
			fsys.SetFree(free)
			for range 20 {
				if err := addFlush(s, urls("b", 3)...); !errors.Is(err, journal.ErrStorageFull) {
					t.Fatalf("Flush on a full disk: err = %v, want journal.ErrStorageFull", err)
				}
			}
			after := segmentFiles(t, dir)
			// With no room at all, creating the segment fails once and is not
			// retried within the back-off; with room for its header it works.
			wantRotateErrs := 0
			if free == 0 {
				wantRotateErrs = 1
			}
			if n := countMessages(h, "logstore: rotate segment"); n != wantRotateErrs {
				t.Errorf("rotation failed %d times, want %d: %q", n, wantRotateErrs, h.messages())
			}
			added := len(after) - len(before)
			switch {
			case free == 0 && added != 0:
				t.Errorf("%d segment files created on a full disk: %v", added, after)
			case free > 0 && added > 1:
				t.Errorf("%d segment files created while full, want at most one: %v", added, after)
			}
			for name, size := range after {
				if _, ok := before[name]; !ok && size != journal.HeaderSize {
					t.Errorf("new segment %s is %d bytes, want an empty segment", name, size)
				}
			}

			fsys.SetFree(-1)
			if err := addFlush(s, urls("c", 3)...); err != nil {
				t.Fatalf("Flush after space was freed: %v", err)
			}
			want = append(want, urls("c", 3)...)
			s.wmu.Lock()
			s.rotAfter = time.Time{} // the back-off is over
			s.wmu.Unlock()
			if err := addFlush(s, urls("d", 3)...); err != nil {
				t.Fatal(err)
			}
			want = append(want, urls("d", 3)...)
			if got := storedURLs(t, s); !slices.Equal(got, want) {
				t.Errorf("stored %q,\nwant %q", got, want)
			}
			for name, size := range segmentFiles(t, dir) {
				if size <= journal.HeaderSize {
					t.Errorf("empty segment file %s left after recovery", name)
				}
			}
			s.Close()
			opts.FS = nil
			s2 := mustOpen(t, dir, opts)
			if got := storedURLs(t, s2); !slices.Equal(got, want) {
				t.Errorf("after reopen: stored %q,\nwant %q", got, want)
			}
		})
	}
}

// TestCloseOnFullDisk: entries that cannot be written at shutdown make
// Close fail, with the storage error.
func TestCloseOnFullDisk(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	opts, fsys := faultyOptions(c, h)
	s, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	fsys.SetFree(0)
	s.Add(req("GET", "/lost", 200))
	if err := s.Close(); !errors.Is(err, journal.ErrStorageFull) {
		t.Errorf("Close with entries the disk refused = %v, want journal.ErrStorageFull", err)
	}
}
