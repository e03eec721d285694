package sqlite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Open opens the database file at path read-only, with its write-ahead
// log path+"-wal" when there is one. It refuses a database that another
// process has open (ErrLocked: it holds one of SQLite's locks on it, or,
// on Linux, has the file or its log open at all) or that has a hot
// rollback journal (ErrHotJournal): either may change under the reader.
func Open(path string) (*DB, error) {
	if err := checkLocks(path); err != nil {
		return nil, err
	}
	if pid := openByOther(path, path+"-wal"); pid != 0 {
		return nil, lockedError(path, pid)
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
	db.files = []fileState{stateOf(path), stateOf(path + "-wal")}
	return db, nil
}

// fileState is what Unchanged compares of a file Open read.
type fileState struct {
	name string
	info fs.FileInfo // nil when the file did not exist
	size int64
	mod  time.Time
}

func stateOf(name string) fileState {
	fi, err := os.Stat(name)
	if err != nil {
		return fileState{name: name}
	}
	return fileState{name: name, info: fi, size: fi.Size(), mod: fi.ModTime()}
}

// Unchanged returns an error wrapping ErrChanged when the database file or
// its write-ahead log changed since Open: another size or modification
// time, another file under the name, or a log that appeared or went. A
// writer the lock check could not see (a process that holds no SQLite
// lock) then wrote while the reader read, so what was read may mix two
// states. A DB made by OpenReaderAt is always unchanged.
func (d *DB) Unchanged() error {
	for _, was := range d.files {
		now := stateOf(was.name)
		same := (was.info == nil) == (now.info == nil)
		if same && was.info != nil {
			same = os.SameFile(was.info, now.info) && was.size == now.size && was.mod.Equal(now.mod)
		}
		if !same {
			return fmt.Errorf("%w: %s was written to after it was opened (is PocketBase running?): stop PocketBase first, or import a backup archive it made", ErrChanged, was.name)
		}
	}
	return nil
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
func lockedError(path string, pid int) error {
	who := "another process"
	if pid > 0 {
		who = fmt.Sprintf("process %d", pid)
	}
	return fmt.Errorf("%w: %s is open in %s (is PocketBase running?): stop PocketBase first, or import a backup archive it made", ErrLocked, path, who)
}
