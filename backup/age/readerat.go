package age

import (
	"bufio"
	"crypto/cipher"
	"fmt"
	"io"
	"sync"
)

// ReaderAt reads the plaintext of an age file at any offset, as
// archive/zip needs: the payload's chunks are at fixed offsets (STREAM's
// nonce is the chunk's index), so each read decrypts only the chunks it
// covers. Like [Decrypt], it returns no byte of a chunk that does not
// authenticate; and since the last chunk is opened by [NewReaderAt], a
// truncated file is refused at once and Size can be trusted.
type ReaderAt struct {
	src     io.ReaderAt
	aead    cipher.AEAD
	payload int64 // offset of the first chunk
	chunks  int64
	lastLen int64 // sealed length of the last chunk
	size    int64 // plaintext length

	mu    sync.Mutex
	index int64 // the chunk in plain, or -1
	plain []byte
	in    []byte
}

// NewReaderAt opens the age file src of size bytes with identities: it
// reads the header (errors as [Decrypt]'s) and authenticates the last
// chunk ([ErrPayload] if it does not).
func NewReaderAt(src io.ReaderAt, size int64, identities ...Identity) (*ReaderAt, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(src, 0, size), 4096)
	h, err := parseHeader(br)
	if err != nil {
		return nil, err
	}
	fileKey, err := unwrap(h, identities)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, nonceSize)
	if _, err := src.ReadAt(nonce, h.size); err != nil {
		return nil, headerErr("no payload nonce")
	}
	aead, err := newAEAD(hkdfKey(fileKey, nonce, "payload"))
	if err != nil {
		return nil, err
	}
	r := &ReaderAt{src: src, aead: aead, payload: h.size + nonceSize, index: -1,
		plain: make([]byte, 0, ChunkSize), in: make([]byte, sealedChunk)}
	n := size - r.payload
	r.chunks = max(1, (n+sealedChunk-1)/sealedChunk)
	r.lastLen = n - (r.chunks-1)*sealedChunk
	// The last chunk holds at least its tag, and more unless it is the
	// only one.
	if r.lastLen < aeadOverhead || (r.lastLen == aeadOverhead && r.chunks > 1) {
		return nil, ErrPayload
	}
	r.size = (r.chunks-1)*ChunkSize + r.lastLen - aeadOverhead
	if err := r.load(r.chunks - 1); err != nil {
		return nil, err
	}
	return r, nil
}

// Size is the length of the plaintext.
func (r *ReaderAt) Size() int64 { return r.size }

// load decrypts chunk i into r.plain.
func (r *ReaderAt) load(i int64) error {
	if r.index == i {
		return nil
	}
	r.index = -1
	last := i == r.chunks-1
	n := int64(sealedChunk)
	if last {
		n = r.lastLen
	}
	in := r.in[:n]
	if _, err := r.src.ReadAt(in, r.payload+i*sealedChunk); err != nil && err != io.EOF {
		return fmt.Errorf("age: read payload: %w", err)
	}
	plain, err := r.aead.Open(r.plain[:0], streamNonce(uint64(i), last), in, nil)
	if err != nil {
		return ErrPayload
	}
	r.plain, r.index = plain, i
	return nil
}

// ReadAt reads len(p) bytes of plaintext from off; fewer only at the end
// (io.EOF) or if a chunk fails ([ErrPayload]).
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("age: negative offset")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(p) {
		if off >= r.size {
			return n, io.EOF
		}
		if err := r.load(off / ChunkSize); err != nil {
			return n, err
		}
		k := copy(p[n:], r.plain[off%ChunkSize:])
		n += k
		off += int64(k)
	}
	return n, nil
}
