package journal_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"strongbox/logstore/journal"
	"strongbox/logstore/journal/journaltest"
)

// openFaulty opens a new journal on a journaltest.FS.
func openFaulty(t *testing.T) (*journal.File, *journaltest.FS, string) {
	t.Helper()
	fsys := journaltest.New()
	path := filepath.Join(t.TempDir(), "j")
	f, err := journal.Open(path, journal.Options{FS: fsys}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, fsys, path
}

// appendSync appends p and syncs it, as the stores do before acknowledging.
func appendSync(f *journal.File, p string) error {
	if _, err := f.Append([]byte(p)); err != nil {
		return err
	}
	return f.Sync()
}

// replay returns the payloads of the journal at path, opened strictly.
func replay(t *testing.T, path string) []string {
	t.Helper()
	var got []string
	f, err := journal.Open(path, journal.Options{Strict: true, OnDamage: func(d journal.Damage) {
		t.Errorf("damage %+v in a journal that should be clean", d)
	}}, func(_ int64, p []byte) error {
		got = append(got, string(p))
		return nil
	})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	f.Close()
	return got
}

// checkLength fails unless the file at path is exactly n bytes long: no part
// of a failed frame may stay behind.
func checkLength(t *testing.T, path string, n int64) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != n {
		t.Errorf("file is %d bytes, want %d", st.Size(), n)
	}
}

// TestFullThenFreed fills the disk in the middle of a frame: the append
// fails with ErrStorageFull (and ENOSPC), the part written is cut off, the
// file keeps every acknowledged frame, and once space is freed the next
// append works without reopening.
func TestFullThenFreed(t *testing.T) {
	tests := []struct {
		name string
		free int64 // bytes left when the failing frame is written
	}{
		{"nothing fits", 0},
		{"header fits", 5},
		{"half a frame fits", 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, fsys, path := openFaulty(t)
			if err := appendSync(f, "acknowledged"); err != nil {
				t.Fatal(err)
			}
			good := f.Size()
			fsys.SetFree(tt.free)
			err := appendSync(f, strings.Repeat("x", 100))
			if !errors.Is(err, journal.ErrStorageFull) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append on a full disk: err = %v, want ErrStorageFull wrapping ENOSPC", err)
			}
			if errors.Is(err, journal.ErrStorageFailed) {
				t.Errorf("err = %v: a full disk is not a failing one", err)
			}
			if f.Size() != good || f.Committed() != good {
				t.Errorf("Size, Committed = %d, %d after the failure; want %d", f.Size(), f.Committed(), good)
			}
			checkLength(t, path, good)
			if !errors.Is(f.Fault(), journal.ErrStorageFull) {
				t.Errorf("Fault() = %v, want ErrStorageFull", f.Fault())
			}
			// Still full: fails again, the same way, and leaves nothing.
			if err := appendSync(f, strings.Repeat("y", 100)); !errors.Is(err, journal.ErrStorageFull) {
				t.Errorf("second append: err = %v, want ErrStorageFull", err)
			}
			checkLength(t, path, good)

			fsys.SetFree(-1)
			if err := appendSync(f, "after"); err != nil {
				t.Fatalf("append after space was freed: %v", err)
			}
			if f.Fault() != nil {
				t.Errorf("Fault() = %v after a good write, want nil", f.Fault())
			}
			f.Close()
			if got, want := replay(t, path), []string{"acknowledged", "after"}; !cmp.Equal(got, want) {
				t.Errorf("replay = %q, want %q", got, want)
			}
		})
	}
}

// TestFailedSyncRollsBack makes fsync fail: the frames since the last good
// sync are dropped (the kernel may have lost their pages), the error says
// storage is failing, not full, and the file works again once fsync does.
func TestFailedSyncRollsBack(t *testing.T) {
	f, fsys, path := openFaulty(t)
	if err := appendSync(f, "a"); err != nil {
		t.Fatal(err)
	}
	good := f.Size()
	fsys.FailSyncs(syscall.EIO)
	err := appendSync(f, "b")
	if !errors.Is(err, journal.ErrStorageFailed) || !errors.Is(err, syscall.EIO) || errors.Is(err, journal.ErrStorageFull) {
		t.Fatalf("sync failure: err = %v, want ErrStorageFailed wrapping EIO", err)
	}
	if f.Size() != good || f.Committed() != good {
		t.Errorf("Size, Committed = %d, %d; want the durable prefix %d", f.Size(), f.Committed(), good)
	}
	fsys.FailSyncs(nil)
	if err := appendSync(f, "c"); err != nil {
		t.Fatalf("append once fsync works again: %v", err)
	}
	f.Close()
	if got, want := replay(t, path), []string{"a", "c"}; !cmp.Equal(got, want) {
		t.Errorf("replay = %q, want %q", got, want)
	}
}

// TestWriteErrorNotFull: an I/O error other than ENOSPC is ErrStorageFailed.
func TestWriteErrorNotFull(t *testing.T) {
	f, fsys, _ := openFaulty(t)
	fsys.FailWrites(syscall.EIO)
	err := appendSync(f, "a")
	if !errors.Is(err, journal.ErrStorageFailed) || errors.Is(err, journal.ErrStorageFull) {
		t.Fatalf("err = %v, want ErrStorageFailed only", err)
	}
	fsys.FailWrites(nil)
	if err := appendSync(f, "b"); err != nil {
		t.Fatal(err)
	}
}

// TestCompactFull runs out of space while Compact writes the new file: the
// temporary file is removed, the old file stays whole and in use, and after
// space is freed both appends and a later compaction work.
func TestCompactFull(t *testing.T) {
	f, fsys, path := openFaulty(t)
	var want []string
	for i := range 20 {
		p := strings.Repeat(string(rune('a'+i)), 50)
		if err := appendSync(f, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	size := f.Size()
	fsys.SetFree(100)
	err := f.Compact(func(w *journal.Writer) error {
		for _, p := range want {
			if _, err := w.Append([]byte(p)); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, journal.ErrStorageFull) {
		t.Fatalf("Compact on a full disk: err = %v, want ErrStorageFull", err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
	if fsys.Free() != 100 {
		t.Errorf("free space = %d after the failed compaction, want all 100 bytes back", fsys.Free())
	}
	checkLength(t, path, size)
	if err := appendSync(f, "small"); err != nil {
		t.Fatalf("append that fits after a failed compaction: %v", err)
	}
	want = append(want, "small")
	fsys.SetFree(-1)
	if err := f.Compact(func(w *journal.Writer) error {
		_, err := w.Append([]byte("compacted"))
		return err
	}); err != nil {
		t.Fatalf("Compact after space was freed: %v", err)
	}
	if f.Fault() != nil {
		t.Errorf("Fault() = %v after a good compaction", f.Fault())
	}
	f.Close()
	if got := replay(t, path); !cmp.Equal(got, []string{"compacted"}) {
		t.Errorf("replay = %q, want [compacted]", got)
	}
}

// TestCompactRenameNotDurable: Compact renamed the new file into place but
// could not fsync the directory. The new file is in use; nothing appended
// to it is acknowledged until the directory sync succeeds, and then the
// file works as before.
func TestCompactRenameNotDurable(t *testing.T) {
	f, fsys, path := openFaulty(t)
	if err := appendSync(f, "old"); err != nil {
		t.Fatal(err)
	}
	fsys.FailDirSyncs(syscall.EIO)
	err := f.Compact(func(w *journal.Writer) error {
		_, err := w.Append([]byte("compacted"))
		return err
	})
	if !errors.Is(err, journal.ErrStorageFailed) {
		t.Fatalf("Compact with a failing directory sync: err = %v, want ErrStorageFailed", err)
	}
	if err := appendSync(f, "refused"); !errors.Is(err, journal.ErrStorageFailed) {
		t.Errorf("append before the rename is durable: err = %v, want ErrStorageFailed", err)
	}
	fsys.FailDirSyncs(nil)
	if err := appendSync(f, "after"); err != nil {
		t.Fatalf("append once directory syncs work: %v", err)
	}
	if f.Fault() != nil {
		t.Errorf("Fault() = %v after a good sync", f.Fault())
	}
	f.Close()
	if got, want := replay(t, path), []string{"compacted", "after"}; !cmp.Equal(got, want) {
		t.Errorf("replay = %q, want %q", got, want)
	}
}

// TestProbe: a faulty file with nothing to write learns that the disk was
// freed through Probe, which leaves the file as it was.
func TestProbe(t *testing.T) {
	f, fsys, path := openFaulty(t)
	if err := appendSync(f, "a"); err != nil {
		t.Fatal(err)
	}
	if err := f.Probe(); err != nil {
		t.Errorf("Probe on a healthy file = %v", err)
	}
	good := f.Size()
	fsys.SetFree(10)
	if err := appendSync(f, strings.Repeat("x", 100)); err == nil {
		t.Fatal("append on a full disk succeeded")
	}
	if err := f.Probe(); !errors.Is(err, journal.ErrStorageFull) {
		t.Errorf("Probe while full = %v, want ErrStorageFull", err)
	}
	checkLength(t, path, good)
	if fsys.Free() != 10 {
		t.Errorf("free = %d after probes, want 10", fsys.Free())
	}
	fsys.SetFree(-1)
	if err := f.Probe(); err != nil {
		t.Errorf("Probe after space was freed = %v", err)
	}
	if f.Fault() != nil {
		t.Errorf("Fault() = %v after a good probe", f.Fault())
	}
	checkLength(t, path, good)
	f.Close()
	if got := replay(t, path); !cmp.Equal(got, []string{"a"}) {
		t.Errorf("replay = %q, want [a]", got)
	}
}

// TestOpenFullLeavesNoFile: creating a journal on a full disk fails with
// ErrStorageFull and removes the file it created, so retries do not pile up
// empty files.
func TestOpenFullLeavesNoFile(t *testing.T) {
	fsys := journaltest.New()
	fsys.SetFree(0)
	dir := t.TempDir()
	for range 3 {
		_, err := journal.Open(filepath.Join(dir, "j"), journal.Options{FS: fsys}, nil)
		if !errors.Is(err, journal.ErrStorageFull) {
			t.Fatalf("Open on a full disk: err = %v, want ErrStorageFull", err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left behind: %v", ents)
	}
}

// TestSlowSyncWarns: an fsync slower than the durability window is logged.
func TestSlowSyncWarns(t *testing.T) {
	fsys := journaltest.New()
	var logs bytes.Buffer
	f, err := journal.Open(filepath.Join(t.TempDir(), "j"), journal.Options{
		FS:         fsys,
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
		SyncWindow: 5 * time.Millisecond,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := appendSync(f, "fast"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "slow fsync") {
		t.Skipf("this machine's fsync exceeds 5ms already: %s", logs.String())
	}
	fsys.SetSyncDelay(20 * time.Millisecond)
	if err := appendSync(f, "slow"); err != nil {
		t.Fatal(err)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN msg=\"journal: slow fsync\"") || !strings.Contains(got, "window=5ms") {
		t.Errorf("log = %q, want a slow fsync warning naming the window", got)
	}
}

// TestDiscard: Discard closes a journal without an fsync, even one whose
// disk refuses fsyncs, and the file is closed for every method after it.
func TestDiscard(t *testing.T) {
	f, fsys, _ := openFaulty(t)
	if err := appendSync(f, "a"); err != nil {
		t.Fatal(err)
	}
	syncs := fsys.Syncs()
	fsys.FailSyncs(syscall.EIO)
	if err := f.Discard(); err != nil {
		t.Fatalf("Discard() = %v, want nil", err)
	}
	if n := fsys.Syncs() - syncs; n != 0 {
		t.Errorf("Discard made %d fsyncs, want none", n)
	}
	if _, err := f.Append([]byte("b")); !errors.Is(err, journal.ErrClosed) {
		t.Errorf("Append after Discard = %v, want ErrClosed", err)
	}
	if err := f.Close(); !errors.Is(err, journal.ErrClosed) {
		t.Errorf("Close after Discard = %v, want ErrClosed", err)
	}
}
