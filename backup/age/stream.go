package age

import (
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
)

// The payload is STREAM (Hoang, Reyhanitabar, Rogaway, Vizár): the
// plaintext in chunks of ChunkSize bytes, each sealed with
// ChaCha20-Poly1305 under the payload key and a nonce of an 11-byte
// big-endian counter and a last-chunk flag (1 on the last chunk only).
// Only the last chunk may be shorter than ChunkSize, and it is empty only
// if the whole plaintext is. A truncation at a chunk boundary therefore
// fails (the chunk read last was sealed as not last), and so does any
// reordering or flipped byte.

// ChunkSize is the plaintext size of every chunk but the last.
const ChunkSize = 64 << 10

const (
	sealedChunk  = ChunkSize + aeadOverhead
	nonceSize    = 16 // the random nonce between header and payload
	lastChunkBit = 1
)

// ErrPayload matches every failure of a payload to authenticate: a
// flipped byte, a truncation, trailing data.
var ErrPayload = errors.New("age: payload does not authenticate (damaged, truncated or not for this key)")

func streamNonce(counter uint64, last bool) []byte {
	var n [aeadNonceSize]byte
	for i := 10; i >= 3; i-- {
		n[i] = byte(counter)
		counter >>= 8
	}
	if last {
		n[11] = lastChunkBit
	}
	return n[:]
}

// writer seals its input chunk by chunk into w.
type writer struct {
	w       io.Writer
	aead    cipher.AEAD
	buf     []byte // plaintext of the chunk being filled
	out     []byte
	counter uint64
	err     error
}

func newWriter(key []byte, w io.Writer) (*writer, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, fmt.Errorf("age: %w", err)
	}
	return &writer{w: w, aead: aead, buf: make([]byte, 0, ChunkSize), out: make([]byte, 0, sealedChunk)}, nil
}

// Write buffers p, sealing each full chunk once more input shows it is
// not the last.
func (w *writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	for len(p) > 0 {
		if len(w.buf) == ChunkSize {
			if err := w.flush(false); err != nil {
				return n, err
			}
		}
		k := copy(w.buf[len(w.buf):ChunkSize], p)
		w.buf = w.buf[:len(w.buf)+k]
		p, n = p[k:], n+k
	}
	return n, nil
}

// Close seals the last chunk (full, partial, or empty if nothing was
// written); it does not close the underlying writer.
func (w *writer) Close() error {
	if w.err != nil {
		return w.err
	}
	err := w.flush(true)
	if err == nil {
		w.err = errors.New("age: write after close")
	}
	return err
}

func (w *writer) flush(last bool) error {
	if w.counter == 1<<64-1 {
		w.err = errors.New("age: payload too long")
		return w.err
	}
	w.out = w.aead.Seal(w.out[:0], streamNonce(w.counter, last), w.buf, nil)
	w.counter++
	w.buf = w.buf[:0]
	if _, err := w.w.Write(w.out); err != nil {
		w.err = err
		return err
	}
	return nil
}

// reader opens a payload chunk by chunk, returning a chunk's plaintext
// only once it is authenticated.
type reader struct {
	r       io.Reader
	aead    cipher.AEAD
	in      []byte // sealed chunk, plus one byte read ahead
	pbuf    []byte // plaintext of the chunk opened last
	plain   []byte // authenticated plaintext not yet returned (in pbuf)
	counter uint64
	done    bool // the last chunk was opened
	err     error
}

func newReader(key []byte, r io.Reader) (*reader, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, fmt.Errorf("age: %w", err)
	}
	return &reader{r: r, aead: aead, in: make([]byte, 0, sealedChunk+1), pbuf: make([]byte, 0, ChunkSize)}, nil
}

func (r *reader) Read(p []byte) (int, error) {
	for len(r.plain) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.done {
			return 0, io.EOF
		}
		r.err = r.next()
		if r.err == nil && r.done {
			r.err = io.EOF
		}
	}
	n := copy(p, r.plain)
	r.plain = r.plain[n:]
	return n, nil
}

// next reads and opens one chunk. It reads one byte past a full chunk to
// learn whether it is the last.
func (r *reader) next() error {
	// r.in may hold the byte read ahead of the previous chunk.
	n, err := io.ReadFull(r.r, r.in[len(r.in):sealedChunk+1])
	r.in = r.in[:len(r.in)+n]
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		err = nil
	case err != nil:
		return fmt.Errorf("age: read payload: %w", err)
	}
	last := len(r.in) <= sealedChunk
	sealed := r.in[:min(len(r.in), sealedChunk)]
	if len(sealed) < aeadOverhead {
		return ErrPayload
	}
	plain, err := r.aead.Open(r.pbuf[:0], streamNonce(r.counter, last), sealed, nil)
	if err != nil || (last && len(plain) == 0 && r.counter > 0) {
		return ErrPayload
	}
	if !last {
		// Keep the byte read ahead at the start of the next chunk.
		r.in[0] = r.in[sealedChunk]
		r.in = r.in[:1]
	} else {
		r.in = r.in[:0]
	}
	r.plain = plain
	r.counter++
	r.done = last
	return nil
}
