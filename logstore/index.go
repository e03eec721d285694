package logstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"sync"
)

// The in-memory index holds, column by column, what filtering, sorting and
// stats need: about 28 bytes per request log, the dictionary of distinct
// strings included (narrow columns, see column.go). Full entries stay on disk; the index keeps each row's frame
// offset so that the rows of a returned page are read back from their
// segment.

const (
	chunkBits = 13
	chunkSize = 1 << chunkBits // rows per chunk
)

// tuning is what tests shrink so that few rows make many chunks and small
// scans split over workers (Options.tune); a Store's index keeps its own,
// so that such tests run in parallel with the others.
type tuning struct {
	chunkRows          int // rows a chunk is filled to
	minChunksPerWorker int // keeps small scans on one goroutine
}

// defaultTuning is every Store's tuning outside such tests.
var defaultTuning = tuning{chunkRows: chunkSize, minChunksPerWorker: 8}

// orDefault returns t, or defaultTuning for its zero fields.
func (t tuning) orDefault() tuning {
	if t.chunkRows <= 0 {
		t.chunkRows = defaultTuning.chunkRows
	}
	if t.minChunksPerWorker <= 0 {
		t.minChunksPerWorker = defaultTuning.minChunksPerWorker
	}
	return t
}

// rowOther marks a row that is not a request log, in its flags; the other
// bits are the record flags (flagForeignID, flagAuthID, flagError, and
// flagDerivedMsg or flagUnescMsg for a message that is not interned).
const rowOther byte = 1 << 7

// chunk holds up to chunkSize consecutive rows of one segment, column by
// column (a filter on status reads a byte per row, not a whole row), in
// the narrow encodings of column.go. The last chunk of the index is filled
// in the arrays of the index's chunkBuilder; every other one is sealed:
// compacted once, with summaries that let a query skip it or count its
// matches without visiting its rows.
type chunk struct {
	seg    *segment
	n      int   // rows used
	seq0   int64 // sequence number of row 0
	others int   // rows that are not request logs
	sealed bool

	seqs    []uint32 // sequence number - seq0; nil while row i has seq0+i
	off     []uint32 // frame offset in the segment file - offBase (offAt)
	off3    []byte   // sealed: the same in 3 bytes, when that fits
	offBase uint32   // 0 while the chunk fills
	created timeCol
	exec    execCol
	d       [numDcols]dcol // string columns (dictionary ids, by strCol), level, status, flags

	// Request logs with an extra (authId, error), in row order.
	xrows  []uint16
	extras []extra
	attrs  map[uint16]map[string]any // other logs: the decoded data, by row

	minCreated, maxCreated int64
	hours                  []hourCount // sealed: rows per hour
}

// strCol numbers the dictionary-encoded string columns of a chunk.
type strCol int

const (
	colMessage strCol = iota
	colMethod
	colAuth
	colURL
	colReferer
	colRemoteIP
	colUserIP
	colUserAgent
	numStrCols
)

// The other columns of distinct values, after the string columns in
// chunk.d.
const (
	dLevel = int(numStrCols) + iota
	dStatus
	dFlags // the record flags and rowOther
	numDcols
)

func (c *chunk) createdAt(i int) int64          { return c.created.at(i) }
func (c *chunk) levelAt(i int) int32            { return int32(c.d[dLevel].at(i)) }
func (c *chunk) statusAt(i int) int32           { return int32(c.d[dStatus].at(i)) }
func (c *chunk) flagsAt(i int) uint8            { return uint8(c.d[dFlags].at(i)) }
func (c *chunk) execAt(i int) float64           { return c.exec.at(i) }
func (c *chunk) strAt(col strCol, i int) uint32 { return c.d[col].at(i) }

// rowSeq returns the sequence number (rowid) of row i.
func (c *chunk) rowSeq(i int) int64 {
	if c.seqs == nil {
		return c.seq0 + int64(i)
	}
	return c.seq0 + int64(c.seqs[i])
}

// offAt returns the frame offset of row i.
func (c *chunk) offAt(i int) uint32 {
	if c.off3 != nil {
		return c.offBase + u24(c.off3, i)
	}
	return c.offBase + c.off[i]
}

// extra holds the rarer parts of a request log: its authId and error.
type extra struct {
	authID  uint32 // dictionary id
	errMsg  uint32 // dictionary id
	details uint32 // dictionary id of the details JSON text
}

// row addresses one row of the index; it is the T of the compiled filters.
type row struct {
	c *chunk
	i int
}

func (r row) seq() int64 { return r.c.rowSeq(r.i) }

func (r row) extra() *extra {
	c := r.c
	if j, ok := slices.BinarySearch(c.xrows, uint16(r.i)); ok {
		return &c.extras[j]
	}
	return nil
}

// dict interns the strings of the index: every distinct string is stored
// once and columns hold its id (0 is ""). Lookups go through one map per
// domain (see colDomain) rather than one big map: the small domains
// (methods, auth collections, referers, user agents) then stay in the CPU
// cache, which makes indexing at Open several times faster.
//
// The derived message of a request log ("METHOD URL") is not interned: the
// row's flags say how to derive it from the method and url columns, so a
// request does not pay for its url twice.
type dict struct {
	strs  []string
	dom   [numDomains]map[string]uint32
	bytes int64 // the strings' bytes
}

// domain is a lookup domain of the dictionary.
type domain uint8

const (
	domMessage domain = iota
	domMethod
	domAuth
	domURL
	domReferer
	domIP
	domUserAgent
	domText // authId, error, details
	numDomains
)

// colDomain is the lookup domain of each string column.
var colDomain = [numStrCols]domain{
	colMessage: domMessage, colMethod: domMethod, colAuth: domAuth, colURL: domURL,
	colReferer: domReferer, colRemoteIP: domIP, colUserIP: domIP, colUserAgent: domUserAgent,
}

func newDict() dict {
	d := dict{strs: []string{""}}
	for i := range d.dom {
		d.dom[i] = map[string]uint32{}
	}
	return d
}

func (d *dict) intern(dom domain, b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	m := d.dom[dom]
	if id, ok := m[string(b)]; ok { // no allocation for the lookup
		return id
	}
	s := string(b)
	id := uint32(len(d.strs))
	d.strs = append(d.strs, s)
	d.bytes += int64(len(s))
	m[s] = id
	return id
}

// internString is intern for a string that may be kept as it is.
func (d *dict) internString(dom domain, s string) uint32 {
	if s == "" {
		return 0
	}
	m := d.dom[dom]
	if id, ok := m[s]; ok {
		return id
	}
	id := uint32(len(d.strs))
	d.strs = append(d.strs, s)
	d.bytes += int64(len(s))
	m[s] = id
	return id
}

// Kinds of attribute values seen in other logs (index.attrKinds).
const (
	seenNumber uint8 = 1 << iota
	seenString
	seenArray
	seenObject
)

// index is the in-memory index of all segments. The Store guards it with
// its RWMutex.
type index struct {
	dict   dict
	side   *sideDict // instead of dict in a partial index loaded from a sidecar
	chunks []*chunk  // in row (sequence) order
	bld    *chunkBuilder

	// foreign holds the caller-supplied ids (foreign.go).
	foreign foreignIDs

	// attrKinds records, per top-level data key of other logs, the kinds of
	// value seen, so that data.status can still be bound as a plain number
	// column when no other log has a non-number "status".
	attrKinds map[string]uint8

	rows   int
	others int // rows that are not request logs

	// The memo tables of filter parts and the counts of filters' matches
	// per chunk, kept for later queries (memo.go).
	memoMu sync.Mutex
	memos  map[string]*memoTable
	counts map[string]*chunkCounts

	tune tuning
}

func newIndex(tune tuning) *index {
	return &index{
		dict:      newDict(),
		attrKinds: map[string]uint8{},
		tune:      tune.orDefault(),
	}
}

var errOutOfOrder = errors.New("logstore: record out of sequence")

// add indexes the record r stored at offset off of segment seg.
func (x *index) add(seg *segment, off int64, r *record) error {
	if r.seq <= seg.lastSeq || r.seq < seg.firstSeq || off > math.MaxUint32 {
		return errOutOfOrder
	}
	var attrs map[string]any
	if r.kind == kindOther && len(r.attrs) > 0 {
		if err := json.Unmarshal(r.attrs, &attrs); err != nil {
			return errBadRecord
		}
	}
	if r.flags&flagForeignID != 0 && !x.foreign.add(r.seq, r.id) {
		return errBadRecord // a duplicate
	}
	c := x.rowChunk(seg, r.seq)
	i := c.n
	c.n++
	x.rows++
	seg.rows++
	seg.lastSeq = r.seq
	if seg.rows == 1 || r.created > seg.maxCreated {
		seg.maxCreated = r.created
	}
	if c.seqs != nil || r.seq != c.seq0+int64(i) {
		if c.seqs == nil {
			c.seqs = make([]uint32, i, chunkSize)
			for j := range c.seqs {
				c.seqs[j] = uint32(j)
			}
		}
		c.seqs = append(c.seqs, uint32(r.seq-c.seq0))
	}
	if i == 0 || r.created < c.minCreated {
		c.minCreated = r.created
	}
	if i == 0 || r.created > c.maxCreated {
		c.maxCreated = r.created
	}
	c.off = append(c.off, uint32(off))
	c.created.add(i, r.created)
	flags := r.flags
	if r.kind == kindOther {
		flags |= rowOther
	}
	var vals [numDcols]uint32
	vals[dLevel], vals[dFlags] = uint32(r.level), uint32(flags)
	ex, hasEx := x.addStrings(r, &vals)
	if r.kind == kindOther {
		c.others++
		x.others++
		c.exec.add(i, 0)
		if attrs != nil {
			if c.attrs == nil {
				c.attrs = map[uint16]map[string]any{}
			}
			c.attrs[uint16(i)] = attrs
			for k, v := range attrs {
				x.attrKinds[k] |= kindBit(v)
			}
		}
	} else {
		vals[dStatus] = uint32(r.status)
		c.exec.add(i, r.execTime)
	}
	for g := range x.bld.groups {
		x.bld.groups[g].add(c, &vals)
	}
	if hasEx {
		c.xrows = append(c.xrows, uint16(i))
		c.extras = append(c.extras, ex)
	}
	return nil
}

// rowChunk returns the chunk the row with sequence number seq of seg goes
// to: the last one, or a new one (sealing the last) when that is full,
// sealed, of another segment or too far behind.
func (x *index) rowChunk(seg *segment, seq int64) *chunk {
	var c *chunk
	if n := len(x.chunks); n > 0 {
		c = x.chunks[n-1]
	}
	if c != nil && !c.sealed && c.seg == seg && c.n < x.tune.chunkRows && seq-c.seq0 <= math.MaxUint32 {
		return c
	}
	if c != nil {
		c.seal()
	}
	if x.bld == nil {
		x.bld = new(chunkBuilder)
	}
	c = &chunk{seg: seg, seq0: seq}
	x.bld.start(c)
	x.chunks = append(x.chunks, c)
	return c
}

// addStrings sets the dictionary ids of record r's strings in vals and
// returns the extra of a request log that has one.
func (x *index) addStrings(r *record, vals *[numDcols]uint32) (extra, bool) {
	d := &x.dict
	vals[colMessage] = d.intern(domMessage, r.message)
	if r.kind == kindOther {
		return extra{}, false
	}
	vals[colMethod] = d.intern(domMethod, r.method)
	vals[colURL] = d.intern(domURL, r.url)
	vals[colAuth] = d.intern(domAuth, r.auth)
	vals[colReferer] = d.intern(domReferer, r.referer)
	ip := d.intern(domIP, r.remoteIP)
	vals[colRemoteIP] = ip
	if !bytes.Equal(r.userIP, r.remoteIP) {
		ip = d.intern(domIP, r.userIP)
	}
	vals[colUserIP] = ip
	vals[colUserAgent] = d.intern(domUserAgent, r.userAgent)
	// A derived message (flagDerivedMsg, flagUnescMsg, kept in the row's
	// flags) is not interned: x.message derives it when a query needs it.
	if r.flags&(flagAuthID|flagError) != 0 {
		return extra{
			authID:  d.intern(domText, r.authID),
			errMsg:  d.intern(domText, r.errMsg),
			details: d.intern(domText, r.details),
		}, true
	}
	return extra{}, false
}

// sealAll seals every chunk (at Open: rows added later start a chunk).
func (x *index) sealAll() {
	for _, c := range x.chunks {
		c.seal()
	}
}

func kindBit(v any) uint8 {
	switch v.(type) {
	case float64, bool:
		return seenNumber
	case string:
		return seenString
	case []any:
		return seenArray
	case map[string]any:
		return seenObject
	}
	return 0
}

// merge appends the rows of the partial indexes ys, of later segments in
// order, to x: their strings (from their dictionaries, or from the
// sidecar's bytes for one loaded from a sidecar) are interned into x's dictionary and their
// chunks' tables of values remapped (in parallel).
func (x *index) merge(ys []*index) {
	remaps := make([][]uint32, len(ys))
	for k, y := range ys {
		if sd := y.side; sd != nil {
			remap := make([]uint32, len(sd.strs))
			for id := 1; id < len(sd.strs); id++ {
				remap[id] = x.dict.intern(sd.doms[id], sd.strs[id])
			}
			remaps[k], y.side = remap, nil
			continue
		}
		remap := make([]uint32, len(y.dict.strs))
		for dom, m := range y.dict.dom {
			for str, id := range m {
				remap[id] = x.dict.internString(domain(dom), str)
			}
		}
		remaps[k] = remap
	}
	var wg sync.WaitGroup
	for k, y := range ys {
		remap := remaps[k]
		wg.Go(func() {
			for _, c := range y.chunks {
				c.remap(func(_ domain, id uint32) uint32 { return remap[id] })
			}
		})
	}
	wg.Wait()
	foreign := make([]*foreignIDs, len(ys))
	for k, y := range ys {
		foreign[k] = &y.foreign
	}
	x.foreign.appendAll(foreign)
	for _, y := range ys {
		x.chunks = append(x.chunks, y.chunks...)
		x.rows += y.rows
		x.others += y.others
		for k, v := range y.attrKinds {
			x.attrKinds[k] |= v
		}
	}
}

// remap replaces the dictionary ids of c's string columns and extras by
// fn(domain of the id, id).
func (c *chunk) remap(fn func(dom domain, id uint32) uint32) {
	for k := range numStrCols {
		vals, dom := c.d[k].vals, colDomain[k]
		for j, id := range vals {
			vals[j] = fn(dom, id)
		}
	}
	for j := range c.extras {
		e := &c.extras[j]
		e.authID, e.errMsg, e.details = fn(domText, e.authID), fn(domText, e.errMsg), fn(domText, e.details)
	}
}

// segments returns the segments of x's chunks, in order.
func (x *index) segments() []*segment {
	var segs []*segment
	for _, c := range x.chunks {
		if len(segs) == 0 || segs[len(segs)-1] != c.seg {
			segs = append(segs, c.seg)
		}
	}
	return segs
}

// drop removes the rows of the given segments from the index.
func (x *index) drop(gone map[*segment]bool) {
	x.chunks = slices.DeleteFunc(x.chunks, func(c *chunk) bool {
		if gone[c.seg] {
			x.rows -= c.n
			x.others -= c.others
			return true
		}
		return false
	})
	x.forgetMemos() // they refer to the dropped chunks
	x.foreign.keep(func(seq int64) bool {
		_, ok := x.find(seq)
		return ok
	})
}

// find returns the row with sequence number seq.
func (x *index) find(seq int64) (row, bool) {
	ci, _ := slices.BinarySearchFunc(x.chunks, seq, func(c *chunk, seq int64) int {
		switch {
		case c.seq0 > seq:
			return 1
		case c.seq0 == seq:
			return 0
		}
		return -1
	})
	// ci is the first chunk with seq0 >= seq: the row is in it (when seq0
	// equals seq) or in the chunk before.
	if ci < len(x.chunks) && x.chunks[ci].seq0 == seq {
		return row{x.chunks[ci], 0}, true
	}
	if ci == 0 {
		return row{}, false
	}
	c := x.chunks[ci-1]
	if seq-c.seq0 > math.MaxUint32 {
		return row{}, false
	}
	d := uint32(seq - c.seq0)
	if c.seqs == nil {
		if int64(d) < int64(c.n) {
			return row{c, int(d)}, true
		}
		return row{}, false
	}
	i, ok := slices.BinarySearch(c.seqs[:c.n], d)
	if !ok {
		return row{}, false
	}
	return row{c, i}, true
}

// message returns the message of row r: interned, or derived from the
// method and url columns (allocating).
func (x *index) message(r row) string {
	c, i := r.c, r.i
	if f := c.flagsAt(i) & msgFlags; f != 0 && c.flagsAt(i)&rowOther == 0 {
		return deriveMessage(f, x.dict.strs[c.strAt(colMethod, i)], x.dict.strs[c.strAt(colURL, i)])
	}
	return x.dict.strs[c.strAt(colMessage, i)]
}

// id returns the id of row r.
func (x *index) id(r row) string {
	if r.c.flagsAt(r.i)&flagForeignID != 0 {
		if id, ok := x.foreign.idOf(r.seq()); ok {
			return string(id[:])
		}
		return ""
	}
	id := makeID(r.seq(), r.c.seg.key)
	return string(id[:])
}

// compactDict rebuilds the dictionary when most of its strings belong to
// dropped rows, remapping every string column.
func (x *index) compactDict() {
	old := x.dict.strs
	if len(old) < 1024 {
		return
	}
	used := make([]bool, len(old))
	live := 0
	mark := func(_ domain, id uint32) uint32 {
		if !used[id] {
			used[id] = true
			live++
		}
		return id
	}
	for _, c := range x.chunks {
		c.remap(mark)
	}
	if live*2 > len(old) {
		return
	}
	nd := newDict()
	remap := make([]uint32, len(old))
	move := func(dom domain, id uint32) uint32 {
		if id != 0 && remap[id] == 0 {
			remap[id] = nd.internString(dom, old[id])
		}
		return remap[id]
	}
	for _, c := range x.chunks {
		c.remap(move)
	}
	x.dict = nd
	x.forgetMemos()
	if n := len(x.chunks); n > 0 && !x.chunks[n-1].sealed {
		c := x.chunks[n-1]
		for g := range x.bld.groups {
			x.bld.groups[g].reset(c)
		}
	}
}
