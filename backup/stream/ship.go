package stream

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Capture is the committed state of every file of a data dir at one
// instant, as the server's stores give it: the shipper's input.
type Capture struct {
	Time  time.Time
	Files []File
	// Close releases the capture's descriptors.
	Close func() error
}

// File is one file of a capture: its first Size bytes, readable through
// Data, which a compaction or a removal of the file does not change.
type File struct {
	Name  string // slash-separated, relative to the data dir
	Size  int64
	Ident uint64 // changes when the file is replaced (journal.Section.Ident)
	Marks []Mark // when its bytes were committed; the last ends at Size
	Data  io.ReaderAt
	// Prior is the file a compaction replaced since the capture before,
	// whole, if the capture has it (journal.Section.Prior).
	Prior *File
}

// Defaults of Options.
const (
	DefaultInterval   = 300 * time.Millisecond
	DefaultRetention  = 7 * 24 * time.Hour
	DefaultMaxObjects = 40_000
	DefaultMaxAge     = 24 * time.Hour
	smallObject       = 4 << 20 // larger objects go by multipart upload
)

// Options configure a Shipper.
type Options struct {
	Bucket  Bucket
	Prefix  string                   // "" means DefaultPrefix
	Capture func() (*Capture, error) // the stores' state now
	// Interval is the time between two captures: 0 means DefaultInterval.
	Interval time.Duration
	// Retention is how far back a restore point must stay restorable:
	// 0 means DefaultRetention.
	Retention time.Duration
	// MaxObjects and MaxAge bound a generation: past either, or once its
	// increments hold more bytes than its base, a new base is shipped.
	MaxObjects int
	MaxAge     time.Duration
	// Seal, if not nil, wraps what is written to an object (encryption);
	// nil stores the objects as they are.
	Seal   func(io.Writer) (io.WriteCloser, error)
	Logger *slog.Logger
	Now    func() time.Time
	// Go, if not nil, starts the shipper's goroutine, which takes the
	// captures and encodes, hashes and seals the objects (their upload
	// runs beside it); nil means a go statement. The server passes
	// lowprio.Go, so that this work gets only the CPU requests leave.
	Go func(func())
}

// Status is what a shipper reports of itself.
type Status struct {
	Generation     string    // the generation being shipped, "" before its base
	LastShipped    time.Time // the instant of the capture last shipped
	Pending        bool      // the last capture held changes not shipped yet
	Behind         int64     // their bytes
	RestorableFrom time.Time // the oldest restore point the bucket holds
	LastError      string
	LastErrorAt    time.Time
	Objects        int64 // objects shipped since start
	Bytes          int64 // their bytes, as stored
}

// Shipper ships the changes of the captures its Options give to the
// bucket, from the Start that made it to Stop.
type Shipper struct {
	opts   Options
	cancel context.CancelFunc
	done   chan struct{}
	// abandoned: Abandon was called; no capture taken from then on is
	// shipped.
	abandoned atomic.Bool

	gen       *genState // nil until a base is shipped
	lastPrune time.Time
	failing   time.Time // when the current run of failures began; zero if none
	lastWarn  time.Time

	// buf holds a small object between its encoding and its Put, kept
	// from one object to the next (ship).
	buf []byte

	mu     sync.Mutex
	status Status
}

// genState is what the bucket holds of the generation being shipped.
type genState struct {
	id         uint64
	started    time.Time
	seq        uint64
	prev       [32]byte
	baseBytes  int64
	incBytes   int64
	files      map[string]*fileState
	lastObject time.Time
}

// fileState is what the bucket holds of one file.
type fileState struct {
	ident uint64
	size  int64
	sum   hash.Hash
}

// Start starts shipping in a goroutine of its own.
func Start(opts Options) *Shipper {
	s := newShipper(opts)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.opts.Go(func() { s.run(ctx) })
	return s
}

// newShipper returns a shipper of opts, with the defaults filled in, not
// started.
func newShipper(opts Options) *Shipper {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.MaxObjects <= 0 {
		opts.MaxObjects = DefaultMaxObjects
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Go == nil {
		opts.Go = func(f func()) { go f() }
	}
	return &Shipper{opts: opts, done: make(chan struct{})}
}

// Stop stops shipping, after one last capture is shipped if the bucket
// takes it within a few seconds, and waits for the goroutine to end.
func (s *Shipper) Stop() {
	s.cancel()
	<-s.done
}

// Abandon stops shipping: no capture taken from now on is shipped, not
// even a last one. It returns at once (Stop then waits for the end). The
// caller uses it when the stores' next writes must not reach this
// shipper's generation (the encryption changed): it calls Abandon while
// it holds a lock that every capture takes, so that a capture holding
// those writes can only be taken after the flag is set.
func (s *Shipper) Abandon() {
	s.abandoned.Store(true)
	s.cancel()
}

// Status returns the shipper's state.
func (s *Shipper) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *Shipper) run(ctx context.Context) {
	defer close(s.done)
	delay := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if s.gen != nil && !s.abandoned.Load() {
				s.step(final)
			}
			cancel()
			return
		case <-time.After(delay):
		}
		err := s.step(ctx)
		if ctx.Err() != nil {
			continue
		}
		delay = s.opts.Interval
		if err != nil {
			delay = s.failed(err)
			continue
		}
		s.recovered()
		if s.opts.Now().Sub(s.lastPrune) > time.Hour {
			if err := s.prune(ctx); err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn("stream: pruning the bucket failed", "err", err)
			}
		}
	}
}

// failed records a failure and returns the back-off before the next try:
// twice as long for each failure in a row, at most 30 s.
func (s *Shipper) failed(err error) time.Duration {
	now := s.opts.Now()
	s.mu.Lock()
	s.status.LastError, s.status.LastErrorAt = err.Error(), now
	s.mu.Unlock()
	if s.failing.IsZero() {
		s.failing = now
	}
	if now.Sub(s.lastWarn) >= time.Minute {
		s.lastWarn = now
		s.opts.Logger.Warn("stream: cannot ship to the bucket; changes wait in the data dir", "since", s.failing.UTC(), "err", err)
	}
	d := s.opts.Interval << min(int(now.Sub(s.failing)/s.opts.Interval), 16)
	return min(d, 30*time.Second)
}

// recovered logs the end of a run of failures.
func (s *Shipper) recovered() {
	if !s.failing.IsZero() {
		s.opts.Logger.Info("stream: shipping again; the bucket caught up", "down", s.opts.Now().Sub(s.failing).Round(time.Millisecond))
		s.failing, s.lastWarn = time.Time{}, time.Time{}
	}
}

// step takes a capture and ships what changed.
func (s *Shipper) step(ctx context.Context) error {
	c, err := s.opts.Capture()
	if err != nil {
		return fmt.Errorf("stream: capture: %w", err)
	}
	defer c.Close()
	if s.abandoned.Load() {
		return context.Canceled
	}
	if s.gen == nil {
		return s.startGeneration(ctx, c)
	}
	changes := s.gen.diff(c)
	var behind int64
	for _, ch := range changes {
		behind += ch.e.Len
	}
	s.mu.Lock()
	s.status.Pending, s.status.Behind = len(changes) > 0, behind
	s.mu.Unlock()
	if len(changes) > 0 {
		if err := s.shipIncrement(ctx, c, changes); err != nil {
			return err
		}
	}
	g := s.gen
	due := g.seq+1 >= uint64(s.opts.MaxObjects) || g.incBytes > max(g.baseBytes, 64<<20) ||
		s.opts.Now().Sub(g.started) >= s.opts.MaxAge
	if due && ctx.Err() == nil {
		return s.startGeneration(ctx, c)
	}
	return nil
}

// change is one entry of an object to ship, with its bytes and the hash
// of its file before them (a copy, kept only once the object is stored).
type change struct {
	e    Entry
	data io.Reader
	sum  hash.Hash
}

// diff returns the changes from what the bucket holds to the capture c.
func (g *genState) diff(c *Capture) []change {
	var out []change
	seen := map[string]bool{}
	for i := range c.Files {
		f := &c.Files[i]
		seen[f.Name] = true
		st := g.files[f.Name]
		switch {
		case st == nil:
			out = append(out, appendChange(f, OpAppend, 0, sha256.New()))
		case f.Ident != st.ident || f.Size < st.size:
			if p := f.Prior; p != nil && p.Ident == st.ident && p.Size > st.size {
				out = append(out, appendChange(p, OpAppend, st.size, cloneHash(st.sum)))
			}
			out = append(out, appendChange(f, OpReplace, 0, sha256.New()))
		case f.Size > st.size:
			out = append(out, appendChange(f, OpAppend, st.size, cloneHash(st.sum)))
		}
	}
	names := make([]string, 0, len(g.files))
	for name := range g.files {
		if !seen[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		out = append(out, change{e: Entry{Name: name, Op: OpDelete, Ident: g.files[name].ident}, sum: sha256.New()})
	}
	return out
}

// appendChange is the entry of f's bytes from off, with their marks.
func appendChange(f *File, op byte, off int64, sum hash.Hash) change {
	var marks []Mark
	for _, m := range f.Marks {
		if m.End > off && m.End <= f.Size {
			marks = append(marks, m)
		}
	}
	if len(marks) == 0 || marks[len(marks)-1].End != f.Size {
		// No mark ends at the size (a capture without marks): the bytes
		// were committed by the capture, when exactly is not known.
		t := time.Time{}
		if len(f.Marks) > 0 {
			t = f.Marks[len(f.Marks)-1].Time
		}
		marks = append(marks, Mark{End: f.Size, Time: t, Coarse: true})
	}
	if f.Size == off {
		marks = nil
	}
	return change{
		e:    Entry{Name: f.Name, Op: op, Ident: f.Ident, Off: off, Marks: marks, Len: f.Size - off},
		data: io.NewSectionReader(f.Data, off, f.Size-off),
		sum:  sum,
	}
}

// cloneHash copies a SHA-256 state.
func cloneHash(h hash.Hash) hash.Hash {
	c, err := h.(hash.Cloner).Clone()
	if err != nil {
		panic(err) // SHA-256 always clones
	}
	return c
}

// apply records in g that the bucket now holds the changes.
func (g *genState) apply(changes []change) {
	for _, ch := range changes {
		switch ch.e.Op {
		case OpDelete:
			delete(g.files, ch.e.Name)
		default:
			g.files[ch.e.Name] = &fileState{ident: ch.e.Ident, size: ch.e.Off + ch.e.Len, sum: ch.sum}
		}
	}
}

// shipIncrement ships the changes as the next object of the generation.
func (s *Shipper) shipIncrement(ctx context.Context, c *Capture, changes []change) error {
	g := s.gen
	h := Header{Kind: KindIncrement, Gen: g.id, Seq: g.seq + 1, Time: c.Time, Prev: g.prev, N: len(changes)}
	sum, n, err := s.ship(ctx, h, changes)
	if err != nil {
		return err
	}
	g.seq, g.prev, g.lastObject = h.Seq, sum, c.Time
	g.incBytes += n
	g.apply(changes)
	s.shipped(c.Time, n)
	return nil
}

// shipped updates the status after an object is stored.
func (s *Shipper) shipped(at time.Time, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.Generation = fmt.Sprintf("%016x", s.gen.id)
	s.status.LastShipped = at
	s.status.Pending, s.status.Behind = false, 0
	s.status.Objects++
	s.status.Bytes += n
	if s.status.RestorableFrom.IsZero() {
		s.status.RestorableFrom = s.gen.started
	}
}

// startGeneration ships the capture c whole as the base of a new
// generation, after its marker.
func (s *Shipper) startGeneration(ctx context.Context, c *Capture) error {
	var rnd [2]byte
	rand.Read(rnd[:])
	id := uint64(c.Time.UnixMilli())<<16 | uint64(binary.LittleEndian.Uint16(rnd[:]))
	m, _ := json.Marshal(marker{Generation: fmt.Sprintf("%016x", id), Started: c.Time.UTC()})
	if err := s.opts.Bucket.Put(ctx, genKey(s.opts.Prefix, id), m, "application/json"); err != nil {
		return fmt.Errorf("stream: new generation: %w", err)
	}
	changes := make([]change, 0, len(c.Files))
	for i := range c.Files {
		f := c.Files[i]
		f.Marks = []Mark{{End: f.Size, Time: c.Time, Coarse: true}}
		changes = append(changes, appendChange(&f, OpReplace, 0, sha256.New()))
	}
	h := Header{Kind: KindBase, Gen: id, Seq: 0, Time: c.Time, N: len(changes)}
	sum, n, err := s.ship(ctx, h, changes)
	if err != nil {
		return err
	}
	g := &genState{id: id, started: c.Time, prev: sum, baseBytes: n, files: map[string]*fileState{}, lastObject: c.Time}
	g.apply(changes)
	s.gen = g
	s.shipped(c.Time, n)
	s.opts.Logger.Info("stream: new generation shipped", "generation", fmt.Sprintf("%016x", id), "bytes", n)
	return nil
}

// ship encodes the object h of the changes, sealed, and stores it: small
// ones in one Put, larger ones streamed by multipart upload. It returns
// the object's Sum and its size as stored. The call has a deadline: 30 s,
// and a second more per MiB of bytes to send. The encoding runs on the
// caller's goroutine (the shipper's, at its priority), the upload on
// another.
func (s *Shipper) ship(ctx context.Context, h Header, changes []change) ([32]byte, int64, error) {
	var total int64
	for _, ch := range changes {
		total += ch.e.Len
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second+time.Duration(total>>20)*time.Second)
	defer cancel()
	key := objectKey(s.opts.Prefix, h.Gen, h.Seq)
	pr, pw := io.Pipe()
	type stored struct {
		size int64
		err  error
	}
	done := make(chan stored, 1)
	go func() {
		size, err := s.store(ctx, key, pr)
		pr.CloseWithError(errors.Join(err, errors.New("stream: upload ended")))
		done <- stored{size, err}
	}()
	sum := s.encode(pw, h, changes)
	st := <-done
	if cap(s.buf) > 1<<20 {
		s.buf = nil // a base's: not kept for the small increments
	}
	if st.err != nil {
		return sum, 0, fmt.Errorf("stream: ship %s: %w", key, st.err)
	}
	return sum, st.size, nil
}

// store reads the object from r and stores it under key: whole in one Put
// if it has at most smallObject bytes (read into s.buf), else by
// multipart upload. It returns the size stored.
func (s *Shipper) store(ctx context.Context, key string, r io.Reader) (int64, error) {
	buf, err := fill(s.buf, r, smallObject+1)
	s.buf = buf
	switch {
	case err == io.EOF:
		return int64(len(buf)), s.opts.Bucket.Put(ctx, key, buf, "application/octet-stream")
	case err != nil:
		return 0, err
	}
	obj, err := s.opts.Bucket.Upload(ctx, key, io.MultiReader(bytes.NewReader(buf), r), "application/octet-stream")
	return obj.Size, err
}

// fill reads r into buf (from its start, growing it) until r ends, when
// it returns io.EOF, or until buf holds limit bytes, when it returns nil.
func fill(buf []byte, r io.Reader, limit int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(max(cap(buf), 64<<10), limit-len(buf)))
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// encode writes the object to pw, sealed, and closes pw with the first
// error.
func (s *Shipper) encode(pw *io.PipeWriter, h Header, changes []change) [32]byte {
	var w io.Writer = pw
	var sealed io.WriteCloser
	if s.opts.Seal != nil {
		var err error
		if sealed, err = s.opts.Seal(pw); err != nil {
			pw.CloseWithError(err)
			return [32]byte{}
		}
		w = sealed
	}
	ow := NewWriter(w, h)
	for i := range changes {
		ch := &changes[i]
		if err := ow.Entry(&ch.e, ch.data, ch.sum); err != nil {
			pw.CloseWithError(err)
			return [32]byte{}
		}
	}
	sum, err := ow.Close()
	if err == nil && sealed != nil {
		err = sealed.Close()
	}
	pw.CloseWithError(err)
	return sum
}

// prune deletes the generations that no restore point of the retention
// window needs: every one older than the newest that started before the
// window, and any but the current whose base never arrived. A
// generation's objects go newest first, its marker last, so that an
// interrupted prune leaves a consistent prefix to finish next time.
func (s *Shipper) prune(ctx context.Context) error {
	s.lastPrune = s.opts.Now()
	gens, err := listGenerations(ctx, s.opts.Bucket, s.opts.Prefix)
	if err != nil {
		return err
	}
	cutoff := s.opts.Now().Add(-s.opts.Retention)
	keep := 0
	for i, g := range gens {
		if !g.started.After(cutoff) {
			keep = i
		}
	}
	from := time.Time{}
	for i, g := range gens {
		seqs, err := listObjects(ctx, s.opts.Bucket, s.opts.Prefix, g.id)
		if err != nil {
			return err
		}
		current := s.gen != nil && g.id == s.gen.id
		if current || (i >= keep && len(seqs) > 0 && seqs[0] == 0) {
			if from.IsZero() {
				from = g.started
			}
			continue
		}
		if err := s.deleteGeneration(ctx, g.id, seqs); err != nil {
			return err
		}
	}
	if !from.IsZero() {
		s.mu.Lock()
		s.status.RestorableFrom = from
		s.mu.Unlock()
	}
	return nil
}

func (s *Shipper) deleteGeneration(ctx context.Context, id uint64, seqs []uint64) error {
	for i := len(seqs) - 1; i >= 0; i-- {
		if err := s.opts.Bucket.Delete(ctx, objectKey(s.opts.Prefix, id, seqs[i])); err != nil {
			return err
		}
	}
	if err := s.opts.Bucket.Delete(ctx, genKey(s.opts.Prefix, id)); err != nil {
		return err
	}
	s.opts.Logger.Info("stream: pruned a generation", "generation", fmt.Sprintf("%016x", id), "objects", len(seqs))
	return nil
}
