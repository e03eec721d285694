package sqlite

import (
	"encoding/binary"
	"io"
)

// WAL file layout (https://www.sqlite.org/walformat.html): a 32-byte
// header, then frames of a 24-byte frame header and one page.
const (
	walHeaderSize      = 32
	walFrameHeaderSize = 24
	walMagicLE         = 0x377f0682 // checksums over little-endian words
	walMagicBE         = 0x377f0683 // checksums over big-endian words
	walVersion         = 3007000
)

// walIndex maps each page to the WAL offset of its newest committed frame.
type walIndex struct {
	r        io.ReaderAt
	pageSize int
	dbPages  uint32           // database size after the last commit
	pages    map[uint32]int64 // page number -> offset of the page data
}

// lookup is safe on a nil index (no WAL).
func (w *walIndex) lookup(pgno uint32) (int64, bool) {
	if w == nil {
		return 0, false
	}
	off, ok := w.pages[pgno]
	return off, ok
}

// walChecksum continues SQLite's WAL checksum (s0, s1) over b, whose
// length is a multiple of 8, reading words in the given byte order.
func walChecksum(order binary.ByteOrder, s0, s1 uint32, b []byte) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

// readWAL reads the WAL as SQLite's recovery does: a header whose magic,
// version or checksum is wrong makes an empty WAL; frames count up to the
// first one whose salts or cumulative checksum do not match, and only
// those up to and including the last commit frame (nonzero database
// size) are kept, the newest frame of each page winning. It returns nil
// when no frame is committed.
func readWAL(r io.ReaderAt, size int64) (*walIndex, error) {
	if size < walHeaderSize {
		return nil, nil
	}
	hdr := make([]byte, walHeaderSize)
	if _, err := r.ReadAt(hdr, 0); err != nil {
		return nil, corrupt(0, "reading the WAL header: %v", err)
	}
	var order binary.ByteOrder
	switch binary.BigEndian.Uint32(hdr) {
	case walMagicLE:
		order = binary.LittleEndian
	case walMagicBE:
		order = binary.BigEndian
	default:
		return nil, nil
	}
	pageSize := int(binary.BigEndian.Uint32(hdr[8:]))
	if binary.BigEndian.Uint32(hdr[4:]) != walVersion ||
		pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return nil, nil
	}
	s0, s1 := walChecksum(order, 0, 0, hdr[:24])
	if s0 != binary.BigEndian.Uint32(hdr[24:]) || s1 != binary.BigEndian.Uint32(hdr[28:]) {
		return nil, nil
	}
	w := &walIndex{r: r, pageSize: pageSize, pages: map[uint32]int64{}}
	pending := map[uint32]int64{}
	frameSize := int64(walFrameHeaderSize + pageSize)
	frame := make([]byte, frameSize)
	// The frame count is bounded by the file's size.
	for off := int64(walHeaderSize); off+frameSize <= size; off += frameSize {
		if _, err := r.ReadAt(frame, off); err != nil {
			return nil, corrupt(0, "reading the WAL frame at offset %d: %v", off, err)
		}
		pgno := binary.BigEndian.Uint32(frame)
		commit := binary.BigEndian.Uint32(frame[4:])
		if pgno == 0 || string(frame[8:16]) != string(hdr[16:24]) {
			break
		}
		s0, s1 = walChecksum(order, s0, s1, frame[:8])
		s0, s1 = walChecksum(order, s0, s1, frame[walFrameHeaderSize:])
		if s0 != binary.BigEndian.Uint32(frame[16:]) || s1 != binary.BigEndian.Uint32(frame[20:]) {
			break
		}
		pending[pgno] = off + walFrameHeaderSize
		if commit != 0 {
			for p, o := range pending {
				w.pages[p] = o
			}
			clear(pending)
			w.dbPages = commit
		}
	}
	if w.dbPages == 0 {
		return nil, nil
	}
	// Pages beyond the committed size (a truncating commit) are no part
	// of the database.
	for p := range w.pages {
		if p > w.dbPages {
			delete(w.pages, p)
		}
	}
	return w, nil
}
