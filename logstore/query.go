package logstore

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"strongbox/filterlang"
)

// Paging defaults and limits of List (interface §4.3, §8; reference 3.13).
const (
	// DefaultPerPage is the page size of a Query without one.
	DefaultPerPage = 30

	// MaxPerPage is the largest page size; larger ones are capped.
	MaxPerPage = 1000
)

// Query selects, orders and pages the entries List returns.
type Query struct {
	// Filter is a filterlang expression over id, created, updated, level,
	// message, data and data.<path>; "" selects every entry.
	Filter string

	// Sort is a comma-separated list of fields (the filter fields, rowid,
	// @rowid and @random), each prefixed with '-' for descending or '+'
	// (or nothing) for ascending. "" means insertion order, oldest first.
	// Entries that tie on every field keep insertion order.
	Sort string

	Page      int  // 1-based; < 1 means 1
	PerPage   int  // < 1 means DefaultPerPage; capped at MaxPerPage
	SkipTotal bool // leave TotalItems and TotalPages at -1 and save the count
}

// List returns one page of the entries matching q. A malformed filter
// yields an error wrapping ErrInvalidFilter, a malformed sort one wrapping
// ErrInvalidSort.
//
// List scans the index columns (on all cores for large stores), keeps the
// page's rows with a bounded heap (top-k) instead of sorting every match,
// and reads only the page's entries back from their segments.
func (s *Store) List(q Query) (Page, error) {
	page, perPage := max(q.Page, 1), q.PerPage
	if perPage < 1 {
		perPage = DefaultPerPage
	}
	perPage = min(perPage, MaxPerPage)
	out := Page{Items: []Entry{}, Page: page, PerPage: perPage, TotalItems: -1, TotalPages: -1}

	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return out, ErrClosed
	}
	x := s.idx
	f, err := compileFilter(x, q.Filter, false, now)
	if err != nil {
		return out, err
	}
	ord, err := x.sortOrder(q.Sort)
	if err != nil {
		return out, err
	}
	offset, k := 0, 0
	if page-1 <= x.rows/perPage {
		offset = (page - 1) * perPage
		k = offset + perPage
	}
	rows, total := x.selectRows(f, ord, k, !q.SkipTotal)
	if !q.SkipTotal {
		out.TotalItems = total
		out.TotalPages = (total + perPage - 1) / perPage
	}
	if offset < len(rows) {
		rows = rows[offset:min(len(rows), k)]
		var buf []byte
		for _, r := range rows {
			var e Entry
			e, buf, err = s.readEntry(r, buf)
			if err != nil {
				return out, err
			}
			out.Items = append(out.Items, e)
		}
	}
	return out, nil
}

// Get returns the entry with the given id, or ErrNotFound.
func (s *Store) Get(id string) (Entry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return Entry{}, ErrClosed
	}
	x := s.idx
	var r row
	if seq, ok := x.foreign[id]; ok {
		if r, ok = x.find(seq); !ok {
			return Entry{}, ErrNotFound
		}
	} else {
		seq, ok := idSeq(id)
		if !ok {
			return Entry{}, ErrNotFound
		}
		if r, ok = x.find(seq); !ok || r.c.flags[r.i]&flagForeignID != 0 {
			return Entry{}, ErrNotFound
		}
		if d := makeID(seq, r.c.seg.key); string(d[:]) != id {
			return Entry{}, ErrNotFound
		}
	}
	e, _, err := s.readEntry(r, nil)
	return e, err
}

// readEntry reads the entry of row r from its segment, reusing buf.
func (s *Store) readEntry(r row, buf []byte) (Entry, []byte, error) {
	seg := r.c.seg
	p, err := seg.f.ReadFrameInto(buf, int64(r.c.off[r.i]))
	if err != nil {
		return Entry{}, buf, fmt.Errorf("logstore: read entry: %w", err)
	}
	var rec record
	if err := decodeRecord(p, &rec); err != nil {
		return Entry{}, p, fmt.Errorf("logstore: read entry %s at %d: %w", seg.path, r.c.off[r.i], err)
	}
	return rec.entry(seg.key), p, nil
}

// entry converts a decoded record of a segment with the given key.
func (rec *record) entry(key uint64) Entry {
	e := Entry{
		Created: fromMs(rec.created),
		Level:   int(rec.level),
		Message: rec.messageString(),
	}
	if rec.flags&flagForeignID != 0 {
		e.ID = string(rec.id)
	} else {
		id := makeID(rec.seq, key)
		e.ID = string(id[:])
	}
	if rec.kind == kindOther {
		if len(rec.attrs) > 0 {
			_ = json.Unmarshal(rec.attrs, &e.Attrs) // checked when indexed
		}
		return e
	}
	e.Request = &Request{
		Auth:      string(rec.auth),
		AuthID:    string(rec.authID),
		ExecTime:  rec.execTime,
		Method:    string(rec.method),
		Referer:   string(rec.referer),
		RemoteIP:  string(rec.remoteIP),
		Status:    int(rec.status),
		URL:       string(rec.url),
		UserAgent: string(rec.userAgent),
		UserIP:    string(rec.userIP),
	}
	if rec.flags&flagError != 0 {
		e.Request.Error = string(rec.errMsg)
		e.Request.Details = decodeDetails(string(rec.details))
	}
	return e
}

// Stats returns the number of entries matching filter per UTC hour, for the
// hours that have any, in ascending order. The filter may also use rowid.
// A malformed filter yields an error wrapping ErrInvalidFilter.
func (s *Store) Stats(filter string) ([]HourStat, error) {
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	x := s.idx
	f, err := compileFilter(x, filter, true, now)
	if err != nil {
		return nil, err
	}
	const hourMs = 60 * 60 * 1000
	parts := make([]map[int64]int, 0, 4)
	var pmu sync.Mutex
	x.parallel(func(chunks []*chunk) {
		counts := map[int64]int{}
		cur, n := int64(0), 0
		add := func(ms int64) {
			// Entries come in time order almost always: count runs of
			// the same hour and touch the map once per run.
			if ms >= cur && ms < cur+hourMs && n > 0 {
				n++
				return
			}
			if n > 0 {
				counts[cur] += n
			}
			cur, n = floorDiv(ms, hourMs)*hourMs, 1
		}
		var m *matcher
		if f != nil {
			m = f.matcher(x)
		}
		for _, c := range chunks {
			if m == nil {
				for _, ms := range c.created[:c.n] {
					add(ms)
				}
				continue
			}
			for i, ok := range m.fill(c) {
				if ok {
					add(c.created[i])
				}
			}
		}
		if n > 0 {
			counts[cur] += n
		}
		pmu.Lock()
		parts = append(parts, counts)
		pmu.Unlock()
	})
	all := map[int64]int{}
	for _, p := range parts {
		for h, n := range p {
			all[h] += n
		}
	}
	out := make([]HourStat, 0, len(all))
	for h, n := range all {
		out = append(out, HourStat{Date: fromMs(h), Total: n})
	}
	slices.SortFunc(out, func(a, b HourStat) int { return a.Date.Compare(b.Date) })
	return out, nil
}

// order is a compiled sort expression.
type order struct {
	keys []sortKey
	// lead, when set, is the first key as an integer (created, level,
	// rowid): the heap rejects most rows by comparing it alone.
	lead     func(r row) int64
	leadDesc bool
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
		o.lead = func(r row) int64 { return r.c.created[r.i] }
	case "level":
		o.lead = func(r row) int64 { return int64(r.c.level[r.i]) }
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
		return func(a, b row) int { return cmp.Compare(a.c.created[a.i], b.c.created[b.i]) }, true
	case "level":
		return func(a, b row) int { return cmp.Compare(a.c.level[a.i], b.c.level[b.i]) }, true
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
			return func(a, b row) int { return cmp.Compare(a.c.status[a.i], b.c.status[b.i]) }
		case "execTime":
			return func(a, b row) int { return cmp.Compare(a.c.execTime[a.i], b.c.execTime[b.i]) }
		case "auth", "method", "referer", "url", "userAgent":
			col, strs := reqStrCols[key], x.dict.strs
			return func(a, b row) int {
				ia, ib := a.c.str[col][a.i], b.c.str[col][b.i]
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
	if r.c.flags[r.i]&flagForeignID != 0 {
		var id [idLen]byte
		copy(id[:], x.foreignBySeq[r.seq()])
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
			req = func(r row) sval { return sval{class: 1, num: float64(r.c.status[r.i])} }
		case "execTime":
			req = func(r row) sval { return sval{class: 1, num: r.c.execTime[r.i]} }
		case "auth", "method", "referer", "url", "userAgent":
			col, strs := reqStrCols[key], x.dict.strs
			req = func(r row) sval { return sval{class: 2, str: strs[r.c.str[col][r.i]]} }
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
		if r.c.flags[r.i]&rowOther != 0 {
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

// minChunksPerWorker keeps small scans on one goroutine (a variable for
// tests).
var minChunksPerWorker = 8

// parallel splits the chunks into contiguous ranges, one per worker, and
// runs fn on each concurrently. It returns when all are done; with no
// chunks it does not call fn at all.
func (x *index) parallel(fn func(chunks []*chunk)) {
	n := len(x.chunks)
	if n == 0 {
		return
	}
	w := min(runtime.GOMAXPROCS(0), n/minChunksPerWorker)
	if w <= 1 {
		fn(x.chunks)
		return
	}
	var wg sync.WaitGroup
	for i := range w {
		part := x.chunks[i*n/w : (i+1)*n/w]
		wg.Go(func() { fn(part) })
	}
	wg.Wait()
}

// selectRows returns the first k rows matching f in the order o (all of
// them when fewer match) and, when count is set, the number of matching
// rows.
func (x *index) selectRows(f *filter, o *order, k int, count bool) ([]row, int) {
	if o.sequential {
		return x.selectSequential(f, o.reverse, k, count)
	}
	if o.dictCol != 0 && k > 0 && len(x.dict.strs) <= maxDictMemo {
		return x.selectDict(f, o, k)
	}
	type part struct {
		rows  []row
		total int
	}
	var (
		pmu   sync.Mutex
		parts []part
	)
	x.parallel(func(chunks []*chunk) {
		h := topK{k: k, cmp: o.compare, lead: o.lead, leadDesc: o.leadDesc,
			tieLoses: len(o.keys) == 1 && !o.reverse}
		total := 0
		var m *matcher
		if f != nil {
			m = f.matcher(x)
		}
		for ci := range chunks {
			c := chunks[ci]
			if o.reverse {
				c = chunks[len(chunks)-1-ci]
			}
			if m == nil {
				total += c.n
				for i := range c.n {
					h.offer(row{c, i})
				}
				continue
			}
			match := m.fill(c)
			if o.reverse {
				for i := c.n - 1; i >= 0; i-- {
					if match[i] {
						total++
						h.offer(row{c, i})
					}
				}
			} else {
				for i, ok := range match {
					if ok {
						total++
						h.offer(row{c, i})
					}
				}
			}
		}
		pmu.Lock()
		parts = append(parts, part{rows: h.rows, total: total})
		pmu.Unlock()
	})
	var rows []row
	total := 0
	for _, p := range parts {
		rows = append(rows, p.rows...)
		total += p.total
	}
	slices.SortFunc(rows, o.compare)
	if len(rows) > k {
		rows = rows[:k]
	}
	return rows, total
}

// selectDict serves an order whose first key is a dictionary column
// (data.url, data.userAgent …) in two passes, so that a row costs a bit
// test rather than a string comparison. The first pass offers only the
// first row of each distinct value (string id) to a top-k selection, which
// so finds the k best values; the answer's rows all have one of those
// values, since each value ranked before one of them has a row of its own.
// The second pass offers the rows that have one of them to the heap.
func (x *index) selectDict(f *filter, o *order, k int) ([]row, int) {
	col := o.dictCol - 1
	words := (len(x.dict.strs) + 63) / 64
	var (
		pmu   sync.Mutex
		parts [][]row
		total int
	)
	// First pass: the best k distinct values of each range of chunks.
	x.parallel(func(chunks []*chunk) {
		seen := make([]uint64, words)
		h := bufTopK{k: k, cmp: o.compare}
		n := 0
		var m *matcher
		if f != nil {
			m = f.matcher(x)
		}
		for _, c := range chunks {
			ids := &c.str[col]
			if m == nil {
				n += c.n
				for i, id := range ids[:c.n] {
					if w, b := id/64, uint64(1)<<(id%64); seen[w]&b == 0 {
						seen[w] |= b
						h.offer(row{c, i})
					}
				}
				continue
			}
			for i, ok := range m.fill(c) {
				if !ok {
					continue
				}
				n++
				if id := ids[i]; seen[id/64]&(1<<(id%64)) == 0 {
					seen[id/64] |= 1 << (id % 64)
					h.offer(row{c, i})
				}
			}
		}
		pmu.Lock()
		parts = append(parts, h.result())
		total += n
		pmu.Unlock()
	})
	reps := slices.Concat(parts...)
	slices.SortFunc(reps, o.compare)
	best := make([]uint64, words)
	var ranks idRanks // of the best values, 0 the first
	for _, r := range reps {
		id := r.c.str[col][r.i]
		if best[id/64]&(1<<(id%64)) == 0 && ranks.n < k {
			best[id/64] |= 1 << (id % 64)
			ranks.add(id)
		}
	}
	// Second pass: the rows with one of those values; their rank is the
	// heap's integer lead, so a row of a worse value than the heap's worst
	// costs an integer comparison.
	parts = parts[:0]
	lead := func(r row) int64 { return int64(ranks.rank(r.c.str[col][r.i])) }
	x.parallel(func(chunks []*chunk) {
		h := topK{k: k, cmp: o.compare, lead: lead, tieLoses: len(o.keys) == 1}
		var m *matcher
		if f != nil {
			m = f.matcher(x)
		}
		for _, c := range chunks {
			ids := &c.str[col]
			if m == nil {
				for i, id := range ids[:c.n] {
					if best[id/64]&(1<<(id%64)) != 0 {
						h.offer(row{c, i})
					}
				}
				continue
			}
			for i, ok := range m.fill(c) {
				if id := ids[i]; ok && best[id/64]&(1<<(id%64)) != 0 {
					h.offer(row{c, i})
				}
			}
		}
		pmu.Lock()
		parts = append(parts, h.rows)
		pmu.Unlock()
	})
	rows := slices.Concat(parts...)
	slices.SortFunc(rows, o.compare)
	return rows[:min(len(rows), k)], total
}

// bufTopK keeps the k smallest rows offered (by cmp), like topK, for inputs
// where many rows beat the k-th best so far (distinct values met in
// order): it collects the rows that beat the threshold (the k-th best at
// the last selection) in a buffer, and when the buffer is full selects the
// k best (quickselect) and moves the threshold. A row then costs about 4
// comparisons rather than the 2·log2(k) of a heap's sift.
type bufTopK struct {
	k      int
	cmp    func(a, b row) int
	rows   []row
	thr    row
	hasThr bool
}

func (h *bufTopK) offer(r row) {
	if h.k == 0 || (h.hasThr && h.cmp(r, h.thr) >= 0) {
		return
	}
	if h.rows == nil {
		h.rows = make([]row, 0, h.k+max(h.k, 1024))
	}
	h.rows = append(h.rows, r)
	if len(h.rows) == cap(h.rows) {
		h.shrink()
	}
}

// shrink keeps the k best rows and makes the worst of them the threshold.
func (h *bufTopK) shrink() {
	if len(h.rows) <= h.k {
		return
	}
	selectK(h.rows, h.k, h.cmp)
	h.rows = h.rows[:h.k]
	h.thr, h.hasThr = h.rows[h.k-1], true
}

// result returns the k best rows offered (all of them when fewer), unordered.
func (h *bufTopK) result() []row {
	h.shrink()
	return h.rows
}

// selectK reorders rows (all distinct under cmp) so that rows[:k] are the
// k smallest and rows[k-1] the largest of them (quickselect with a
// median-of-three pivot, so sorted input is a good case). 1 <= k <= len(rows).
func selectK(rows []row, k int, cmp func(a, b row) int) {
	lo, hi, target := 0, len(rows)-1, k-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if cmp(rows[mid], rows[lo]) < 0 {
			rows[mid], rows[lo] = rows[lo], rows[mid]
		}
		if cmp(rows[hi], rows[lo]) < 0 {
			rows[hi], rows[lo] = rows[lo], rows[hi]
		}
		if cmp(rows[hi], rows[mid]) < 0 {
			rows[hi], rows[mid] = rows[mid], rows[hi]
		}
		pivot := rows[mid]
		i, j := lo, hi
		for i <= j {
			for cmp(rows[i], pivot) < 0 {
				i++
			}
			for cmp(rows[j], pivot) > 0 {
				j--
			}
			if i <= j {
				rows[i], rows[j] = rows[j], rows[i]
				i++
				j--
			}
		}
		// rows[lo..j] <= pivot <= rows[i..hi]; between them, the pivot.
		switch {
		case target <= j:
			hi = j
		case target >= i:
			lo = i
		default:
			return
		}
	}
}

// idRanks numbers up to k dictionary ids in the order they are added: an
// open-addressing hash table of id<<32 | rank+1.
type idRanks struct {
	slots []uint64
	n     int
}

func (t *idRanks) add(id uint32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]uint64, max(16, 2*len(old))) // a power of two
		for _, v := range old {
			if v != 0 {
				t.put(v)
			}
		}
	}
	t.n++
	t.put(uint64(id)<<32 | uint64(t.n))
}

func (t *idRanks) put(v uint64) {
	mask := len(t.slots) - 1
	for i := hashID(uint32(v>>32)) & mask; ; i = (i + 1) & mask {
		if t.slots[i] == 0 {
			t.slots[i] = v
			return
		}
	}
}

// rank returns the rank of id, which must have been added.
func (t *idRanks) rank(id uint32) int {
	mask := len(t.slots) - 1
	for i := hashID(id) & mask; ; i = (i + 1) & mask {
		if v := t.slots[i]; uint32(v>>32) == id && v != 0 {
			return int(uint32(v)) - 1
		}
	}
}

func hashID(id uint32) int { return int((uint64(id) * 0x9E3779B97F4A7C15) >> 33) }

// selectSequential serves insertion order (or a leading rowid key): the
// first k matches met in scan order are the answer.
func (x *index) selectSequential(f *filter, reverse bool, k int, count bool) ([]row, int) {
	if f == nil || !count {
		// One pass that stops as soon as it has k rows (the total is
		// known without a scan when there is no filter).
		rows := x.scanFirst(x.chunks, f, reverse, k, false)
		if f == nil {
			return rows.rows, x.rows
		}
		return rows.rows, rows.total
	}
	var (
		pmu   sync.Mutex
		parts = map[*chunk]scanned{}
	)
	x.parallel(func(cs []*chunk) {
		p := x.scanFirst(cs, f, reverse, k, true)
		pmu.Lock()
		parts[cs[0]] = p
		pmu.Unlock()
	})
	// Merge the ranges in scan order.
	starts := make([]*chunk, 0, len(parts))
	for c := range parts {
		starts = append(starts, c)
	}
	slices.SortFunc(starts, func(a, b *chunk) int {
		if reverse {
			return cmp.Compare(b.seq0, a.seq0)
		}
		return cmp.Compare(a.seq0, b.seq0)
	})
	rows := make([]row, 0, min(k, 1024))
	total := 0
	for _, c := range starts {
		p := parts[c]
		total += p.total
		rows = append(rows, p.rows[:min(len(p.rows), k-len(rows))]...)
	}
	return rows, total
}

type scanned struct {
	rows  []row
	total int
}

// scanFirst returns the first k rows of chunks matching f (nil: all) in
// scan order and, with count, the number of matches; without count it
// stops at the k-th.
func (x *index) scanFirst(chunks []*chunk, f *filter, reverse bool, k int, count bool) scanned {
	out := scanned{rows: make([]row, 0, min(k, 1024))}
	var m *matcher
	if f != nil {
		m = f.matcher(x)
	}
	for ci := range chunks {
		if !count && len(out.rows) >= k {
			break
		}
		c := chunks[ci]
		if reverse {
			c = chunks[len(chunks)-1-ci]
		}
		if m == nil {
			for j := range c.n {
				if len(out.rows) >= k {
					break
				}
				i := j
				if reverse {
					i = c.n - 1 - j
				}
				out.rows = append(out.rows, row{c, i})
			}
			out.total += c.n
			continue
		}
		match := m.fill(c)
		for j := range c.n {
			i := j
			if reverse {
				i = c.n - 1 - j
			}
			if match[i] {
				out.total++
				if len(out.rows) < k {
					out.rows = append(out.rows, row{c, i})
				} else if !count {
					break
				}
			}
		}
	}
	return out
}

// each calls fn for the rows of chunks in order (newest first with
// reverse) until fn returns false.
func each(chunks []*chunk, reverse bool, fn func(r row) bool) {
	if reverse {
		for ci := len(chunks) - 1; ci >= 0; ci-- {
			c := chunks[ci]
			for i := c.n - 1; i >= 0; i-- {
				if !fn(row{c, i}) {
					return
				}
			}
		}
		return
	}
	for _, c := range chunks {
		for i := range c.n {
			if !fn(row{c, i}) {
				return
			}
		}
	}
}

// topK keeps the k smallest rows offered (by cmp) in a max-heap, so that a
// row worse than all k kept costs one comparison; with lead (the integer
// value of the first sort key, descending with leadDesc) that comparison
// is mostly of two integers.
type topK struct {
	k        int
	cmp      func(a, b row) int
	rows     []row
	lead     func(r row) int64
	leadDesc bool
	topLead  int64 // lead of rows[0] once the heap is full
	// tieLoses: the lead is the only sort key and rows come in insertion
	// order, so a row that ties with the top on it comes later: it is worse.
	tieLoses bool
}

func (h *topK) offer(r row) {
	if len(h.rows) < h.k {
		h.rows = append(h.rows, r)
		// sift up
		i := len(h.rows) - 1
		for i > 0 {
			p := (i - 1) / 2
			if h.cmp(h.rows[i], h.rows[p]) <= 0 {
				break
			}
			h.rows[i], h.rows[p] = h.rows[p], h.rows[i]
			i = p
		}
		if len(h.rows) == h.k && h.lead != nil {
			h.topLead = h.lead(h.rows[0])
		}
		return
	}
	if h.k == 0 {
		return
	}
	if h.lead != nil {
		// Strictly worse on the first key: worse than the top.
		if v := h.lead(r); (h.leadDesc && v < h.topLead) || (!h.leadDesc && v > h.topLead) ||
			(h.tieLoses && v == h.topLead) {
			return
		}
	}
	if h.cmp(r, h.rows[0]) >= 0 {
		return
	}
	h.rows[0] = r
	// sift down
	i, n := 0, len(h.rows)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if rr := l + 1; rr < n && h.cmp(h.rows[rr], h.rows[l]) > 0 {
			m = rr
		}
		if h.cmp(h.rows[m], h.rows[i]) <= 0 {
			break
		}
		h.rows[i], h.rows[m] = h.rows[m], h.rows[i]
		i = m
	}
	if h.lead != nil {
		h.topLead = h.lead(h.rows[0])
	}
}
