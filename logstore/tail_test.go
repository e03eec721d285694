package logstore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAfter reads the store in order from positions in the middle of
// chunks, at their edges and past the end, as the export does.
func TestAfter(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	s := mustOpen(t, t.TempDir(), smallChunks(testOptions(c, h), 7)) // many chunks from few rows
	for i := 1; i <= 30; i++ {
		s.Add(req("GET", fmt.Sprintf("/%d", i), 200))
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		seq        int64
		n          int
		first      string // message of the first entry; "" for none
		count      int
		last, newe int64
	}{
		{0, 5, "GET /1", 5, 5, 30},
		{5, 3, "GET /6", 3, 8, 30},
		{6, 100, "GET /7", 24, 30, 30}, // the last row of a chunk
		{7, 1, "GET /8", 1, 8, 30},     // the first row of a chunk
		{29, 10, "GET /30", 1, 30, 30},
		{30, 10, "", 0, 30, 30},
		{99, 10, "", 0, 99, 30}, // past the end: nothing, Last unchanged
		{3, 0, "", 0, 3, 30},
	} {
		tl, err := s.After(tc.seq, tc.n)
		if err != nil {
			t.Fatalf("After(%d, %d): %v", tc.seq, tc.n, err)
		}
		first := ""
		if len(tl.Entries) > 0 {
			first = tl.Entries[0].Message
		}
		if first != tc.first || len(tl.Entries) != tc.count || tl.Last != tc.last || tl.Newest != tc.newe || tl.Gap != 0 || tl.Key == 0 {
			t.Errorf("After(%d, %d) = first %q, %d entries, last %d, newest %d, gap %d, key %x; want %q, %d, %d, %d, 0, a key",
				tc.seq, tc.n, first, len(tl.Entries), tl.Last, tl.Newest, tl.Gap, tl.Key, tc.first, tc.count, tc.last, tc.newe)
		}
		for i, e := range tl.Entries {
			if want := fmt.Sprintf("GET /%d", tc.seq+1+int64(i)); e.Message != want {
				t.Errorf("After(%d, %d)[%d] = %q, want %q", tc.seq, tc.n, i, e.Message, want)
			}
		}
	}
}

// TestAfterGap: the entries retention deleted before a reader got to them
// are counted in Gap, and the read goes on from the oldest kept.
func TestAfterGap(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	opts := testOptions(c, h)
	opts.MaxDays = 1
	s := mustOpen(t, t.TempDir(), opts)
	for day := range 3 {
		for range 10 {
			s.Add(req("GET", fmt.Sprintf("/day%d", day), 200))
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		c.Add(24 * time.Hour)
	}
	c.Add(-24 * time.Hour)
	if err := s.SetRetention(1, 0); err != nil {
		t.Fatal(err)
	}
	tl, err := s.After(3, 100)
	if err != nil {
		t.Fatal(err)
	}
	// Day 0 (seq 1-10) is gone: 7 entries after 3 were never read.
	if len(tl.Entries) == 0 || tl.Entries[0].Message != "GET /day1" || tl.Gap != 7 || tl.Last != 30 {
		t.Fatalf("After(3) over a store without day 0: %d entries, first %v, gap %d, last %d; want day1's first, gap 7, last 30",
			len(tl.Entries), messages(tl.Entries[:min(1, len(tl.Entries))]), tl.Gap, tl.Last)
	}
}

// TestAfterKey: the key names the directory, across reopening; a store
// whose directory was emptied (maxDays 0, then Open) has another.
func TestAfterKey(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Add(req("GET", "/", 200))
	s.Close()
	a, _ := s.After(0, 1)
	if a.Key != 0 || a.Entries != nil {
		t.Errorf("After on a closed store = %+v, want nothing", a)
	}
	s = mustOpen(t, dir, opts)
	first, err := s.After(0, 1)
	if err != nil || first.Key == 0 || len(first.Entries) != 1 {
		t.Fatalf("After(0, 1) after reopening = %+v, %v", first, err)
	}
	s.Close()
	// A store emptied by maxDays 0 keeps its key and its sequence.
	opts.MaxDays = 0
	s2 := mustOpen(t, dir, opts)
	s2.Close()
	opts.MaxDays = 5
	s2 = mustOpen(t, dir, opts)
	s2.Add(req("GET", "/2", 200))
	s2.Flush()
	kept, _ := s2.After(0, 1)
	if kept.Key != first.Key || kept.Newest != 2 || kept.Gap != 1 {
		t.Errorf("after maxDays 0: key %x newest %d gap %d, want key %x, newest 2, gap 1", kept.Key, kept.Newest, kept.Gap, first.Key)
	}
	s2.Close()
	// Another directory (its segments gone) has another key.
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	for _, p := range segs {
		os.Remove(p)
	}
	opts.Rand = nil
	s3 := mustOpen(t, dir, opts)
	other, _ := s3.After(0, 1)
	if other.Key == first.Key || other.Key == 0 || other.Newest != 0 {
		t.Errorf("a new directory: key %x newest %d, want a key other than %x and no entry", other.Key, other.Newest, first.Key)
	}
}
