package logstore

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
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

	// bigBatch is the queue length at which the writer commits at once
	// instead of waiting for the rest of the window.
	bigBatch = 16384

	// maxBatch is the most entries the writer commits in one batch.
	maxBatch = 65536

	// DefaultSegmentSize is the size at which the active segment is rotated.
	DefaultSegmentSize = 64 << 20

	// Rotation that fails (a full disk cannot take a new segment file) is
	// retried after a back-off that doubles from minRotateWait to
	// maxRotateWait; meanwhile the active segment grows past its size.
	minRotateWait = time.Second
	maxRotateWait = time.Minute

	// faultLogEvery is how often, at most, the writer logs that writes keep
	// failing, so that a full disk does not flood the server's log.
	faultLogEvery = time.Minute

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
	// the reference does.
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

	// maxPendingBytes overrides MaxPendingBytes in tests.
	maxPendingBytes int64

	// FS is the file system of the segments; nil means journal.OS. Tests
	// inject faults through it.
	FS journal.FS
}

// segment is one segment file: a journal of records with consecutive
// sequence numbers from firstSeq on.
type segment struct {
	path     string
	firstSeq int64
	key      uint64
	f        *journal.File

	// Guarded by Store.mu (written with Store.wmu held as well).
	lastSeq    int64 // last indexed sequence number; firstSeq-1 when empty
	rows       int
	maxCreated int64   // newest Created of its rows (Unix ms)
	day        int64   // UTC day it holds entries of, for rotation
	extras     []extra // see chunk.ext
}

func segmentName(firstSeq int64, key uint64) string {
	return fmt.Sprintf("%016x-%016x.seg", firstSeq, key)
}

// parseSegmentName is the inverse of segmentName.
func parseSegmentName(name string) (firstSeq int64, key uint64, ok bool) {
	if len(name) != 37 || name[16] != '-' || name[33:] != ".seg" {
		return 0, 0, false
	}
	a, err1 := strconv.ParseUint(name[:16], 16, 64)
	b, err2 := strconv.ParseUint(name[17:33], 16, 64)
	if err1 != nil || err2 != nil || a < 1 || a > maxSeq {
		return 0, 0, false
	}
	return int64(a), b, true
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

	maxBytes        int64 // cap of the segments' total size
	maxPendingBytes int64

	maxDays  atomic.Int64
	minLevel atomic.Int64

	// mu guards the index and the segment list. Queries hold it for
	// reading; the writer takes it briefly to add a committed batch.
	mu     sync.RWMutex
	idx    *index
	segs   []*segment // by firstSeq; the last one is active
	closed bool

	// wmu serialises everything that writes segments: commits, rotation
	// and retention. Its holder may read idx and segs without mu.
	wmu     sync.Mutex
	nextSeq int64
	wbuf    []byte
	wpos    []int
	jbuf    []byte

	// Rotation back-off, guarded by wmu: no new segment before rotAfter.
	rotWait  time.Duration
	rotAfter time.Time

	// Storage health, set by the writer, read by Health.
	hmu      sync.Mutex
	fault    error     // the last failed write's error; nil once one succeeds
	lost     int64     // entries lost since the fault began
	faultLog time.Time // when the fault was last logged

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
		idx:     newIndex(),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	if s.now == nil {
		s.now = time.Now
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
	return s, nil
}

// start makes sure there is an active segment and applies retention.
func (s *Store) start(rnd io.Reader) error {
	if len(s.segs) == 0 {
		var k [8]byte
		if rnd == nil {
			rnd = rand.Reader
		}
		if _, err := io.ReadFull(rnd, k[:]); err != nil {
			return fmt.Errorf("logstore: open %s: id key: %w", s.dir, err)
		}
		seg, err := s.createSegment(max(1, s.nextSeq), binary.LittleEndian.Uint64(k[:]))
		if err != nil {
			return err
		}
		s.segs = append(s.segs, seg)
	}
	last := s.segs[len(s.segs)-1]
	s.nextSeq = max(s.nextSeq, last.firstSeq, last.lastSeq+1)
	return s.enforceRetention()
}

// load opens and indexes the existing segments.
func (s *Store) load() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("logstore: open %s: %w", s.dir, err)
	}
	for _, de := range ents {
		first, key, ok := parseSegmentName(de.Name())
		if !ok || !de.Type().IsRegular() {
			continue
		}
		s.segs = append(s.segs, &segment{
			path:     filepath.Join(s.dir, de.Name()),
			firstSeq: first,
			key:      key,
			lastSeq:  first - 1,
		})
	}
	slices.SortFunc(s.segs, func(a, b *segment) int { return cmp.Compare(a.firstSeq, b.firstSeq) })

	// Segments are independent: index each into its own partial index,
	// on all cores, then merge the partial indexes in order.
	parts := make([]*index, len(s.segs))
	errs := make([]error, len(s.segs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(s.segs)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(s.segs) {
					return
				}
				limit := int64(math.MaxInt64)
				if i+1 < len(s.segs) {
					limit = s.segs[i+1].firstSeq
				}
				parts[i], errs[i] = s.loadSegment(s.segs[i], limit)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(parts) > 0 {
		s.idx = parts[0]
		s.idx.merge(parts[1:])
	}
	s.segs = slices.DeleteFunc(s.segs, func(seg *segment) bool {
		if seg.f == nil {
			// Never reuse the sequence numbers of a set-aside segment.
			s.nextSeq = max(s.nextSeq, seg.firstSeq+1)
			return true
		}
		return false
	})
	return nil
}

// loadSegment opens seg and indexes its records (sequence numbers below
// limit) into a new partial index.
func (s *Store) loadSegment(seg *segment, limit int64) (*index, error) {
	x := newIndex()
	var rec record
	opts := s.journalOptions()
	opts.OnDamage = func(d journal.Damage) {
		s.log.Warn("logstore: damaged segment bytes dropped",
			"path", seg.path, "offset", d.Offset, "length", d.Length, "tornTail", d.Tail)
	}
	f, err := journal.Open(seg.path, opts, func(off int64, p []byte) error {
		if err := decodeRecord(p, &rec); err != nil || rec.seq >= limit {
			s.log.Warn("logstore: malformed record skipped", "path", seg.path, "offset", off)
			return nil
		}
		if err := x.add(seg, off, &rec); err != nil {
			s.log.Warn("logstore: record skipped", "path", seg.path, "offset", off, "error", err)
		}
		return nil
	})
	if errors.Is(err, journal.ErrNotJournal) {
		// Not a journal: its header is damaged. Keep the file for manual
		// recovery, out of the way, and carry on without it.
		s.log.Error("logstore: segment header damaged, segment set aside",
			"path", seg.path, "renamedTo", seg.path+".broken")
		if err := os.Rename(seg.path, seg.path+".broken"); err != nil {
			return nil, fmt.Errorf("logstore: open %s: %w", s.dir, err)
		}
		return newIndex(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("logstore: open %s: %w", s.dir, err)
	}
	seg.f = f
	seg.day = floorDiv(clampMs(s.now()), dayMs)
	if len(x.chunks) > 0 {
		seg.day = floorDiv(x.chunks[0].created[0], dayMs)
	}
	return x, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// journalOptions returns the options segments are opened with: an fsync
// slower than the group-commit window breaks the store's promise that an
// entry is durable within it, and is logged.
func (s *Store) journalOptions() journal.Options {
	return journal.Options{FS: s.fs, Logger: s.log, SyncWindow: s.window}
}

// createSegment creates an empty segment file whose first record will have
// sequence number first. If that fails, no file is left behind.
func (s *Store) createSegment(first int64, key uint64) (*segment, error) {
	path := filepath.Join(s.dir, segmentName(first, key))
	f, err := journal.Open(path, s.journalOptions(), nil)
	if err != nil {
		return nil, fmt.Errorf("logstore: create segment: %w", err)
	}
	return &segment{
		path:     path,
		firstSeq: first,
		key:      key,
		f:        f,
		lastSeq:  first - 1,
		day:      floorDiv(clampMs(s.now()), dayMs),
	}, nil
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

	// Under wmu as well as mu: retention (which holds wmu) sees closed.
	s.wmu.Lock()
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

// Add queues e for the writer and returns at once: it never waits for the
// disk. The entry is durable and visible to queries within
// Options.FlushInterval (or after Flush). Add does nothing while logging is
// off (MaxDays 0), for an entry below MinLevel and after Close; it drops the
// entry, with a warning, when MaxPending entries or MaxPendingBytes of text
// are already queued. Strings that are not valid UTF-8 are stored with
// their invalid bytes replaced by U+FFFD.
func (s *Store) Add(e Entry) {
	if s.maxDays.Load() == 0 || int64(e.Level) < s.minLevel.Load() {
		return
	}
	if e.Created.IsZero() {
		e.Created = s.now()
	}
	size := entryText(&e)
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closing {
		return
	}
	if len(s.queue) >= MaxPending || s.qbytes+s.wbytes+size > s.maxPendingBytes {
		s.dropped++
		if now := time.Now(); now.Sub(s.dropWarn) >= time.Second {
			s.dropWarn = now
			s.log.Warn("logstore: writer queue full, log entries dropped", "dropped", s.dropped)
		}
		return
	}
	s.queue = append(s.queue, e)
	s.queued++
	s.qbytes += size
	switch len(s.queue) {
	case 1:
		s.firstAt = time.Now()
		s.signal()
	case bigBatch:
		s.signal()
	}
}

// entryText returns the bytes of text of e that count against
// MaxPendingBytes: its strings (attributes and details, which are rare and
// produced by the server, count little).
func entryText(e *Entry) int64 {
	n := len(e.ID) + len(e.Message)
	if r := e.Request; r != nil {
		n += len(r.Auth) + len(r.AuthID) + len(r.Method) + len(r.Referer) + len(r.RemoteIP) +
			len(r.URL) + len(r.UserAgent) + len(r.UserIP) + len(r.Error)
		if d, ok := r.Details.(string); ok {
			n += len(d)
		}
	} else {
		for k, v := range e.Attrs {
			n += len(k) + 16
			if t, ok := v.(string); ok {
				n += len(t)
			}
		}
	}
	return int64(n)
}

func (s *Store) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Flush waits until every entry added before the call is durable and
// indexed, and returns the error of a failed write of one of them.
func (s *Store) Flush() error {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closing {
		return ErrClosed
	}
	start, target := s.done, s.queued
	if target > s.flushReq {
		s.flushReq = target
	}
	s.signal()
	for s.done < target {
		s.qcond.Wait()
	}
	if s.failErr != nil && s.failEnd > start {
		return s.failErr
	}
	return nil
}

// run is the writer: it commits the queue in batches, at the latest one
// window after the oldest queued entry arrived, and enforces retention once
// a minute.
func (s *Store) run() {
	defer close(s.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		s.qmu.Lock()
		n := len(s.queue)
		closing := s.closing
		var wait time.Duration
		if n > 0 && n < bigBatch && !closing && s.flushReq <= s.done {
			wait = s.window - time.Since(s.firstAt)
		}
		var batch []Entry
		if n > 0 && wait <= 0 {
			// At most maxBatch entries per commit keeps the write buffer
			// (about 250 bytes an entry) bounded after a burst.
			k := min(n, maxBatch)
			batch = s.queue[:k:k]
			if k == n {
				s.queue = s.spare[:0]
				s.wbytes, s.qbytes = s.qbytes, 0
			} else {
				s.queue = s.queue[k:]
				s.wbytes = 0
				for i := range batch {
					s.wbytes += entryText(&batch[i])
				}
				s.qbytes -= s.wbytes
			}
			s.spare = nil
		}
		s.qmu.Unlock()

		if batch != nil {
			err := s.commit(batch)
			clear(batch)
			s.qmu.Lock()
			s.wbytes = 0
			s.done += int64(len(batch))
			if err != nil {
				s.failEnd, s.failErr = s.done, err
			}
			s.spare = batch[:0]
			s.qcond.Broadcast()
			s.qmu.Unlock()
			continue
		}
		if closing {
			return
		}
		var tc <-chan time.Time
		if n > 0 {
			timer.Reset(wait)
			tc = timer.C
		}
		select {
		case <-s.wake:
		case <-tc:
		case <-s.stop:
		case <-tick.C:
			if err := s.enforceRetention(); err != nil {
				s.log.Error("logstore: retention", "error", err)
			}
		}
		if tc != nil && !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// commit writes batch to the active segment, fsyncs it and indexes it, then
// enforces the size cap.
func (s *Store) commit(batch []Entry) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.commitLocked(batch)
	s.noteCommit(len(batch), err)
	if s.totalSize() > s.maxBytes {
		if rerr := s.retain(); rerr != nil {
			s.log.Error("logstore: retention", "error", rerr)
		}
	}
	return err
}

// totalSize returns the size of the segment files. The caller holds wmu.
func (s *Store) totalSize() int64 {
	var n int64
	for _, seg := range s.segs {
		n += seg.f.Size()
	}
	return n
}

// commitLocked is commit without the cap; the caller holds wmu.
func (s *Store) commitLocked(batch []Entry) error {
	if s.maxDays.Load() == 0 {
		return nil // logging was turned off while these waited
	}
	today := floorDiv(clampMs(s.now()), dayMs)
	seg := s.segs[len(s.segs)-1]
	overfill := false // rotation failed: let the active segment grow past segSize
	if seg.rows > 0 && (seg.f.Size() >= s.segSize || today != seg.day) {
		overfill = s.rotate() != nil
	}
	if seg = s.segs[len(s.segs)-1]; seg.rows == 0 {
		seg.day = today // an empty segment takes the entries of today
	}
	var inBatch map[string]bool // caller-supplied ids taken in this batch
	for len(batch) > 0 {
		seg = s.segs[len(s.segs)-1]
		size := seg.f.Size()
		buf, pos := s.wbuf[:0], s.wpos[:0]
		n := 0 // entries of batch consumed
		for ; n < len(batch); n++ {
			e := &batch[n]
			if s.nextSeq > maxSeq {
				return fmt.Errorf("logstore: sequence numbers exhausted")
			}
			foreign := ""
			if e.ID != "" && validID(e.ID) && !inBatch[e.ID] && !s.idInUse(e.ID, seg.key) {
				foreign = e.ID
			}
			s.jbuf = s.encode(s.jbuf[:0], e, foreign)
			if len(s.jbuf) > journal.MaxRecord {
				s.log.Warn("logstore: log entry too large, dropped", "bytes", len(s.jbuf))
				continue
			}
			if !overfill && (len(pos) > 0 || seg.rows > 0) && size+int64(len(buf))+journal.FrameSize(len(s.jbuf)) > s.segSize {
				break // the rest goes to a new segment (an empty one takes any entry)
			}
			if foreign != "" {
				if inBatch == nil {
					inBatch = map[string]bool{}
				}
				inBatch[foreign] = true
			}
			s.nextSeq++
			pos = append(pos, len(buf))
			buf = journal.AppendFrame(buf, s.jbuf)
		}
		s.wbuf, s.wpos = buf, pos
		batch = batch[n:]
		if err := s.write(seg, buf, pos); err != nil {
			return err
		}
		if len(batch) > 0 {
			overfill = s.rotate() != nil
		}
	}
	return nil
}

// encode appends the payload of e (with the next sequence number) to b.
func (s *Store) encode(b []byte, e *Entry, foreignID string) []byte {
	e.validUTF8()
	var details, attrs []byte
	if r := e.Request; r != nil {
		if r.Error != "" {
			details = s.marshalJSON(r.Details)
		}
		if math.IsNaN(r.ExecTime) || math.IsInf(r.ExecTime, 0) {
			c := *r
			c.ExecTime = 0
			e.Request = &c
		}
	} else if len(e.Attrs) > 0 {
		attrs = s.marshalAttrs(e.Attrs)
	}
	return appendRecord(b, e, s.nextSeq, clampMs(e.Created), foreignID, details, attrs)
}

// write appends the frames in buf (starting at the offsets pos) to seg,
// fsyncs them and indexes them.
func (s *Store) write(seg *segment, buf []byte, pos []int) error {
	if len(pos) == 0 {
		return nil
	}
	off, err := seg.f.Write(buf)
	if err == nil {
		err = seg.f.Sync()
	}
	if err != nil {
		// The journal has cut the segment back to its last good frame and
		// takes the next batch as if this one had never been written:
		// these entries are lost (noteCommit logs it), nothing else.
		return fmt.Errorf("logstore: write: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var rec record
	for _, p := range pos {
		n := binary.LittleEndian.Uint32(buf[p+4:])
		err := decodeRecord(buf[p+journal.FrameOverhead:][:n], &rec)
		if err == nil {
			err = s.idx.add(seg, off+int64(p), &rec)
		}
		if err != nil { // only after a bug: the payload was just encoded
			s.log.Error("logstore: committed entry not indexed", "path", seg.path, "error", err)
		}
	}
	return nil
}

// idInUse reports whether a caller-supplied id is taken: by another
// caller-supplied id or by a derived id (current or future).
func (s *Store) idInUse(id string, key uint64) bool {
	if _, ok := s.idx.foreign[id]; ok {
		return true
	}
	seq, _ := idSeq(id)
	if d := makeID(seq, key); string(d[:]) == id {
		return true
	}
	if r, ok := s.idx.find(seq); ok {
		d := makeID(seq, r.c.seg.key)
		return string(d[:]) == id
	}
	return false
}

// marshalJSON encodes a request's details. A value encoding/json cannot
// encode is stored as its fmt text.
func (s *Store) marshalJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}

// marshalAttrs encodes the attributes of another log, replacing values
// encoding/json cannot encode by their fmt text.
func (s *Store) marshalAttrs(m map[string]any) []byte {
	b, err := json.Marshal(m)
	if err == nil {
		return b
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		if _, err := json.Marshal(v); err != nil {
			v = fmt.Sprint(v)
		}
		c[k] = v
	}
	b, _ = json.Marshal(c)
	return b
}

// errRotateWait is returned by rotate during its back-off.
var errRotateWait = errors.New("logstore: rotation failed recently, not retried yet")

// rotate starts a new active segment. If that fails it logs why, and
// further calls fail at once (errRotateWait) until a back-off has passed:
// the active segment takes the entries meanwhile. The caller holds wmu.
func (s *Store) rotate() error {
	now := time.Now()
	if now.Before(s.rotAfter) {
		return errRotateWait
	}
	old := s.segs[len(s.segs)-1]
	seg, err := s.createSegment(s.nextSeq, old.key)
	if err != nil {
		s.rotWait = min(max(2*s.rotWait, minRotateWait), maxRotateWait)
		s.rotAfter = now.Add(s.rotWait)
		s.log.Error("logstore: rotate segment: the active segment takes new entries meanwhile",
			"error", err, "retryIn", s.rotWait)
		return err
	}
	s.rotWait, s.rotAfter = 0, time.Time{}
	s.mu.Lock()
	s.segs = append(s.segs, seg)
	s.mu.Unlock()
	return nil
}

// noteCommit records the outcome of committing n entries for Health, and
// logs a failing disk when it starts failing, at most every faultLogEvery
// while it fails, and when it works again. The caller holds wmu.
func (s *Store) noteCommit(n int, err error) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if err == nil {
		if s.fault != nil {
			s.log.Info("logstore: writes work again", "entriesLost", s.lost)
			s.fault, s.lost = nil, 0
		}
		return
	}
	if !errors.Is(err, journal.ErrStorageFull) && !errors.Is(err, journal.ErrStorageFailed) {
		s.log.Error("logstore: commit failed, log entries lost", "entries", n, "error", err)
		return
	}
	s.lost += int64(n)
	now := time.Now()
	if s.fault == nil || now.Sub(s.faultLog) >= faultLogEvery {
		s.log.Error("logstore: write failed, log entries lost", "entriesLost", s.lost, "error", err)
		s.faultLog = now
	}
	s.fault = err
}

// Health returns nil while the store can write, or the error of the last
// failed write, which wraps journal.ErrStorageFull or
// journal.ErrStorageFailed. Entries are written within the flush interval
// of being added (a request logs one), and the first write that succeeds
// makes the store healthy again.
func (s *Store) Health() error {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	return s.fault
}

// SetRetention applies new settings.logs.maxDays and minLevel at once:
// segments whose entries are all older than maxDays days are deleted, and
// maxDays 0 deletes every stored entry (and the queued ones) and turns Add
// into a no-op until retention is set again. minLevel applies to later Adds.
func (s *Store) SetRetention(maxDays, minLevel int) error {
	if maxDays < 0 {
		return fmt.Errorf("logstore: negative maxDays %d", maxDays)
	}
	s.maxDays.Store(int64(maxDays))
	s.minLevel.Store(int64(minLevel))
	if maxDays == 0 {
		s.qmu.Lock()
		clear(s.queue)
		s.done += int64(len(s.queue))
		s.queue = s.queue[:0]
		s.qbytes = 0
		s.qcond.Broadcast()
		s.qmu.Unlock()
	}
	return s.enforceRetention()
}

// enforceRetention deletes the segments past the retention window: those
// whose newest entry is older than maxDays days (all of them with maxDays 0)
// and empty ones other than the active segment. The active segment is
// rotated first when it has to go. Then, while the segments left hold more
// than MaxBytes, it deletes the oldest one (never the active one).
func (s *Store) enforceRetention() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.retain()
}

// retain is enforceRetention; the caller holds wmu.
func (s *Store) retain() error {
	if s.closed {
		return ErrClosed
	}
	if len(s.segs) == 0 {
		return nil
	}
	maxDays := s.maxDays.Load()
	cutoff := int64(math.MaxInt64)
	if maxDays > 0 {
		cutoff = clampMs(s.now()) - min(maxDays, math.MaxInt64/dayMs/2)*dayMs
	}
	expired := func(seg *segment) bool {
		return maxDays == 0 || (seg.rows > 0 && seg.maxCreated < cutoff)
	}
	active := s.segs[len(s.segs)-1]
	if active.rows > 0 && expired(active) {
		if err := s.rotate(); err != nil {
			return err
		}
	}
	gone := map[*segment]bool{}
	var keep []*segment
	total := int64(0)
	for i, seg := range s.segs {
		if i < len(s.segs)-1 && (seg.rows == 0 || expired(seg)) {
			gone[seg] = true
		} else {
			keep = append(keep, seg)
			total += seg.f.Size()
		}
	}
	// The size cap: the oldest segments go first, never the active one.
	for len(keep) > 1 && total > s.maxBytes {
		seg := keep[0]
		size := seg.f.Size()
		s.log.Info("logstore: size cap reached, oldest segment dropped",
			"path", seg.path, "bytes", size, "entries", seg.rows, "totalBytes", total, "maxBytes", s.maxBytes)
		gone[seg] = true
		keep = keep[1:]
		total -= size
	}
	if len(gone) == 0 {
		return nil
	}
	s.mu.Lock()
	s.segs = keep
	s.idx.drop(gone)
	s.idx.compactDict()
	s.mu.Unlock()
	var first error
	for seg := range gone {
		if err := seg.f.Close(); err != nil && first == nil {
			first = err
		}
		if err := os.Remove(seg.path); err != nil && first == nil {
			first = err
		}
	}
	if err := journal.SyncDir(s.dir); err != nil && first == nil {
		first = err
	}
	if first != nil {
		return fmt.Errorf("logstore: retention: %w", first)
	}
	return nil
}

// SegmentSnapshot names a segment file and the length of its durable
// prefix, for backups.
type SegmentSnapshot struct {
	Path   string
	Length int64
}

// Snapshot returns the segments with their committed lengths, taken under a
// brief lock; writers carry on meanwhile. Copying the first Length bytes of
// each file gives a consistent store: every copied prefix ends on a frame
// boundary and holds only fsynced entries. A segment deleted by retention
// before it is copied may simply be left out.
func (s *Store) Snapshot() []SegmentSnapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]SegmentSnapshot, 0, len(s.segs))
	for _, seg := range s.segs {
		out = append(out, SegmentSnapshot{Path: seg.path, Length: seg.f.Committed()})
	}
	return out
}

// Len returns the number of indexed entries.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.idx.rows
}
