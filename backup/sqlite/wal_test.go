package sqlite

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// walFixture builds a WAL database through a running sqlite3 CLI (so
// that nothing checkpoints it) with two committed transactions left in
// the WAL, and returns the db file, the WAL, the WAL's size after the
// first transaction and the page size.
func walFixture(t *testing.T) (db, wal []byte, firstTxEnd int64, pageSize int) {
	t.Helper()
	path := fixturePath(t, "wal.db")
	c := startCLI(t, path)
	c.do(t, `.bail on
.dbconfig no_ckpt_on_close on
PRAGMA page_size=1024;
PRAGMA journal_mode=WAL;
PRAGMA wal_autocheckpoint=0;
CREATE TABLE t(a INTEGER PRIMARY KEY, b);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
INSERT INTO t SELECT i, hex(randomblob(150)) FROM n;`)
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	firstTxEnd = fi.Size()
	c.do(t, `BEGIN;
UPDATE t SET b = 'changed' WHERE a <= 50;
DELETE FROM t WHERE a > 150;
WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i+1 FROM n WHERE i < 1300)
INSERT INTO t SELECT i, randomblob(400) FROM n;
COMMIT;`)
	var errs [2]error
	db, errs[0] = os.ReadFile(path)
	wal, errs[1] = os.ReadFile(path + "-wal")
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	c.stop(t)
	return db, wal, firstTxEnd, 1024
}

func TestWAL(t *testing.T) {
	db, wal, firstTxEnd, pageSize := walFixture(t)
	frameSize := int64(walFrameHeaderSize + pageSize)
	frames := (int64(len(wal)) - walHeaderSize) / frameSize
	firstFrames := (firstTxEnd - walHeaderSize) / frameSize
	if frames <= firstFrames+2 {
		t.Fatalf("the WAL holds %d frames, the first transaction %d: the second made too few", frames, firstFrames)
	}
	middle := walHeaderSize + (firstFrames+(frames-firstFrames)/2)*frameSize
	flip := func(off int64) []byte {
		b := bytes.Clone(wal)
		b[off] ^= 0x01
		return b
	}
	cases := []struct {
		name string
		wal  []byte
		rows int // rows of t the reader must find
	}{
		{"both transactions committed", wal, 150 + 301},
		{"second transaction's commit frame cut off", wal[:middle+100], 200},
		{"byte flipped in the second transaction", flip(middle + walFrameHeaderSize + 10), 200},
		{"salt changed in the second transaction", flip(middle + 9), 200},
		{"byte flipped in the first frame", flip(walHeaderSize + walFrameHeaderSize + 5), -1},
		{"WAL header checksum wrong", flip(20), -1},
		{"WAL shorter than its header", wal[:20], -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "copy.db")
			if err := os.WriteFile(path, db, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path+"-wal", c.wal, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Table("t")
			switch {
			case c.rows < 0 && !errors.Is(err, ErrNoTable):
				t.Errorf("Table(t) = %v, want ErrNoTable: no transaction is committed", err)
			case c.rows >= 0 && len(readAll(t, r, "t")) != c.rows:
				t.Errorf("%d rows, want %d", len(readAll(t, r, "t")), c.rows)
			}
			r.Close()
			checkAgainstSQLite(t, path)
		})
	}
}

// TestWALNotApplied checks that the fixture's database file alone is
// stale, so that TestWAL's rows come from the WAL.
func TestWALNotApplied(t *testing.T) {
	db, _, _, _ := walFixture(t)
	r, err := OpenReaderAt(bytes.NewReader(db), int64(len(db)), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Table("t"); !errors.Is(err, ErrNoTable) {
		t.Errorf("the database file alone has table t (%v): the fixture checkpointed", err)
	}
}
