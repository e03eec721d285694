package logstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// An index sidecar (<segment name less .seg>.idx) holds the partial index
// of one segment that no longer grows, so that Open loads it instead of
// decoding the segment's frames (see doc.go, "Index sidecars", for the
// format and the rules).

const (
	sidecarExt    = ".idx"
	sidecarTmp    = ".idx.tmp"
	sidecarHead   = 48   // header bytes
	sidecarTailN  = 4096 // segment bytes the tail checksum covers
	sidecarFormat = 1    // the magic's last byte
)

var (
	sidecarMagic = []byte("SBLIDX\x00\x01")
	crcTable     = crc32.MakeTable(crc32.Castagnoli)

	errSidecar = errors.New("logstore: index sidecar invalid")
	errStale   = errors.New("logstore: index sidecar stale")
)

// sidecarPath is the sidecar of the segment at segPath.
func sidecarPath(segPath string) string {
	return strings.TrimSuffix(segPath, ".seg") + sidecarExt
}

// tailCRC returns the CRC-32C of the last sidecarTailN bytes (at most) of
// the size bytes of the file at path.
func tailCRC(path string, size int64) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := min(size, sidecarTailN)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-n); err != nil && !(err == io.EOF && n == 0) {
		return 0, err
	}
	return crc32.Checksum(b, crcTable), nil
}

// sideDict is the dictionary of a partial index loaded from a sidecar:
// its strings by local id (0 is ""), aliasing the sidecar's bytes, each
// with its domain. merge interns them into the store's dictionary.
type sideDict struct {
	strs [][]byte
	doms []domain
}

// sidecarWriter appends the fields of a sidecar to b.
type sidecarWriter struct{ b []byte }

func (w *sidecarWriter) uv(v uint64)  { w.b = binary.AppendUvarint(w.b, v) }
func (w *sidecarWriter) sv(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *sidecarWriter) byte1(v byte) { w.b = append(w.b, v) }
func (w *sidecarWriter) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *sidecarWriter) str(b []byte) { w.uv(uint64(len(b))); w.b = append(w.b, b...) }
func (w *sidecarWriter) raw(b []byte) { w.b = append(w.b, b...) }
func (w *sidecarWriter) u32s(v []uint32) {
	w.b = slices.Grow(w.b, 4*len(v))
	for _, x := range v {
		w.b = binary.LittleEndian.AppendUint32(w.b, x)
	}
}

func (w *sidecarWriter) u16s(v []uint16) {
	w.b = slices.Grow(w.b, 2*len(v))
	for _, x := range v {
		w.b = binary.LittleEndian.AppendUint16(w.b, x)
	}
}

// encodeSidecar returns the sidecar of seg, whose file holds size bytes
// with tail its tail checksum, from x's rows of seg; nil when a chunk of
// seg is not sealed or a foreign id is missing. The caller holds the index
// for reading.
func (x *index) encodeSidecar(seg *segment, size int64, tail uint32) []byte {
	local := make(map[uint32]uint32, 1024)
	var strs []uint32
	var doms []domain
	lid := func(dom domain, id uint32) uint32 {
		if id == 0 {
			return 0
		}
		if l, ok := local[id]; ok {
			return l
		}
		strs, doms = append(strs, id), append(doms, dom)
		l := uint32(len(strs))
		local[id] = l
		return l
	}
	var chunks, foreign sidecarWriter
	chunks.b = make([]byte, 0, 32*seg.rows+4096) // about 28 bytes a log
	nc, nf := 0, 0
	for _, c := range x.chunks {
		if c.seg != seg {
			continue
		}
		if !c.sealed {
			return nil
		}
		for i := range c.n {
			if c.flagsAt(i)&flagForeignID == 0 {
				continue
			}
			id, ok := x.foreign.idOf(c.rowSeq(i))
			if !ok {
				return nil
			}
			foreign.uv(uint64(c.rowSeq(i)))
			foreign.raw(id[:])
			nf++
		}
		chunks.chunk(c, lid)
		nc++
	}
	var body sidecarWriter
	body.b = make([]byte, 0, len(chunks.b)+len(foreign.b)+16*len(strs)+64)
	body.uv(uint64(len(strs)))
	for i, id := range strs {
		body.byte1(byte(doms[i]))
		body.str([]byte(x.dict.strs[id]))
	}
	body.uv(uint64(nf))
	body.raw(foreign.b)
	body.uv(uint64(nc))
	body.raw(chunks.b)

	out := make([]byte, sidecarHead, sidecarHead+len(body.b)) // one copy more: the header needs the body's CRC
	copy(out, sidecarMagic)
	binary.LittleEndian.PutUint64(out[8:], uint64(seg.firstSeq))
	binary.LittleEndian.PutUint64(out[16:], seg.key)
	binary.LittleEndian.PutUint64(out[24:], uint64(size))
	binary.LittleEndian.PutUint32(out[32:], tail)
	binary.LittleEndian.PutUint32(out[36:], crc32.Checksum(body.b, crcTable))
	binary.LittleEndian.PutUint64(out[40:], uint64(len(body.b)))
	return append(out, body.b...)
}

// chunk appends sealed chunk c, its dictionary ids made local by lid.
func (w *sidecarWriter) chunk(c *chunk, lid func(domain, uint32) uint32) {
	n := c.n
	w.uv(uint64(n))
	w.uv(uint64(c.seq0))
	w.uv(uint64(c.others))
	if c.seqs == nil {
		w.byte1(0)
	} else {
		w.byte1(1)
		w.u32s(c.seqs[:n])
	}
	w.u32(c.offBase)
	if c.off3 != nil {
		w.byte1(3)
		w.raw(c.off3)
	} else {
		w.byte1(4)
		w.u32s(c.off[:n])
	}
	t := &c.created
	w.sv(t.base)
	switch {
	case t.rel3 != nil:
		w.byte1(3)
		w.raw(t.rel3)
	case t.wide != nil:
		w.byte1(8)
		for _, v := range t.wide[:n] {
			w.b = binary.LittleEndian.AppendUint64(w.b, uint64(v))
		}
	default:
		w.byte1(4)
		w.u32s(t.rel[:n])
	}
	w.u32s(c.exec.ns[:n])
	w.uv(uint64(len(c.exec.side)))
	for _, s := range c.exec.side {
		w.uv(uint64(s.i))
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(s.v))
	}
	for _, g := range groups {
		lead := &c.d[g[0]]
		w.uv(uint64(len(lead.vals)))
		for _, k := range g {
			for _, v := range c.d[k].vals {
				if k < int(numStrCols) {
					v = lid(colDomain[k], v)
				}
				w.u32(v)
			}
		}
		switch {
		case lead.u8 != nil:
			w.raw(lead.u8)
		case lead.u16 != nil:
			w.u16s(lead.u16)
		}
		w.u16s(lead.counts) // with at most 256 values
	}
	w.uv(uint64(len(c.xrows)))
	for j, r := range c.xrows {
		e := &c.extras[j]
		w.uv(uint64(r))
		w.uv(uint64(lid(domText, e.authID)))
		w.uv(uint64(lid(domText, e.errMsg)))
		w.uv(uint64(lid(domText, e.details)))
	}
	rows := make([]uint16, 0, len(c.attrs))
	for r := range c.attrs {
		rows = append(rows, r)
	}
	slices.Sort(rows)
	w.uv(uint64(len(rows)))
	for _, r := range rows {
		js, _ := json.Marshal(c.attrs[r]) // decoded JSON: it marshals
		w.uv(uint64(r))
		w.str(js)
	}
	w.sv(c.minCreated)
	w.sv(c.maxCreated)
	w.uv(uint64(len(c.hours)))
	for _, h := range c.hours {
		w.sv(h.hour)
		w.uv(uint64(h.n))
	}
}
