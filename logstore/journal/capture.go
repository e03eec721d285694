package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Section is the durable prefix of a journal as it was at one instant, held
// open for reading: its first Size bytes, through a descriptor of its own.
// The descriptor keeps the file it was opened on, so a later Compact
// (which renames a new file over the path) or the removal of the file
// (a log segment dropped by retention) does not change what it reads, and
// appends only add bytes past Size. A backup captures every store's
// sections with their writers paused, then copies them while they run.
type Section struct {
	// Path is the journal's path when the section was captured.
	Path string
	// Size is the length of the durable prefix at that instant.
	Size int64
	// Ident is the identity of the file's content: it changes when a
	// compaction replaces the file, and only then.
	Ident uint64
	// Marks are the commit marks the file kept at that instant (at most
	// MaxMarks), the last one ending at Size.
	Marks []Mark
	// Prior, if not nil, is the file that the last compaction replaced,
	// in full (its durable prefix and its marks when it was replaced), if
	// no capture took it before: a reader of captures uses it to see the
	// frames committed to the old file after the previous capture. Close
	// closes it too.
	Prior *Section

	r     *io.SectionReader
	once  sync.Once
	close func() error
	err   error
}

// Capture returns the durable prefix of the file (its first Committed
// bytes) as a Section, which the caller closes. The caller holds its
// store's writer lock while it calls Capture (so that several journals are
// captured at one instant) and copies the section once the lock is
// released.
func (f *File) Capture() (*Section, error) {
	// fdmu keeps Compact from swapping the file between the path and the
	// length read here.
	f.fdmu.RLock()
	defer f.fdmu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, ErrClosed
	}
	n := f.committed
	fd, err := f.fs.OpenFile(f.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("journal: capture %s: %w", f.path, err)
	}
	sec := &Section{Path: f.path, Size: n, Ident: f.ident, Marks: f.marks.upTo(n), Prior: f.retired,
		r: io.NewSectionReader(fd, 0, n), close: fd.Close}
	f.retired = nil
	return sec, nil
}

// retire keeps the file being replaced by a compaction, open, as the
// Prior of the next Capture; a file retired before and not captured
// since is closed. The caller holds fdmu exclusively and mu.
func (f *File) retire() {
	f.dropRetired()
	n := f.committed
	f.retired = &Section{Path: f.path, Size: n, Ident: f.ident, Marks: f.marks.upTo(n),
		r: io.NewSectionReader(f.fd, 0, n), close: f.fd.Close}
}

// dropRetired closes the retired file, if any. The caller holds mu.
func (f *File) dropRetired() {
	if f.retired != nil {
		f.retired.Close()
		f.retired = nil
	}
}

// Reader returns a reader of the section's bytes from its start. Each
// call starts anew; the readers share the descriptor, so they must not be
// used after Close.
func (s *Section) Reader() io.Reader {
	return io.NewSectionReader(s.r, 0, s.Size)
}

// ReadAt reads the section's bytes at off, as io.ReaderAt.
func (s *Section) ReadAt(p []byte, off int64) (int, error) {
	return s.r.ReadAt(p, off)
}

// Close closes the descriptor. It may be called more than once, and from
// several goroutines; every call returns the first call's error.
func (s *Section) Close() error {
	s.once.Do(func() {
		s.err = s.close()
		if s.Prior != nil {
			s.err = errors.Join(s.err, s.Prior.Close())
		}
	})
	return s.err
}
