package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
)

const (
	// MaxRecord is the largest payload a frame may hold, in bytes.
	MaxRecord = 16 << 20

	// HeaderSize is the size of the file header.
	HeaderSize = 8

	// FrameOverhead is the number of bytes a frame adds to its payload.
	FrameOverhead = 12
)

var (
	fileMagic  = []byte("SBJRNL\x00\x01")
	frameMagic = []byte{0xF5, 0x1A, 0xB0, 0x5E}
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

var (
	// ErrClosed is returned by every method of a File after Close.
	ErrClosed = errors.New("journal: file closed")

	// ErrTooLarge is returned by Append for a payload larger than MaxRecord.
	ErrTooLarge = errors.New("journal: record larger than MaxRecord")

	// ErrNotJournal is returned by Open for a file that does not start with
	// the journal header.
	ErrNotJournal = errors.New("journal: not a journal file")
)

// CorruptError reports damage in the middle of a journal opened with
// Options.Strict: valid frames follow the damaged bytes, so truncating would
// lose them.
type CorruptError struct {
	Path   string
	Offset int64 // first damaged byte
	Length int64 // damaged bytes before the next valid frame
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("journal: %s: %d damaged bytes at offset %d, followed by valid records", e.Path, e.Length, e.Offset)
}

// Damage describes bytes that Open dropped.
type Damage struct {
	Offset int64 // first damaged byte
	Length int64 // number of bytes dropped
	Tail   bool  // true for a torn tail that was truncated
}

// Options configure Open.
type Options struct {
	// Strict makes damage in the middle of the file an error (*CorruptError)
	// instead of being skipped. A torn tail is always truncated.
	Strict bool

	// OnDamage, if set, is called for every damaged region Open drops.
	OnDamage func(Damage)
}

// File is an open journal. Its methods are safe for concurrent use.
type File struct {
	path string

	// fdmu guards fd against Compact and Close swapping or closing it:
	// users of fd hold it for reading.
	fdmu sync.RWMutex
	fd   *os.File

	mu        sync.Mutex // serialises appends and guards the fields below
	size      int64      // end of the last appended frame
	committed int64      // end of the durable prefix
	err       error      // sticky: a failed write or sync poisons the file
	closed    bool
}

// FrameSize returns the number of bytes a frame with an n-byte payload takes.
func FrameSize(n int) int64 { return int64(n) + FrameOverhead }

// Open opens the journal at path, creating it (and fsyncing its directory)
// if it does not exist. It calls replay, if not nil, with the offset and
// payload of every valid frame in order; the payload is only valid during the
// call. A replay error stops Open and is returned.
func Open(path string, opts Options, replay func(off int64, payload []byte) error) (*File, error) {
	fd, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: open: %w", err)
	}
	f := &File{path: path, fd: fd}
	if err := f.load(opts, replay); err != nil {
		fd.Close()
		return nil, err
	}
	return f, nil
}

// load checks the header, replays the frames and truncates a torn tail.
func (f *File) load(opts Options, replay func(int64, []byte) error) error {
	st, err := f.fd.Stat()
	if err != nil {
		return fmt.Errorf("journal: stat %s: %w", f.path, err)
	}
	size := st.Size()
	if size < HeaderSize {
		// A new file, or one torn while its header was written.
		head := make([]byte, size)
		if _, err := f.fd.ReadAt(head, 0); err != nil && err != io.EOF {
			return fmt.Errorf("journal: read %s: %w", f.path, err)
		}
		if !bytes.HasPrefix(fileMagic, head) {
			return fmt.Errorf("%w: %s", ErrNotJournal, f.path)
		}
		if err := f.initHeader(); err != nil {
			return err
		}
		f.size, f.committed = HeaderSize, HeaderSize
		return nil
	}
	s := newScanner(f.fd, size)
	head, err := s.window(0, HeaderSize)
	if err != nil {
		return fmt.Errorf("journal: read %s: %w", f.path, err)
	}
	if !bytes.Equal(head, fileMagic) {
		return fmt.Errorf("%w: %s", ErrNotJournal, f.path)
	}
	off := int64(HeaderSize)
	for off < size {
		payload, ok, err := s.frameAt(off)
		if err != nil {
			return fmt.Errorf("journal: read %s: %w", f.path, err)
		}
		if ok {
			if replay != nil {
				if err := replay(off, payload); err != nil {
					return err
				}
			}
			off += FrameSize(len(payload))
			continue
		}
		next, err := s.resync(off + 1)
		if err != nil {
			return fmt.Errorf("journal: read %s: %w", f.path, err)
		}
		if next < 0 {
			if opts.OnDamage != nil {
				opts.OnDamage(Damage{Offset: off, Length: size - off, Tail: true})
			}
			if err := f.fd.Truncate(off); err != nil {
				return fmt.Errorf("journal: truncate torn tail of %s: %w", f.path, err)
			}
			if err := f.fd.Sync(); err != nil {
				return fmt.Errorf("journal: sync %s: %w", f.path, err)
			}
			size = off
			break
		}
		if opts.Strict {
			return &CorruptError{Path: f.path, Offset: off, Length: next - off}
		}
		if opts.OnDamage != nil {
			opts.OnDamage(Damage{Offset: off, Length: next - off})
		}
		off = next
	}
	f.size, f.committed = size, size
	return nil
}

// initHeader writes the file header to an empty (or torn) file and makes the
// file and its directory entry durable.
func (f *File) initHeader() error {
	if err := f.fd.Truncate(0); err != nil {
		return fmt.Errorf("journal: init %s: %w", f.path, err)
	}
	if _, err := f.fd.WriteAt(fileMagic, 0); err != nil {
		return fmt.Errorf("journal: init %s: %w", f.path, err)
	}
	if err := f.fd.Sync(); err != nil {
		return fmt.Errorf("journal: sync %s: %w", f.path, err)
	}
	return SyncDir(filepath.Dir(f.path))
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Append writes one frame per payload at the end of the file with a single
// write call and returns the offset of the first frame; the next frames follow
// at FrameSize intervals. The frames are not durable until Sync returns.
func (f *File) Append(payloads ...[]byte) (int64, error) {
	n := 0
	for _, p := range payloads {
		if len(p) > MaxRecord {
			return 0, ErrTooLarge
		}
		n += int(FrameSize(len(p)))
	}
	buf := make([]byte, 0, n)
	for _, p := range payloads {
		buf = AppendFrame(buf, p)
	}
	return f.Write(buf)
}

// AppendFrame appends the frame holding payload to dst and returns the
// extended slice. Callers that batch many small records use it to build one
// buffer for Write.
func AppendFrame(dst, payload []byte) []byte {
	var h [FrameOverhead]byte
	copy(h[:4], frameMagic)
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
	crc := crc32.Update(0, castagnoli, h[4:8])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(h[8:12], crc)
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

// Write appends buf, which must hold whole frames built with AppendFrame, at
// the end of the file and returns the offset it was written at.
func (f *File) Write(buf []byte) (int64, error) {
	f.fdmu.RLock()
	defer f.fdmu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return 0, err
	}
	off := f.size
	if _, err := f.fd.WriteAt(buf, off); err != nil {
		f.err = fmt.Errorf("journal: write %s: %w", f.path, err)
		return 0, f.err
	}
	f.size += int64(len(buf))
	return off, nil
}

// Sync makes every frame appended before the call durable. Appends may run
// while it waits for the disk.
func (f *File) Sync() error {
	f.fdmu.RLock()
	defer f.fdmu.RUnlock()
	f.mu.Lock()
	if err := f.usable(); err != nil {
		f.mu.Unlock()
		return err
	}
	end := f.size
	f.mu.Unlock()
	err := f.fd.Sync()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		// After a failed fsync the kernel may have dropped the dirty pages:
		// nothing written since the last good sync can be trusted.
		f.err = fmt.Errorf("journal: sync %s: %w", f.path, err)
		return f.err
	}
	if end > f.committed {
		f.committed = end
	}
	return nil
}

func (f *File) usable() error {
	if f.closed {
		return ErrClosed
	}
	return f.err
}

// Size returns the offset just past the last appended frame.
func (f *File) Size() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.size
}

// Committed returns the length of the durable prefix: the file up to the end
// of the last frame covered by a successful Sync.
func (f *File) Committed() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.committed
}

// ReadAt returns the payload of the frame at off, checking its checksum.
func (f *File) ReadAt(off int64) ([]byte, error) { return f.ReadFrameInto(nil, off) }

// ReadFrameInto is like ReadAt but reuses buf for the payload when it is large
// enough, so a reader of many frames need not allocate for each.
func (f *File) ReadFrameInto(buf []byte, off int64) ([]byte, error) {
	f.fdmu.RLock()
	defer f.fdmu.RUnlock()
	f.mu.Lock()
	size, closed := f.size, f.closed
	f.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return readFrameInto(f.fd, f.path, buf, off, size)
}

func readFrameInto(r io.ReaderAt, path string, buf []byte, off, size int64) ([]byte, error) {
	var h [FrameOverhead]byte
	if off < HeaderSize || off+FrameOverhead > size {
		return nil, fmt.Errorf("journal: %s: no frame at offset %d", path, off)
	}
	if _, err := r.ReadAt(h[:], off); err != nil {
		return nil, fmt.Errorf("journal: read %s at %d: %w", path, off, err)
	}
	n := int64(binary.LittleEndian.Uint32(h[4:8]))
	if !bytes.Equal(h[:4], frameMagic) || n > MaxRecord || off+FrameOverhead+n > size {
		return nil, fmt.Errorf("journal: %s: no frame at offset %d", path, off)
	}
	if int64(cap(buf)) >= n {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	if _, err := r.ReadAt(buf, off+FrameOverhead); err != nil {
		return nil, fmt.Errorf("journal: read %s at %d: %w", path, off, err)
	}
	crc := crc32.Update(0, castagnoli, h[4:8])
	crc = crc32.Update(crc, castagnoli, buf)
	if crc != binary.LittleEndian.Uint32(h[8:12]) {
		return nil, fmt.Errorf("journal: %s: checksum mismatch in frame at offset %d", path, off)
	}
	return buf, nil
}

// Snapshot writes the durable prefix of the file (its first Committed bytes,
// read at the start of the call) to w, while appends and compactions go on:
// it reads through a descriptor of its own, which keeps the file it started
// on even if Compact replaces it, so the bytes copied are one consistent
// instant of the journal however long the copy takes.
func (f *File) Snapshot(w io.Writer) (int64, error) {
	f.fdmu.RLock()
	f.mu.Lock()
	n, closed := f.committed, f.closed
	f.mu.Unlock()
	var (
		fd  *os.File
		err error
	)
	if !closed {
		fd, err = os.Open(f.path)
	}
	f.fdmu.RUnlock()
	if closed {
		return 0, ErrClosed
	}
	if err != nil {
		return 0, fmt.Errorf("journal: snapshot %s: %w", f.path, err)
	}
	defer fd.Close()
	return io.Copy(w, io.NewSectionReader(fd, 0, n))
}

// Writer appends frames to a new journal being built by Compact or Create.
type Writer struct {
	buf []byte
	off int64
	fd  *os.File
	err error
}

// Append adds one frame and returns its offset in the new file.
func (w *Writer) Append(payload []byte) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(payload) > MaxRecord {
		return 0, ErrTooLarge
	}
	off := w.off
	w.buf = AppendFrame(w.buf, payload)
	w.off += FrameSize(len(payload))
	if len(w.buf) >= 1<<20 {
		w.flush()
	}
	return off, w.err
}

func (w *Writer) flush() {
	if w.err != nil || len(w.buf) == 0 {
		return
	}
	if _, err := w.fd.Write(w.buf); err != nil {
		w.err = err
	}
	w.buf = w.buf[:0]
}

// Compact replaces the journal's contents with the frames that fill writes:
// it builds a new file beside the old one, fsyncs it, renames it over the old
// one and fsyncs the directory, then carries on appending to the new file. A
// crash at any point leaves either the old file or the new one, whole.
// Appends and reads wait while Compact runs.
func (f *File) Compact(fill func(w *Writer) error) error {
	f.fdmu.Lock()
	defer f.fdmu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	fd, size, err := writeNew(f.path, fill)
	if fd != nil {
		// The new file has replaced the old one in the directory: from now
		// on only it may be written, even if the rename is not yet durable.
		f.fd.Close()
		f.fd = fd
		f.size, f.committed = size, size
	}
	if err != nil && fd != nil {
		// The rename may not survive a crash, so nothing appended now could
		// be acknowledged safely: fail every later write.
		f.err = err
	}
	return err
}

// Create writes a new journal at path holding the frames that fill writes,
// replacing any file there atomically, and returns it open for appending.
func Create(path string, fill func(w *Writer) error) (*File, error) {
	fd, size, err := writeNew(path, fill)
	if err != nil {
		if fd != nil {
			fd.Close()
		}
		return nil, err
	}
	return &File{path: path, fd: fd, size: size, committed: size}, nil
}

// writeNew builds a journal in a temporary file and renames it to path. If
// the rename succeeded but the directory could not be synced, it returns the
// new file together with the error: the caller must stop using the old one.
func writeNew(path string, fill func(w *Writer) error) (*os.File, int64, error) {
	tmp := path + ".tmp"
	fd, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("journal: compact %s: %w", path, err)
	}
	fail := func(err error) (*os.File, int64, error) {
		fd.Close()
		os.Remove(tmp)
		return nil, 0, fmt.Errorf("journal: compact %s: %w", path, err)
	}
	w := &Writer{fd: fd, off: HeaderSize, buf: append([]byte(nil), fileMagic...)}
	if fill != nil {
		if err := fill(w); err != nil {
			return fail(err)
		}
	}
	w.flush()
	if w.err != nil {
		return fail(w.err)
	}
	if err := fd.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fd, w.off, fmt.Errorf("journal: compact %s: %w", path, err)
	}
	return fd, w.off, nil
}

// Close syncs and closes the file. Later calls return ErrClosed.
func (f *File) Close() error {
	f.fdmu.Lock()
	defer f.fdmu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.closed = true
	var err error
	if f.err == nil {
		if err = f.fd.Sync(); err == nil {
			f.committed = f.size
		}
	}
	if cerr := f.fd.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("journal: close %s: %w", f.path, err)
	}
	return f.err
}

// SyncDir fsyncs a directory so that entries created or renamed in it are
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("journal: sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("journal: sync dir %s: %w", dir, err)
	}
	return nil
}
