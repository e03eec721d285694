package logstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"strongbox/logstore/journal"
)

// TestRetentionOnFullDisk: on a full disk, retention (a lower maxDays,
// maxDays 0, the writer's periodic pass) deletes every expired segment, the
// active one included although no empty one can be started first, and
// succeeds. When the deletion gives the space back, the empty segment is
// created at once; when the disk stays full (another process takes the
// space), Health reports it until its probe finds room. Either way logging
// goes on without a restart, with the sequence continued.
func TestRetentionOnFullDisk(t *testing.T) {
	t.Parallel()
	applies := []struct {
		name  string
		apply func(s *Store, c *clock) error
	}{
		{"maxDays 0", func(s *Store, _ *clock) error { return s.SetRetention(0, 0) }},
		{"lower maxDays", func(s *Store, c *clock) error {
			c.Add(2 * 24 * time.Hour)
			return s.SetRetention(1, 0)
		}},
		{"retention pass", func(s *Store, c *clock) error {
			c.Add(6 * 24 * time.Hour) // past Options.MaxDays 5
			return s.enforceRetention()
		}},
	}
	for _, stays := range []bool{false, true} {
		for _, tc := range applies {
			t.Run(fmt.Sprintf("%s/staysFull=%v", tc.name, stays), func(t *testing.T) {
				c, h := newClock(), &logRecorder{}
				dir := t.TempDir()
				opts, fsys := faultyOptions(c, h)
				opts.segmentSize = 2048
				s := mustOpen(t, dir, opts)
				if err := addFlush(s, urls("a", 100)...); err != nil {
					t.Fatal(err)
				}
				old := segmentFiles(t, dir)
				if len(old) < 3 {
					t.Fatalf("%d segments, want several", len(old))
				}
				fsys.SetFree(0)
				if stays {
					fsys.FailWrites(syscall.ENOSPC)
				}
				if err := tc.apply(s, c); err != nil {
					t.Fatalf("retention on a full disk: %v", err)
				}
				if n := s.Len(); n != 0 {
					t.Errorf("%d entries left, want 0", n)
				}
				for name := range segmentFiles(t, dir) {
					if _, ok := old[name]; ok {
						t.Errorf("segment %s not deleted", name)
					}
				}
				if fsys.Free() <= 0 {
					t.Errorf("free space %d after the deletion, want the segments' bytes back", fsys.Free())
				}
				if err := s.Health(); stays != errors.Is(err, journal.ErrStorageFull) {
					t.Errorf("Health() after the deletion = %v, want storage full %v", err, stays)
				}
				if stays {
					if n := len(segmentFiles(t, dir)); n != 0 {
						t.Errorf("%d segment files while the disk stays full, want none", n)
					}
					fsys.FailWrites(nil)
					c.Add(time.Second)
					if err := s.Health(); err != nil {
						t.Errorf("Health() once the disk has room = %v, want nil", err)
					}
				}

				if err := s.SetRetention(5, 0); err != nil {
					t.Fatal(err)
				}
				if err := addFlush(s, urls("b", 3)...); err != nil {
					t.Fatalf("Flush after the deletion: %v", err)
				}
				want := urls("b", 3)
				got := all(t, s)
				if seq, _ := idSeq(got[0].ID); seq != 101 {
					t.Errorf("first new entry has seq %d, want 101 (the sequence goes on)", seq)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				opts.FS = nil
				if got := storedURLs(t, mustOpen(t, dir, opts)); !slices.Equal(got, want) {
					t.Errorf("after reopen: stored %q, want %q", got, want)
				}
			})
		}
	}
}

// TestOpenOnFullDisk: a store opens on a disk that refuses every write
// (deleting still works), serves what it holds, counts the entries it
// cannot write, and once the disk takes writes again, Health's probe (at
// most once a second) finds it out without a write and logging resumes,
// without a restart.
func TestOpenOnFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		seed    int  // entries stored before the disk fills
		maxDays int  // at Open
		torn    bool // a last segment torn in its header, as a crash creating it leaves
		kept    int  // entries Open keeps
		full    bool // Health reports the full disk right after Open
	}{
		{name: "logs kept", seed: 10, maxDays: 5, kept: 10},
		{name: "logging off drops all", seed: 10, maxDays: 0, full: true},
		{name: "no segment yet", full: true},
		{name: "torn new segment", seed: 10, maxDays: 5, torn: true, kept: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, h := newClock(), &logRecorder{}
			dir := t.TempDir()
			opts, fsys := faultyOptions(c, h)
			if tc.seed > 0 {
				s := mustOpen(t, dir, opts)
				if err := addFlush(s, urls("a", tc.seed)...); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if tc.torn {
				var key uint64
				for name := range segmentFiles(t, dir) {
					_, key, _ = parseSegmentName(name)
				}
				if err := os.WriteFile(filepath.Join(dir, segmentName(int64(tc.seed+1), key)), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			fsys.FailWrites(syscall.ENOSPC)
			opts.MaxDays = tc.maxDays
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatalf("Open on a full disk: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			if got := len(storedURLs(t, s)); got != tc.kept {
				t.Errorf("List after Open: %d entries, want %d", got, tc.kept)
			}
			if err := s.Health(); tc.full != errors.Is(err, journal.ErrStorageFull) {
				t.Errorf("Health() after Open = %v, want storage full %v", err, tc.full)
			}
			for name, size := range segmentFiles(t, dir) {
				if size < journal.HeaderSize {
					t.Errorf("segment %s of %d bytes left", name, size)
				}
			}
			if err := s.SetRetention(5, 0); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := addFlush(s, urls("b", 2)...); !errors.Is(err, journal.ErrStorageFull) {
					t.Fatalf("Flush on a full disk = %v, want journal.ErrStorageFull", err)
				}
			}
			if err := s.Health(); !errors.Is(err, journal.ErrStorageFull) {
				t.Errorf("Health() while full = %v, want journal.ErrStorageFull", err)
			}

			fsys.FailWrites(nil)
			c.Add(time.Second)
			if err := s.Health(); err != nil {
				t.Errorf("Health() once the disk takes writes = %v, want nil", err)
			}
			if n := countMessages(h, "logstore: writes work again entriesLost=6"); n != 1 {
				t.Errorf("recovery logged %d times, want once: %q", n, h.messages())
			}
			if err := addFlush(s, urls("c", 2)...); err != nil {
				t.Fatalf("Flush once the disk takes writes: %v", err)
			}
			want := append(urls("a", tc.kept), urls("c", 2)...)
			if got := storedURLs(t, s); !slices.Equal(got, want) {
				t.Errorf("stored %q, want %q", got, want)
			}
		})
	}
}

// BenchmarkRetentionOnFullDisk times maxDays 0 deleting 1,000 segments on
// a disk with no free byte (the setup is not timed).
func BenchmarkRetentionOnFullDisk(b *testing.B) {
	const segments = 1000
	for range b.N {
		b.StopTimer()
		c, h := newClock(), &logRecorder{}
		opts, fsys := faultyOptions(c, h)
		opts.segmentSize = 256
		s, err := Open(b.TempDir(), opts)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; len(s.segs) < segments; i++ {
			s.Add(req("GET", fmt.Sprintf("/x%d", i), 200))
			if i%100 == 99 {
				s.Flush()
			}
		}
		s.Flush()
		n := len(s.segs)
		fsys.SetFree(0)
		b.StartTimer()
		if err := s.SetRetention(0, 0); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if s.Len() != 0 {
			b.Fatalf("%d entries left", s.Len())
		}
		b.ReportMetric(float64(n), "segments/op")
		s.Close()
	}
}
