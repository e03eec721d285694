package stream

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"time"
)

// The object format; see the package doc for the layout.
var (
	objectMagic = []byte("SBSTRM\x00\x01")
	endMagic    = []byte("SBEND\x00\x00\x01")
)

// Kinds of object.
const (
	KindBase      = 0 // the whole files of a capture: seq 0 of a generation
	KindIncrement = 1 // the changes since the previous object
)

// Operations of an entry.
const (
	OpAppend  = 1 // bytes appended at Off
	OpReplace = 2 // the file replaced, by the bytes from 0 (Off is 0)
	OpDelete  = 3 // the file removed; no bytes
)

// Bounds the decoder holds every object to, so that a damaged or hostile
// object cannot make it allocate without end.
const (
	maxEntries = 1 << 16
	maxMarks   = 1 << 20
	maxName    = 255
)

// ErrFormat is wrapped by every error of an object that is not a valid
// stream object: damaged, truncated, altered or not one at all.
var ErrFormat = errors.New("stream: not a valid stream object")

// Header is the fixed start of an object.
type Header struct {
	Kind byte
	Gen  uint64    // the generation
	Seq  uint64    // the object's number in its generation, from 0 (the base)
	Time time.Time // the instant of the capture it holds
	Prev [32]byte  // the Sum of the object before (zero for a base)
	N    int       // how many entries follow
}

// Entry is one change to one file.
type Entry struct {
	Name  string // slash-separated, relative to the data dir
	Op    byte
	Ident uint64 // the identity of the file's content (journal.Section.Ident)
	Off   int64  // where the bytes go
	Marks []Mark // the commit marks of the bytes, ascending, the last ending at Off+Len
	Len   int64  // how many bytes follow
}

// Mark says that the bytes of a file before End were committed at Time;
// Coarse that some were committed earlier, at an instant no longer known.
type Mark struct {
	End    int64
	Time   time.Time
	Coarse bool
}

// Writer encodes one object.
type Writer struct {
	w   io.Writer
	h   hash.Hash
	buf []byte
	n   int // entries left
	err error
}

// NewWriter writes the header h to w and returns the Writer of its
// h.N entries.
func NewWriter(w io.Writer, h Header) *Writer {
	ow := &Writer{h: sha256.New(), n: h.N}
	ow.w = io.MultiWriter(w, ow.h)
	b := append([]byte(nil), objectMagic...)
	b = append(b, h.Kind)
	b = binary.LittleEndian.AppendUint64(b, h.Gen)
	b = binary.LittleEndian.AppendUint64(b, h.Seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(h.Time.UnixNano()))
	b = append(b, h.Prev[:]...)
	b = binary.AppendUvarint(b, uint64(h.N))
	ow.write(b)
	return ow
}

func (w *Writer) write(b []byte) {
	if w.err == nil {
		_, w.err = w.w.Write(b)
	}
}

// Entry writes e, then its e.Len bytes read from data, then the SHA-256
// of the whole file after them: sum holds the hash of the file's bytes
// before e.Off (a new hash for OpReplace), and is updated with the bytes.
func (w *Writer) Entry(e *Entry, data io.Reader, sum hash.Hash) error {
	if w.n == 0 {
		return errors.New("stream: more entries than the header says")
	}
	w.n--
	b := w.buf[:0]
	b = binary.AppendUvarint(b, uint64(len(e.Name)))
	b = append(b, e.Name...)
	b = append(b, e.Op)
	b = binary.LittleEndian.AppendUint64(b, e.Ident)
	b = binary.AppendUvarint(b, uint64(e.Off))
	b = binary.AppendUvarint(b, uint64(len(e.Marks)))
	prev := e.Off
	for _, m := range e.Marks {
		b = binary.AppendUvarint(b, uint64(m.End-prev))
		b = binary.AppendVarint(b, m.Time.UnixNano())
		b = append(b, boolByte(m.Coarse))
		prev = m.End
	}
	b = binary.AppendUvarint(b, uint64(e.Len))
	w.buf = b
	w.write(b)
	if w.err != nil {
		return w.err
	}
	if e.Len > 0 {
		if _, err := io.CopyN(io.MultiWriter(w.w, sum), data, e.Len); err != nil {
			w.err = err
			return err
		}
	}
	w.write(sum.Sum(nil))
	return w.err
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Close writes the trailer and returns the object's Sum: the SHA-256 of
// every byte before the trailer.
func (w *Writer) Close() ([32]byte, error) {
	var sum [32]byte
	if w.err == nil && w.n != 0 {
		w.err = fmt.Errorf("stream: %d entries missing", w.n)
	}
	if w.err != nil {
		return sum, w.err
	}
	copy(sum[:], w.h.Sum(nil))
	w.write(append(sum[:], endMagic...))
	return sum, w.err
}

// Reader decodes one object: NewReader reads its header, Next each entry
// in turn, Read that entry's bytes and Sum the file's SHA-256 after them.
// Next returns io.EOF once the trailer is read and checked.
type Reader struct {
	br     *bufio.Reader
	h      hash.Hash
	header Header
	left   int   // entries not yet returned
	data   int64 // bytes of the current entry not yet read
	inData bool  // an entry was returned whose sum is not read yet
	sum    [32]byte
	err    error
}

// NewReader reads the header of the object r.
func NewReader(r io.Reader) (*Reader, error) {
	or := &Reader{h: sha256.New(), br: bufio.NewReaderSize(r, 64<<10)}
	var fixed [8 + 1 + 8 + 8 + 8 + 32]byte
	if err := or.full(fixed[:]); err != nil {
		return nil, formatErr("header", err)
	}
	if !bytes.Equal(fixed[:8], objectMagic) {
		return nil, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	h := &or.header
	h.Kind = fixed[8]
	h.Gen = binary.LittleEndian.Uint64(fixed[9:])
	h.Seq = binary.LittleEndian.Uint64(fixed[17:])
	h.Time = time.Unix(0, int64(binary.LittleEndian.Uint64(fixed[25:]))).UTC()
	copy(h.Prev[:], fixed[33:])
	n, err := binary.ReadUvarint(or)
	if err != nil {
		return nil, formatErr("header", err)
	}
	if h.Kind > KindIncrement || n > maxEntries || (h.Kind == KindBase) != (h.Seq == 0) {
		return nil, fmt.Errorf("%w: bad header", ErrFormat)
	}
	h.N, or.left = int(n), int(n)
	return or, nil
}

// full reads len(p) bytes into p, hashing them.
func (r *Reader) full(p []byte) error {
	if _, err := io.ReadFull(r.br, p); err != nil {
		return err
	}
	r.h.Write(p)
	return nil
}

// ReadByte reads one byte, hashing it, for binary.ReadUvarint.
func (r *Reader) ReadByte() (byte, error) {
	c, err := r.br.ReadByte()
	if err == nil {
		r.h.Write([]byte{c})
	}
	return c, err
}

func formatErr(what string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %s: %w", ErrFormat, what, err)
}

// Header returns the object's header.
func (r *Reader) Header() Header { return r.header }

// Next returns the next entry, after skipping what is left of the
// current one; io.EOF after the last, once the trailer checked out.
func (r *Reader) Next() (*Entry, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.inData {
		if _, err := r.Sum(); err != nil {
			return nil, err
		}
	}
	if r.left == 0 {
		r.err = r.trailer()
		if r.err == nil {
			r.err = io.EOF
		}
		return nil, r.err
	}
	r.left--
	e, err := r.entry()
	if err != nil {
		r.err = formatErr("entry", err)
		return nil, r.err
	}
	r.data, r.inData = e.Len, true
	return e, nil
}

// entry reads an entry's fields.
func (r *Reader) entry() (*Entry, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > maxName {
		return nil, errors.New("bad name length")
	}
	name := make([]byte, n)
	if err := r.full(name); err != nil {
		return nil, err
	}
	var fixed [9]byte
	if err := r.full(fixed[:]); err != nil {
		return nil, err
	}
	e := &Entry{Name: string(name), Op: fixed[0], Ident: binary.LittleEndian.Uint64(fixed[1:])}
	if !ValidName(e.Name) || e.Op < OpAppend || e.Op > OpDelete {
		return nil, fmt.Errorf("bad name or operation in %q", e.Name)
	}
	off, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	nm, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if off > 1<<62 || nm > maxMarks {
		return nil, errors.New("bad offset or mark count")
	}
	e.Off = int64(off)
	if e.Marks, err = r.marks(e.Off, int(nm)); err != nil {
		return nil, err
	}
	l, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	e.Len = int64(l)
	end := e.Off
	if len(e.Marks) > 0 {
		end = e.Marks[len(e.Marks)-1].End
	}
	switch {
	case l > 1<<62 || end != e.Off+e.Len:
		return nil, errors.New("the marks do not end with the bytes")
	case e.Op == OpReplace && e.Off != 0, e.Op == OpDelete && (e.Len != 0 || e.Off != 0):
		return nil, errors.New("bad offset for the operation")
	case e.Op != OpDelete && len(e.Marks) == 0 && e.Len > 0:
		return nil, errors.New("bytes without a mark")
	}
	return e, nil
}

// marks reads n marks of the bytes from off, in the order of their ends.
func (r *Reader) marks(off int64, n int) ([]Mark, error) {
	var ms []Mark
	end := off
	for range n {
		d, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		t, err := binary.ReadVarint(r)
		if err != nil {
			return nil, err
		}
		c, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		if d == 0 || d > 1<<62 || end > 1<<62-int64(d) || c > 1 {
			return nil, errors.New("bad mark")
		}
		end += int64(d)
		m := Mark{End: end, Time: time.Unix(0, t).UTC(), Coarse: c == 1}
		if len(ms) > 0 && m.Time.Before(ms[len(ms)-1].Time) {
			return nil, errors.New("marks out of order")
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// Read reads the current entry's bytes; io.EOF at their end.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if !r.inData || r.data == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.data {
		p = p[:r.data]
	}
	n, err := r.br.Read(p)
	r.h.Write(p[:n])
	r.data -= int64(n)
	if err == io.EOF {
		err = nil
		if r.data > 0 {
			r.err = formatErr("data", io.ErrUnexpectedEOF)
			err = r.err
		}
	}
	return n, err
}

// Sum skips what is left of the current entry's bytes and returns the
// SHA-256 of the whole file after them, as the object states it.
func (r *Reader) Sum() ([32]byte, error) {
	if r.err != nil {
		return r.sum, r.err
	}
	if !r.inData {
		return r.sum, nil
	}
	if r.data > 0 {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return r.sum, err
		}
	}
	if err := r.full(r.sum[:]); err != nil {
		r.err = formatErr("sum", err)
		return r.sum, r.err
	}
	r.inData = false
	return r.sum, nil
}

// trailer reads and checks the trailer, then that nothing follows.
func (r *Reader) trailer() error {
	var want [32]byte
	copy(want[:], r.h.Sum(nil))
	var t [40]byte
	if _, err := io.ReadFull(r.br, t[:]); err != nil {
		return formatErr("trailer", err)
	}
	if !bytes.Equal(t[:32], want[:]) || !bytes.Equal(t[32:], endMagic) {
		return fmt.Errorf("%w: its checksum does not match its content", ErrFormat)
	}
	if _, err := r.br.ReadByte(); err != io.EOF {
		return fmt.Errorf("%w: bytes after the trailer", ErrFormat)
	}
	r.sum = want
	return nil
}

// ObjectSum returns the object's Sum once Next returned io.EOF: what the
// next object names as its Prev.
func (r *Reader) ObjectSum() [32]byte { return r.sum }

// ValidName reports whether name can be the name of a file of a data dir
// in an object: slash-separated, local, of letters, digits, '.', '_' and
// '-' only.
func ValidName(name string) bool {
	if name == "" || len(name) > maxName || path.Clean(name) != name || name[0] == '/' || name == "." {
		return false
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/'
		if !ok {
			return false
		}
	}
	for seg := range bytes.SplitSeq([]byte(name), []byte("/")) {
		if string(seg) == ".." {
			return false
		}
	}
	return true
}
