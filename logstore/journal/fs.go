package journal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// FS is the file system a journal lives on: the operating system's by
// default (OS). It is the seam through which tests inject write errors, a
// full disk or a failing fsync; see package journaltest.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (Handle, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	// SyncDir fsyncs a directory, so that entries created or renamed in it
	// are durable.
	SyncDir(dir string) error
}

// Handle is an open file of an FS. *os.File implements it.
type Handle interface {
	io.ReaderAt
	io.WriterAt
	io.Writer
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

// OS is the operating system's file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (Handle, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // not a typed nil in an interface
	}
	return f, nil
}

func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) SyncDir(dir string) error             { return SyncDir(dir) }

var (
	// ErrStorageFull is wrapped by the error of a write, fsync or
	// truncation that failed because the file system is out of space or
	// over quota (ENOSPC, EDQUOT). Nothing was acknowledged: the journal
	// holds exactly the frames it held before, and a later write is tried
	// again from there.
	ErrStorageFull = errors.New("journal: storage full")

	// ErrStorageFailed is wrapped by the error of a write, fsync or
	// truncation that failed for any other reason (EIO, a read-only
	// remount …). As with ErrStorageFull nothing was acknowledged, and a
	// later write is tried again.
	ErrStorageFailed = errors.New("journal: storage failing")
)

// storageError wraps err, a failed file-system operation op on path, with
// ErrStorageFull or ErrStorageFailed, so that callers can tell a full disk
// from a broken one with errors.Is and still see the system error.
func storageError(op, path string, err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		err = pe.Err // the path is in the message already
	}
	kind := ErrStorageFailed
	if isFull(err) {
		kind = ErrStorageFull
	}
	return fmt.Errorf("journal: %s %s: %w: %w", op, path, kind, err)
}

// isFull reports whether err means the file system is out of space or the
// user is over quota.
func isFull(err error) bool {
	return errors.Is(err, ErrStorageFull) || isNoSpace(err)
}
