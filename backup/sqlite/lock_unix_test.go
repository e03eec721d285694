//go:build unix

package sqlite

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestLocked(t *testing.T) {
	cases := []struct {
		name   string
		mode   string // journal mode
		during string // what the other connection runs while Open is tried
		after  string // what makes Open succeed before the CLI exits ("" = only its exit)
	}{
		{"WAL, idle connection", "WAL", "SELECT count(*) FROM t;", ""},
		{"rollback, read transaction", "DELETE", "BEGIN; SELECT count(*) FROM t;", "COMMIT;"},
		{"rollback, write transaction", "DELETE", "BEGIN IMMEDIATE; INSERT INTO t VALUES (2);", "ROLLBACK;"},
	}
	if runtime.GOOS == "linux" {
		// A connection between transactions holds no lock in rollback
		// mode, but keeps the file open, which /proc shows.
		cases = append(cases, struct{ name, mode, during, after string }{"rollback, idle connection (Linux)", "DELETE", "SELECT count(*) FROM t;", ""})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := fixturePath(t, "locked.db")
			runSQLite(t, path, "PRAGMA journal_mode="+c.mode+";\nCREATE TABLE t(a); INSERT INTO t VALUES (1);")
			cli := startCLI(t, path)
			cli.do(t, c.during)
			_, err := Open(path)
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "stop PocketBase first") {
				t.Fatalf("Open while sqlite3 has it open = %v, want ErrLocked saying what to do", err)
			}
			if c.after != "" {
				cli.do(t, c.after)
				if runtime.GOOS == "linux" {
					// The lock is gone, but the connection keeps the
					// file open, which /proc shows.
					if _, err := Open(path); !errors.Is(err, ErrLocked) {
						t.Fatalf("Open while sqlite3 keeps the file open without a lock = %v, want ErrLocked", err)
					}
					cli.stop(t)
				}
			} else {
				cli.stop(t)
			}
			db, err := Open(path)
			if err != nil {
				t.Fatalf("Open after the other connection let go: %v", err)
			}
			if got := len(readAll(t, db, "t")); got != 1 {
				t.Errorf("%d rows, want 1", got)
			}
			db.Close()
		})
	}
}

func TestHotJournal(t *testing.T) {
	path := fixturePath(t, "journal.db")
	runSQLite(t, path, "CREATE TABLE t(a);")
	cases := []struct {
		name    string
		journal []byte
		hot     bool
	}{
		{"empty journal", []byte{}, false},
		{"zeroed header (journal_mode=PERSIST)", make([]byte, 512), false},
		{"journal of a transaction", append([]byte{0xd9, 0xd5, 0x05, 0xf9}, make([]byte, 508)...), true},
	}
	for _, c := range cases {
		if err := os.WriteFile(path+"-journal", c.journal, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(path)
		if c.hot != errors.Is(err, ErrHotJournal) {
			t.Errorf("%s: Open = %v, want hot %v", c.name, err, c.hot)
		}
		if err == nil {
			db.Close()
		}
	}
}

// TestUnchanged: a write after Open, by a process that held no lock when
// Open checked, is reported by Unchanged.
func TestUnchanged(t *testing.T) {
	cases := []struct{ name, mode, write string }{
		{"rollback, a row added", "DELETE", "INSERT INTO t VALUES (2);"},
		{"rollback, a row updated in place", "DELETE", "UPDATE t SET a = 3;"},
		{"WAL, a row added", "WAL", "INSERT INTO t VALUES (2);"},
		{"WAL, a log kept", "WAL", "PRAGMA wal_autocheckpoint=0;\n.dbconfig no_ckpt_on_close on\nINSERT INTO t VALUES (2);"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := fixturePath(t, "changed.db")
			runSQLite(t, path, "PRAGMA journal_mode="+c.mode+";\nCREATE TABLE t(a); INSERT INTO t VALUES (1);")
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Unchanged(); err != nil {
				t.Fatalf("Unchanged before any write = %v", err)
			}
			runSQLite(t, path, c.write)
			err = db.Unchanged()
			if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "stop PocketBase first") {
				t.Fatalf("Unchanged after a write = %v, want ErrChanged saying what to do", err)
			}
		})
	}
}
