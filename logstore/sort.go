package logstore

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"strings"

	"strongbox/filterlang"
)

// order is a compiled sort expression.
type order struct {
	keys []sortKey
	// lead, when set, is the first key as an integer (created, level,
	// rowid): the heap rejects most rows by comparing it alone.
	lead     func(r row) int64
	leadDesc bool
	// leadCreated: the lead is the creation time, so a chunk whose
	// minimum and maximum times cannot beat the heap's worst is skipped.
	leadCreated bool
	// scan direction: newest rows first
	reverse bool
	// sequential: the scan meets rows in result order (insertion order or
	// a leading rowid key), so the first k matches are the answer.
	sequential bool
	// dictCol, when not 0, is 1 + the dictionary column of the first key
	// (data.url …, with request logs only): see selectDict.
	dictCol strCol
}

type sortKey struct {
	cmp  func(a, b row) int
	desc bool
}

// compare orders rows by the keys, then by insertion.
func (o *order) compare(a, b row) int {
	for _, k := range o.keys {
		if c := k.cmp(a, b); c != 0 {
			if k.desc {
				return -c
			}
			return c
		}
	}
	return cmp.Compare(a.seq(), b.seq())
}

// sortOrder compiles a sort expression.
func (x *index) sortOrder(src string) (*order, error) {
	fields, err := filterlang.ParseSort(src, validSortField)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSort, err)
	}
	o := &order{}
	for _, f := range fields {
		c, _ := x.sortCmp(f.Name)
		desc := f.Desc && f.Name != filterlang.RandomSort
		o.keys = append(o.keys, sortKey{cmp: c, desc: desc})
	}
	if len(fields) == 0 {
		o.sequential = true
		return o, nil
	}
	first := fields[0]
	o.leadDesc = first.Desc
	switch first.Name {
	case "created", "updated":
		o.lead = func(r row) int64 { return r.c.createdAt(r.i) }
		o.leadCreated = true
	case "level":
		o.lead = func(r row) int64 { return int64(r.c.levelAt(r.i)) }
	}
	if path, ok := strings.CutPrefix(first.Name, "data."); ok && x.others == 0 {
		switch path {
		case "auth", "method", "referer", "url", "userAgent":
			o.dictCol = reqStrCols[path] + 1
		}
	}
	switch first.Name {
	case "rowid", "@rowid":
		o.sequential, o.reverse = true, first.Desc
	case "created", "updated":
		// Times mostly grow with insertion: scanning from the end for a
		// descending sort fills the heap with the final answer early.
		o.reverse = first.Desc
	}
	return o, nil
}

// validSortField reports whether name is a sort field (§4.3): the filter
// fields but data, and rowid, @rowid, @random.
func validSortField(name string) bool {
	switch name {
	case filterlang.RandomSort, "rowid", "@rowid", "id", "created", "updated", "level", "message":
		return true
	}
	path, ok := strings.CutPrefix(name, "data.")
	return ok && path != ""
}

// sortCmp returns the comparison of a sort field.
func (x *index) sortCmp(name string) (func(a, b row) int, bool) {
	switch name {
	case filterlang.RandomSort:
		seed := rand.Uint64()
		return func(a, b row) int {
			return cmp.Compare(mix64(uint64(a.seq())^seed), mix64(uint64(b.seq())^seed))
		}, true
	case "rowid", "@rowid":
		return func(a, b row) int { return cmp.Compare(a.seq(), b.seq()) }, true
	case "id":
		return func(a, b row) int {
			ia, ib := x.idBytes(a), x.idBytes(b)
			return bytes.Compare(ia[:], ib[:])
		}, true
	case "created", "updated":
		return func(a, b row) int { return cmp.Compare(a.c.createdAt(a.i), b.c.createdAt(b.i)) }, true
	case "level":
		return func(a, b row) int { return cmp.Compare(a.c.levelAt(a.i), b.c.levelAt(b.i)) }, true
	case "message":
		return x.messageCmp(), true
	}
	// The whole data object is not a sort field (§4.3 lists data.*
	// attributes): comparing rows by their data's JSON text would serialise
	// two rows per comparison.
	path, ok := strings.CutPrefix(name, "data.")
	if !ok || path == "" {
		return nil, false
	}
	return x.dataCmp(strings.Split(path, ".")), true
}

// dataCmp returns the comparison of the sort field data.<keys...>. The
// request attributes held in columns compare straight from them (a string
// column by dictionary id first: equal ids are equal strings), without a
// getter per comparison; the rest goes through sortGetter.
func (x *index) dataCmp(keys []string) func(a, b row) int {
	if len(keys) == 1 && x.others == 0 {
		switch key := keys[0]; key {
		case "status":
			return func(a, b row) int { return cmp.Compare(a.c.statusAt(a.i), b.c.statusAt(b.i)) }
		case "execTime":
			return func(a, b row) int { return cmp.Compare(a.c.execAt(a.i), b.c.execAt(b.i)) }
		case "auth", "method", "referer", "url", "userAgent":
			col, strs := reqStrCols[key], x.dict.strs
			return func(a, b row) int {
				ia, ib := a.c.strAt(col, a.i), b.c.strAt(col, b.i)
				if ia == ib {
					return 0
				}
				return strings.Compare(strs[ia], strs[ib])
			}
		}
	}
	get := x.sortGetter(keys)
	return func(a, b row) int { return get(a).compare(get(b)) }
}

// idBytes returns the id of row r without allocating.
func (x *index) idBytes(r row) [idLen]byte {
	if r.c.flagsAt(r.i)&flagForeignID != 0 {
		id, _ := x.foreign.idOf(r.seq())
		return id
	}
	return makeID(r.seq(), r.c.seg.key)
}

// sval is a data attribute as ORDER BY JSON_EXTRACT(...) sees it: NULL
// before numbers before text (objects and arrays sort as their JSON text).
type sval struct {
	class int8 // 0 null, 1 number, 2 text
	num   float64
	str   string
}

func (a sval) compare(b sval) int {
	if c := cmp.Compare(a.class, b.class); c != 0 {
		return c
	}
	switch a.class {
	case 1:
		return cmp.Compare(a.num, b.num)
	case 2:
		return strings.Compare(a.str, b.str)
	}
	return 0
}

// sortGetter returns the getter of the sort value of data.<keys...>. For
// request logs the key is resolved once, here, not per row.
func (x *index) sortGetter(keys []string) func(r row) sval {
	generic := func(r row) sval {
		v, _ := x.attr(r, keys)
		return svalOf(v)
	}
	req := generic
	if len(keys) == 1 {
		switch key := keys[0]; key {
		case "status":
			req = func(r row) sval { return sval{class: 1, num: float64(r.c.statusAt(r.i))} }
		case "execTime":
			req = func(r row) sval { return sval{class: 1, num: r.c.execAt(r.i)} }
		case "auth", "method", "referer", "url", "userAgent":
			col, strs := reqStrCols[key], x.dict.strs
			req = func(r row) sval { return sval{class: 2, str: strs[r.c.strAt(col, r.i)]} }
		case "details":
		default:
			req = func(r row) sval {
				if s, ok := x.reqString(r, key); ok {
					return sval{class: 2, str: s}
				}
				return sval{}
			}
		}
	}
	if x.others == 0 {
		return req
	}
	return func(r row) sval {
		if r.c.flagsAt(r.i)&rowOther != 0 {
			return svalOf(otherAttr(r, keys))
		}
		return req(r)
	}
}

// svalOf returns the sort value of a generic JSON value.
func svalOf(v any) sval {
	switch t := v.(type) {
	case float64:
		return sval{class: 1, num: t}
	case bool:
		return sval{class: 1, num: boolNum(t)}
	case string:
		return sval{class: 2, str: t}
	case []any, map[string]any:
		return sval{class: 2, str: jsonText(t)}
	}
	return sval{}
}
