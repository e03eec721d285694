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
// matches text, fifty times faster.
type filter struct {
	pred filterlang.Predicate[row]
	memo memoKind
	col  strCol // the column of memoDict
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
)

// memoCols are the fields whose predicates can be memoised by column.
var memoCols = map[string]struct {
	kind    memoKind
	col     strCol
	reqOnly bool
}{
	"level":          {memoLevel, 0, false},
	"message":        {memoDict, colMessage, false},
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
	resolve := resolver(x, withRowid)
	p, err := filterlang.Compile(e, func(name string) (field, bool) {
		f, ok := resolve(name)
		if ok && !slices.Contains(used, name) {
			used = append(used, name)
		}
		return f, ok
	}, filterlang.Options{Now: func() time.Time { return now }})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidFilter, err)
	}
	f := &filter{pred: p}
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
	tab   []int8 // per value: -1 unknown, 0 no match, 1 match
	konst bool
	out   [chunkSize]bool
}

func (f *filter) matcher(x *index) *matcher {
	m := &matcher{f: f}
	switch f.memo {
	case memoConst:
		m.konst = f.pred(row{}) // reads no field, so no row is needed
	case memoLevel:
		m.tab = make([]int8, levelMemoMax-levelMemoMin)
	case memoStatus:
		m.tab = make([]int8, statusMemo)
	case memoDict:
		if len(x.dict.strs) <= maxDictMemo {
			m.tab = make([]int8, len(x.dict.strs))
		} else {
			f = &filter{pred: f.pred}
			m.f = f
		}
	}
	for i := range m.tab {
		m.tab[i] = -1
	}
	return m
}

// eval evaluates the predicate on row i of c as a memo table entry.
func (m *matcher) eval(c *chunk, i int) int8 {
	if m.f.pred(row{c, i}) {
		return 1
	}
	return 0
}

// fill evaluates the filter on every row of c and returns the results.
func (m *matcher) fill(c *chunk) []bool {
	out, tab, pred := m.out[:c.n], m.tab, m.f.pred
	// Rows of other logs, when the memoised column is a request
	// attribute, are evaluated one by one.
	all := !m.f.reqOnly || c.others == 0
	switch m.f.memo {
	case memoConst:
		for i := range out {
			out[i] = m.konst
		}
	case memoLevel:
		for i, v := range c.level[:c.n] {
			if j := int(v) - levelMemoMin; uint(j) < uint(len(tab)) {
				t := tab[j]
				if t < 0 {
					t = m.eval(c, i)
					tab[j] = t
				}
				out[i] = t == 1
			} else {
				out[i] = pred(row{c, i})
			}
		}
	case memoStatus:
		for i, v := range c.status[:c.n] {
			if j := int(v); uint(j) < uint(len(tab)) && (all || c.flags[i]&rowOther == 0) {
				t := tab[j]
				if t < 0 {
					t = m.eval(c, i)
					tab[j] = t
				}
				out[i] = t == 1
			} else {
				out[i] = pred(row{c, i})
			}
		}
	case memoDict:
		for i, id := range c.str[m.f.col][:c.n] {
			if j := int(id); uint(j) < uint(len(tab)) && (all || c.flags[i]&rowOther == 0) {
				t := tab[j]
				if t < 0 {
					t = m.eval(c, i)
					tab[j] = t
				}
				out[i] = t == 1
			} else {
				out[i] = pred(row{c, i})
			}
		}
	default:
		for i := range out {
			out[i] = pred(row{c, i})
		}
	}
	return out
}
