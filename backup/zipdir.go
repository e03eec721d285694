package backup

import (
	"bytes"
	"encoding/binary"
	"io"
)

// dirBytesPerFile is the central directory space allowed per entry of
// Limits.MaxFiles. A strongbox entry's record takes about 100 bytes (46
// fixed, a short name, the times and, past 4 GiB, zip64 sizes).
const dirBytesPerFile = 256

// centralDirSpan returns the number of bytes archive/zip's reader may
// parse as central directory records: from where it starts reading them
// up to the end of central directory record (or its zip64 form), which
// stops it, as zip.NewReader finds them. zip.NewReader keeps a *zip.File, a few hundred bytes, for every
// record it reads there, whatever the record count says, before any
// MaxFiles check can run; bounding this span first bounds that memory. ok
// is false if the records cannot be found: zip.NewReader then refuses the
// archive itself.
func centralDirSpan(r io.ReaderAt, size int64) (span int64, ok bool) {
	const eocdLen, loc64Len, eocd64Len = 22, 20, 56
	n := min(size, 65*1024)
	if n < eocdLen {
		return 0, false
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, size-n); err != nil && err != io.EOF {
		return 0, false
	}
	// The last signature whose comment fits in what follows it, as
	// archive/zip searches.
	p := -1
	for i := len(buf) - eocdLen; i >= 0; i-- {
		if bytes.Equal(buf[i:i+4], []byte("PK\x05\x06")) {
			if c := int(binary.LittleEndian.Uint16(buf[i+20:])); i+eocdLen+c <= len(buf) {
				p = i
				break
			}
		}
	}
	if p < 0 {
		return 0, false
	}
	end := size - n + int64(p)
	records := binary.LittleEndian.Uint16(buf[p+10:])
	dirSize := uint64(binary.LittleEndian.Uint32(buf[p+12:]))
	offset := uint64(binary.LittleEndian.Uint32(buf[p+16:]))
	// archive/zip's test for a zip64 archive, its 0xffff for the size
	// included.
	if records == 0xffff || dirSize == 0xffff || offset == 0xffffffff {
		var loc [loc64Len]byte
		if end >= loc64Len {
			if _, err := r.ReadAt(loc[:], end-loc64Len); err == nil &&
				bytes.Equal(loc[:4], []byte("PK\x06\x07")) && binary.LittleEndian.Uint32(loc[16:]) == 1 {
				p64 := binary.LittleEndian.Uint64(loc[8:])
				var rec [eocd64Len]byte
				if p64 > uint64(size) {
					return 0, false
				}
				if _, err := r.ReadAt(rec[:], int64(p64)); err != nil || !bytes.Equal(rec[:4], []byte("PK\x06\x06")) {
					return 0, false
				}
				end = int64(p64)
				dirSize, offset = binary.LittleEndian.Uint64(rec[40:]), binary.LittleEndian.Uint64(rec[48:])
			}
		}
	}
	// The reader starts at end-dirSize (its "base offset" added to the
	// offset), or at the offset itself when a record is found there:
	// whichever is earlier bounds what it parses.
	start := offset
	if dirSize <= uint64(end) {
		start = min(start, uint64(end)-dirSize)
	}
	if start > uint64(end) {
		return 0, false
	}
	return end - int64(start), true
}
