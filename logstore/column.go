package logstore

import (
	"math"
	"slices"
	"unsafe"
)

// The columns of a chunk are narrow: a chunk holds at most chunkSize
// (8,192) rows, so a row's value in a column of distinct values (level,
// status, and the dictionary ids of the string columns) is a local id of
// one byte (at most 256 distinct values in the chunk) or two, into the
// chunk's own table of its values, and no byte at all when every row has
// the same value. Times are offsets from a base, execution times integer
// nanoseconds when that is exact. A chunk is filled with two-byte ids and
// compacted once, when it is sealed (full, or the last of a segment).

// Compile-time check: local ids fit in two bytes.
var _ [65536 - chunkSize]struct{}

// dcol is a column of distinct values: per row a local id into vals.
type dcol struct {
	vals   []uint32 // the column's distinct values, by local id
	u8     []uint8  // local ids when sealed with 2 to 256 values
	u16    []uint16 // local ids otherwise (and while the chunk fills)
	counts []uint16 // sealed, with at most 256 values: rows per local id
}

// at returns the value of row i.
func (d *dcol) at(i int) uint32 {
	return d.vals[d.local(i)]
}

// local returns the local id of row i.
func (d *dcol) local(i int) int {
	switch {
	case d.u8 != nil:
		return int(d.u8[i])
	case d.u16 != nil:
		return int(d.u16[i])
	}
	return 0
}

// decode sets dst[i] to the value of row i, for the n rows.
func (d *dcol) decode(dst *[chunkSize]uint32, n int) []uint32 {
	out := dst[:n]
	switch {
	case d.u8 != nil:
		for i, id := range d.u8[:n] {
			out[i] = d.vals[id]
		}
	case d.u16 != nil:
		for i, id := range d.u16[:n] {
			out[i] = d.vals[id]
		}
	default:
		for i := range out {
			out[i] = d.vals[0]
		}
	}
	return out
}

// seal narrows the local ids of the n rows and counts each value's rows
// when there are few values.
func (d *dcol) seal(n int) {
	d.vals = slices.Clip(slices.Clone(d.vals))
	ids := d.u16[:n]
	d.u16 = nil
	switch {
	case len(d.vals) > 256:
		d.u16 = slices.Clone(ids)
		return
	case len(d.vals) > 1:
		d.u8 = make([]uint8, n)
		for i, id := range ids {
			d.u8[i] = uint8(id)
		}
	}
	d.counts = make([]uint16, len(d.vals))
	for _, id := range ids {
		d.counts[id]++
	}
}

// colBuilder finds the local id of a value in the column of the chunk
// being filled: an open-addressing hash table of value<<32 | local id+1,
// with the last value looked up remembered (runs are common).
type colBuilder struct {
	slots  []uint64
	used   int
	lastV  uint32
	lastID uint16
	last   bool
}

// id returns the local id of v in d, adding v to d.vals when new.
func (b *colBuilder) id(d *dcol, v uint32) uint16 {
	if b.last && v == b.lastV {
		return b.lastID
	}
	if 2*(b.used+1) > len(b.slots) {
		b.grow()
	}
	mask := len(b.slots) - 1
	i := hashID(v) & mask
	for ; b.slots[i] != 0; i = (i + 1) & mask {
		if s := b.slots[i]; uint32(s>>32) == v {
			b.lastV, b.lastID, b.last = v, uint16(s)-1, true
			return b.lastID
		}
	}
	id := uint16(len(d.vals))
	d.vals = append(d.vals, v)
	b.slots[i] = uint64(v)<<32 | uint64(id) + 1
	b.used++
	b.lastV, b.lastID, b.last = v, id, true
	return id
}

func (b *colBuilder) grow() {
	old := b.slots
	b.slots = make([]uint64, max(16, 2*len(old)))
	mask := len(b.slots) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := hashID(uint32(s>>32)) & mask
		for b.slots[i] != 0 {
			i = (i + 1) & mask
		}
		b.slots[i] = s
	}
}

// reset empties b and enters the values of d (after they were remapped).
func (b *colBuilder) reset(d *dcol) {
	clear(b.slots)
	b.used, b.last = 0, false
	vals := d.vals
	d.vals = d.vals[:0]
	for _, v := range vals {
		b.id(d, v)
	}
}

// timeCol holds the creation times of a chunk's rows (Unix ms): offsets
// from base while they fit in 32 bits, else the times themselves.
type timeCol struct {
	base int64
	rel  []uint32
	wide []int64
}

func (t *timeCol) at(i int) int64 {
	if t.wide != nil {
		return t.wide[i]
	}
	return t.base + int64(t.rel[i])
}

// add appends ms; the first time of a chunk sets the base, 2^31 ms (24
// days) before it, so times on either side of it fit.
func (t *timeCol) add(n int, ms int64) {
	if n == 0 {
		t.base = ms - 1<<31
	}
	if t.wide == nil {
		if d := ms - t.base; d >= 0 && d <= math.MaxUint32 {
			t.rel = append(t.rel, uint32(d))
			return
		}
		t.wide = make([]int64, n, chunkSize)
		for i := range n {
			t.wide[i] = t.base + int64(t.rel[i])
		}
		t.rel = nil
	}
	t.wide = append(t.wide, ms)
}

// execWide marks an execution time kept in execCol.side.
const execWide = math.MaxUint32

// execCol holds the execution times (milliseconds) of a chunk's rows as
// integer nanoseconds where that gives the same float64 back, which is
// always so for the request logger's times (nanoseconds / 1e6) under 4.3
// s; the others, exact, in a side table.
type execCol struct {
	ns   []uint32
	side []execSide // by row
}

type execSide struct {
	i int
	v float64
}

func (e *execCol) at(i int) float64 {
	if v := e.ns[i]; v != execWide {
		return float64(v) / 1e6
	}
	j, _ := slices.BinarySearchFunc(e.side, i, func(s execSide, i int) int { return s.i - i })
	return e.side[j].v
}

func (e *execCol) add(i int, v float64) {
	if ns := math.Round(v * 1e6); ns >= 0 && ns < execWide {
		if u := uint32(ns); math.Float64bits(float64(u)/1e6) == math.Float64bits(v) {
			e.ns = append(e.ns, u)
			return
		}
	}
	e.ns = append(e.ns, execWide)
	e.side = append(e.side, execSide{i, v})
}

// chunkBuilder is the scratch of the chunk being filled: its columns live
// in the builder's arrays until the chunk is sealed, and the builder is
// then reused for the next chunk.
type chunkBuilder struct {
	cols    [numDcols]colBuilder
	ids     [numDcols][chunkSize]uint16
	off     [chunkSize]uint32
	rel     [chunkSize]uint32
	ns      [chunkSize]uint32
	flags   [chunkSize]uint8
	hasRows bool
}

// start makes c a new chunk filled in b's arrays.
func (b *chunkBuilder) start(c *chunk) {
	for k := range c.d {
		if b.hasRows {
			clear(b.cols[k].slots)
			b.cols[k].used, b.cols[k].last = 0, false
		}
		c.d[k].u16 = b.ids[k][:0]
	}
	b.hasRows = true
	c.off = b.off[:0]
	c.created.rel = b.rel[:0]
	c.exec.ns = b.ns[:0]
	c.flags = b.flags[:0]
}

// seal compacts c's columns into arrays of their own, exactly sized, and
// computes its summaries.
func (c *chunk) seal() {
	if c.sealed {
		return
	}
	c.sealed = true
	n := c.n
	for k := range c.d {
		c.d[k].seal(n)
	}
	c.off = slices.Clone(c.off[:n])
	c.flags = slices.Clone(c.flags[:n])
	if c.created.wide != nil {
		c.created.wide = slices.Clip(c.created.wide)
	} else {
		c.created.rel = slices.Clone(c.created.rel[:n])
	}
	c.exec.ns = slices.Clone(c.exec.ns[:n])
	c.exec.side = slices.Clip(c.exec.side)
	if c.seqs != nil {
		c.seqs = slices.Clip(c.seqs)
	}
	c.xrows = slices.Clip(c.xrows)
	c.extras = slices.Clip(c.extras)
	c.hours = c.hourCounts(0, n)
}

// hourCount is the number of a chunk's rows created in one UTC hour.
type hourCount struct {
	hour int64 // Unix ms of its start
	n    int
}

const hourMs = 60 * 60 * 1000

// hourCounts counts rows lo to hi-1 per hour, in runs (times mostly grow).
func (c *chunk) hourCounts(lo, hi int) []hourCount {
	var out []hourCount
	cur, n := int64(0), 0
	for i := lo; i < hi; i++ {
		ms := c.created.at(i)
		if n > 0 && ms >= cur && ms < cur+hourMs {
			n++
			continue
		}
		if n > 0 {
			out = append(out, hourCount{cur, n})
		}
		cur, n = floorDiv(ms, hourMs)*hourMs, 1
	}
	if n > 0 {
		out = append(out, hourCount{cur, n})
	}
	return slices.Clip(out)
}

// bytes returns about the heap bytes c's columns take: its arrays'
// capacities, or for the chunk being filled (in the builder's arrays)
// about what it will take once sealed.
func (c *chunk) bytes() int64 {
	if !c.sealed {
		return int64(40*c.n) + int64(unsafe.Sizeof(*c))
	}
	n := 4*cap(c.seqs) + 4*cap(c.off) + 4*cap(c.created.rel) + 8*cap(c.created.wide) +
		4*cap(c.exec.ns) + 16*cap(c.exec.side) + cap(c.flags) +
		2*cap(c.xrows) + int(unsafe.Sizeof(extra{}))*cap(c.extras) + 16*cap(c.hours) + int(unsafe.Sizeof(*c))
	for k := range c.d {
		d := &c.d[k]
		n += 4*cap(d.vals) + cap(d.u8) + 2*cap(d.u16) + 2*cap(d.counts)
	}
	return int64(n)
}

// IndexBytes returns about the heap bytes the in-memory index takes: its
// columns, and its dictionary's strings with their slot and map entry.
// The server sizes the Go memory limit from it (see httpapi/app).
func (s *Store) IndexBytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	x := s.idx
	n := x.dict.bytes + 64*int64(len(x.dict.strs))
	for _, c := range x.chunks {
		n += c.bytes()
	}
	return n
}
