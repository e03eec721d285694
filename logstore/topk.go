package logstore

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
	// leadCreated: the lead is the creation time (offerRange reads it
	// from the chunk's column itself).
	leadCreated bool
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

// excludes reports whether no row of c can enter the full heap, whose lead
// is the creation time: c's times all rank after the worst row's.
func (h *topK) excludes(c *chunk) bool {
	if h.leadDesc {
		return c.maxCreated < h.topLead || (h.tieLoses && c.maxCreated == h.topLead)
	}
	return c.minCreated > h.topLead || (h.tieLoses && c.minCreated == h.topLead)
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
