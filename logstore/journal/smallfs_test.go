//go:build linux

package journal_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"strongbox/logstore/journal"
	"strongbox/logstore/journal/journaltest"
)

// TestRealFullDisk runs a journal on a real 256 KiB tmpfs, mounted in a
// user and mount namespace (unshare -rm, no root needed), fills it, and
// frees it again. Where namespaces are not allowed it is skipped. The test
// re-runs itself inside the namespace with STRONGBOX_SMALLFS naming the
// mount.
func TestRealFullDisk(t *testing.T) {
	dir := journaltest.SmallDisk(t, "256k", "STRONGBOX_SMALLFS")
	if dir == "" {
		return
	}

	path := filepath.Join(dir, "j")
	f, err := journal.Open(path, journal.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := appendSync(f, "a"); err != nil {
		t.Fatal(err)
	}
	good := f.Size()
	filler := filepath.Join(dir, "filler")
	fd, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	for {
		if _, err := fd.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	fd.Close()

	// Bigger than the page the journal's last frame sits in: needs new space.
	big := strings.Repeat("x", 16<<10)
	err = appendSync(f, big)
	if !errors.Is(err, journal.ErrStorageFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full tmpfs: err = %v, want ErrStorageFull wrapping ENOSPC", err)
	}
	checkLength(t, path, good)
	if err := f.Probe(); !errors.Is(err, journal.ErrStorageFull) {
		t.Errorf("Probe while full = %v, want ErrStorageFull", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := f.Probe(); err != nil {
		t.Errorf("Probe after space was freed = %v", err)
	}
	if err := appendSync(f, big); err != nil {
		t.Fatalf("append after space was freed: %v", err)
	}
	f.Close()
	if got, want := replay(t, path), []string{"a", big}; !cmp.Equal(got, want) {
		t.Errorf("replay: %d payloads, want a and the big one", len(got))
	}
}
