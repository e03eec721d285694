package journaltest

import (
	"cmp"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"strongbox/logstore/journal"
)

// FS is a journal.FS on the operating system's file system that fails on
// demand. Its zero value is not usable; call New. It is safe for concurrent
// use.
type FS struct {
	mu        sync.Mutex
	free      int64 // bytes files may still grow by; <0 is unlimited
	writeErr  error
	syncErr   error
	dirErr    error
	syncDelay time.Duration
	syncs     int
	noSync    bool
}

// New returns an FS with unlimited space and no faults.
func New() *FS { return &FS{free: -1} }

// SetFree sets the number of bytes files may still grow by, in total; a
// negative n means unlimited. A write that would grow a file past it writes
// what fits and fails with ENOSPC, as a real full disk does; truncating or
// removing a file gives its bytes back.
func (f *FS) SetFree(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.free = n
}

// Free returns the bytes files may still grow by (negative: unlimited).
func (f *FS) Free() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.free
}

// FailWrites makes every write fail with err (nil: writes work again).
func (f *FS) FailWrites(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writeErr = err
}

// FailSyncs makes every fsync, of files and directories, fail with err
// (nil: fsyncs work again).
func (f *FS) FailSyncs(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncErr = err
}

// FailDirSyncs makes every fsync of a directory fail with err (nil: they
// work again), as when a rename cannot be made durable.
func (f *FS) FailDirSyncs(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dirErr = err
}

// SetSyncDelay makes every fsync of a file take at least d longer.
func (f *FS) SetSyncDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncDelay = d
}

// SkipSyncs makes every fsync, of files and directories, a no-op that
// succeeds (still counted): for tests of behaviour other than durability,
// which then do not wait for the disk at each commit. A process killed
// with SIGKILL loses nothing the kernel has; only a power loss would.
func (f *FS) SkipSyncs() *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noSync = true
	return f
}

// Syncs returns the number of fsyncs of files so far.
func (f *FS) Syncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncs
}

// release gives n bytes back to the free space.
func (f *FS) release(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.free >= 0 && n > 0 {
		f.free += n
	}
}

func sizeOf(name string) int64 {
	st, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return st.Size()
}

// OpenFile implements journal.FS. O_TRUNC gives the file's bytes back.
func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (journal.Handle, error) {
	old := int64(0)
	if flag&os.O_TRUNC != 0 {
		old = sizeOf(name)
	}
	fd, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	f.release(old)
	return &file{File: fd, fs: f}, nil
}

// Rename implements journal.FS; a replaced file gives its bytes back.
func (f *FS) Rename(oldpath, newpath string) error {
	n := sizeOf(newpath)
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	f.release(n)
	return nil
}

// Remove implements journal.FS; the file gives its bytes back.
func (f *FS) Remove(name string) error {
	n := sizeOf(name)
	if err := os.Remove(name); err != nil {
		return err
	}
	f.release(n)
	return nil
}

// SyncDir implements journal.FS.
func (f *FS) SyncDir(dir string) error {
	f.mu.Lock()
	err, skip := cmp.Or(f.dirErr, f.syncErr), f.noSync
	f.mu.Unlock()
	if err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	if skip {
		return nil
	}
	return journal.OS.SyncDir(dir)
}

// file is a Handle of FS.
type file struct {
	*os.File
	fs *FS
}

// grant returns how many of the n bytes to be written at off fit, and the
// error to fail the write with (nil: all of them fit).
func (h *file) grant(off int64, n int) (int, error) {
	st, err := h.File.Stat()
	if err != nil {
		return 0, err
	}
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	if h.fs.writeErr != nil {
		return 0, h.fs.writeErr
	}
	grow := off + int64(n) - st.Size()
	if h.fs.free < 0 || grow <= 0 {
		return n, nil
	}
	if grow <= h.fs.free {
		h.fs.free -= grow
		return n, nil
	}
	fit := int(max(0, st.Size()-off) + h.fs.free)
	h.fs.free = 0
	return min(fit, n), syscall.ENOSPC
}

func (h *file) WriteAt(b []byte, off int64) (int, error) {
	n, ferr := h.grant(off, len(b))
	if ferr == nil {
		return h.File.WriteAt(b, off)
	}
	w, err := h.File.WriteAt(b[:n], off)
	if err == nil {
		err = &os.PathError{Op: "write", Path: h.Name(), Err: ferr}
	}
	return w, err
}

func (h *file) Write(b []byte) (int, error) {
	off, err := h.File.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	n, ferr := h.grant(off, len(b))
	if ferr == nil {
		return h.File.Write(b)
	}
	w, err := h.File.Write(b[:n])
	if err == nil {
		err = &os.PathError{Op: "write", Path: h.Name(), Err: ferr}
	}
	return w, err
}

func (h *file) Truncate(size int64) error {
	old := int64(0)
	if st, err := h.File.Stat(); err == nil {
		old = st.Size()
	}
	if err := h.File.Truncate(size); err != nil {
		return err
	}
	h.fs.release(old - size)
	return nil
}

func (h *file) Sync() error {
	h.fs.mu.Lock()
	err, delay, skip := h.fs.syncErr, h.fs.syncDelay, h.fs.noSync
	h.fs.syncs++
	h.fs.mu.Unlock()
	time.Sleep(delay)
	if err != nil {
		return &os.PathError{Op: "sync", Path: h.Name(), Err: err}
	}
	if skip {
		return nil
	}
	return h.File.Sync()
}

// ErrIO is a stand-in for a failing disk (EIO).
var ErrIO error = syscall.EIO

// Write creates a journal named name in a new temporary folder of tb, holds
// one frame per payload, and returns its path: for tests of what a store
// makes of a journal written by another version.
func Write(tb testing.TB, name string, payloads ...[]byte) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	j, err := journal.Open(p, journal.Options{}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, b := range payloads {
		if _, err := j.Append(b); err != nil {
			tb.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		tb.Fatal(err)
	}
	return p
}
