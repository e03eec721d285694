package settings

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"strongbox/logstore/journal"
	"strongbox/logstore/journal/journaltest"
)

// testClock is a settable clock for Health's probes.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// newFaultyStore opens a store whose journal lives on a journaltest.FS.
func newFaultyStore(t *testing.T, logger *slog.Logger) (*Store, *journaltest.FS, *testClock, string) {
	t.Helper()
	clk := &testClock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	fsys := journaltest.New()
	path := filepath.Join(t.TempDir(), "settings.journal")
	s, err := Open(path, Options{FS: fsys, Now: clk.Now, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, fsys, clk, path
}

// TestFullDiskThenFreed: with the disk full a change fails with
// journal.ErrStorageFull and changes nothing, Health reports it, and once
// space is freed the store saves again and reports healthy without a
// restart. A reopened store holds exactly the acknowledged changes.
func TestFullDiskThenFreed(t *testing.T) {
	s, fsys, clk, path := newFaultyStore(t, nil)
	if _, err := patch(s, `{"meta":{"appName":"Before"}}`); err != nil {
		t.Fatal(err)
	}
	if err := s.Health(); err != nil {
		t.Fatalf("Health() = %v on a healthy store", err)
	}

	fsys.SetFree(40)
	if _, err := patch(s, `{"meta":{"appName":"Refused"}}`); !errors.Is(err, journal.ErrStorageFull) {
		t.Fatalf("patch on a full disk: err = %v, want journal.ErrStorageFull", err)
	}
	if got := s.Get().Meta.AppName; got != "Before" {
		t.Errorf("appName = %q after a refused change, want Before", got)
	}
	if err := s.Health(); !errors.Is(err, journal.ErrStorageFull) {
		t.Errorf("Health() = %v while full, want journal.ErrStorageFull", err)
	}

	fsys.SetFree(-1)
	if err := s.Health(); err == nil {
		t.Errorf("Health() probed again within probeInterval")
	}
	clk.Add(probeInterval)
	if err := s.Health(); err != nil {
		t.Errorf("Health() = %v after space was freed, want nil", err)
	}
	if _, err := patch(s, `{"meta":{"appName":"After"}}`); err != nil {
		t.Fatalf("patch after space was freed: %v", err)
	}
	s.Close()

	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := s2.Get().Meta.AppName; got != "After" {
		t.Errorf("after reopen, appName = %q, want After", got)
	}
}

// TestSlowSyncLogged: an fsync slower than the durability window the store
// promises (journal.DefaultSyncWindow) is logged as a warning on the
// store's logger.
func TestSlowSyncLogged(t *testing.T) {
	var buf syncBuffer
	s, fsys, _, _ := newFaultyStore(t, slog.New(slog.NewTextHandler(&buf, nil)))
	if _, err := patch(s, `{"meta":{"appName":"Fast"}}`); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "slow fsync") {
		t.Fatalf("a fast fsync was logged: %s", buf.String())
	}
	fsys.SetSyncDelay(journal.DefaultSyncWindow + 50*time.Millisecond)
	if _, err := patch(s, `{"meta":{"appName":"Slow"}}`); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "slow fsync") {
		t.Errorf("log after a slow fsync = %q, want a slow fsync warning", got)
	}
}

// TestCompactionAfterCommit: a change is durable before the journal is
// compacted, so a compaction that fails after putting its new file in place
// (the folder sync failed) neither refuses the change nor leaves a refused
// change on disk: the change is answered as saved, and holds after a
// reopen.
func TestCompactionAfterCommit(t *testing.T) {
	fsys := journaltest.New()
	path := filepath.Join(t.TempDir(), "settings.journal")
	s, err := Open(path, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	// Grow the journal until the next change takes it past the 256 KiB at
	// which save compacts.
	set := func(name string) error {
		_, err := s.Update(func(v *Settings) error { v.Meta.AppName = name; return nil })
		return err
	}
	before := fileSize(t, path)
	if err := set("app 1000"); err != nil {
		t.Fatal(err)
	}
	delta := fileSize(t, path) - before
	for i := 1001; fileSize(t, path)+delta <= 256<<10; i++ {
		if i > 2000 {
			t.Fatal("the journal does not grow")
		}
		if err := set("app " + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	fsys.FailDirSyncs(syscall.EIO)
	if err := set("Kept"); err != nil {
		t.Fatalf("Update whose compaction fails afterwards = %v, want the change saved", err)
	}
	if got := s.Get().Meta.AppName; got != "Kept" {
		t.Errorf("current appName = %q, want Kept", got)
	}
	if size := fileSize(t, path); size > 64<<10 {
		t.Errorf("journal is %d bytes: the failed compaction's file was not put in place, so the test tested nothing", size)
	}
	fsys.FailDirSyncs(nil)
	s.Close()
	s, err = Open(path, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Get().Meta.AppName; got != "Kept" {
		t.Errorf("after reopen appName = %q, want Kept", got)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
