package authn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/logstore/journal"
	"strongbox/logstore/journal/journaltest"
)

// newFaultyStore opens a store whose journal lives on a journaltest.FS.
func newFaultyStore(t *testing.T) (*Store, *journaltest.FS, *testClock, string) {
	t.Helper()
	h, err := NewHasher(bcrypt.MinCost, 2)
	if err != nil {
		t.Fatal(err)
	}
	clk := &testClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	fsys := journaltest.New()
	path := filepath.Join(t.TempDir(), "auth.journal")
	s, err := Open(path, Options{Hasher: h, Now: clk.Now, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, fsys, clk, path
}

func setName(s *Store, id, name string) error {
	users, _ := s.Collection(UsersName)
	_, err := s.UpdateRecord(context.Background(), users, id, RecordInput{Manager: true, Values: map[string]any{"name": name}})
	return err
}

// TestFullDiskThenFreed: with the disk full every change fails with
// journal.ErrStorageFull and changes nothing, Health reports it, and once
// space is freed the store works again and reports healthy without a
// restart. A reopened store holds exactly the acknowledged changes.
func TestFullDiskThenFreed(t *testing.T) {
	s, fsys, clk, path := newFaultyStore(t)
	a := signUp(t, s, "a@example.com", "password1")
	if err := s.Health(); err != nil {
		t.Fatalf("Health() = %v on a healthy store", err)
	}
	users, _ := s.Collection(UsersName)

	fsys.SetFree(40)
	_, err := s.CreateRecord(context.Background(), users, RecordInput{Values: map[string]any{
		"email": "b@example.com", "password": "password1", "passwordConfirm": "password1",
	}})
	if !errors.Is(err, journal.ErrStorageFull) {
		t.Fatalf("sign up on a full disk: err = %v, want journal.ErrStorageFull", err)
	}
	if _, ok := s.FindByEmail(users, "b@example.com"); ok {
		t.Errorf("the refused record is visible")
	}
	if err := setName(s, a.ID, "changed"); !errors.Is(err, journal.ErrStorageFull) {
		t.Errorf("update on a full disk: err = %v, want journal.ErrStorageFull", err)
	}
	if r, _ := s.Record(users, a.ID); r.Fields["name"] != "N" {
		t.Errorf("name = %v after a refused update, want N", r.Fields["name"])
	}
	if err := s.Health(); !errors.Is(err, journal.ErrStorageFull) {
		t.Errorf("Health() = %v while full, want journal.ErrStorageFull", err)
	}

	fsys.SetFree(-1)
	if err := s.Health(); err == nil {
		t.Errorf("Health() probed again within probeInterval")
	}
	clk.t = clk.t.Add(probeInterval)
	if err := s.Health(); err != nil {
		t.Errorf("Health() = %v after space was freed, want nil", err)
	}
	c := signUp(t, s, "c@example.com", "password1")
	s.Close()

	s2 := openTestStore(t, path, clk)
	defer s2.Close()
	users, _ = s2.Collection(UsersName)
	for _, tt := range []struct {
		email string
		want  bool
	}{{"a@example.com", true}, {"b@example.com", false}, {"c@example.com", true}} {
		if _, ok := s2.FindByEmail(users, tt.email); ok != tt.want {
			t.Errorf("after reopen, %s present = %v, want %v", tt.email, ok, tt.want)
		}
	}
	if r, _ := s2.Record(users, a.ID); r.Fields["name"] != "N" {
		t.Errorf("after reopen, name = %v, want N", r.Fields["name"])
	}
	if _, ok := s2.Record(users, c.ID); !ok {
		t.Errorf("after reopen, c is missing")
	}
}

// TestFullDuringCompaction: a change that fits is acknowledged even when the
// compaction it triggers runs out of space; the compaction leaves no
// temporary file, the store reports degraded, and the next change after
// space is freed compacts and reports healthy.
func TestFullDuringCompaction(t *testing.T) {
	s, fsys, clk, path := newFaultyStore(t)
	s.compactAt = 16 << 10
	a := signUp(t, s, "a@example.com", "password1")
	names := []string{strings.Repeat("x", 100), strings.Repeat("y", 100)}
	before := s.j.Size()
	if err := setName(s, a.ID, names[0]); err != nil {
		t.Fatal(err)
	}
	delta := s.j.Size() - before
	i := 1
	// Stop one change short of the compaction threshold (see commit).
	for ; s.j.Size()+delta <= max(s.compactAt, 4*s.live); i++ {
		if err := setName(s, a.ID, names[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	// Room for the next frame, not for the compacted file (two collections
	// and the record).
	fsys.SetFree(delta + delta/2)
	want := names[i%2]
	if err := setName(s, a.ID, want); err != nil {
		t.Fatalf("update that fits, before a failing compaction: %v", err)
	}
	if err := s.Health(); !errors.Is(err, journal.ErrStorageFull) {
		t.Fatalf("Health() = %v after the compaction ran out of space, want journal.ErrStorageFull", err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("compaction left its temporary file: %v", err)
	}
	full := s.j.Size()
	// A failed compaction is not retried at once, but after compactBackoff.
	fsys.SetFree(-1)
	if err := setName(s, a.ID, names[(i+1)%2]); err != nil {
		t.Fatal(err)
	}
	if s.j.Size() < full {
		t.Errorf("journal compacted again at once after a failed compaction (%d bytes, was %d)", s.j.Size(), full)
	}
	full = s.j.Size()
	clk.t = clk.t.Add(compactBackoff)
	i++
	want = names[(i+1)%2]
	if err := setName(s, a.ID, want); err != nil {
		t.Fatal(err)
	}
	if s.j.Size() >= full {
		t.Errorf("journal is %d bytes after space was freed (was %d): not compacted", s.j.Size(), full)
	}
	if err := s.Health(); err != nil {
		t.Errorf("Health() = %v after a good compaction", err)
	}
	s.Close()
	s2 := openTestStore(t, path, clk)
	defer s2.Close()
	users, _ := s2.Collection(UsersName)
	if r, _ := s2.Record(users, a.ID); r.Fields["name"] != want {
		t.Errorf("after reopen, name = %.10v…, want %.10v…", r.Fields["name"], want)
	}
}
