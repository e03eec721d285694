package logstore

import (
	"math"
	"math/bits"
	"slices"
	"sort"
)

// foreignIDs holds the caller-supplied ids of the index (the rows with
// flagForeignID, such as the logs `strongbox import pocketbase` brings with
// their PocketBase ids) in about 23 bytes an id (8 of sequence number, 10 of
// packed id, 4 of position in byID and a bit over 1 of filter), where two Go
// maps (id → seq and back) took some 110:
//
//   - seqs, lo and hi are parallel, in sequence order (rows are added in
//     ascending sequence numbers, and the load appends the partial indexes
//     of later segments): seq → id is a binary search over seqs;
//   - byID orders the positions 0..len(byID)-1 by packed id (then by
//     position); the positions after them, the tail, are the ids added
//     since, scanned linearly. When the tail outgrows tailMax it is sorted
//     and merged into byID.
//   - dir, from dirMin ids on, holds for each value h of packedID.hi the
//     first index of byID whose hi is not below h: a search of byID, whose
//     steps read ids at random and miss the CPU cache, is then a search of
//     one bucket (a few dozen ids at a million random ids, each of the
//     36^3 values of their first 3 characters as likely).
//   - filter, a Bloom filter of every id (about a byte an id), answers most
//     lookups of an id that is not there (every add makes one) without
//     searching.
type foreignIDs struct {
	seqs   []int64
	lo     []uint64 // packedID.lo of each row
	hi     []uint16 // packedID.hi of each row
	byID   []uint32
	dir    []uint32 // nil, or numHi+2 entries (the last two len(byID))
	filter []uint64
}

const numHi = 46656 // 36^3: the values of packedID.hi

// dirMin is the number of ids from which dir is kept (tests lower it).
var dirMin = 1 << 16

// packedID is an id of 15 characters of [a-z0-9] as two base-36 numbers:
// hi is its first 3 characters (< 36^3 = 46,656) and lo its last 12 (< 36^12,
// about 4.7e18), so packing is lossless and (hi, lo) orders packed ids as
// their strings.
type packedID struct {
	lo uint64
	hi uint16
}

const hiChars = 3

// packID packs id; ok is false when id is not 15 characters of [a-z0-9].
func packID[S ~string | ~[]byte](id S) (p packedID, ok bool) {
	if len(id) != idLen {
		return packedID{}, false
	}
	for i := 0; i < idLen; i++ {
		d := digit36(id[i])
		if d < 0 {
			return packedID{}, false
		}
		if i < hiChars {
			p.hi = p.hi*36 + uint16(d)
		} else {
			p.lo = p.lo*36 + uint64(d)
		}
	}
	return p, true
}

// unpack returns the id p packs.
func (p packedID) unpack() [idLen]byte {
	var id [idLen]byte
	lo, hi := p.lo, p.hi
	for i := idLen - 1; i >= hiChars; i-- {
		id[i] = digits36[lo%36]
		lo /= 36
	}
	for i := hiChars - 1; i >= 0; i-- {
		id[i] = digits36[hi%36]
		hi /= 36
	}
	return id
}

func (p packedID) compare(q packedID) int {
	switch {
	case p.hi != q.hi:
		return int(p.hi) - int(q.hi)
	case p.lo < q.lo:
		return -1
	case p.lo > q.lo:
		return 1
	}
	return 0
}

// len returns the number of ids.
func (f *foreignIDs) len() int { return len(f.seqs) }

func (f *foreignIDs) at(pos uint32) packedID { return packedID{f.lo[pos], f.hi[pos]} }

// comparePos orders positions by packed id, then by position (the earlier
// of two rows with the same id comes first).
func (f *foreignIDs) comparePos(a, b uint32) int {
	if c := f.at(a).compare(f.at(b)); c != 0 {
		return c
	}
	return int(int64(a) - int64(b))
}

// minTail is the least bound of the tail (tests lower it).
var minTail = 4096

// tailMax is the number of ids the tail may hold before it is merged into
// byID, at n ids: merging costs O(n), so the tail grows with sqrt(n).
func tailMax(n int) int {
	return max(minTail, 4*int(math.Sqrt(float64(n))))
}

// The filter is blocked: an id sets 3 bits of one word. It is rebuilt with
// filterBits bits an id when it falls below filterMinBits.
const (
	filterBits    = 10
	filterMinBits = 6
)

// filterSlot returns the word of the filter that stands for p, and its bits.
func (f *foreignIDs) filterSlot(p packedID) (word int, mask uint64) {
	h := mix64(p.lo ^ uint64(p.hi)<<48)
	w, _ := bits.Mul64(h, uint64(len(f.filter)))
	return int(w), 1<<(h&63) | 1<<(h>>6&63) | 1<<(h>>12&63)
}

// mayHave reports whether p may be one of the ids (false: it is not).
func (f *foreignIDs) mayHave(p packedID) bool {
	if len(f.filter) == 0 {
		return false
	}
	w, m := f.filterSlot(p)
	return f.filter[w]&m == m
}

// rebuildFilter sizes the filter for the ids and fills it.
func (f *foreignIDs) rebuildFilter() {
	words := (len(f.seqs)*filterBits + 63) / 64
	if len(f.filter) != words {
		f.filter = make([]uint64, words)
	} else {
		clear(f.filter)
	}
	for i := range f.seqs {
		w, m := f.filterSlot(f.at(uint32(i)))
		f.filter[w] |= m
	}
}

// search returns the first index of byID[:n] whose id is not below p, or
// n, with dir as it stood when byID[:n] was all of byID (or later, while
// the indexes up to the answer were not moved).
func (f *foreignIDs) search(p packedID, n int) int {
	lo, hi := 0, n
	if f.dir != nil {
		hi = min(int(f.dir[p.hi+1]), n)
		lo = min(int(f.dir[p.hi]), hi)
	}
	return lo + sort.Search(hi-lo, func(j int) bool { return f.at(f.byID[lo+j]).compare(p) >= 0 })
}

// buildDir sets dir from byID, or drops it below dirMin ids.
func (f *foreignIDs) buildDir() {
	if len(f.byID) < dirMin {
		f.dir = nil
		return
	}
	if f.dir == nil {
		f.dir = make([]uint32, numHi+2)
	}
	h := 0
	for i, pos := range f.byID {
		for ; h <= int(f.hi[pos]); h++ {
			f.dir[h] = uint32(i)
		}
	}
	for ; h < len(f.dir); h++ {
		f.dir[h] = uint32(len(f.byID))
	}
}

// growDir updates dir for the sorted positions tail just merged into byID.
func (f *foreignIDs) growDir(tail []uint32) {
	if f.dir == nil {
		f.buildDir()
		return
	}
	j := 0
	for h := range f.dir {
		for j < len(tail) && int(f.hi[tail[j]]) < h {
			j++
		}
		f.dir[h] += uint32(j)
	}
}

// pos returns the position of the first row with id p.
func (f *foreignIDs) pos(p packedID) (int, bool) {
	if !f.mayHave(p) {
		return 0, false
	}
	i := f.search(p, len(f.byID))
	if i < len(f.byID) && f.at(f.byID[i]) == p {
		return int(f.byID[i]), true
	}
	for i := len(f.byID); i < len(f.seqs); i++ {
		if f.lo[i] == p.lo && f.hi[i] == p.hi {
			return i, true
		}
	}
	return 0, false
}

// seqOf returns the sequence number of the (first) row with the given id.
func (f *foreignIDs) seqOf(id string) (int64, bool) {
	p, ok := packID(id)
	if !ok {
		return 0, false
	}
	i, ok := f.pos(p)
	if !ok {
		return 0, false
	}
	return f.seqs[i], true
}

// idOf returns the id of the row with sequence number seq.
func (f *foreignIDs) idOf(seq int64) ([idLen]byte, bool) {
	n := len(f.seqs)
	if n == 0 || seq < f.seqs[0] || seq > f.seqs[n-1] {
		return [idLen]byte{}, false
	}
	// The seqs are distinct and ascending, so seq is at most seq-seqs[0]
	// rows from the first and seqs[n-1]-seq from the last: in a store of
	// imported logs only (consecutive seqs) that leaves one row to look at.
	lo := max(0, n-1-int(min(f.seqs[n-1]-seq, int64(n))))
	hi := min(n, int(min(seq-f.seqs[0], int64(n)))+1)
	i, ok := slices.BinarySearch(f.seqs[lo:hi], seq)
	if !ok {
		return [idLen]byte{}, false
	}
	return f.at(uint32(lo + i)).unpack(), true
}

// add adds the id of the row with sequence number seq, which must be above
// every row's. It reports false, adding nothing, when id is not valid, is
// taken, or seq is out of order.
func (f *foreignIDs) add(seq int64, id []byte) bool {
	p, ok := packID(id)
	n := len(f.seqs)
	if !ok || (n > 0 && seq <= f.seqs[n-1]) || n == math.MaxUint32 {
		return false
	}
	if _, dup := f.pos(p); dup {
		return false
	}
	f.seqs = append(f.seqs, seq)
	f.lo = append(f.lo, p.lo)
	f.hi = append(f.hi, p.hi)
	if n+1-len(f.byID) > tailMax(n+1) {
		f.mergeTail()
	}
	if (n+1)*filterMinBits > len(f.filter)*64 {
		f.rebuildFilter()
	} else {
		w, m := f.filterSlot(p)
		f.filter[w] |= m
	}
	return true
}

// mergeTail sorts the tail and merges it into byID: from the largest tail
// id down, the ids of byID above it move up in one copy, so a merge costs a
// binary search per tail id and one pass of memmove.
func (f *foreignIDs) mergeTail() {
	n0, n := len(f.byID), len(f.seqs)
	tail := make([]uint32, n-n0)
	for i := range tail {
		tail[i] = uint32(n0 + i)
	}
	slices.SortFunc(tail, f.comparePos)
	f.byID = slices.Grow(f.byID, len(tail))[:n]
	end, w := n0, n // byID[:end] not yet placed; byID[w:] placed
	for k := len(tail) - 1; k >= 0; k-- {
		t := tail[k]
		// The ids of byID equal to t's stay before it (their positions are
		// lower): t goes after them, before the first id above its own.
		i := f.search(f.at(t).next(), end)
		w -= end - i
		copy(f.byID[w:], f.byID[i:end])
		end = i
		w--
		f.byID[w] = t
	}
	f.growDir(tail)
}

// next returns the packed id just above p (past the largest id, one no id
// equals).
func (p packedID) next() packedID {
	if p.lo == maxLo {
		return packedID{hi: p.hi + 1}
	}
	return packedID{lo: p.lo + 1, hi: p.hi}
}

const maxLo = 4738381338321616895 // 36^12 - 1

// sortAll puts every position in byID, sorted afresh, and rebuilds the
// filter.
func (f *foreignIDs) sortAll() {
	n := len(f.seqs)
	f.byID = slices.Grow(f.byID[:0], n)[:n]
	for i := range f.byID {
		f.byID[i] = uint32(i)
	}
	slices.SortFunc(f.byID, f.comparePos)
	f.buildDir()
	f.rebuildFilter()
}

// appendAll appends the ids of ys, of later rows in order, to f (the merge
// of the load's partial indexes): two rows with the same id keep both, and
// the id finds the first, as before. ys are emptied.
func (f *foreignIDs) appendAll(ys []*foreignIDs) {
	n := f.len()
	for _, y := range ys {
		n += y.len()
	}
	if n == f.len() {
		return
	}
	seqs, lo, hi := make([]int64, 0, n), make([]uint64, 0, n), make([]uint16, 0, n)
	for _, y := range append([]*foreignIDs{f}, ys...) {
		seqs, lo, hi = append(seqs, y.seqs...), append(lo, y.lo...), append(hi, y.hi...)
		*y = foreignIDs{}
	}
	*f = foreignIDs{seqs: seqs, lo: lo, hi: hi, byID: make([]uint32, n)}
	f.sortAll()
}

// keep removes the ids of the rows for which live is false (retention drops
// whole segments), and shrinks the arrays when they are mostly empty.
func (f *foreignIDs) keep(live func(seq int64) bool) {
	w := 0
	for i, seq := range f.seqs {
		if live(seq) {
			f.seqs[w], f.lo[w], f.hi[w] = seq, f.lo[i], f.hi[i]
			w++
		}
	}
	if w == len(f.seqs) {
		return
	}
	if w < cap(f.seqs)/2 {
		f.seqs, f.lo, f.hi = slices.Clone(f.seqs[:w]), slices.Clone(f.lo[:w]), slices.Clone(f.hi[:w])
		f.byID = nil
	} else {
		f.seqs, f.lo, f.hi = f.seqs[:w], f.lo[:w], f.hi[:w]
	}
	f.sortAll()
}
