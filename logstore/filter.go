package logstore

import (
	"fmt"
	"slices"
	"time"

	"strongbox/filterlang"
)

// filter is a compiled filter: the filterlang predicate over index rows,
// and how its results can be memoised.
//
// A predicate that reads a single column with few distinct values (level,
// message, data.status, data.method, data.auth, data.url, data.referer,
// data.userAgent) gives the same answer for every row with the same value
// in that column. A scan then evaluates the predicate once per distinct
// value met, on the first row that has it, and answers the other rows from
// a table indexed by the value (or dictionary id): the semantics are the
// predicate's own, the per-row cost a table lookup. `data.status>=400`
// over a million rows runs three times faster, and `message ~ "x"`, which
// matches text, fifty times faster. A derived message (not interned, see
// index.message) is memoised by its url id and the pair (method, kind of
// derivation), up to msgKeys such pairs per scan.
type filter struct {
	pred filterlang.Predicate[row]
	// perScan, set when the filter reads message, compiles the predicate
	// again for one scanning goroutine: its message getter then derives
	// messages into a buffer of its own (msgScratch) without allocating.
	perScan func() filterlang.Predicate[row]
	memo    memoKind
	col     strCol // the column of memoDict
	// reqOnly: the memoised column is a request attribute, so rows of
	// other logs are evaluated one by one.
	reqOnly bool
}

type memoKind uint8

const (
	memoNone   memoKind = iota
	memoConst           // no field at all: one answer for every row
	memoLevel           // level
	memoStatus          // data.status
	memoDict            // a dictionary-encoded column
	memoMsg             // message: interned, or derived from method and url
)

// memoCols are the fields whose predicates can be memoised by column.
var memoCols = map[string]struct {
	kind    memoKind
	col     strCol
	reqOnly bool
}{
	"level":          {memoLevel, 0, false},
	"message":        {memoMsg, colMessage, false},
	"data.status":    {memoStatus, 0, true},
	"data.method":    {memoDict, colMethod, true},
	"data.auth":      {memoDict, colAuth, true},
	"data.url":       {memoDict, colURL, true},
	"data.referer":   {memoDict, colReferer, true},
	"data.userAgent": {memoDict, colUserAgent, true},
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
		return nil, fmt.Errorf("%w: %w", ErrInvalidFilter, err)
	}
	f := &filter{pred: p}
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
			f.memo, f.col, f.reqOnly = m.kind, m.col, m.reqOnly
		}
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

// matcher evaluates a filter chunk by chunk. Each scanning goroutine has
// its own (the memo tables fill as it goes).
type matcher struct {
	f     *filter
	pred  filterlang.Predicate[row] // f's, or its own (filter.perScan)
	tab   []int8                    // per value: -1 unknown, 0 no match, 1 match
	konst bool
	out   [chunkSize]bool

	// memoMsg: per url id, 2 bits per (method, derivation) pair of keys
	// (0 unknown, 1 no match, 2 match).
	utab     []uint16
	keys     [msgKeys]uint64
	nkeys    int
	lastKey  uint64
	lastSlot int
}

// msgKeys is the number of (method, derivation) pairs memoised for derived
// messages; rows with other pairs are evaluated one by one.
const msgKeys = 8

func (f *filter) matcher(x *index) *matcher {
	m := &matcher{f: f, pred: f.pred}
	if f.perScan != nil {
		m.pred = f.perScan()
	}
	switch f.memo {
	case memoConst:
		m.konst = f.pred(row{}) // reads no field, so no row is needed
	case memoLevel:
		m.tab = make([]int8, levelMemoMax-levelMemoMin)
	case memoStatus:
		m.tab = make([]int8, statusMemo)
	case memoDict, memoMsg:
		if len(x.dict.strs) <= maxDictMemo {
			m.tab = make([]int8, len(x.dict.strs))
			if f.memo == memoMsg {
				m.utab = make([]uint16, len(x.dict.strs))
				m.lastKey = ^uint64(0)
			}
		} else {
			m.f = &filter{pred: f.pred}
		}
	}
	for i := range m.tab {
		m.tab[i] = -1
	}
	return m
}

// eval evaluates the predicate on row i of c as a memo table entry.
func (m *matcher) eval(c *chunk, i int) int8 {
	if m.pred(row{c, i}) {
		return 1
	}
	return 0
}

// fill evaluates the filter on every row of c and returns the results.
func (m *matcher) fill(c *chunk) []bool {
	out := m.out[:c.n]
	switch m.f.memo {
	case memoConst:
		for i := range out {
			out[i] = m.konst
		}
	case memoLevel:
		memoFill(m, c, out, c.level[:c.n], levelMemoMin)
	case memoStatus:
		memoFill(m, c, out, c.status[:c.n], 0)
	case memoDict:
		memoFill(m, c, out, c.str[m.f.col][:c.n], 0)
	case memoMsg:
		m.fillMsg(c, out)
	default:
		pred := m.pred
		for i := range out {
			out[i] = pred(row{c, i})
		}
	}
	return out
}

// memoFill sets out to the filter's answers for the rows of c, whose
// values in the memoised column are vals: the answer for value v is
// memoised at m.tab[v-base]. Values outside the table, and rows of other
// logs when the column is a request attribute, are evaluated one by one.
// It is generic so that each column type (int32 and uint32 have different
// GC shapes) is compiled to a loop of its own, as the copies were.
func memoFill[V int32 | uint32](m *matcher, c *chunk, out []bool, vals []V, base int) {
	all := !m.f.reqOnly || c.others == 0
	tab, pred := m.tab, m.pred
	for i, v := range vals {
		if j := int(v) - base; uint(j) < uint(len(tab)) && (all || c.flags[i]&rowOther == 0) {
			t := tab[j]
			if t < 0 {
				t = m.learn(c, i, j)
			}
			out[i] = t == 1
		} else {
			out[i] = pred(row{c, i})
		}
	}
}

// learn evaluates the predicate on row i of c and memoises the answer at
// m.tab[j]. It is the rare path of the memo loops, kept out of them.
func (m *matcher) learn(c *chunk, i, j int) int8 {
	t := m.eval(c, i)
	m.tab[j] = t
	return t
}

// fillMsg is fill for memoMsg. An interned message is memoised by its
// dictionary id, as in memoFill; a derived one by its url id and its
// (method, derivation) key. Its loop is not memoFill's: a row's table
// depends on its flags.
func (m *matcher) fillMsg(c *chunk, out []bool) {
	tab, pred := m.tab, m.pred
	methods, urls, flags := c.str[colMethod][:c.n], c.str[colURL][:c.n], c.flags[:c.n]
	for i, id := range c.str[colMessage][:c.n] {
		f := flags[i]
		if f&msgFlags == 0 || f&rowOther != 0 { // interned
			if j := int(id); uint(j) < uint(len(tab)) {
				t := tab[j]
				if t < 0 {
					t = m.learn(c, i, j)
				}
				out[i] = t == 1
			} else {
				out[i] = pred(row{c, i})
			}
			continue
		}
		k, u := m.slot(uint64(methods[i])<<8|uint64(f&msgFlags)), urls[i]
		if k < 0 || uint(u) >= uint(len(m.utab)) {
			out[i] = pred(row{c, i})
			continue
		}
		v := m.utab[u] >> (2 * k) & 3
		if v == 0 {
			v = 1 + uint16(m.eval(c, i))
			m.utab[u] |= v << (2 * k)
		}
		out[i] = v == 2
	}
}

// slot returns the memo slot of a (method, derivation) key, or -1 when all
// msgKeys slots are taken by other keys.
func (m *matcher) slot(key uint64) int {
	if key == m.lastKey {
		return m.lastSlot
	}
	k := -1
	for i, have := range m.keys[:m.nkeys] {
		if have == key {
			k = i
			break
		}
	}
	if k < 0 && m.nkeys < len(m.keys) {
		k = m.nkeys
		m.keys[k] = key
		m.nkeys++
	}
	m.lastKey, m.lastSlot = key, k
	return k
}
