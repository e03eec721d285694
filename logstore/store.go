package logstore

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"strongbox/logstore/journal"
)

var (
	// ErrNotFound is returned by Get for an id that names no stored entry.
	ErrNotFound = errors.New("logstore: entry not found")

	// ErrClosed is returned by the methods of a closed Store that return
	// an error (Add on a closed Store does nothing).
	ErrClosed = errors.New("logstore: store closed")

	// ErrInvalidFilter is wrapped by the error List and Stats return for a
	// malformed filter; the wrapped *filterlang.SyntaxError says what is
	// wrong and where.
	ErrInvalidFilter = errors.New("logstore: invalid filter")

	// ErrInvalidSort is wrapped by the error List returns for a malformed
	// sort expression or an unknown sort field.
	ErrInvalidSort = errors.New("logstore: invalid sort")
)

const (
	// DefaultFlushInterval is the group-commit window: an added entry is
	// durable at most this long after Add. It is also the maximum.
	DefaultFlushInterval = 200 * time.Millisecond

	// MaxPending is the number of entries Add queues for the writer before
	// it drops new ones (with a warning): a few seconds of ingest at full
	// speed, far longer than any sane disk stall.
	MaxPending = 1 << 20

	// MaxPendingBytes bounds the text (the strings: message, URL, headers,
	// error …) of the entries queued for the writer or being written, so
	// that large entries cannot fill memory while the disk stalls; past it
	// Add drops new entries like past MaxPending.
	MaxPendingBytes = 64 << 20

	// DefaultMaxBytes is the size cap of a store whose Options.MaxBytes is 0.
	DefaultMaxBytes = 1 << 30

	// DefaultSegmentSize is the size at which the active segment is rotated.
	DefaultSegmentSize = 64 << 20

	// dayMs is a day in Unix milliseconds: segments hold one UTC day.
	dayMs = 24 * 60 * 60 * 1000
)

// Options configure Open.
type Options struct {
	// Now is the clock for Created and for retention; nil means time.Now.
	Now func() time.Time

	// Rand is the source of the id key of a new data directory; nil means
	// crypto/rand.
	Rand io.Reader

	// Logger receives warnings: damaged frames skipped or truncated at
	// Open, entries dropped because the queue is full, failed writes.
	// nil discards them.
	Logger *slog.Logger

	// FlushInterval is the group-commit window, at most (and by default)
	// DefaultFlushInterval.
	FlushInterval time.Duration

	// MaxDays is the retention in days (settings.logs.maxDays). 0 turns
	// logging off: Add does nothing and Open drops every stored entry, as
	// PocketBase does.
	MaxDays int

	// MinLevel is the lowest level Add keeps (settings.logs.minLevel).
	MinLevel int

	// MaxBytes caps the total size of the segment files; 0 means
	// DefaultMaxBytes (1 GiB). After each commit, and at Open, while the
	// segments hold more, the oldest segment is deleted (never the active
	// one), like age retention: whole files, with an Info log. Segments are
	// rotated at MaxBytes/8 at the latest, so that a deletion drops at most
	// an eighth of the cap. The index is proportional to what is stored, so
	// this bounds its memory too, whatever the clients send.
	MaxBytes int64

	// segmentSize overrides DefaultSegmentSize in tests.
	segmentSize int64

	// tune overrides defaultTuning in tests.
	tune tuning

	// maxPendingBytes overrides MaxPendingBytes in tests.
	maxPendingBytes int64

	// FS is the file system of the segments; nil means journal.OS. Tests
	// inject faults through it.
	FS journal.FS
}

// Store is an append-only request-log store with an in-memory index. Its
// methods are safe for concurrent use.
type Store struct {
	dir     string
	fs      journal.FS
	now     func() time.Time
	log     *slog.Logger
	window  time.Duration
	segSize int64
	tune    tuning // of its indexes (and of those it loads)

	maxBytes        int64 // cap of the segments' total size
	maxPendingBytes int64

	maxDays  atomic.Int64
	minLevel atomic.Int64

	// mu guards the index and the segment list. Queries hold it for
	// reading; the writer takes it briefly to add a committed batch.
	// segs is by firstSeq, and the last one is active; it is empty only
	// while no segment can be created (a full disk: see newSegment).
	mu     sync.RWMutex
	idx    *index
	segs   []*segment
	closed bool

	// wmu serialises everything that writes segments: commits, rotation
	// and retention. Its holder may read idx and segs without mu.
	wmu     sync.Mutex
	nextSeq int64
	key     uint64 // the id key, copied to every new segment
	wbuf    []byte
	wpos    []int
	jbuf    []byte

	// Rotation back-off, guarded by wmu: no new segment before rotAfter;
	// meanwhile rotate fails with rotErr, the error that started it.
	rotWait  time.Duration
	rotAfter time.Time
	rotErr   error

	// Segment files retention could not delete, retried by every pass;
	// guarded by wmu.
	stale []string

	// Storage health, set by the writer, read by Health.
	hmu      sync.Mutex
	fault    error     // the last failed write's error; nil once one succeeds
	lost     int64     // entries lost since the fault began
	faultLog time.Time // when the fault was last logged
	probeAt  time.Time // when Health last probed the disk (Options.Now)

	// The queue between Add and the writer.
	qmu      sync.Mutex
	qcond    *sync.Cond
	queue    []Entry
	spare    []Entry
	queued   int64     // entries accepted by Add so far
	qbytes   int64     // text of the queued entries (entryText)
	wbytes   int64     // text of the entries the writer is committing
	done     int64     // of those, entries committed, failed or discarded
	firstAt  time.Time // arrival of the oldest queued entry
	flushReq int64     // largest queued count a Flush waits for
	closing  bool
	failEnd  int64 // done count after the last failed batch
	failErr  error
	dropped  int64
	dropWarn time.Time

	// Index sidecars (sidecar.go): scMu serialises writing and deleting
	// their files; scWG counts the background writers, which stop once
	// scStop is set (by Close, under wmu).
	scMu   sync.Mutex
	scWG   sync.WaitGroup
	scStop atomic.Bool

	// What retention deleted since Open: entries and bytes (Counters).
	retained, retainedBytes atomic.Int64

	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
}

// Open opens the store in dir (created if missing), recovering and indexing
// every segment. Damage is never fatal: a torn tail is truncated, a damaged
// frame in the middle is skipped, each with a warning through
// Options.Logger. With MaxDays 0 the stored entries are dropped.
func Open(dir string, opts Options) (*Store, error) {
	s := &Store{
		dir:     dir,
		fs:      opts.FS,
		now:     opts.Now,
		log:     opts.Logger,
		window:  opts.FlushInterval,
		segSize: opts.segmentSize,
		tune:    opts.tune.orDefault(),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	s.idx = newIndex(s.tune)
	if s.now == nil {
		s.now = time.Now
	}
	if s.fs == nil {
		s.fs = journal.OS
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.window <= 0 || s.window > DefaultFlushInterval {
		s.window = DefaultFlushInterval
	}
	if s.segSize <= 0 {
		s.segSize = DefaultSegmentSize
	}
	if opts.MaxDays < 0 {
		return nil, fmt.Errorf("logstore: open %s: negative MaxDays %d", dir, opts.MaxDays)
	}
	if opts.MaxBytes < 0 {
		return nil, fmt.Errorf("logstore: open %s: negative MaxBytes %d", dir, opts.MaxBytes)
	}
	s.maxBytes = opts.MaxBytes
	if s.maxBytes == 0 {
		s.maxBytes = DefaultMaxBytes
	}
	// Rotate at an eighth of the cap at the latest, so that the cap drops
	// an eighth of the entries at a time, not most of them.
	s.segSize = min(s.segSize, max(s.maxBytes/8, 1))
	s.maxPendingBytes = opts.maxPendingBytes
	if s.maxPendingBytes <= 0 {
		s.maxPendingBytes = MaxPendingBytes
	}
	s.maxDays.Store(int64(opts.MaxDays))
	s.minLevel.Store(int64(opts.MinLevel))
	s.qcond = sync.NewCond(&s.qmu)

	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("logstore: open %s: %w", dir, err)
	}
	if err := s.load(); err != nil {
		s.closeFiles()
		return nil, err
	}
	if err := s.start(opts.Rand); err != nil {
		s.closeFiles()
		return nil, err
	}
	go s.run()
	var later []*segment // decoded, and no longer growing: sidecars due
	for i, seg := range s.segs {
		if seg.needSidecar && i < len(s.segs)-1 {
			later = append(later, seg)
		}
	}
	s.sidecarsLater(later)
	return s, nil
}

// start applies retention and makes sure there is an active segment. On a
// full disk neither needs space: retention only deletes, and a store whose
// first segment cannot be created opens all the same, serving what it
// holds and losing new entries (Health says why) until the disk has room
// again: the next commit, or Health's probe, creates the segment.
func (s *Store) start(rnd io.Reader) error {
	if len(s.segs) == 0 {
		var k [8]byte
		if rnd == nil {
			rnd = rand.Reader
		}
		if _, err := io.ReadFull(rnd, k[:]); err != nil {
			return fmt.Errorf("logstore: open %s: id key: %w", s.dir, err)
		}
		s.key = binary.LittleEndian.Uint64(k[:])
		s.nextSeq = max(1, s.nextSeq)
	} else {
		last := s.segs[len(s.segs)-1]
		s.key = last.key
		s.nextSeq = max(s.nextSeq, last.firstSeq, last.lastSeq+1)
	}
	if err := s.enforceRetention(); err != nil {
		// Only a segment that could not be deleted: retried by every pass.
		s.log.Error("logstore: retention", "error", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if len(s.segs) > 0 {
		return nil
	}
	seg, err := s.createSegment(s.nextSeq, s.key)
	if err == nil {
		s.addSegment(seg)
		return nil
	}
	if !isStorage(err) {
		return err
	}
	s.log.Error(msgOpenFull, "error", err)
	s.noteFault(0, err)
	return nil
}

// Close commits every queued entry, stops the writer and closes the files.
func (s *Store) Close() error {
	s.qmu.Lock()
	if s.closing {
		s.qmu.Unlock()
		return ErrClosed
	}
	s.closing = true
	s.qmu.Unlock()
	close(s.stop)
	<-s.stopped
	s.wmu.Lock()
	s.scStop.Store(true)
	s.wmu.Unlock()
	s.scWG.Wait()

	// Under wmu as well as mu: retention (which holds wmu) sees closed.
	s.wmu.Lock()
	s.sealForClose()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	err := s.closeFiles()
	s.wmu.Unlock()
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if err == nil && s.failErr != nil && s.failEnd == s.done {
		// The last batch failed: entries are lost at shutdown. An earlier
		// failure the writer has recovered from was reported by Flush and
		// logged; it is no reason for the process to exit with an error.
		err = s.failErr
	}
	return err
}

func (s *Store) closeFiles() error {
	var first error
	for _, seg := range s.segs {
		if seg.f == nil {
			continue
		}
		if err := seg.f.Close(); err != nil && first == nil {
			first = fmt.Errorf("logstore: close: %w", err)
		}
	}
	return first
}

// Capture pauses the store's writer (commits, rotation and retention;
// Add and queries go on) and returns every segment's durable prefix as a
// section, for a backup that captures every store at one instant: each
// section ends on a frame boundary and holds only fsynced entries, and its
// descriptor keeps the segment readable even if retention deletes it
// after release. The writer waits until release is called; the caller
// releases as soon as every store is captured, and copies the sections
// afterwards. On error nothing stays paused or open. The caller closes the
// sections.
func (s *Store) Capture() (_ []*journal.Section, release func(), err error) {
	s.wmu.Lock()
	if s.closed {
		s.wmu.Unlock()
		return nil, nil, ErrClosed
	}
	secs := make([]*journal.Section, 0, len(s.segs))
	for _, seg := range s.segs {
		sec, err := seg.f.Capture()
		if err != nil {
			s.wmu.Unlock()
			for _, sec := range secs {
				sec.Close()
			}
			return nil, nil, fmt.Errorf("logstore: capture: %w", err)
		}
		secs = append(secs, sec)
	}
	return secs, sync.OnceFunc(s.wmu.Unlock), nil
}

// Len returns the number of indexed entries.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.idx.rows
}
