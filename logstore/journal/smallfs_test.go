//go:build linux

package journal_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"strongbox/logstore/journal"
)

// TestRealFullDisk runs a journal on a real 256 KiB tmpfs, mounted in a
// user and mount namespace (unshare -rm, no root needed), fills it, and
// frees it again. Where namespaces are not allowed it is skipped. The test
// re-runs itself inside the namespace with STRONGBOX_SMALLFS naming the
// mount.
func TestRealFullDisk(t *testing.T) {
	dir := os.Getenv("STRONGBOX_SMALLFS")
	if dir == "" {
		if testing.Short() {
			t.Skip("short mode")
		}
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			t.Skip("no unshare command")
		}
		mnt := t.TempDir()
		const mount = `mount -t tmpfs -o size=256k tmpfs "$1"`
		if out, err := exec.Command(unshare, "-rm", "sh", "-c", mount, "sh", mnt).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a tmpfs in a user namespace: %v %s", err, out)
		}
		out, err := exec.Command(unshare, "-rm", "sh", "-c",
			mount+` && STRONGBOX_SMALLFS="$1" exec "$2" -test.run='^TestRealFullDisk$' -test.v -test.count=1`,
			"sh", mnt, os.Args[0]).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestRealFullDisk") {
			t.Fatalf("inside the namespace: %v\n%s", err, out)
		}
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
