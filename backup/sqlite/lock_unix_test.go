//go:build unix

package sqlite

import (
	"errors"
	"os"
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
