package logstore

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
)

// parallel splits the chunks into contiguous ranges, one per worker, and
// runs fn on each concurrently. It returns when all are done; with no
// chunks it does not call fn at all.
func (x *index) parallel(fn func(chunks []*chunk)) {
	n := len(x.chunks)
	if n == 0 {
		return
	}
	w := min(runtime.GOMAXPROCS(0), n/x.tune.minChunksPerWorker)
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
	run := x.parallel
	if f == nil && o.leadCreated && k > 0 {
		// Every row matches and chunks hold time ranges that mostly
		// follow their order: one walk from the best end fills the heap
		// from the first chunk or two, then counts the others from their
		// summaries (excludes). In parallel, each worker would offer a
		// whole chunk of its own range before it could exclude the rest.
		run = func(fn func([]*chunk)) { fn(x.chunks) }
	}
	run(func(chunks []*chunk) {
		h := topK{k: k, cmp: o.compare, lead: o.lead, leadDesc: o.leadDesc,
			tieLoses: len(o.keys) == 1 && !o.reverse, leadCreated: o.leadCreated}
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
			v, n, counted := allMatch, c.n, true
			if m != nil {
				v, n, counted = m.judge(c)
			}
			if v == noneMatch {
				continue
			}
			// A chunk whose times cannot enter the heap is only counted.
			beaten := o.leadCreated && len(h.rows) == h.k && h.k > 0 && h.excludes(c)
			if beaten && counted {
				total += n
				continue
			}
			if v == allMatch {
				total += c.n
				offerRange(&h, c, o.reverse)
				continue
			}
			match := m.fill(c)
			if o.reverse {
				for i := c.n - 1; i >= 0; i-- {
					if match[i] {
						total++
						if !beaten {
							h.offer(row{c, i})
						}
					}
				}
			} else {
				for i, ok := range match {
					if ok {
						total++
						if !beaten {
							h.offer(row{c, i})
						}
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

// offerRange offers every row of c to h (newest first with reverse).
//
// With the creation time as the lead, a full heap refuses a row worse on
// it here, as offer would, without the call: a newest-first page walks a
// whole chunk, nearly all of whose rows are refused.
func offerRange(h *topK, c *chunk, reverse bool) {
	refused := func(i int) bool {
		if !h.leadCreated || len(h.rows) < h.k || h.k == 0 {
			return false
		}
		v := c.created.at(i)
		return (h.leadDesc && v < h.topLead) || (!h.leadDesc && v > h.topLead) || (h.tieLoses && v == h.topLead)
	}
	if reverse {
		for i := c.n - 1; i >= 0; i-- {
			if !refused(i) {
				h.offer(row{c, i})
			}
		}
		return
	}
	for i := range c.n {
		if !refused(i) {
			h.offer(row{c, i})
		}
	}
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
		var buf [chunkSize]uint32
		for _, c := range chunks {
			ids := c.d[col].decode(&buf, c.n)
			if m == nil {
				n += c.n
				for i, id := range ids {
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
		id := r.c.strAt(col, r.i)
		if best[id/64]&(1<<(id%64)) == 0 && ranks.n < k {
			best[id/64] |= 1 << (id % 64)
			ranks.add(id)
		}
	}
	// Second pass: the rows with one of those values; their rank is the
	// heap's integer lead, so a row of a worse value than the heap's worst
	// costs an integer comparison.
	parts = parts[:0]
	lead := func(r row) int64 { return int64(ranks.rank(r.c.strAt(col, r.i))) }
	x.parallel(func(chunks []*chunk) {
		h := topK{k: k, cmp: o.compare, lead: lead, tieLoses: len(o.keys) == 1}
		var m *matcher
		if f != nil {
			m = f.matcher(x)
		}
		var buf [chunkSize]uint32
		for _, c := range chunks {
			ids := c.d[col].decode(&buf, c.n)
			if m == nil {
				for i, id := range ids {
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
// stops at the k-th. Once it has k rows, a chunk whose matches are counted
// without visiting its rows (see matcher.judge) is not visited.
func (x *index) scanFirst(chunks []*chunk, f *filter, reverse bool, k int, count bool) scanned {
	out := scanned{rows: make([]row, 0, min(k, 1024))}
	var m *matcher
	if f != nil {
		m = f.matcher(x)
	}
	for ci := range chunks {
		full := len(out.rows) >= k
		if !count && full {
			break
		}
		c := chunks[ci]
		if reverse {
			c = chunks[len(chunks)-1-ci]
		}
		v, n, counted := allMatch, c.n, true
		if m != nil {
			v, n, counted = m.judge(c)
		}
		if v == noneMatch || (full && counted) {
			out.total += n
			continue
		}
		if v == allMatch {
			for j := range min(c.n, k-len(out.rows)) {
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
