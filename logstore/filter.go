package logstore

import (
	"fmt"
	"math"
	"slices"
	"time"

	"strongbox/filterlang"
)

// filter is a compiled filter: the filterlang predicate over index rows,
// split into parts that can be memoised.
//
// A predicate that reads a single column with few distinct values (level,
// message, data.status, data.method, data.auth, data.url, data.referer,
// data.userAgent, data.remoteIP, data.userIP) gives the same answer for
// every row with the same value in that column. A scan then evaluates the
// predicate once per distinct value met, on the first row that has it,
// and answers the other rows from a table indexed by the value (or
// dictionary id): the semantics are the predicate's own, the per-row cost
// a table lookup. Per chunk, that table is read once per value of the
// chunk's own table (column.go), so a chunk none of whose values match is
// skipped, and the matches of a sealed chunk with few values are counted
// from its counts per value, without visiting its rows. A derived message
// (not interned, see index.message) is memoised by its url id and the pair
// (method, kind of derivation), up to msgKeys such pairs per scan.
//
// A filter whose top level is a run of && (or of ||) is split into its
// terms, each memoised on its own when it can be, and the terms' answers
// joined: `data.url ~ "x" && data.status = 200` costs two table lookups a
// row. The language's && and || are two-valued, so the join is exact.
type filter struct {
	parts []*part
	and   bool   // the parts are joined by && (else ||)
	src   string // the whole filter, for the counts kept (index.chunkCounts)
}

// part is one term of a filter.
type part struct {
	pred filterlang.Predicate[row]
	// perScan, set when the term reads message, compiles the predicate
	// again for one scanning goroutine: its message getter then derives
	// messages into a buffer of its own (msgScratch) without allocating.
	perScan func() filterlang.Predicate[row]
	memo    memoKind
	col     int // the chunk column (chunk.d) of memoCol
	signed  bool
	base    int // memo table index = value - base
	size    int // memo table size; 0: the dictionary's
	// reqOnly: the memoised column is a request attribute, so rows of
	// other logs are evaluated one by one.
	reqOnly bool
	src     string // the term, for the memo tables kept (index.memo)
}

type memoKind uint8

const (
	memoNone  memoKind = iota
	memoConst          // no field at all: one answer for every row
	memoCol            // a column of distinct values (chunk.d)
	memoMsg            // message: interned, or derived from method and url
)

type memoSpec struct {
	kind    memoKind
	col     int
	signed  bool
	base    int
	size    int
	reqOnly bool
}

// memoCols are the fields whose predicates can be memoised by column.
var memoCols = map[string]memoSpec{
	"level":          {kind: memoCol, col: dLevel, signed: true, base: levelMemoMin, size: levelMemoMax - levelMemoMin},
	"message":        {kind: memoMsg},
	"data.status":    {kind: memoCol, col: dStatus, signed: true, size: statusMemo, reqOnly: true},
	"data.method":    {kind: memoCol, col: int(colMethod), reqOnly: true},
	"data.auth":      {kind: memoCol, col: int(colAuth), reqOnly: true},
	"data.url":       {kind: memoCol, col: int(colURL), reqOnly: true},
	"data.referer":   {kind: memoCol, col: int(colReferer), reqOnly: true},
	"data.userAgent": {kind: memoCol, col: int(colUserAgent), reqOnly: true},
	// Without IPs (logIP off) the IP keys are absent, which both columns
	// being "" tells: a predicate on one reads the other too.
}

// rewriteTimesOn enables rewriteTimes; tests turn it off to check it.
var rewriteTimesOn = true

// compileFilter parses and binds a filter; "" yields nil, which matches
// every row.
func compileFilter(x *index, src string, withRowid bool, now time.Time) (*filter, error) {
	if src == "" {
		return nil, nil
	}
	e, err := filterlang.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidFilter, err)
	}
	if rewriteTimesOn {
		e = rewriteTimes(e, now)
	}
	whole, err := compilePart(x, e, withRowid, now)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidFilter, err)
	}
	f := &filter{parts: []*part{whole}, and: true, src: fmt.Sprint(withRowid, " ", e)}
	b, ok := e.(*filterlang.Binary)
	if !ok || whole.memo != memoNone || !memoOn {
		return f, nil
	}
	terms := joinTerms(e, b.Op)
	parts := make([]*part, len(terms))
	memo := false
	for i, t := range terms {
		if parts[i], err = compilePart(x, t, withRowid, now); err != nil {
			return f, nil // the whole compiled: keep it whole
		}
		memo = memo || parts[i].memo != memoNone
	}
	if memo {
		f.parts, f.and = parts, b.Op == filterlang.And
	}
	return f, nil
}

// match evaluates f on row r alone (one goroutine: see part.perScan).
func (f *filter) match(r row) bool {
	for _, p := range f.parts {
		if p.pred(r) != f.and {
			return !f.and
		}
	}
	return f.and
}

// joinTerms returns the terms of the run of joins by op that e heads.
func joinTerms(e filterlang.Expr, op filterlang.Op) []filterlang.Expr {
	if b, ok := e.(*filterlang.Binary); ok && b.Op == op {
		return append(joinTerms(b.X, op), joinTerms(b.Y, op)...)
	}
	return []filterlang.Expr{e}
}

// compilePart compiles e as one part.
func compilePart(x *index, e filterlang.Expr, withRowid bool, now time.Time) (*part, error) {
	var used []string // the fields the filter reads
	opts := filterlang.Options{Now: func() time.Time { return now }}
	resolve := resolver(x, withRowid, new(msgScratch))
	p, err := filterlang.Compile(e, func(name string) (field, bool) {
		f, ok := resolve(name)
		if ok && !slices.Contains(used, name) {
			used = append(used, name)
		}
		return f, ok
	}, opts)
	if err != nil {
		return nil, err
	}
	f := &part{pred: p, src: e.String()}
	if slices.Contains(used, "message") {
		f.perScan = func() filterlang.Predicate[row] {
			p, err := filterlang.Compile(e, resolver(x, withRowid, new(msgScratch)), opts)
			if err != nil {
				panic(err) // it compiled a moment ago
			}
			return p
		}
	}
	switch {
	case len(used) == 0:
		f.memo = memoConst
	case len(used) == 1:
		if m, ok := memoCols[used[0]]; ok && memoOn {
			f.memo, f.col, f.signed, f.base, f.size, f.reqOnly = m.kind, m.col, m.signed, m.base, m.size, m.reqOnly
		}
	}
	if f.memo == memoCol && f.size == 0 {
		if len(x.dict.strs) > maxDictMemo {
			f.memo = memoNone
		}
		f.size = len(x.dict.strs)
	}
	if f.memo == memoMsg && len(x.dict.strs) > maxDictMemo {
		f.memo = memoNone
	}
	return f, nil
}

// memoOn enables memoisation; tests turn it off to check it.
var memoOn = true

// Bounds of the memo tables: level and status values outside them, and
// dictionaries larger than maxDictMemo, are evaluated row by row.
const (
	levelMemoMin = -512
	levelMemoMax = 512
	statusMemo   = 1024
	maxDictMemo  = 1 << 24
)

// What a matcher knows of a chunk before visiting its rows.
type verdict uint8

const (
	someMatch verdict = iota // some rows may match: visit them
	noneMatch
	allMatch
)

// matcher evaluates a filter chunk by chunk. Each scanning goroutine has
// its own (the memo tables fill as it goes).
type matcher struct {
	and    bool
	parts  []*partMatcher
	counts *chunkCounts // of f's matches per sealed chunk; nil: not kept
	out    [chunkSize]bool
	tmp    [chunkSize]bool
}

// partMatcher evaluates one part.
type partMatcher struct {
	p    *part
	pred filterlang.Predicate[row] // p's, or its own (part.perScan)
	tab  *memoTable                // memoCol, memoMsg

	// memoCol: tab read through the values of chunk lc: per local id -1
	// unknown, 0 no match, 1 match, 2 evaluate row by row.
	lc  *chunk
	loc []int8

	konst bool

	// memoMsg: the memo slot of each combination of method and flags of
	// chunk sc (see groups), or slotNone, slotInterned.
	sc     *chunk
	mslots []int8
	uw     []uint32 // the memo words of chunk sc's urls, by local id
}

func (f *filter) matcher(x *index) *matcher {
	m := &matcher{and: f.and, counts: x.chunkCounts(f.src)}
	for _, p := range f.parts {
		m.parts = append(m.parts, p.matcher(x))
	}
	return m
}

func (p *part) matcher(x *index) *partMatcher {
	m := &partMatcher{p: p, pred: p.pred}
	if p.perScan != nil {
		m.pred = p.perScan()
	}
	switch p.memo {
	case memoConst:
		m.konst = p.pred(row{}) // reads no field, so no row is needed
	case memoCol:
		m.tab = x.memo(p.src, p.size)
	case memoMsg:
		m.tab = x.memo(p.src, len(x.dict.strs))
	}
	return m
}

// eval evaluates the predicate on row i of c as a memo table entry.
func (m *partMatcher) eval(c *chunk, i int) int8 {
	if m.pred(row{c, i}) {
		return 1
	}
	return 0
}

// judge tells what can be known of the filter's matches in c without
// visiting its rows: none, all, or some (then n is their number when
// counted).
func (m *matcher) judge(c *chunk) (v verdict, n int, counted bool) {
	if m.counts != nil && c.sealed {
		if n, ok := m.counts.get(c); ok {
			switch n {
			case 0:
				return noneMatch, 0, true
			case c.n:
				return allMatch, n, true
			}
			return someMatch, n, true
		}
	}
	if len(m.parts) == 1 {
		return m.parts[0].judge(c)
	}
	// Of the parts, the one that decides (none under &&, all under ||)
	// decides the chunk; of the others, those that do not matter (all
	// under &&, none under ||) drop out, and when one is left, it is the
	// filter on this chunk.
	decide, neutral := noneMatch, allMatch
	if !m.and {
		decide, neutral = allMatch, noneMatch
	}
	left := 0
	for _, pm := range m.parts {
		pv, pn, pc := pm.judge(c)
		switch pv {
		case decide:
			return pv, pn, true
		case neutral:
			continue
		}
		left++
		n, counted = pn, pc
	}
	switch left {
	case 0:
		return neutral, neutralCount(neutral, c), true
	case 1:
		return someMatch, n, counted
	}
	return someMatch, 0, false
}

func neutralCount(v verdict, c *chunk) int {
	if v == allMatch {
		return c.n
	}
	return 0
}

// fill evaluates the filter on every row of c and returns the results,
// keeping their number for a sealed chunk (chunkCounts).
func (m *matcher) fill(c *chunk) []bool {
	out := m.fillRows(c)
	if m.counts != nil && c.sealed {
		n := 0
		for _, ok := range out {
			if ok {
				n++
			}
		}
		m.counts.put(c, n)
	}
	return out
}

func (m *matcher) fillRows(c *chunk) []bool {
	out := m.out[:c.n]
	if len(m.parts) == 1 {
		m.parts[0].fill(c, out)
		return out
	}
	first := true
	for _, pm := range m.parts {
		switch v, _, _ := pm.judge(c); {
		case v == allMatch && m.and, v == noneMatch && !m.and:
			continue
		case v != someMatch:
			for i := range out {
				out[i] = v == allMatch
			}
			return out
		}
		if first {
			pm.fill(c, out)
			first = false
			continue
		}
		tmp := m.tmp[:c.n]
		pm.fill(c, tmp)
		if m.and {
			for i, ok := range tmp {
				out[i] = out[i] && ok
			}
		} else {
			for i, ok := range tmp {
				out[i] = out[i] || ok
			}
		}
	}
	if first { // every part is neutral
		for i := range out {
			out[i] = m.and
		}
	}
	return out
}

// judge is matcher.judge for one part.
func (m *partMatcher) judge(c *chunk) (verdict, int, bool) {
	switch m.p.memo {
	case memoConst:
		if m.konst {
			return allMatch, c.n, true
		}
		return noneMatch, 0, true
	case memoCol:
		if m.p.reqOnly && c.others > 0 {
			break
		}
		d := &c.d[m.p.col]
		loc := m.local(c)
		if d.counts != nil && slices.Contains(loc, -1) {
			m.learnAll(c)
		}
		yes, no := 0, 0
		n := 0
		for j, t := range loc {
			switch t {
			case 0:
				no++
			case 1:
				yes++
				if d.counts != nil {
					n += int(d.counts[j])
				}
			}
		}
		switch {
		case no == len(loc):
			return noneMatch, 0, true
		case yes == len(loc):
			return allMatch, c.n, true
		}
		return someMatch, n, d.counts != nil && yes+no == len(loc)
	}
	return someMatch, 0, false
}

// local returns the memo of the values of c's memoised column, by local id.
func (m *partMatcher) local(c *chunk) []int8 {
	if m.lc == c {
		return m.loc
	}
	vals := c.d[m.p.col].vals
	m.lc, m.loc = c, slices.Grow(m.loc[:0], len(vals))[:len(vals)]
	for j, v := range vals {
		m.loc[j] = 2
		if k := m.key(v); uint(k) < uint(len(m.tab.words)) {
			m.loc[j] = m.tab.get(k, 0)
		}
	}
	return m.loc
}

// key returns the memo table index of the column value v.
func (m *partMatcher) key(v uint32) int {
	if m.p.signed {
		return int(int32(v)) - m.p.base
	}
	return int(v) - m.p.base
}

// learnAll evaluates the predicate on the first row of each value of c
// whose answer is unknown.
func (m *partMatcher) learnAll(c *chunk) {
	d := &c.d[m.p.col]
	for i := range c.n {
		if j := d.local(i); m.loc[j] < 0 {
			m.learn(c, i, j)
		}
	}
}

// learn evaluates the predicate on row i of c, whose local id is j, and
// memoises the answer. It is the rare path of the memo loops, kept out of
// them.
func (m *partMatcher) learn(c *chunk, i, j int) int8 {
	t := m.eval(c, i)
	m.loc[j] = t
	m.tab.set(m.key(c.d[m.p.col].vals[j]), 0, t)
	return t
}

// fill sets out to the part's answers for the rows of c.
func (m *partMatcher) fill(c *chunk, out []bool) {
	switch m.p.memo {
	case memoConst:
		for i := range out {
			out[i] = m.konst
		}
		return
	case memoCol:
		m.local(c)
		d := &c.d[m.p.col]
		switch {
		case d.u8 != nil:
			memoFill(m, c, out, d.u8)
		case d.u16 != nil:
			memoFill(m, c, out, d.u16[:c.n])
		default:
			memoFill(m, c, out, zeros[:c.n])
		}
		return
	case memoMsg:
		m.fillMsg(c, out)
		return
	}
	pred := m.pred
	for i := range out {
		out[i] = pred(row{c, i})
	}
}

// zeros are the local ids of a column with one value.
var zeros [chunkSize]uint8

// memoFill sets out to the answers for the rows of c, whose local ids in
// the memoised column are ids. Values outside the memo table, and rows of
// other logs when the column is a request attribute, are evaluated one by
// one. It is generic so that each width is compiled to a loop of its own.
func memoFill[I uint8 | uint16](m *partMatcher, c *chunk, out []bool, ids []I) {
	all := !m.p.reqOnly || c.others == 0
	loc, pred := m.loc, m.pred
	if all && !slices.ContainsFunc(loc, func(t int8) bool { return t < 0 || t > 1 }) {
		// Every value's answer is known: a lookup per row.
		for i, id := range ids {
			out[i] = loc[id] == 1
		}
		return
	}
	for i, id := range ids {
		t := loc[id]
		if t < 0 && (all || c.flagsAt(i)&rowOther == 0) {
			t = m.learn(c, i, int(id))
		}
		if t <= 1 && (all || c.flagsAt(i)&rowOther == 0) {
			out[i] = t == 1
		} else {
			out[i] = pred(row{c, i})
		}
	}
}

// fillMsg is fill for memoMsg. An interned message is memoised by its
// dictionary id; a derived one by its url id and its (method, derivation)
// key, read through the chunk's urls and combinations of method and flags
// (msgChunk).
func (m *partMatcher) fillMsg(c *chunk, out []bool) {
	m.msgChunk(c)
	cls := &c.d[dFlags] // its local ids name the combinations (groups)
	switch {
	case cls.u8 != nil:
		fillMsgURLs(m, c, out, cls.u8)
	case cls.u16 != nil:
		fillMsgURLs(m, c, out, cls.u16[:c.n])
	default:
		fillMsgURLs(m, c, out, zeros[:c.n])
	}
}

// fillMsgURLs is fillMsg for the combinations' local ids ids.
func fillMsgURLs[I uint8 | uint16](m *partMatcher, c *chunk, out []bool, ids []I) {
	urls := &c.d[colURL]
	switch {
	case urls.u8 != nil:
		fillMsgRows(m, c, out, ids, urls.u8)
	case urls.u16 != nil:
		fillMsgRows(m, c, out, ids, urls.u16[:c.n])
	default:
		fillMsgRows(m, c, out, ids, zeros[:c.n])
	}
}

// Slots of msgChunk's combinations that are not message memo slots.
const (
	slotNone     = -1 // a derived message whose key has no slot: row by row
	slotInterned = -2 // an interned message: memoised by its id
)

// fillMsgRows is fillMsg for the combinations' local ids ids and the
// urls' local ids uids: a loop of its own for each of their widths.
func fillMsgRows[I, U uint8 | uint16](m *partMatcher, c *chunk, out []bool, ids []I, uids []U) {
	tab, pred, size := m.tab, m.pred, uint(len(m.tab.words))
	msgs, urls, uw, slots := &c.d[colMessage], &c.d[colURL], m.uw, m.mslots
	uids = uids[:len(ids)]
	for i, cl := range ids {
		k := int(slots[cl])
		if k == slotInterned {
			j := msgs.at(i)
			if uint(j) >= size {
				out[i] = pred(row{c, i})
				continue
			}
			t := tab.get(int(j), 0)
			if t < 0 {
				t = m.eval(c, i)
				tab.set(int(j), 0, t)
			}
			out[i] = t == 1
			continue
		}
		u := uids[i]
		t := int8(uw[u]>>(2*uint(k))&3) - 1 // k < 0 shifts all out: t = -1
		switch {
		case t == 0 || t == 1:
			out[i] = t == 1
		case k < 0 || t == 2:
			out[i] = pred(row{c, i})
		default:
			t = m.eval(c, i)
			tab.set(int(urls.vals[u]), k, t)
			uw[u] |= uint32(t+1) << (2 * k)
			out[i] = t == 1
		}
	}
}

// msgChunk prepares fillMsg for chunk c: the memo words of its urls, and
// the memo slot of each combination of method and flags.
func (m *partMatcher) msgChunk(c *chunk) {
	if m.sc == c {
		return
	}
	m.sc = c
	methods, flags, urls := c.d[colMethod].vals, c.d[dFlags].vals, c.d[colURL].vals
	m.mslots = slices.Grow(m.mslots[:0], len(flags))[:len(flags)]
	for j, fv := range flags {
		f := uint8(fv)
		m.mslots[j] = slotInterned
		if f&msgFlags != 0 && f&rowOther == 0 {
			m.mslots[j] = int8(m.tab.slot(uint64(methods[j])<<8 | uint64(f&msgFlags)))
		}
	}
	m.uw = slices.Grow(m.uw[:0], len(urls))[:len(urls)]
	words := m.tab.words
	for j, u := range urls {
		m.uw[j] = math.MaxUint32 // 3 in every slot: evaluate row by row
		if int(u) < len(words) {
			m.uw[j] = words[u].Load()
		}
	}
}
