package stream

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// RestoreOptions say what to restore.
type RestoreOptions struct {
	Bucket Bucket
	Prefix string // "" means DefaultPrefix
	// At is the instant to restore: every write committed at or before
	// it, none after. Zero restores the latest state the bucket holds.
	At time.Time
	// Open, if not nil, unwraps what Options.Seal wrapped (decryption).
	Open func(io.Reader) (io.Reader, error)
}

// Result says what a restore restored.
type Result struct {
	Generation string
	Point      time.Time // the instant of the state restored
	// Exact is false when a merged (coarse) commit mark lay across At:
	// writes committed shortly before At may be missing.
	Exact   bool
	Objects int   // objects read
	Bytes   int64 // bytes written into the files
	// Damage, if not empty, says why the restore stopped before the
	// latest state (or At): a missing, altered or unreadable object.
	Damage string
}

// ErrNothing is wrapped by the error of a restore or a listing that finds
// no restorable state (or none at or before At) in the bucket.
var ErrNothing = errors.New("stream: nothing to restore")

// Span is the range of restore points of one generation.
type Span struct {
	Generation string
	From, To   time.Time
	Objects    int
}

// List returns the restore points the bucket holds, one Span per
// generation, oldest first. To is read from the last object's header;
// the objects are not checked (Restore checks every one it reads).
func List(ctx context.Context, opts RestoreOptions) ([]Span, error) {
	prefix := cmpOr(opts.Prefix, DefaultPrefix)
	gens, err := listGenerations(ctx, opts.Bucket, prefix)
	if err != nil {
		return nil, err
	}
	var out []Span
	for _, g := range gens {
		seqs, err := listObjects(ctx, opts.Bucket, prefix, g.id)
		if err != nil {
			return nil, err
		}
		if len(seqs) == 0 || seqs[0] != 0 {
			continue
		}
		n := contiguous(seqs)
		sp := Span{Generation: fmt.Sprintf("%016x", g.id), From: g.started, To: g.started, Objects: n}
		if n > 1 {
			h, err := readHeader(ctx, opts, objectKey(prefix, g.id, uint64(n-1)))
			if err != nil {
				return nil, err
			}
			sp.To = h.Time
		}
		out = append(out, sp)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no generation under %s", ErrNothing, prefix)
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// contiguous returns how many of seqs run 0, 1, 2, … without a gap.
func contiguous(seqs []uint64) int {
	n := 0
	for n < len(seqs) && seqs[n] == uint64(n) {
		n++
	}
	return n
}

// readHeader reads the header of one object.
func readHeader(ctx context.Context, opts RestoreOptions, key string) (Header, error) {
	body, _, err := opts.Bucket.Get(ctx, key, 0, -1)
	if err != nil {
		return Header{}, err
	}
	defer body.Close()
	r, err := openObject(opts, body)
	if err != nil {
		return Header{}, fmt.Errorf("%s: %w", key, err)
	}
	or, err := NewReader(r)
	if err != nil {
		return Header{}, fmt.Errorf("%s: %w", key, err)
	}
	return or.Header(), nil
}

func openObject(opts RestoreOptions, r io.Reader) (io.Reader, error) {
	if opts.Open == nil {
		return r, nil
	}
	p, err := opts.Open(r)
	if err != nil {
		return nil, keysError{err}
	}
	return p, nil
}

// keysError is an object that Open could not open: the keys given do
// not fit the stream (no identity, or another one). It stops the restore
// at once, rather than pass over the generation or stop it as damaged:
// an older or shorter state restored in its place would be a surprise.
type keysError struct{ err error }

func (e keysError) Error() string { return e.err.Error() }
func (e keysError) Unwrap() error { return e.err }

// Restore rebuilds a data dir at dir, which must not exist or be empty,
// from the stream in the bucket. It builds the dir beside dir under a
// temporary name and renames it into place once every file is written
// and synced, so a restore that fails or is interrupted leaves dir as it
// was (an interrupted one leaves the hidden temporary dir beside it).
//
// It restores the newest generation that started at or before At (the
// newest without At), reading its objects in order and checking each
// one's checksum and its link to the one before. An object missing,
// altered or unreadable stops the restore at the object before, which
// Result.Damage reports; a generation whose base is unreadable is passed
// over for the one before it.
func Restore(ctx context.Context, opts RestoreOptions, dir string) (Result, error) {
	opts.Prefix = cmpOr(opts.Prefix, DefaultPrefix)
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return Result{}, fmt.Errorf("stream: restore: %s is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Result{}, fmt.Errorf("stream: restore: %w", err)
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".restoring-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return Result{}, fmt.Errorf("stream: restore: %w", err)
	}
	res, err := restoreInto(ctx, opts, tmp)
	if err == nil && !opts.At.IsZero() && res.Damage != "" && res.Point.Before(opts.At) {
		err = fmt.Errorf("stream: restore: the stream is damaged before %s (%s); the latest consistent point before it is %s",
			opts.At.UTC().Format(TimeLayout), res.Damage, res.Point.UTC().Format(TimeLayout))
	}
	if err == nil {
		err = syncTree(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err == nil {
		err = syncDir(filepath.Dir(dir))
	}
	if err != nil {
		os.RemoveAll(tmp)
		return Result{}, err
	}
	return res, nil
}

// restoreInto restores into the empty dir tmp.
func restoreInto(ctx context.Context, opts RestoreOptions, tmp string) (Result, error) {
	gens, err := listGenerations(ctx, opts.Bucket, opts.Prefix)
	if err != nil {
		return Result{}, fmt.Errorf("stream: restore: %w", err)
	}
	var cands []generation
	for _, g := range gens {
		if opts.At.IsZero() || !g.started.After(opts.At) {
			cands = append(cands, g)
		}
	}
	if len(cands) == 0 {
		if len(gens) == 0 {
			return Result{}, fmt.Errorf("%w: no generation under %s", ErrNothing, opts.Prefix)
		}
		return Result{}, fmt.Errorf("%w: %s is before the oldest restore point, %s", ErrNothing,
			opts.At.UTC().Format(TimeLayout), gens[0].started.UTC().Format(TimeLayout))
	}
	var passed []string
	for _, g := range slices.Backward(cands) {
		r := &restorer{opts: opts, dir: tmp, gen: g.id, files: map[string]*rfile{}, exact: true}
		res, err := r.generation(ctx)
		r.closeAll()
		if err == nil {
			if len(passed) > 0 {
				res.Damage = joinDamage(append(passed, res.Damage))
			}
			return res, nil
		}
		if !errors.Is(err, errNoBase) {
			return Result{}, err
		}
		passed = append(passed, err.Error())
		if err := clearDir(tmp); err != nil {
			return Result{}, err
		}
	}
	return Result{}, fmt.Errorf("%w: %s", ErrNothing, joinDamage(passed))
}

func joinDamage(ds []string) string {
	var out string
	for _, d := range ds {
		if d == "" {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += d
	}
	return out
}

// TimeLayout is how restore points are written and read: PocketBase's
// date format, in UTC, to the millisecond.
const TimeLayout = "2006-01-02 15:04:05.000Z"

var errNoBase = errors.New("stream: the generation has no readable base")

// restorer restores one generation.
type restorer struct {
	opts  RestoreOptions
	dir   string
	gen   uint64
	files map[string]*rfile
	exact bool
	bytes int64
}

// rfile is one file being restored.
type rfile struct {
	f       *os.File
	path    string // where it goes; a replacement is written to path+".replace" first
	size    int64
	sum     hash.Hash
	stopped bool // a write after At was reached: nothing more for it
}

// generation restores r.gen.
func (r *restorer) generation(ctx context.Context) (Result, error) {
	name := fmt.Sprintf("%016x", r.gen)
	seqs, err := listObjects(ctx, r.opts.Bucket, r.opts.Prefix, r.gen)
	if err != nil {
		return Result{}, fmt.Errorf("stream: restore: %w", err)
	}
	if len(seqs) == 0 || seqs[0] != 0 {
		return Result{}, fmt.Errorf("%w: generation %s: its base is missing", errNoBase, name)
	}
	res := Result{Generation: name}
	var prev [32]byte
	reached := false
	ahead := r.readAhead(ctx, seqs)
	defer ahead.stop()
	for i, seq := range seqs {
		if seq != uint64(i) {
			res.Damage = fmt.Sprintf("generation %s: object %d is missing", name, i)
			break
		}
		h, sum, err := r.object(ctx, seq, prev, ahead.take(i))
		if _, ok := errors.AsType[keysError](err); ok {
			return Result{}, fmt.Errorf("stream: restore: generation %s: object %d: %w", name, seq, err)
		}
		if err != nil {
			if seq == 0 {
				return Result{}, fmt.Errorf("%w: generation %s: %w", errNoBase, name, err)
			}
			if ctx.Err() != nil {
				return Result{}, err
			}
			res.Damage = fmt.Sprintf("generation %s: object %d: %v", name, seq, err)
			break
		}
		prev = sum
		res.Objects++
		res.Point = h.Time
		if !r.opts.At.IsZero() && h.Time.After(r.opts.At) {
			reached = true
			break
		}
	}
	if reached {
		res.Point = r.opts.At
	}
	if err := r.closeAll(); err != nil {
		return Result{}, err
	}
	res.Exact, res.Bytes = r.exact, r.bytes
	return res, nil
}

// undo is what an object changed, to put back if it turns out bad.
type undo struct {
	files   map[string]rfile // the files before the object, sums copied
	deletes []string         // deletions to apply once the object checks out
}

// object reads and applies one object (read ahead already if fetched is
// not nil); if it is bad, every change it made is undone.
func (r *restorer) object(ctx context.Context, seq uint64, prev [32]byte, fetched []byte) (Header, [32]byte, error) {
	var body io.ReadCloser = io.NopCloser(bytes.NewReader(fetched))
	if fetched == nil {
		var err error
		if body, _, err = r.opts.Bucket.Get(ctx, objectKey(r.opts.Prefix, r.gen, seq), 0, -1); err != nil {
			return Header{}, prev, err
		}
	}
	defer body.Close()
	u := &undo{files: map[string]rfile{}}
	for name, f := range r.files {
		c := *f
		c.sum = cloneHash(f.sum)
		u.files[name] = c
	}
	h, sum, err := r.apply(body, seq, prev, u)
	if err != nil {
		r.rollback(u)
		return h, prev, err
	}
	return h, sum, r.commit(u)
}

// apply decodes the object in body and writes its entries.
func (r *restorer) apply(body io.Reader, seq uint64, prev [32]byte, u *undo) (Header, [32]byte, error) {
	plain, err := openObject(r.opts, body)
	if err != nil {
		return Header{}, prev, err
	}
	or, err := NewReader(plain)
	if err != nil {
		return Header{}, prev, err
	}
	h := or.Header()
	if h.Gen != r.gen || h.Seq != seq || h.Prev != prev {
		return h, prev, fmt.Errorf("%w: it does not follow the object before it (generation %016x, number %d)", ErrFormat, h.Gen, h.Seq)
	}
	for {
		e, err := or.Next()
		if err == io.EOF {
			return h, or.ObjectSum(), nil
		}
		if err != nil {
			return h, prev, err
		}
		if err := r.entry(h, e, or, u); err != nil {
			return h, prev, err
		}
	}
}

// cut returns how many of e's bytes were committed at or before At (all
// of them without At), and whether the first mark past them is coarse.
func (r *restorer) cut(e *Entry) (int64, bool) {
	if r.opts.At.IsZero() {
		return e.Len, false
	}
	n := int64(0)
	for _, m := range e.Marks {
		if m.Time.After(r.opts.At) {
			return n, m.Coarse
		}
		n = m.End - e.Off
	}
	return n, false
}

// entry applies one entry of the object h.
func (r *restorer) entry(h Header, e *Entry, or *Reader, u *undo) error {
	rf := r.files[e.Name]
	if rf != nil && rf.stopped {
		return nil
	}
	if e.Op == OpDelete {
		switch {
		case rf == nil:
		case !r.opts.At.IsZero() && h.Time.After(r.opts.At):
			rf.stopped = true
		default:
			u.deletes = append(u.deletes, e.Name)
		}
		return nil
	}
	n, coarse := r.cut(e)
	if n < e.Len && coarse {
		r.exact = false
	}
	if n == 0 && e.Len > 0 {
		if rf != nil {
			rf.stopped = true
		}
		return nil
	}
	rf, err := r.target(e, rf)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(io.MultiWriter(offsetWriter{rf}, rf.sum), or, n); err != nil {
		return err
	}
	r.bytes += n
	if n < e.Len {
		rf.stopped = true
		return nil
	}
	want, err := or.Sum()
	if err != nil {
		return err
	}
	if got := rf.sum.Sum(nil); string(got) != string(want[:]) {
		return fmt.Errorf("%w: %s does not have the checksum the object states", ErrFormat, e.Name)
	}
	return nil
}

// target returns the file e writes to: the file itself for an append, a
// new file for a replacement (renamed over it once the object checks out).
func (r *restorer) target(e *Entry, rf *rfile) (*rfile, error) {
	if rf != nil && e.Op == OpAppend {
		if rf.size != e.Off {
			return nil, fmt.Errorf("%w: %s: bytes at %d, the file has %d", ErrFormat, e.Name, e.Off, rf.size)
		}
		return rf, nil
	}
	if rf == nil && e.Op == OpAppend && e.Off != 0 {
		return nil, fmt.Errorf("%w: %s: bytes at %d of a file the stream does not have", ErrFormat, e.Name, e.Off)
	}
	path := filepath.Join(r.dir, filepath.FromSlash(e.Name))
	open := path
	if rf != nil {
		open = path + ".replace"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(open, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	nf := &rfile{f: f, path: path, sum: sha256.New()}
	r.files[e.Name] = nf
	return nf, nil
}

// offsetWriter appends to an rfile.
type offsetWriter struct{ rf *rfile }

func (w offsetWriter) Write(p []byte) (int, error) {
	n, err := w.rf.f.WriteAt(p, w.rf.size)
	w.rf.size += int64(n)
	return n, err
}

// rollback puts the files back as they were before the object.
func (r *restorer) rollback(u *undo) {
	for name, f := range r.files {
		old, ok := u.files[name]
		if ok && old.f == f.f {
			f.f.Truncate(old.size)
			*f = old
			continue
		}
		f.f.Close()
		os.Remove(f.f.Name())
		if ok {
			old.f.Truncate(old.size)
			o := old
			r.files[name] = &o
		} else {
			delete(r.files, name)
		}
	}
}

// commit renames the replacements over their files and applies the
// deletions of an object that checked out.
func (r *restorer) commit(u *undo) error {
	for name, f := range r.files {
		if old, ok := u.files[name]; ok && old.f != f.f {
			old.f.Close()
			if err := os.Rename(f.f.Name(), f.path); err != nil {
				return err
			}
		}
	}
	for _, name := range u.deletes {
		if f := r.files[name]; f != nil {
			f.f.Close()
			if err := os.Remove(f.path); err != nil {
				return err
			}
			delete(r.files, name)
		}
	}
	return nil
}

// closeAll syncs and closes every file.
func (r *restorer) closeAll() error {
	var errs []error
	for name, f := range r.files {
		errs = append(errs, f.f.Sync(), f.f.Close())
		delete(r.files, name)
	}
	return errors.Join(errs...)
}

// clearDir empties dir.
func clearDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// syncTree fsyncs every directory under dir (the files are synced as
// they are closed).
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return syncDir(p)
	})
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Read-ahead: each object of a restore is a GET, a round trip to the
// bucket, and a generation may have tens of thousands of increments; so
// while one object is applied, the next ones are fetched.
const (
	readAhead    = 8       // objects fetched ahead of the one applied
	readAheadMax = 4 << 20 // a larger object is fetched in its turn, streamed
)

// aheadOf fetches the increments of a generation ahead of their turn.
type aheadOf struct {
	ctx    context.Context
	cancel context.CancelFunc
	r      *restorer
	seqs   []uint64
	next   int                 // the index of the next object to fetch
	got    map[int]chan []byte // fetches started, by index
}

func (r *restorer) readAhead(ctx context.Context, seqs []uint64) *aheadOf {
	ctx, cancel := context.WithCancel(ctx)
	return &aheadOf{ctx: ctx, cancel: cancel, r: r, seqs: seqs, next: 1, got: map[int]chan []byte{}}
}

// take returns object i's bytes if they were fetched ahead, nil if the
// caller must read it itself (the base, a large object, a failed fetch:
// the caller's own Get then meets the error, as without read-ahead), and
// starts the fetches up to readAhead objects past i.
func (a *aheadOf) take(i int) []byte {
	for ; a.next < len(a.seqs) && a.next <= i+readAhead; a.next++ {
		ch := make(chan []byte, 1)
		a.got[a.next] = ch
		go func(key string) { ch <- a.fetch(key) }(objectKey(a.r.opts.Prefix, a.r.gen, a.seqs[a.next]))
	}
	ch, ok := a.got[i]
	if !ok {
		return nil
	}
	delete(a.got, i)
	return <-ch
}

func (a *aheadOf) fetch(key string) []byte {
	body, _, err := a.r.opts.Bucket.Get(a.ctx, key, 0, -1)
	if err != nil {
		return nil
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, readAheadMax+1))
	if err != nil || len(b) > readAheadMax {
		return nil
	}
	return b
}

// stop cancels the fetches still under way (the restore reached At, or
// stopped at a damaged object); they end on their own.
func (a *aheadOf) stop() { a.cancel() }
