package logstore

import (
	"strings"
	"sync"
	"sync/atomic"
)

// memoTable holds the answers of a filter part per value of its column
// (see filter): per value, 2 bits per slot (0 unknown, 1 no match, 2
// match). Slot 0 is the answer for the value itself; for the message
// memo, slots 1 to msgKeys are the answers for a derived message with that
// url id and the slot's (method, derivation) key. The scans of a query
// share it, and later queries of the same part reuse it (index.memo), so a
// value is evaluated once, not once per scan or per query. It is safe for
// concurrent use: a value evaluated by two scans at once is stored twice,
// the same answer.
type memoTable struct {
	words []atomic.Uint32
	mu    sync.Mutex
	keys  atomic.Pointer[[]uint64] // the message memo's keys, by slot-1
}

// msgKeys is the number of (method, derivation) pairs memoised for derived
// messages; rows with other pairs are evaluated one by one.
const msgKeys = 15

// get returns the answer for value v in slot k: -1 unknown, 0 or 1.
func (t *memoTable) get(v, k int) int8 {
	return int8(t.words[v].Load()>>(2*k)&3) - 1
}

// set stores the answer ans (0 or 1) for value v in slot k.
func (t *memoTable) set(v, k int, ans int8) {
	t.words[v].Or(uint32(ans+1) << (2 * k))
}

// slot returns the slot of a message memo key, or -1 when every slot is
// taken by other keys.
func (t *memoTable) slot(key uint64) int {
	if p := t.keys.Load(); p != nil {
		for i, have := range *p {
			if have == key {
				return i + 1
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var keys []uint64
	if p := t.keys.Load(); p != nil {
		keys = *p
	}
	for i, have := range keys {
		if have == key {
			return i + 1
		}
	}
	if len(keys) == msgKeys {
		return -1
	}
	keys = append(keys[:len(keys):len(keys)], key)
	t.keys.Store(&keys)
	return len(keys)
}

// maxMemos bounds the memo tables an index keeps for later queries.
const maxMemos = 32

// memo returns the memo table of the filter part src with at least size
// values: the one kept from an earlier query of src, grown when the
// dictionary has grown, or a new one. A part whose answer may depend on
// the time (a date macro) gets a new table each query.
func (x *index) memo(src string, size int) *memoTable {
	if strings.Contains(src, "@") {
		return &memoTable{words: make([]atomic.Uint32, size)}
	}
	x.memoMu.Lock()
	defer x.memoMu.Unlock()
	t := x.memos[src]
	if t != nil && len(t.words) >= size {
		return t
	}
	nt := &memoTable{words: make([]atomic.Uint32, size+size/4)}
	if t != nil {
		for i := range t.words {
			nt.words[i].Store(t.words[i].Load())
		}
		nt.keys.Store(t.keys.Load())
	}
	if x.memos == nil || len(x.memos) >= maxMemos {
		x.memos = map[string]*memoTable{}
	}
	x.memos[src] = nt
	return nt
}

// forgetMemos drops the memo tables and the counts of matches, when
// dictionary ids change or chunks are dropped.
func (x *index) forgetMemos() {
	x.memoMu.Lock()
	x.memos, x.counts = nil, nil
	x.memoMu.Unlock()
}

// chunkCounts holds the number of rows of each sealed chunk that a filter
// matches, as its scans found them: a sealed chunk never changes, so a
// later query with the same filter counts it without visiting its rows
// (a page further on, or the same page again, asks for the same filter
// with a new page). It is safe for concurrent use.
type chunkCounts struct {
	mu sync.Mutex
	n  map[*chunk]int32
}

func (cc *chunkCounts) get(c *chunk) (int, bool) {
	cc.mu.Lock()
	n, ok := cc.n[c]
	cc.mu.Unlock()
	return int(n), ok
}

func (cc *chunkCounts) put(c *chunk, n int) {
	cc.mu.Lock()
	cc.n[c] = int32(n)
	cc.mu.Unlock()
}

// chunkCounts returns the counts of matches per chunk of the filter src
// (nil for one that may depend on the time).
func (x *index) chunkCounts(src string) *chunkCounts {
	if strings.Contains(src, "@") {
		return nil
	}
	x.memoMu.Lock()
	defer x.memoMu.Unlock()
	cc := x.counts[src]
	if cc == nil {
		if x.counts == nil || len(x.counts) >= maxMemos {
			x.counts = map[string]*chunkCounts{}
		}
		cc = &chunkCounts{n: map[*chunk]int32{}}
		x.counts[src] = cc
	}
	return cc
}
