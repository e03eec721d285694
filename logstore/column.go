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

// groups are the columns of distinct values that share their local ids:
// a local id names a combination of values (level, status, method, auth
// and flags of a request: a few dozen per chunk, so one byte for the five),
// and each member has the combination's value at its index in vals. The
// other columns are groups of one (the pair of IPs has nearly as many
// combinations as rows).
var groups = [...][]int{
	{dLevel, dStatus, int(colMethod), int(colAuth), dFlags},
	{int(colRemoteIP)}, {int(colUserIP)}, {int(colMessage)}, {int(colURL)}, {int(colReferer)}, {int(colUserAgent)},
}

// groupBuilder finds the local id of a combination of values of a group's
// columns in the chunk being filled: an open-addressing hash table of
// key<<16 | local id+1, where the key is the value itself for a group of
// one and a 48-bit hash of the values otherwise (a match is then checked
// against the values), with the last key looked up remembered (runs are
// common).
type groupBuilder struct {
	cols    []int
	slots   []uint64
	used    int
	lastKey uint64
	lastID  uint16
	last    bool
}

// key returns the table key of the group's values in v.
func (b *groupBuilder) key(v *[numDcols]uint32) uint64 {
	if len(b.cols) == 1 {
		return uint64(v[b.cols[0]])
	}
	h := uint64(0)
	for _, k := range b.cols {
		h = (h ^ uint64(v[k])) * 0x9E3779B97F4A7C15
	}
	return h >> 16
}

// same reports whether local id id of c has the values v.
func (b *groupBuilder) same(c *chunk, id uint16, v *[numDcols]uint32) bool {
	if len(b.cols) == 1 {
		return true // the key is the value
	}
	for _, k := range b.cols {
		if c.d[k].vals[id] != v[k] {
			return false
		}
	}
	return true
}

// id returns the local id of the group's values in v, adding them to the
// members' vals when new.
func (b *groupBuilder) id(c *chunk, v *[numDcols]uint32) uint16 {
	key := b.key(v)
	if b.last && key == b.lastKey && b.same(c, b.lastID, v) {
		return b.lastID
	}
	if 2*(b.used+1) > len(b.slots) {
		b.grow()
	}
	mask := len(b.slots) - 1
	i := int(key*0x9E3779B97F4A7C15>>33) & mask
	for ; b.slots[i] != 0; i = (i + 1) & mask {
		if s := b.slots[i]; s>>16 == key && b.same(c, uint16(s)-1, v) {
			b.lastKey, b.lastID, b.last = key, uint16(s)-1, true
			return b.lastID
		}
	}
	id := uint16(len(c.d[b.cols[0]].vals))
	for _, k := range b.cols {
		c.d[k].vals = append(c.d[k].vals, v[k])
	}
	b.slots[i] = key<<16 | uint64(id) + 1
	b.used++
	b.lastKey, b.lastID, b.last = key, id, true
	return id
}

func (b *groupBuilder) grow() {
	old := b.slots
	b.slots = make([]uint64, max(16, 2*len(old)))
	for _, s := range old {
		if s != 0 {
			b.put(s)
		}
	}
}

func (b *groupBuilder) put(s uint64) {
	mask := len(b.slots) - 1
	i := int((s>>16)*0x9E3779B97F4A7C15>>33) & mask
	for b.slots[i] != 0 {
		i = (i + 1) & mask
	}
	b.slots[i] = s
}

// reset empties b and enters the combinations of c (after its values were
// remapped).
func (b *groupBuilder) reset(c *chunk) {
	n := len(c.d[b.cols[0]].vals)
	clear(b.slots)
	if 2*n > len(b.slots) {
		b.slots = make([]uint64, 4*n)
	}
	b.used, b.last = n, false
	var v [numDcols]uint32
	for id := range n {
		for _, k := range b.cols {
			v[k] = c.d[k].vals[id]
		}
		b.put(b.key(&v)<<16 | uint64(id) + 1)
	}
}

// add sets the local id of the group's values in v for c's last row.
func (b *groupBuilder) add(c *chunk, v *[numDcols]uint32) {
	// The members' u16 are the builder's array, whole (chunkBuilder.start).
	c.d[b.cols[0]].u16[c.n-1] = b.id(c, v)
}

// seal seals the group's columns of c's n rows: they share the leader's
// local ids.
func (b *groupBuilder) seal(c *chunk, n int) {
	lead := &c.d[b.cols[0]]
	lead.seal(n)
	for _, k := range b.cols[1:] {
		d := &c.d[k]
		d.vals = slices.Clip(slices.Clone(d.vals))
		d.u8, d.u16, d.counts = lead.u8, lead.u16, lead.counts
	}
}

// timeCol holds the creation times of a chunk's rows (Unix ms): offsets
// from base while they fit in 32 bits (in 24 once sealed, when they span
// less than 4.6 hours), else the times themselves.
type timeCol struct {
	base int64
	rel  []uint32
	rel3 []byte
	wide []int64
}

func (t *timeCol) at(i int) int64 {
	switch {
	case t.rel3 != nil:
		return t.base + int64(u24(t.rel3, i))
	case t.wide != nil:
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

// seal moves the times of n rows to arrays of their own.
func (t *timeCol) seal(n int) {
	if t.wide != nil {
		t.wide = slices.Clip(t.wide)
		return
	}
	lo := slices.Min(t.rel[:n])
	t.base += int64(lo)
	t.rel3, t.rel = pack24(t.rel[:n], lo)
}

// pack24 returns vals less lo in 3 bytes each when they all fit, else in
// a copy of their own.
func pack24(vals []uint32, lo uint32) ([]byte, []uint32) {
	if slices.Max(vals)-lo >= 1<<24 {
		out := slices.Clone(vals)
		for i := range out {
			out[i] -= lo
		}
		return nil, out
	}
	b := make([]byte, 3*len(vals))
	for i, v := range vals {
		v -= lo
		b[3*i], b[3*i+1], b[3*i+2] = byte(v), byte(v>>8), byte(v>>16)
	}
	return b, nil
}

// u24 returns the i-th 3-byte value of b.
func u24(b []byte, i int) uint32 {
	b = b[3*i : 3*i+3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
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
	groups [len(groups)]groupBuilder
	ids    [len(groups)][chunkSize]uint16
	vals   [numDcols][chunkSize]uint32
	off    [chunkSize]uint32
	rel    [chunkSize]uint32
	ns     [chunkSize]uint32
}

// start makes c a new chunk filled in b's arrays.
func (b *chunkBuilder) start(c *chunk) {
	for g := range groups {
		gb := &b.groups[g]
		gb.cols = groups[g]
		clear(gb.slots)
		gb.used, gb.last = 0, false
		for _, k := range gb.cols {
			c.d[k].u16 = b.ids[g][:] // rows past c.n are not read
			c.d[k].vals = b.vals[k][:0]
		}
	}
	c.off = b.off[:0]
	c.created.rel = b.rel[:0]
	c.exec.ns = b.ns[:0]
}

// seal compacts c's columns into arrays of their own, exactly sized, and
// computes its summaries.
func (c *chunk) seal() {
	if c.sealed {
		return
	}
	c.sealed = true
	n := c.n
	var b groupBuilder
	for _, g := range groups {
		b.cols = g
		b.seal(c, n)
	}
	c.offBase = slices.Min(c.off[:n])
	c.off3, c.off = pack24(c.off[:n], c.offBase)
	c.created.seal(n)
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
	n := 4*cap(c.seqs) + 4*cap(c.off) + cap(c.off3) + 4*cap(c.created.rel) + cap(c.created.rel3) +
		8*cap(c.created.wide) + 4*cap(c.exec.ns) + 16*cap(c.exec.side) +
		2*cap(c.xrows) + int(unsafe.Sizeof(extra{}))*cap(c.extras) + 16*cap(c.hours) + int(unsafe.Sizeof(*c)) +
		64*len(c.attrs)
	for _, g := range groups {
		d := &c.d[g[0]] // the members share its local ids
		n += cap(d.u8) + 2*cap(d.u16) + 2*cap(d.counts)
		for _, k := range g {
			n += 4 * cap(c.d[k].vals)
		}
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
