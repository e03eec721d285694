package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
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

// DefaultSyncWindow is the durability window a store promises unless it
// sets Options.SyncWindow: the auth and settings stores acknowledge a change
// only after its fsync, so a slower fsync is a change the client waited on
// longer than this, and the log store's group commit
// (logstore.DefaultFlushInterval) promises an entry durable this long after
// it was added. Every fsync longer than the window is logged as a warning.
const DefaultSyncWindow = 200 * time.Millisecond

// probeSize is the size of the block Probe writes past the end of the file.
const probeSize = 4096

// Options configure Open.
type Options struct {
	// Strict makes damage in the middle of the file an error (*CorruptError)
	// instead of being skipped. A torn tail is always truncated.
	Strict bool

	// OnDamage, if set, is called for every damaged region Open drops.
	OnDamage func(Damage)

	// FS is the file system the journal lives on; nil means OS.
	FS FS

	// Logger receives a warning for every fsync slower than SyncWindow;
	// nil discards them.
	Logger *slog.Logger

	// SyncWindow is the durability window the store promises; 0 means
	// DefaultSyncWindow.
	SyncWindow time.Duration

	// Now is the clock of the commit marks (Mark); nil means time.Now.
	Now func() time.Time
}

// File is an open journal. Its methods are safe for concurrent use.
//
// A failed write, fsync or truncation does not poison the file. The error
// wraps ErrStorageFull or ErrStorageFailed; the file is cut back to the
// end of its last good frame (for a failed fsync, to its durable prefix,
// since the kernel may have dropped the pages it could not write), and the
// next write starts from there. Fault reports the failure until a later
// fsync, compaction or Probe succeeds.
type File struct {
	path   string
	fs     FS
	log    *slog.Logger
	window time.Duration

	// fdmu guards fd against Compact and Close swapping or closing it:
	// users of fd hold it for reading.
	fdmu sync.RWMutex
	fd   Handle

	mu        sync.Mutex // serialises appends and guards the fields below
	size      int64      // end of the last good frame
	committed int64      // end of the durable prefix
	dirty     bool       // the file may hold bytes past size: cut them before writing
	dirSync   bool       // Compact's rename is not known durable: sync the directory first
	epoch     uint64     // counts rollbacks to the durable prefix
	fault     error      // the last storage failure; nil once a write is durable again
	closed    bool
	marks     marks    // when the durable prefix grew
	ident     uint64   // identity of the content: new at Open and at each Compact
	retired   *Section // the file the last Compact replaced, for the next Capture
}

func newFile(path string, fd Handle, opts Options) *File {
	f := &File{path: path, fs: opts.FS, fd: fd, log: opts.Logger, window: opts.SyncWindow}
	if f.fs == nil {
		f.fs = OS
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.window <= 0 {
		f.window = DefaultSyncWindow
	}
	f.marks.now = opts.Now
	if f.marks.now == nil {
		f.marks.now = time.Now
	}
	f.ident = newIdentity()
	return f
}

// FrameSize returns the number of bytes a frame with an n-byte payload takes.
func FrameSize(n int) int64 { return int64(n) + FrameOverhead }

// Open opens the journal at path, creating it (and fsyncing its directory)
// if it does not exist. It calls replay, if not nil, with the offset and
// payload of every valid frame in order; the payload is only valid during the
// call. A replay error stops Open and is returned. If Open created the file
// and then fails (a full disk cannot take the header), it removes the file
// again, so that failed attempts leave nothing behind.
func Open(path string, opts Options, replay func(off int64, payload []byte) error) (*File, error) {
	fsys := opts.FS
	if fsys == nil {
		fsys = OS
	}
	created := false
	fd, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		fd, err = fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		created = err == nil
		if errors.Is(err, fs.ErrExist) {
			fd, err = fsys.OpenFile(path, os.O_RDWR, 0)
		}
	}
	if err != nil {
		return nil, storageError("open", path, err)
	}
	f := newFile(path, fd, opts)
	if err := f.load(opts, replay); err != nil {
		fd.Close()
		if created {
			fsys.Remove(path)
		}
		return nil, err
	}
	return f, nil
}

// ErrSizeChanged is returned by OpenSized for a file whose size is not
// the one given.
var ErrSizeChanged = errors.New("journal: file size changed")

// OpenSized opens the existing journal at path whose valid frames are
// known to end exactly at size, the file's size (a caller that indexed the
// file earlier and kept what it found, as the log store's index sidecars
// do), without reading the frames: it checks only the header and the size.
// A file of another size fails with ErrSizeChanged, one without the header
// with ErrNotJournal; the caller then opens it with Open, which recovers
// it. A frame damaged since is found when it is read (ReadAt, ReadFrames
// check every frame's CRC), not here.
func OpenSized(path string, opts Options, size int64) (*File, error) {
	fsys := opts.FS
	if fsys == nil {
		fsys = OS
	}
	fd, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, storageError("open", path, err)
	}
	fail := func(err error) (*File, error) {
		fd.Close()
		return nil, err
	}
	st, err := fd.Stat()
	if err != nil {
		return fail(storageError("stat", path, err))
	}
	if st.Size() != size || size < HeaderSize {
		return fail(fmt.Errorf("%w: %s: %d bytes, not %d", ErrSizeChanged, path, st.Size(), size))
	}
	head := make([]byte, HeaderSize)
	if _, err := fd.ReadAt(head, 0); err != nil {
		return fail(storageError("read", path, err))
	}
	if !bytes.Equal(head, fileMagic) {
		return fail(fmt.Errorf("%w: %s", ErrNotJournal, path))
	}
	f := newFile(path, fd, opts)
	f.size, f.committed = size, size
	f.marks.add(size, size > HeaderSize)
	return f, nil
}

// load checks the header, replays the frames and truncates a torn tail.
func (f *File) load(opts Options, replay func(int64, []byte) error) error {
	st, err := f.fd.Stat()
	if err != nil {
		return storageError("stat", f.path, err)
	}
	size := st.Size()
	if size < HeaderSize {
		// A new file, or one torn while its header was written.
		head := make([]byte, size)
		if _, err := f.fd.ReadAt(head, 0); err != nil && err != io.EOF {
			return storageError("read", f.path, err)
		}
		if !bytes.HasPrefix(fileMagic, head) {
			return fmt.Errorf("%w: %s", ErrNotJournal, f.path)
		}
		if err := f.initHeader(); err != nil {
			return err
		}
		f.size, f.committed = HeaderSize, HeaderSize
		f.marks.add(HeaderSize, false)
		return nil
	}
	s := newScanner(f.fd, size)
	head, err := s.window(0, HeaderSize)
	if err != nil {
		return storageError("read", f.path, err)
	}
	if !bytes.Equal(head, fileMagic) {
		return fmt.Errorf("%w: %s", ErrNotJournal, f.path)
	}
	off := int64(HeaderSize)
	for off < size {
		payload, ok, err := s.frameAt(off)
		if err != nil {
			return storageError("read", f.path, err)
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
			return storageError("read", f.path, err)
		}
		if next < 0 {
			if opts.OnDamage != nil {
				opts.OnDamage(Damage{Offset: off, Length: size - off, Tail: true})
			}
			if err := f.fd.Truncate(off); err != nil {
				return storageError("truncate torn tail of", f.path, err)
			}
			if err := f.fsync(f.fd); err != nil {
				return storageError("sync", f.path, err)
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
	f.marks.add(size, size > HeaderSize)
	return nil
}

// initHeader writes the file header to an empty (or torn) file and makes the
// file and its directory entry durable.
func (f *File) initHeader() error {
	if err := f.fd.Truncate(0); err != nil {
		return storageError("init", f.path, err)
	}
	if _, err := f.fd.WriteAt(fileMagic, 0); err != nil {
		return storageError("init", f.path, err)
	}
	if err := f.fsync(f.fd); err != nil {
		return storageError("sync", f.path, err)
	}
	return f.syncDir()
}

// fsync syncs h, timing it: a sync slower than the durability window is
// logged, since every change acknowledged through it waited that long.
func (f *File) fsync(h Handle) error {
	start := time.Now()
	err := h.Sync()
	f.noteSync(start, "file")
	return err
}

// syncDir fsyncs the journal's directory, timed like fsync.
func (f *File) syncDir() error {
	start := time.Now()
	dir := filepath.Dir(f.path)
	err := f.fs.SyncDir(dir)
	f.noteSync(start, "directory")
	if err != nil {
		return storageError("sync dir", dir, err)
	}
	return nil
}

func (f *File) noteSync(start time.Time, what string) {
	if d := time.Since(start); d > f.window {
		f.log.Warn("journal: slow fsync", "path", f.path, "of", what, "took", d, "window", f.window)
	}
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
// the end of the file and returns the offset it was written at. If the write
// fails, the bytes of buf that reached the file are cut off again (now, or
// before the next write if the truncation fails too).
func (f *File) Write(buf []byte) (int64, error) {
	var off int64
	err := f.withOpen(false, func() error {
		if err := f.clean(); err != nil {
			return err
		}
		if _, err := f.fd.WriteAt(buf, f.size); err != nil {
			return f.cutBack("write", err)
		}
		off = f.size
		f.size += int64(len(buf))
		return nil
	})
	if err != nil {
		return 0, err
	}
	return off, nil
}

// withOpen runs fn holding fdmu and then mu, or returns ErrClosed once the
// file is closed. fdmu is held exclusively when fn swaps or closes fd, and
// for reading when it only uses it.
func (f *File) withOpen(exclusive bool, fn func() error) error {
	if exclusive {
		f.fdmu.Lock()
		defer f.fdmu.Unlock()
	} else {
		f.fdmu.RLock()
		defer f.fdmu.RUnlock()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	return fn()
}

// cutBack records the failed write or fsync (op) as the file's fault, cuts
// off what may have reached the file (now, or before the next write if the
// truncation fails too), and returns the fault. The caller holds mu.
func (f *File) cutBack(op string, err error) error {
	f.dirty = true
	err = f.failed(storageError(op, f.path, err))
	f.clean()
	return err
}

// clean cuts the file back to size after a failed write or sync, and makes
// the cut durable, so that no byte of a frame that was not acknowledged can
// reappear after a crash. The caller holds mu.
func (f *File) clean() error {
	if !f.dirty {
		return nil
	}
	if err := f.fd.Truncate(f.size); err != nil {
		return f.failed(storageError("truncate", f.path, err))
	}
	if err := f.fsync(f.fd); err != nil {
		return f.failed(storageError("sync", f.path, err))
	}
	f.dirty = false
	return nil
}

// failed records err as the file's fault and returns it. The caller holds mu.
func (f *File) failed(err error) error {
	f.fault = err
	return err
}

// Sync makes every frame appended before the call durable. Appends may run
// while it waits for the disk.
//
// If the fsync fails, the kernel may have dropped the pages it could not
// write, so nothing appended since the last good sync can be trusted: the
// file is rolled back to its durable prefix and Sync returns the error. A
// Sync that was waiting on the disk when another one failed this way fails
// too; but one that starts after the rollback cannot tell that frames
// appended before it were dropped. A writer that acknowledges what it
// appended once Sync returns nil must therefore serialise its append with
// its Sync, as every store in this module does.
func (f *File) Sync() error {
	f.fdmu.RLock()
	defer f.fdmu.RUnlock()
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ErrClosed
	}
	if err := f.clean(); err != nil {
		f.mu.Unlock()
		return err
	}
	if f.dirSync {
		if err := f.syncDir(); err != nil {
			f.rollback()
			f.failed(err)
			f.mu.Unlock()
			return err
		}
		f.dirSync = false
	}
	end, epoch := f.size, f.epoch
	f.mu.Unlock()
	err := f.fsync(f.fd)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		err = storageError("sync", f.path, err)
		if epoch == f.epoch {
			f.rollback()
		}
		return f.failed(err)
	}
	if epoch != f.epoch {
		// A concurrent Sync failed and rolled back frames this one covered.
		if f.fault != nil {
			return f.fault
		}
		return fmt.Errorf("journal: sync %s: frames rolled back: %w", f.path, ErrStorageFailed)
	}
	if end > f.committed {
		f.committed = end
		f.marks.add(end, false)
	}
	f.fault = nil
	return nil
}

// rollback drops every frame past the durable prefix. The caller holds mu.
func (f *File) rollback() {
	f.size = f.committed
	f.dirty = true
	f.epoch++
	f.clean()
}

// Fault returns the error of the last failed write, fsync or truncation, or
// nil if the file is healthy: a later successful Sync, Compact or Probe
// clears it. The error wraps ErrStorageFull or ErrStorageFailed.
func (f *File) Fault() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fault
}

// Probe tests whether a faulty file accepts writes again, so that a store
// with no change to write can still learn that the disk was freed: it
// writes a block of zeros past the last frame, fsyncs, and cuts the block
// off again (a crash in between leaves a tail that Open truncates as torn).
// On success the fault is cleared. On a healthy file, or one with frames
// appended but not yet synced, it does nothing and returns Fault.
func (f *File) Probe() error {
	return f.withOpen(false, func() error {
		if f.fault == nil || f.size != f.committed {
			return f.fault
		}
		if err := f.clean(); err != nil {
			return err
		}
		if f.dirSync {
			if err := f.syncDir(); err != nil {
				return f.failed(err)
			}
			f.dirSync = false
		}
		f.dirty = true
		if _, err := f.fd.WriteAt(make([]byte, probeSize), f.size); err != nil {
			return f.cutBack("probe", err)
		}
		if err := f.fsync(f.fd); err != nil {
			return f.cutBack("probe sync", err)
		}
		if err := f.clean(); err != nil {
			return err
		}
		f.fault = nil
		return nil
	})
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
	n, err := frameLen(h[:], path, off, size)
	if err != nil {
		return nil, err
	}
	if int64(cap(buf)) >= n {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	if _, err := r.ReadAt(buf, off+FrameOverhead); err != nil {
		return nil, fmt.Errorf("journal: read %s at %d: %w", path, off, err)
	}
	return buf, checkFrame(h[:], buf, path, off)
}

// frameLen returns the payload length of the frame at off whose header is
// h, checking the marker and that the frame ends within size.
func frameLen(h []byte, path string, off, size int64) (int64, error) {
	n := int64(binary.LittleEndian.Uint32(h[4:8]))
	if !bytes.Equal(h[:4], frameMagic) || n > MaxRecord || off+FrameOverhead+n > size {
		return 0, fmt.Errorf("journal: %s: no frame at offset %d", path, off)
	}
	return n, nil
}

// checkFrame checks the checksum of the frame at off with header h.
func checkFrame(h, payload []byte, path string, off int64) error {
	crc := crc32.Update(0, castagnoli, h[4:8])
	crc = crc32.Update(crc, castagnoli, payload)
	if crc != binary.LittleEndian.Uint32(h[8:12]) {
		return fmt.Errorf("journal: %s: checksum mismatch in frame at offset %d", path, off)
	}
	return nil
}

// MaxSpan bounds the bytes ReadFrames reads in one call to the file.
const MaxSpan = 256 << 10

// spanAhead is what ReadFrames reads past a span's last frame offset, for
// that frame: most frames (a request log takes about 220 bytes) fit.
const spanAhead = 4096

// ReadFrames calls fn with the index and payload of the frame at each
// offset of offs, checked as ReadAt checks it, in the order of offs. It
// reads runs of ascending offsets less than MaxSpan apart with one read
// of the file each (into buf, grown as needed and returned for reuse),
// instead of two per frame: a page of neighbouring entries costs one
// system call. The payload is valid only during the call of fn.
func (f *File) ReadFrames(buf []byte, offs []int64, fn func(i int, payload []byte) error) ([]byte, error) {
	f.fdmu.RLock()
	defer f.fdmu.RUnlock()
	f.mu.Lock()
	size, closed := f.size, f.closed
	f.mu.Unlock()
	if closed {
		return buf, ErrClosed
	}
	for i := 0; i < len(offs); {
		start, j := offs[i], i+1
		for j < len(offs) && offs[j] > offs[j-1] && offs[j]-start < MaxSpan {
			j++
		}
		if start < HeaderSize || start >= size {
			return buf, fmt.Errorf("journal: %s: no frame at offset %d", f.path, start)
		}
		end := min(offs[j-1]+FrameOverhead+spanAhead, size)
		buf = slices.Grow(buf[:0], int(end-start))[:end-start]
		if _, err := f.fd.ReadAt(buf, start); err != nil {
			return buf, fmt.Errorf("journal: read %s at %d: %w", f.path, start, err)
		}
		for ; i < j; i++ {
			p, err := spanFrame(f.fd, f.path, buf, offs[i]-start, start, size)
			if err != nil {
				return buf, err
			}
			if err := fn(i, p); err != nil {
				return buf, err
			}
		}
	}
	return buf, nil
}

// spanFrame returns the payload of the frame at offset at in span (the
// bytes of the file from start), reading it from r when it runs past the
// span.
func spanFrame(r io.ReaderAt, path string, span []byte, at, start, size int64) ([]byte, error) {
	off := start + at
	if at+FrameOverhead > int64(len(span)) {
		return readFrameInto(r, path, nil, off, size)
	}
	h := span[at : at+FrameOverhead]
	n, err := frameLen(h, path, off, size)
	if err != nil {
		return nil, err
	}
	if at+FrameOverhead+n > int64(len(span)) {
		return readFrameInto(r, path, nil, off, size)
	}
	p := span[at+FrameOverhead : at+FrameOverhead+n]
	return p, checkFrame(h, p, path, off)
}

// Writer appends frames to a new journal being built by Compact or Create.
type Writer struct {
	buf []byte
	off int64
	fd  Handle
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
// Appends and reads wait while Compact runs. If building the new file fails
// (a full disk), the temporary file is removed and the old one stays in
// use, unchanged.
func (f *File) Compact(fill func(w *Writer) error) error {
	return f.withOpen(true, func() error {
		fd, size, err := f.writeNew(fill)
		if fd != nil {
			// The new file has replaced the old one in the directory: from
			// now on only it may be written, even if the rename is not yet
			// durable. The old one stays open for the next Capture.
			f.retire()
			f.fd = fd
			f.size, f.committed = size, size
			f.marks.reset(size)
			f.ident = newIdentity()
			f.dirty = false
			f.epoch++
			// If the rename may not survive a crash, nothing appended to
			// the new file can be acknowledged before the directory is
			// synced: Sync retries that first.
			f.dirSync = err != nil
		}
		if err != nil {
			return f.failed(err)
		}
		f.fault = nil
		return nil
	})
}

// writeNew builds a journal in a temporary file and renames it to f.path.
// If the rename succeeded but the directory could not be synced, it returns
// the new file together with the error: the caller must stop using the old
// one.
func (f *File) writeNew(fill func(w *Writer) error) (Handle, int64, error) {
	tmp := f.path + ".tmp"
	fd, err := f.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, 0, storageError("compact", f.path, err)
	}
	fail := func(err error) (Handle, int64, error) {
		fd.Close()
		f.fs.Remove(tmp)
		return nil, 0, storageError("compact", f.path, err)
	}
	w := &Writer{fd: fd, off: HeaderSize, buf: append([]byte(nil), fileMagic...)}
	if fill != nil {
		if err := fill(w); err != nil {
			if w.err != nil {
				return fail(w.err)
			}
			fd.Close()
			f.fs.Remove(tmp)
			return nil, 0, fmt.Errorf("journal: compact %s: %w", f.path, err)
		}
	}
	w.flush()
	if w.err != nil {
		return fail(w.err)
	}
	if err := f.fsync(fd); err != nil {
		return fail(err)
	}
	if err := f.fs.Rename(tmp, f.path); err != nil {
		return fail(err)
	}
	if err := f.syncDir(); err != nil {
		return fd, w.off, fmt.Errorf("journal: compact %s: %w", f.path, err)
	}
	return fd, w.off, nil
}

// Close syncs and closes the file. Later calls return ErrClosed.
func (f *File) Close() error {
	return f.withOpen(true, func() error {
		f.closed = true
		f.dropRetired()
		err := f.clean()
		if err == nil && f.dirSync {
			err = f.syncDir()
		}
		if err == nil {
			if err = f.fsync(f.fd); err == nil {
				f.committed = f.size
			} else {
				err = storageError("sync", f.path, err)
			}
		}
		if cerr := f.fd.Close(); err == nil && cerr != nil {
			err = storageError("close", f.path, cerr)
		}
		if err != nil {
			return fmt.Errorf("journal: close %s: %w", f.path, err)
		}
		return nil
	})
}

// Discard closes the file without syncing it, for a file about to be
// deleted, whose contents need not be durable: a log store deleting a
// thousand segments would otherwise wait for a thousand fsyncs. Later calls
// return ErrClosed.
func (f *File) Discard() error {
	return f.withOpen(true, func() error {
		f.closed = true
		f.dropRetired()
		if err := f.fd.Close(); err != nil {
			return storageError("close", f.path, err)
		}
		return nil
	})
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
