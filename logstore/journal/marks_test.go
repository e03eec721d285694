package journal

import (
	"io"
	"path/filepath"
	"testing"
	"time"
)

// stepClock returns a clock that answers each instant of ts in turn, then
// the last one again.
func stepClock(ts ...time.Time) func() time.Time {
	i := 0
	return func() time.Time {
		t := ts[min(i, len(ts)-1)]
		i++
		return t
	}
}

// TestMarks checks the commit marks a capture sees: one per Sync that
// moved the durable prefix, at the instant the clock told, never going
// back in time, and a coarse first mark for a file reopened with frames.
func TestMarks(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "j")
	// Open (header), sync one, sync none, sync two; the clock steps back
	// at the third instant.
	f, err := Open(path, Options{Now: stepClock(t0, t0.Add(time.Second), t0.Add(time.Millisecond), t0.Add(3*time.Second))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	appendSync := func(payloads ...string) {
		t.Helper()
		for _, p := range payloads {
			if _, err := f.Append([]byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	appendSync("one")
	appendSync() // nothing new: no mark
	appendSync("two")
	appendSync("three")
	sec, err := f.Capture()
	if err != nil {
		t.Fatal(err)
	}
	defer sec.Close()
	one := HeaderSize + FrameSize(3)
	want := []Mark{
		{End: HeaderSize, Time: t0},
		{End: one, Time: t0.Add(time.Second)},
		{End: one + FrameSize(3), Time: t0.Add(time.Second)}, // clamped
		{End: one + FrameSize(3) + FrameSize(5), Time: t0.Add(3 * time.Second)},
	}
	if !marksEqual(sec.Marks, want) {
		t.Fatalf("marks = %v, want %v", sec.Marks, want)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err = Open(path, Options{Now: stepClock(t0.Add(time.Hour))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec2, err := f.Capture()
	if err != nil {
		t.Fatal(err)
	}
	defer sec2.Close()
	if want := []Mark{{End: sec.Size, Time: t0.Add(time.Hour), Coarse: true}}; !marksEqual(sec2.Marks, want) {
		t.Fatalf("marks after reopening = %v, want %v", sec2.Marks, want)
	}
	if sec2.Ident == sec.Ident {
		t.Fatalf("identity %x kept across a reopen", sec.Ident)
	}
}

func marksEqual(a, b []Mark) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].End != b[i].End || !a[i].Time.Equal(b[i].Time) || a[i].Coarse != b[i].Coarse {
			return false
		}
	}
	return true
}

// TestMarksBounded checks that a file keeps at most MaxMarks marks,
// merging the older half into a coarse one, and that the newest stay
// exact.
func TestMarksBounded(t *testing.T) {
	f, err := Open(filepath.Join(t.TempDir(), "j"), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range MaxMarks + 10 {
		if _, err := f.Append([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	sec, err := f.Capture()
	if err != nil {
		t.Fatal(err)
	}
	defer sec.Close()
	// The header's mark and MaxMarks+10 syncs: one merge at MaxMarks.
	if got, want := len(sec.Marks), MaxMarks/2+11; got != want {
		t.Fatalf("%d marks, want %d", got, want)
	}
	n := len(sec.Marks)
	if !sec.Marks[0].Coarse || sec.Marks[1].Coarse || sec.Marks[n-1].Coarse {
		t.Fatalf("coarse = %v, %v, …, %v; want only the first", sec.Marks[0].Coarse, sec.Marks[1].Coarse, sec.Marks[n-1].Coarse)
	}
	if last := sec.Marks[n-1].End; last != sec.Size {
		t.Fatalf("last mark ends at %d, want the size %d", last, sec.Size)
	}
}

// TestCapturePrior checks that a compaction changes the identity, and
// that the next capture (only that one) holds the replaced file in full,
// with the frames committed to it after an earlier capture, readable
// although the path now names the new file.
func TestCapturePrior(t *testing.T) {
	f, err := Open(filepath.Join(t.TempDir(), "j"), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	put := func(p string) {
		t.Helper()
		if _, err := f.Append([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	put("before")
	first, err := f.Capture()
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	put("tail")
	if err := f.Compact(func(w *Writer) error { _, err := w.Append([]byte("live")); return err }); err != nil {
		t.Fatal(err)
	}
	sec, err := f.Capture()
	if err != nil {
		t.Fatal(err)
	}
	defer sec.Close()
	if sec.Ident == first.Ident {
		t.Fatal("identity kept across a compaction")
	}
	p := sec.Prior
	if p == nil {
		t.Fatal("no Prior after a compaction")
	}
	if p.Ident != first.Ident || p.Size != first.Size+FrameSize(4) {
		t.Fatalf("Prior ident %x size %d, want %x %d", p.Ident, p.Size, first.Ident, first.Size+FrameSize(4))
	}
	if last := p.Marks[len(p.Marks)-1].End; last != p.Size {
		t.Fatalf("Prior's last mark ends at %d, want %d", last, p.Size)
	}
	b, err := io.ReadAll(p.Reader())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b[p.Size-4:]); got != "tail" {
		t.Fatalf("Prior ends with %q, want the old tail", got)
	}
	if want := []Mark{{End: sec.Size}}; len(sec.Marks) != 1 || sec.Marks[0].End != want[0].End {
		t.Fatalf("marks of the new file = %v, want one ending at %d", sec.Marks, sec.Size)
	}
	again, err := f.Capture()
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Prior != nil {
		t.Fatal("a second capture got the Prior again")
	}
}

// BenchmarkMarksAdd is the cost commit marks add to every Sync that
// moves the durable prefix, with the list full (merging the oldest).
func BenchmarkMarksAdd(b *testing.B) {
	m := marks{now: time.Now}
	for i := range MaxMarks {
		m.add(int64(i+1), false)
	}
	end := int64(MaxMarks)
	for b.Loop() {
		end++
		m.add(end, false)
	}
}
