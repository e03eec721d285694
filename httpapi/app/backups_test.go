package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"strongbox/backup"
)

// TestBackupsService: the Server's api.Backups, its defaults, and
// creates before, across and after restarts in place.
func TestBackupsService(t *testing.T) {
	t.Parallel()
	ts := startServer(t, t.TempDir(), func(c *Config) { c.Version = "1.2.3" }, nil)
	b := backups{ts.Server}
	if got := b.MaxUpload(); got != DefaultMaxUpload {
		t.Errorf("MaxUpload() = %d, want %d", got, DefaultMaxUpload)
	}
	if got := b.Limits(); got.Check == nil {
		t.Error("Limits().Check = nil, want the check that opens an archive's stores")
	} else if d := backup.DefaultLimits; got.MaxUncompressed != d.MaxUncompressed || got.MaxRatio != d.MaxRatio || got.MaxFiles != d.MaxFiles {
		t.Errorf("Limits() = %+v, want %+v and a Check", got, backup.DefaultLimits)
	}
	dir, lock := ts.Server.bdir, b.Lock()

	if _, err := b.Create(t.Context(), "before.zip"); err != nil {
		t.Fatalf("Create before a restart: %v", err)
	}
	if err := ts.Restart(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if ts.Server.bdir != dir || b.Lock() != lock {
		t.Error("the backups folder or lock changed across a restart")
	}

	// Creates racing restarts either succeed or find the stores closed.
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 3 {
			if err := ts.Restart(t.Context(), nil); err != nil {
				t.Errorf("Restart: %v", err)
			}
		}
	})
	created := 0
	for i := range 10 {
		_, err := b.Create(t.Context(), fmt.Sprintf("race-%d.zip", i))
		switch {
		case err == nil:
			created++
		case !errors.Is(err, ErrNotOpen):
			t.Errorf("Create during restarts: %v", err)
		}
	}
	wg.Wait()

	if _, err := b.Create(t.Context(), "after.zip"); err != nil {
		t.Fatalf("Create after restarts: %v", err)
	}
	list, err := dir.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != created+2 {
		t.Errorf("List() has %d archives, want %d", len(list), created+2)
	}
	for _, i := range list {
		m, err := dir.Verify(i.Key, backup.Limits{})
		if err != nil {
			t.Errorf("Verify(%s): %v", i.Key, err)
			continue
		}
		if m.Strongbox != "1.2.3" {
			t.Errorf("%s: manifest version %q, want 1.2.3", i.Key, m.Strongbox)
		}
	}
	if _, err := b.Create(t.Context(), "after.zip"); !errors.Is(err, backup.ErrExists) {
		t.Errorf("Create of an existing key = %v, want ErrExists", err)
	}
}

// TestStartRemovesCrashedCreate: the temporary file a create was writing
// when the process crashed is gone once a server starts on the data dir;
// the archives stay.
func TestStartRemovesCrashedCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	backups := filepath.Join(dir, "backups")
	if err := os.MkdirAll(backups, 0o700); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(backups, ".tmp-0123456789abcdef01234567")
	if err := os.WriteFile(leftover, []byte("PK\x03\x04half an archive"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(backups, "kept.zip"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	startServer(t, dir, nil, nil)
	if _, err := os.Stat(leftover); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the crashed create's temporary file after start: %v, want it removed", err)
	}
	if _, err := os.Stat(filepath.Join(backups, "kept.zip")); err != nil {
		t.Errorf("kept.zip after start: %v", err)
	}
}
