package logstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"sync"
)

// The in-memory index holds, column by column, what filtering, sorting and
// stats need: about 70 bytes per request log plus the dictionary of distinct
// strings. Full entries stay on disk; the index keeps each row's frame
// offset so that the rows of a returned page are read back from their
// segment.

const (
	chunkBits = 13
	chunkSize = 1 << chunkBits // rows per chunk
)

// chunkRows is the number of rows a chunk is filled to: chunkSize, less in
// tests that want many chunks from few rows.
var chunkRows = chunkSize

// rowOther marks a row that is not a request log, in chunk.flags; the other
// bits are the record flags (flagForeignID, flagAuthID, flagError, and
// flagDerivedMsg or flagUnescMsg for a message that is not interned).
const rowOther byte = 1 << 7

// chunk holds up to chunkSize consecutive rows of one segment. Fixed-size
// arrays keep each column contiguous (a filter on status reads 4 bytes per
// row, not a whole row) and cost no slice headers or growth slack.
type chunk struct {
	seg    *segment
	n      int   // rows used
	seq0   int64 // sequence number of row 0
	others int   // rows that are not request logs

	seq      [chunkSize]uint32 // sequence number - seq0
	off      [chunkSize]uint32 // frame offset in the segment file
	created  [chunkSize]int64  // Unix ms
	execTime [chunkSize]float64
	level    [chunkSize]int32
	status   [chunkSize]int32
	str      [numStrCols][chunkSize]uint32 // dictionary ids, by strCol
	ext      [chunkSize]uint32             // 1 + index into seg.extras; 0 = none
	flags    [chunkSize]uint8
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

// rowSeq returns the sequence number (rowid) of row i.
func (c *chunk) rowSeq(i int) int64 { return c.seq0 + int64(c.seq[i]) }

// extra holds the rarer parts of a row: the authId and error of a request
// log, or the attributes of another log.
type extra struct {
	authID  uint32         // dictionary id
	errMsg  uint32         // dictionary id
	details uint32         // dictionary id of the details JSON text
	attrs   map[string]any // other logs: the decoded data object
}

// row addresses one row of the index; it is the T of the compiled filters.
type row struct {
	c *chunk
	i int
}

func (r row) seq() int64 { return r.c.rowSeq(r.i) }

func (r row) extra() *extra {
	if x := r.c.ext[r.i]; x != 0 {
		return &r.c.seg.extras[x-1]
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
	strs []string
	dom  [numDomains]map[string]uint32
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
	chunks []*chunk // in row (sequence) order

	// foreign maps caller-supplied ids to sequence numbers, and back.
	foreign      map[string]int64
	foreignBySeq map[int64]string

	// attrKinds records, per top-level data key of other logs, the kinds of
	// value seen, so that data.status can still be bound as a plain number
	// column when no other log has a non-number "status".
	attrKinds map[string]uint8

	rows   int
	others int // rows that are not request logs
}

func newIndex() *index {
	return &index{
		dict:         newDict(),
		foreign:      map[string]int64{},
		foreignBySeq: map[int64]string{},
		attrKinds:    map[string]uint8{},
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
	if r.flags&flagForeignID != 0 {
		id := string(r.id)
		if _, dup := x.foreign[id]; dup {
			return errBadRecord
		}
		x.foreign[id] = r.seq
		x.foreignBySeq[r.seq] = id
	}
	var c *chunk
	if n := len(x.chunks); n > 0 {
		c = x.chunks[n-1]
	}
	if c == nil || c.seg != seg || c.n == chunkRows || r.seq-c.seq0 > math.MaxUint32 {
		c = &chunk{seg: seg, seq0: r.seq}
		x.chunks = append(x.chunks, c)
	}
	i := c.n
	c.n++
	x.rows++
	seg.rows++
	seg.lastSeq = r.seq
	if seg.rows == 1 || r.created > seg.maxCreated {
		seg.maxCreated = r.created
	}
	c.seq[i] = uint32(r.seq - c.seq0)
	c.off[i] = uint32(off)
	c.created[i] = r.created
	c.level[i] = r.level
	c.flags[i] = r.flags
	d := &x.dict
	if r.kind == kindOther {
		c.flags[i] |= rowOther
		c.others++
		x.others++
		c.status[i], c.execTime[i] = 0, 0
		for k := range c.str {
			c.str[k][i] = 0
		}
		c.str[colMessage][i] = d.intern(domMessage, r.message)
		c.ext[i] = 0
		if attrs != nil {
			seg.extras = append(seg.extras, extra{attrs: attrs})
			c.ext[i] = uint32(len(seg.extras))
			for k, v := range attrs {
				x.attrKinds[k] |= kindBit(v)
			}
		}
		return nil
	}
	c.status[i] = r.status
	c.execTime[i] = r.execTime
	method, url := d.intern(domMethod, r.method), d.intern(domURL, r.url)
	c.str[colMethod][i] = method
	c.str[colURL][i] = url
	c.str[colAuth][i] = d.intern(domAuth, r.auth)
	c.str[colReferer][i] = d.intern(domReferer, r.referer)
	ip := d.intern(domIP, r.remoteIP)
	c.str[colRemoteIP][i] = ip
	if !bytes.Equal(r.userIP, r.remoteIP) {
		ip = d.intern(domIP, r.userIP)
	}
	c.str[colUserIP][i] = ip
	c.str[colUserAgent][i] = d.intern(domUserAgent, r.userAgent)
	// A derived message (flagDerivedMsg, flagUnescMsg, kept in the row's
	// flags) is not interned: x.message derives it when a query needs it.
	c.str[colMessage][i] = d.intern(domMessage, r.message)
	c.ext[i] = 0
	if r.flags&(flagAuthID|flagError) != 0 {
		seg.extras = append(seg.extras, extra{
			authID:  d.intern(domText, r.authID),
			errMsg:  d.intern(domText, r.errMsg),
			details: d.intern(domText, r.details),
		})
		c.ext[i] = uint32(len(seg.extras))
	}
	return nil
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
// order, to x: their strings are interned into x's dictionary and their
// columns remapped (in parallel).
func (x *index) merge(ys []*index) {
	remaps := make([][]uint32, len(ys))
	for k, y := range ys {
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
				for k := range c.str {
					col := c.str[k][:c.n]
					for i, id := range col {
						col[i] = remap[id]
					}
				}
			}
			for _, s := range y.segments() {
				for i := range s.extras {
					e := &s.extras[i]
					e.authID, e.errMsg, e.details = remap[e.authID], remap[e.errMsg], remap[e.details]
				}
			}
		})
	}
	wg.Wait()
	for _, y := range ys {
		x.chunks = append(x.chunks, y.chunks...)
		x.rows += y.rows
		x.others += y.others
		for id, seq := range y.foreign {
			if _, dup := x.foreign[id]; !dup {
				x.foreign[id] = seq
			}
		}
		maps.Copy(x.foreignBySeq, y.foreignBySeq)
		for k, v := range y.attrKinds {
			x.attrKinds[k] |= v
		}
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
	for seq, id := range x.foreignBySeq {
		if _, ok := x.find(seq); !ok {
			delete(x.foreignBySeq, seq)
			delete(x.foreign, id)
		}
	}
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
	i, ok := slices.BinarySearch(c.seq[:c.n], d)
	if !ok {
		return row{}, false
	}
	return row{c, i}, true
}

// message returns the message of row r: interned, or derived from the
// method and url columns (allocating).
func (x *index) message(r row) string {
	c, i := r.c, r.i
	if f := c.flags[i] & msgFlags; f != 0 && c.flags[i]&rowOther == 0 {
		return deriveMessage(f, x.dict.strs[c.str[colMethod][i]], x.dict.strs[c.str[colURL][i]])
	}
	return x.dict.strs[c.str[colMessage][i]]
}

// id returns the id of row r.
func (x *index) id(r row) string {
	if r.c.flags[r.i]&flagForeignID != 0 {
		return x.foreignBySeq[r.seq()]
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
	mark := func(id uint32) {
		if !used[id] {
			used[id] = true
			live++
		}
	}
	for _, c := range x.chunks {
		for k := range c.str {
			for _, id := range c.str[k][:c.n] {
				mark(id)
			}
		}
	}
	segs := x.segments()
	for _, s := range segs {
		for _, e := range s.extras {
			mark(e.authID)
			mark(e.errMsg)
			mark(e.details)
		}
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
		for k := range c.str {
			col, dom := c.str[k][:c.n], colDomain[k]
			for i, id := range col {
				col[i] = move(dom, id)
			}
		}
	}
	for _, s := range segs {
		for i := range s.extras {
			e := &s.extras[i]
			e.authID, e.errMsg, e.details = move(domText, e.authID), move(domText, e.errMsg), move(domText, e.details)
		}
	}
	x.dict = nd
}
