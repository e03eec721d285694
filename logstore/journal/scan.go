package journal

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// scanner gives Open windowed random access to a file being recovered: it
// reads ahead in large chunks for the common sequential case and re-reads
// when resync moves backwards.
type scanner struct {
	r    io.ReaderAt
	size int64
	buf  []byte
	off  int64 // file offset of buf[0]
}

const chunk = 1 << 20

func newScanner(r io.ReaderAt, size int64) *scanner {
	return &scanner{r: r, size: size}
}

// window returns the n bytes at off. They stay valid until the next call.
func (s *scanner) window(off int64, n int) ([]byte, error) {
	if off >= s.off && off+int64(n) <= s.off+int64(len(s.buf)) {
		return s.buf[off-s.off : off-s.off+int64(n)], nil
	}
	want := max(n, chunk)
	if rest := s.size - off; int64(want) > rest {
		want = int(rest)
	}
	if cap(s.buf) < want {
		s.buf = make([]byte, want)
	}
	s.buf = s.buf[:want]
	if _, err := s.r.ReadAt(s.buf, off); err != nil && err != io.EOF {
		return nil, err
	}
	s.off = off
	return s.buf[:n], nil
}

// frameAt reports whether a valid frame starts at off and returns its payload.
func (s *scanner) frameAt(off int64) ([]byte, bool, error) {
	if s.size-off < FrameOverhead {
		return nil, false, nil
	}
	h, err := s.window(off, FrameOverhead)
	if err != nil {
		return nil, false, err
	}
	if !bytes.Equal(h[:4], frameMagic) {
		return nil, false, nil
	}
	n := int64(binary.LittleEndian.Uint32(h[4:8]))
	sum := binary.LittleEndian.Uint32(h[8:12])
	if n > MaxRecord || n > s.size-off-FrameOverhead {
		return nil, false, nil
	}
	fr, err := s.window(off, FrameOverhead+int(n))
	if err != nil {
		return nil, false, err
	}
	crc := crc32.Update(0, castagnoli, fr[4:8])
	crc = crc32.Update(crc, castagnoli, fr[FrameOverhead:])
	if crc != sum {
		return nil, false, nil
	}
	return fr[FrameOverhead:], true, nil
}

// resync returns the offset of the first valid frame at or after from, or -1.
func (s *scanner) resync(from int64) (int64, error) {
	for off := from; s.size-off >= FrameOverhead; {
		n := int(min(int64(chunk), s.size-off))
		w, err := s.window(off, n)
		if err != nil {
			return 0, err
		}
		i := bytes.Index(w, frameMagic)
		if i < 0 {
			// The marker may straddle the window's end: step back 3 bytes.
			if off+int64(n) >= s.size {
				return -1, nil
			}
			off += int64(n - len(frameMagic) + 1)
			continue
		}
		cand := off + int64(i)
		if _, ok, err := s.frameAt(cand); err != nil {
			return 0, err
		} else if ok {
			return cand, nil
		}
		off = cand + 1
	}
	return -1, nil
}
