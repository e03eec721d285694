package logstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"math"
	"slices"

	"strongbox/logstore/journal"
)

// sidecarReader reads the fields of a sidecar, never trusting a length:
// past the end, or on a malformed number, it fails (bad) and returns
// zeros from then on.
type sidecarReader struct {
	b   []byte
	bad bool
}

func (r *sidecarReader) fail() { r.bad, r.b = true, nil }

func (r *sidecarReader) uv() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *sidecarReader) sv() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// take returns the next n bytes (aliasing the sidecar).
func (r *sidecarReader) take(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.fail()
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

// count reads a count of at most limit items of at least size bytes each.
func (r *sidecarReader) count(limit, size int) int {
	v := r.uv()
	if v > uint64(limit) || v*uint64(size) > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(v)
}

// upTo reads a uvarint below limit.
func (r *sidecarReader) upTo(limit uint64) uint64 {
	v := r.uv()
	if v >= limit {
		r.fail()
		return 0
	}
	return v
}

func (r *sidecarReader) byte1() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *sidecarReader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *sidecarReader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *sidecarReader) u32s(n int) []uint32 {
	p := r.take(4 * n)
	if p == nil {
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(p[4*i:])
	}
	return out
}

func (r *sidecarReader) u16s(n int) []uint16 {
	p := r.take(2 * n)
	if p == nil {
		return nil
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(p[2*i:])
	}
	return out
}

// sidecarFile is what decodeSidecar checks a sidecar against: the segment
// it must describe, its file's size and tail checksum, and the sequence
// number of the next segment (no row at or past it).
type sidecarFile struct {
	seg   *segment
	size  int64
	tail  uint32
	limit int64
}

// decodeSidecar returns the partial index the sidecar b holds, errStale
// when it is of another format version or describes another state of the
// segment (another size or tail: rows were added since), or errSidecar when b is damaged, of another
// format or of another segment, or describes rows the segment cannot hold; it
// sets seg's rows, lastSeq and maxCreated. Every length is checked before
// it is used, and every local id, dictionary id, row and sequence number
// against what it indexes, so that no sidecar, whatever its bytes, can
// make a query fail. Only a sidecar that decodes changes seg.
func decodeSidecar(b []byte, sf sidecarFile) (*index, error) {
	seg := sf.seg
	if len(b) < sidecarHead || !bytes.Equal(b[:7], sidecarMagic[:7]) ||
		binary.LittleEndian.Uint64(b[8:]) != uint64(seg.firstSeq) ||
		binary.LittleEndian.Uint64(b[16:]) != seg.key {
		return nil, errSidecar
	}
	if b[7] != sidecarFormat || binary.LittleEndian.Uint64(b[24:]) != uint64(sf.size) ||
		binary.LittleEndian.Uint32(b[32:]) != sf.tail {
		return nil, errStale // another format, or rows added since
	}
	if binary.LittleEndian.Uint64(b[40:]) != uint64(len(b)-sidecarHead) ||
		binary.LittleEndian.Uint32(b[36:]) != crc32.Checksum(b[sidecarHead:], crcTable) {
		return nil, errSidecar
	}
	r := &sidecarReader{b: b[sidecarHead:]}
	x := newIndex(defaultTuning) // a partial index: the Store's merges it and keeps its own tuning
	ns := r.count(math.MaxUint32-1, 2)
	sd := &sideDict{strs: make([][]byte, ns+1), doms: make([]domain, ns+1)}
	for i := 1; i <= ns; i++ {
		dom := r.byte1()
		if dom >= byte(numDomains) {
			r.fail()
		}
		sd.doms[i] = domain(dom)
		sd.strs[i] = r.take(r.count(math.MaxInt32, 1))
	}
	x.side = sd
	nf := r.count(math.MaxInt32, 1+idLen)
	fseqs := make([]int64, nf)
	for i := range nf {
		fseqs[i] = int64(r.upTo(maxSeq + 1))
		if !x.foreign.add(fseqs[i], r.take(idLen)) {
			r.fail()
		}
	}
	nc := r.count(math.MaxInt32, 8)
	last, maxCreated := seg.firstSeq-1, int64(0)
	for range nc {
		c := r.chunk(seg, sd, sf, last)
		if r.bad {
			return nil, errSidecar
		}
		last = c.rowSeq(c.n - 1)
		x.chunks = append(x.chunks, c)
		x.rows += c.n
		x.others += c.others
		for _, m := range c.attrs {
			for k, v := range m {
				x.attrKinds[k] |= kindBit(v)
			}
		}
		if x.rows == c.n || c.maxCreated > maxCreated {
			maxCreated = c.maxCreated
		}
	}
	if r.bad || len(r.b) != 0 || !foreignRowsMatch(x, fseqs) {
		return nil, errSidecar
	}
	seg.lastSeq, seg.rows, seg.maxCreated = last, x.rows, maxCreated
	return x, nil
}

// foreignRowsMatch reports whether the rows with a foreign id are exactly
// those of seqs.
func foreignRowsMatch(x *index, seqs []int64) bool {
	j := 0
	for _, c := range x.chunks {
		if !slices.ContainsFunc(c.d[dFlags].vals, func(f uint32) bool { return f&uint32(flagForeignID) != 0 }) {
			continue // its table of flags says no row has one
		}
		for i := range c.n {
			if c.flagsAt(i)&flagForeignID == 0 {
				continue
			}
			if j >= len(seqs) || seqs[j] != c.rowSeq(i) {
				return false
			}
			j++
		}
	}
	return j == len(seqs)
}

// chunk reads a sealed chunk of seg whose rows follow sequence number
// last, checking it against the dictionary sd and the segment's file sf.
func (r *sidecarReader) chunk(seg *segment, sd *sideDict, sf sidecarFile, last int64) *chunk {
	c := &chunk{seg: seg, sealed: true}
	n := int(r.upTo(chunkSize + 1))
	c.n = n
	c.seq0 = int64(r.uv())
	c.others = int(r.upTo(uint64(n) + 1))
	if n == 0 || c.seq0 <= last || c.seq0 < seg.firstSeq {
		r.fail()
		return c
	}
	switch r.byte1() {
	case 0:
	case 1:
		c.seqs = r.u32s(n)
		if len(c.seqs) == n && (c.seqs[0] != 0 || !strictlyUp(c.seqs)) {
			r.fail()
		}
	default:
		r.fail()
	}
	if top := c.rowSeq0(n); r.bad || top >= sf.limit || top > maxSeq {
		r.fail()
		return c
	}
	r.offsets(c, sf.size)
	r.times(c)
	r.execs(c)
	for _, g := range groups {
		r.group(c, g, sd)
	}
	r.extras(c, sd)
	r.attrs(c)
	c.minCreated, c.maxCreated = r.sv(), r.sv()
	nh := r.count(n, 2)
	c.hours = make([]hourCount, nh)
	sum := 0
	for i := range c.hours {
		c.hours[i] = hourCount{hour: r.sv(), n: int(r.upTo(uint64(n) + 1))}
		sum += c.hours[i].n
	}
	if sum != n || c.minCreated > c.maxCreated {
		r.fail()
	}
	return c
}

// rowSeq0 is rowSeq of the last of n rows, safe on a chunk being read.
func (c *chunk) rowSeq0(n int) int64 {
	if c.seqs == nil {
		return c.seq0 + int64(n-1)
	}
	if len(c.seqs) < n {
		return math.MaxInt64
	}
	return c.seq0 + int64(c.seqs[n-1])
}

func strictlyUp[T uint16 | uint32 | int](v []T) bool {
	for i := 1; i < len(v); i++ {
		if v[i] <= v[i-1] {
			return false
		}
	}
	return true
}

// offsets reads the frame offsets of c, each a frame's start in a file of
// size bytes.
func (r *sidecarReader) offsets(c *chunk, size int64) {
	n := c.n
	c.offBase = r.u32()
	hi := uint32(0)
	switch r.byte1() {
	case 3:
		c.off3 = slices.Clone(r.take(3 * n))
		if len(c.off3) == 3*n {
			for i := range n {
				hi = max(hi, u24(c.off3, i))
			}
		}
	case 4:
		c.off = r.u32s(n)
		if len(c.off) == n {
			hi = slices.Max(c.off)
		}
	default:
		r.fail()
	}
	if int64(c.offBase) < journal.HeaderSize || int64(c.offBase)+int64(hi)+journal.FrameOverhead > size {
		r.fail()
	}
}

// times reads the creation times of c.
func (r *sidecarReader) times(c *chunk) {
	n, t := c.n, &c.created
	t.base = r.sv()
	switch r.byte1() {
	case 3:
		t.rel3 = slices.Clone(r.take(3 * n))
	case 4:
		t.rel = r.u32s(n)
	case 8:
		p := r.take(8 * n)
		if p != nil {
			t.wide = make([]int64, n)
			for i := range t.wide {
				t.wide[i] = int64(binary.LittleEndian.Uint64(p[8*i:]))
			}
		}
	default:
		r.fail()
	}
}

// execs reads the execution times of c: a side entry exactly for each
// row marked execWide.
func (r *sidecarReader) execs(c *chunk) {
	n := c.n
	c.exec.ns = r.u32s(n)
	ns := r.count(n, 9)
	if r.bad {
		return
	}
	if ns > 0 {
		c.exec.side = make([]execSide, ns)
	}
	prev := -1
	for j := range c.exec.side {
		i := int(r.upTo(uint64(n)))
		bits := r.u64()
		if r.bad || i <= prev || c.exec.ns[i] != execWide {
			r.fail()
			return
		}
		c.exec.side[j], prev = execSide{i, math.Float64frombits(bits)}, i
	}
	wide := 0
	for _, v := range c.exec.ns {
		if v == execWide {
			wide++
		}
	}
	if wide != ns {
		r.fail()
	}
}

// group reads the columns of group g of c: the members' values (a string
// column's ids local to sd, of its domain), the shared local ids, each
// below the number of values, and the counts per value.
func (r *sidecarReader) group(c *chunk, g []int, sd *sideDict) {
	n := c.n
	nv := int(r.upTo(uint64(n) + 1))
	if nv == 0 {
		r.fail()
		return
	}
	for _, k := range g {
		vals := r.u32s(nv)
		if r.bad {
			return
		}
		for _, v := range vals {
			switch {
			case k < int(numStrCols):
				if int(v) >= len(sd.strs) || v != 0 && sd.doms[v] != colDomain[k] {
					r.fail()
				}
			case k == dFlags:
				if v > 0xFF {
					r.fail()
				}
			}
		}
		c.d[k].vals = vals
	}
	lead := &c.d[g[0]]
	switch {
	case nv > 256:
		lead.u16 = r.u16s(n)
		for _, id := range lead.u16 {
			if int(id) >= nv {
				r.fail()
			}
		}
	case nv > 1:
		lead.u8 = slices.Clone(r.take(n))
		for _, id := range lead.u8 {
			if int(id) >= nv {
				r.fail()
			}
		}
	}
	if nv <= 256 {
		lead.counts = r.u16s(nv)
		sum := 0
		for _, k := range lead.counts {
			sum += int(k)
		}
		if sum != n {
			r.fail()
		}
	}
	for _, k := range g[1:] {
		d := &c.d[k]
		d.u8, d.u16, d.counts = lead.u8, lead.u16, lead.counts
	}
}

// extras reads the extras of c's request logs.
func (r *sidecarReader) extras(c *chunk, sd *sideDict) {
	nx := r.count(c.n, 4)
	if nx == 0 {
		return
	}
	c.xrows, c.extras = make([]uint16, nx), make([]extra, nx)
	text := func() uint32 {
		v := r.upTo(uint64(len(sd.strs)))
		if v != 0 && sd.doms[v] != domText {
			r.fail()
		}
		return uint32(v)
	}
	for j := range nx {
		c.xrows[j] = uint16(r.upTo(uint64(c.n)))
		if r.bad {
			return
		}
		c.extras[j] = extra{authID: text(), errMsg: text(), details: text()}
	}
	if !strictlyUp(c.xrows) {
		r.fail()
	}
}

// attrs reads the decoded data of c's other logs, JSON objects by row.
func (r *sidecarReader) attrs(c *chunk) {
	na := r.count(c.n, 2)
	if na == 0 {
		return
	}
	c.attrs = make(map[uint16]map[string]any, min(na, 64))
	prev := -1
	for range na {
		i := int(r.upTo(uint64(c.n)))
		js := r.take(r.count(journal.MaxRecord, 1))
		var m map[string]any
		if r.bad || i <= prev || json.Unmarshal(js, &m) != nil || m == nil {
			r.fail()
			return
		}
		c.attrs[uint16(i)], prev = m, i
	}
}
