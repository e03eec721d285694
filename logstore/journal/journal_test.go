package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeJournal creates a journal holding recs and returns its path and the
// offset of every frame.
func writeJournal(t testing.TB, recs ...string) (string, []int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "j")
	f, err := Open(path, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for _, r := range recs {
		off, err := f.Append([]byte(r))
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, offs
}

// replayAll opens path and returns the payloads it replays and the damage seen.
func replayAll(t testing.TB, path string, opts Options) ([]string, []Damage, error) {
	t.Helper()
	var got []string
	var dmg []Damage
	opts.OnDamage = func(d Damage) { dmg = append(dmg, d) }
	f, err := Open(path, opts, func(_ int64, p []byte) error {
		got = append(got, string(p))
		return nil
	})
	if err != nil {
		return got, dmg, err
	}
	return got, dmg, f.Close()
}

func TestAppendReplay(t *testing.T) {
	recs := []string{"a", "", `{"x":1}`, string(bytes.Repeat([]byte("z"), 3*chunk))}
	path, offs := writeJournal(t, recs...)
	got, dmg, err := replayAll(t, path, Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, got); diff != "" {
		t.Errorf("replay mismatch (-want +got):\n%s", diff)
	}
	if len(dmg) != 0 {
		t.Errorf("damage = %v, want none", dmg)
	}
	f, err := Open(path, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, off := range offs {
		p, err := f.ReadAt(off)
		if err != nil {
			t.Fatalf("ReadAt(%d): %v", off, err)
		}
		if string(p) != recs[i] {
			t.Errorf("ReadAt(%d) = %q, want %q", off, p, recs[i])
		}
	}
	if _, err := f.ReadAt(offs[1] + 1); err == nil {
		t.Errorf("ReadAt(misaligned) succeeded, want error")
	}
}

// TestTornTail truncates the file at every byte of its last frame: reopening
// must recover exactly the frames before it, and leave the file at that length.
func TestTornTail(t *testing.T) {
	recs := []string{"first", "second", "the last record"}
	path, offs := writeJournal(t, recs...)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := offs[len(offs)-1]
	for cut := last; cut < int64(len(full)); cut++ {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "j")
			if err := os.WriteFile(p, full[:cut], 0o600); err != nil {
				t.Fatal(err)
			}
			got, dmg, err := replayAll(t, p, Options{Strict: true})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if diff := cmp.Diff(recs[:2], got); diff != "" {
				t.Errorf("replay mismatch (-want +got):\n%s", diff)
			}
			if cut > last && (len(dmg) != 1 || !dmg[0].Tail || dmg[0].Offset != last) {
				t.Errorf("damage = %+v, want one torn tail at %d", dmg, last)
			}
			if st, _ := os.Stat(p); st.Size() != last {
				t.Errorf("size after recovery = %d, want %d", st.Size(), last)
			}
			// The recovered file accepts appends that replay afterwards.
			f, err := Open(p, Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Append([]byte("again")); err != nil {
				t.Fatal(err)
			}
			f.Close()
			got, _, err = replayAll(t, p, Options{Strict: true})
			if err != nil || len(got) != 3 || got[2] != "again" {
				t.Errorf("after append: %q, %v", got, err)
			}
		})
	}
}

// TestBitFlips flips every bit of the file once. A flip in the header is
// refused, a flip in the last frame drops that frame as a torn tail, and a
// flip in an earlier frame is a CorruptError in strict mode and a skipped
// frame otherwise. No flip may ever yield a payload that was not written.
func TestBitFlips(t *testing.T) {
	recs := []string{"alpha", "bravo", "charlie"}
	path, offs := writeJournal(t, recs...)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	frameOf := func(pos int64) int {
		for i := len(offs) - 1; i >= 0; i-- {
			if pos >= offs[i] {
				return i
			}
		}
		return -1
	}
	dir := t.TempDir()
	for pos := int64(0); pos < int64(len(full)); pos++ {
		for bit := 0; bit < 8; bit++ {
			b := bytes.Clone(full)
			b[pos] ^= 1 << bit
			p := filepath.Join(dir, fmt.Sprintf("j%d_%d", pos, bit))
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			i := frameOf(pos)
			got, _, err := replayAll(t, p, Options{Strict: true})
			switch {
			case i < 0:
				if !errors.Is(err, ErrNotJournal) {
					t.Errorf("flip %d.%d in header: err = %v, want ErrNotJournal", pos, bit, err)
				}
			case i == len(offs)-1:
				if err != nil || !cmp.Equal(got, recs[:i]) {
					t.Errorf("flip %d.%d in last frame: got %q, %v; want %q", pos, bit, got, err, recs[:i])
				}
			default:
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Offset != offs[i] {
					t.Errorf("flip %d.%d in frame %d: err = %v, want CorruptError at %d", pos, bit, i, err, offs[i])
				}
			}
			if i >= 0 && i < len(offs)-1 {
				// Lenient: the damaged frame is skipped, the rest kept.
				got, dmg, err := replayAll(t, p, Options{})
				want := append(append([]string{}, recs[:i]...), recs[i+1:]...)
				if err != nil || !cmp.Equal(got, want) || len(dmg) != 1 || dmg[0].Offset != offs[i] {
					t.Errorf("lenient flip %d.%d: got %q %+v %v; want %q", pos, bit, got, dmg, err, want)
				}
			}
		}
	}
}

func TestTornHeader(t *testing.T) {
	for n := 0; n < HeaderSize; n++ {
		p := filepath.Join(t.TempDir(), "j")
		if err := os.WriteFile(p, fileMagic[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		got, _, err := replayAll(t, p, Options{Strict: true})
		if err != nil || len(got) != 0 {
			t.Errorf("header cut at %d: got %q, %v", n, got, err)
		}
	}
	p := filepath.Join(t.TempDir(), "j")
	if err := os.WriteFile(p, []byte("hello world"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := replayAll(t, p, Options{}); !errors.Is(err, ErrNotJournal) {
		t.Errorf("foreign file: err = %v, want ErrNotJournal", err)
	}
}

func TestCompact(t *testing.T) {
	path, _ := writeJournal(t, "a", "b", "c")
	f, err := Open(path, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Compact(func(w *Writer) error {
		_, err := w.Append([]byte("only"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Append([]byte("after")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := replayAll(t, path, Options{Strict: true})
	if err != nil || !cmp.Equal(got, []string{"only", "after"}) {
		t.Errorf("after compact: %q, %v", got, err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
}

func TestCommittedAndCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	f, err := Open(path, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Append([]byte("durable")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	n := f.Committed()
	if _, err := f.Append([]byte("not yet synced")); err != nil {
		t.Fatal(err)
	}
	if f.Committed() != n || f.Size() <= n {
		t.Fatalf("Committed = %d, Size = %d after unsynced append", f.Committed(), f.Size())
	}
	sec, err := f.Capture()
	if err != nil {
		t.Fatal(err)
	}
	defer sec.Close()
	var buf bytes.Buffer
	if m, err := io.Copy(&buf, sec.Reader()); err != nil || m != n {
		t.Fatalf("Capture copies %d, %v; want the %d committed bytes", m, err, n)
	}
	cp := filepath.Join(t.TempDir(), "copy")
	if err := os.WriteFile(cp, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _, err := replayAll(t, cp, Options{Strict: true})
	if err != nil || !cmp.Equal(got, []string{"durable"}) {
		t.Errorf("snapshot replay = %q, %v", got, err)
	}
}

func TestConcurrentAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	f, err := Open(path, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				off, err := f.Append(fmt.Appendf(nil, "%d-%d", g, i))
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := f.ReadAt(off); err != nil {
					t.Error(err)
				}
				if i%10 == 0 {
					if err := f.Sync(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	// A stuck lock fails the test with a message, not at go test's timeout.
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("concurrent appends not done after 30s")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := replayAll(t, path, Options{Strict: true})
	if err != nil || len(got) != 200 {
		t.Errorf("replayed %d records, %v; want 200", len(got), err)
	}
}

func TestClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	f, err := Open(path, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := f.Append([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close: %v, want ErrClosed", err)
	}
	if err := f.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
}

// FuzzOpen feeds arbitrary bytes after a valid header to Open. It must never
// panic, every replayed payload must carry a valid checksum (it re-reads
// each one with ReadAt), and opening the recovered file again must replay the
// same payloads with no further damage.
func FuzzOpen(f *testing.F) {
	var seed []byte
	for _, r := range []string{"a", `{"k":"v"}`, ""} {
		seed = AppendFrame(seed, []byte(r))
	}
	f.Add(seed)
	f.Add(seed[:len(seed)-1])
	f.Add(append(bytes.Clone(frameMagic), 0xff, 0xff, 0xff, 0x7f))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		p := filepath.Join(t.TempDir(), "j")
		if err := os.WriteFile(p, append(bytes.Clone(fileMagic), body...), 0o600); err != nil {
			t.Fatal(err)
		}
		var offs []int64
		var first []string
		j, err := Open(p, Options{}, func(off int64, b []byte) error {
			if len(b) > MaxRecord {
				t.Fatalf("payload of %d bytes exceeds MaxRecord", len(b))
			}
			offs = append(offs, off)
			first = append(first, string(b))
			return nil
		})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		for i, off := range offs {
			b, err := j.ReadAt(off)
			if err != nil || string(b) != first[i] {
				t.Fatalf("ReadAt(%d) = %q, %v; want %q", off, b, err, first[i])
			}
		}
		j.Close()
		second, dmg, err := replayAll(t, p, Options{})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		for _, d := range dmg {
			if d.Tail {
				t.Fatalf("reopen found a torn tail %+v after recovery", d)
			}
		}
		if !cmp.Equal(first, second, cmp.Comparer(func(a, b string) bool { return a == b })) && !(len(first) == 0 && len(second) == 0) {
			t.Fatalf("reopen replayed %q, first open %q", second, first)
		}
	})
}

// TestOpenSized: a journal of the size given opens without replay and
// takes appends after its last frame; one of another size, without the
// header or missing is refused, untouched.
func TestOpenSized(t *testing.T) {
	path, _ := writeJournal(t, "a", "bb")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	headerless := filepath.Join(t.TempDir(), "h")
	if err := os.WriteFile(headerless, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		size int64
		want error
	}{
		{"another size", path, size - 1, ErrSizeChanged},
		{"larger", path, size + 12, ErrSizeChanged},
		{"no header", headerless, size, ErrNotJournal},
		{"missing", path + ".none", size, os.ErrNotExist},
	} {
		if f, err := OpenSized(tc.path, Options{}, tc.size); !errors.Is(err, tc.want) {
			t.Errorf("%s: OpenSized = %v, %v; want %v", tc.name, f, err, tc.want)
		}
	}
	f, err := OpenSized(path, Options{}, size)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != size || f.Committed() != size {
		t.Fatalf("Size %d, Committed %d, want %d", f.Size(), f.Committed(), size)
	}
	if _, err := f.Append([]byte("ccc")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, damage, err := replayAll(t, path, Options{Strict: true})
	if err != nil || len(damage) > 0 || !slices.Equal(got, []string{"a", "bb", "ccc"}) {
		t.Fatalf("after OpenSized and an append: %q, %v, %v", got, damage, err)
	}
}
