package sqlite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Open opens the database file at path read-only, with its write-ahead
// log path+"-wal" when there is one. It refuses a database that another
// process has open (ErrLocked) or that has a hot rollback journal
// (ErrHotJournal): either may change under the reader.
func Open(path string) (*DB, error) {
	if err := checkLocks(path); err != nil {
		return nil, err
	}
	if hotJournal(path + "-journal") {
		return nil, fmt.Errorf("%w: %s-journal holds an unfinished transaction: open the database once with sqlite3 (or start and stop PocketBase) to roll it back, or import a backup archive PocketBase made", ErrHotJournal, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	closers := []io.Closer{f}
	closeAll := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	fi, err := f.Stat()
	if err != nil {
		closeAll()
		return nil, err
	}
	var wal io.ReaderAt
	var walSize int64
	w, err := os.Open(path + "-wal")
	switch {
	case err == nil:
		closers = append(closers, w)
		wi, err := w.Stat()
		if err != nil {
			closeAll()
			return nil, err
		}
		wal, walSize = w, wi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		closeAll()
		return nil, err
	}
	db, err := OpenReaderAt(f, fi.Size(), wal, walSize)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	db.closers = closers
	return db, nil
}

// hotJournal reports whether a rollback journal holds a transaction to
// roll back: it exists and its header is not zeroed (a journal SQLite
// keeps with journal_mode=PERSIST starts with zeros, and is not hot).
func hotJournal(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [1]byte
	n, _ := f.Read(b[:])
	return n == 1 && b[0] != 0
}

// lockedError says what to do about a database in use.
func lockedError(path string) error {
	return fmt.Errorf("%w: %s is open in another process (is PocketBase running?): stop PocketBase first, or import a backup archive it made", ErrLocked, path)
}
