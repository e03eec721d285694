package logstore

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Paging defaults and limits of List (interface §4.3, §8; the cap is PocketBase's).
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
		if out.Items, err = s.readEntries(rows[offset:min(len(rows), k)]); err != nil {
			out.Items = []Entry{}
			return out, err
		}
	}
	return out, nil
}

// readEntries reads the entries of rows from their segments, returned in
// the order of rows. Each segment's are read in the order of their
// offsets with File.ReadFrames, so a page of neighbouring entries (the
// newest, say) takes one read instead of two per entry.
//
// A request log is built from the index alone (index.requestEntry): its
// columns hold every field, so it costs no read and no copy of its
// strings. Only the other logs, whose data the index keeps decoded in a
// map a caller could change, are read back from their frames.
func (s *Store) readEntries(rows []row) ([]Entry, error) {
	out := make([]Entry, len(rows))
	order := make([]int, 0, len(rows))
	for i, r := range rows {
		if r.c.flagsAt(r.i)&rowOther == 0 {
			out[i] = s.idx.requestEntry(r)
		} else {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		ra, rb := rows[a], rows[b]
		if c := cmp.Compare(ra.c.seg.firstSeq, rb.c.seg.firstSeq); c != 0 {
			return c
		}
		return cmp.Compare(ra.c.offAt(ra.i), rb.c.offAt(rb.i))
	})
	offs := make([]int64, 0, len(rows))
	var buf []byte
	for lo := 0; lo < len(order); {
		seg := rows[order[lo]].c.seg
		hi := lo
		for offs = offs[:0]; hi < len(order) && rows[order[hi]].c.seg == seg; hi++ {
			r := rows[order[hi]]
			offs = append(offs, int64(r.c.offAt(r.i)))
		}
		var err error
		buf, err = seg.f.ReadFrames(buf, offs, func(i int, p []byte) error {
			var rec record
			if err := decodeRecord(p, &rec); err != nil {
				return fmt.Errorf("%s at %d: %w", seg.path, offs[i], err)
			}
			out[order[lo+i]] = rec.entry(seg.key)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("logstore: read entry: %w", err)
		}
		lo = hi
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
	if seq, ok := x.foreign.seqOf(id); ok {
		if r, ok = x.find(seq); !ok {
			return Entry{}, ErrNotFound
		}
	} else {
		seq, ok := idSeq(id)
		if !ok {
			return Entry{}, ErrNotFound
		}
		if r, ok = x.find(seq); !ok || r.c.flagsAt(r.i)&flagForeignID != 0 {
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
	p, err := seg.f.ReadFrameInto(buf, int64(r.c.offAt(r.i)))
	if err != nil {
		return Entry{}, buf, fmt.Errorf("logstore: read entry: %w", err)
	}
	var rec record
	if err := decodeRecord(p, &rec); err != nil {
		return Entry{}, p, fmt.Errorf("logstore: read entry %s at %d: %w", seg.path, r.c.offAt(r.i), err)
	}
	return rec.entry(seg.key), p, nil
}

// requestEntry is the entry of the request log at row r, from the index's
// columns: what record.entry gives for its frame (TestRequestEntryFromIndex).
func (x *index) requestEntry(r row) Entry {
	c, i, strs := r.c, r.i, x.dict.strs
	str := func(col strCol) string { return strs[c.strAt(col, i)] }
	q := &Request{
		Auth: str(colAuth), ExecTime: c.execAt(i), Method: str(colMethod), Referer: str(colReferer),
		RemoteIP: str(colRemoteIP), Status: int(c.statusAt(i)), URL: str(colURL), UserAgent: str(colUserAgent), UserIP: str(colUserIP),
	}
	if ex := r.extra(); ex != nil {
		q.AuthID = strs[ex.authID]
		if c.flagsAt(i)&flagError != 0 {
			q.Error = strs[ex.errMsg]
			q.Details = decodeDetails(strs[ex.details])
		}
	}
	return Entry{ID: x.id(r), Created: fromMs(c.createdAt(i)), Level: int(c.levelAt(i)), Message: x.message(r), Request: q}
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
	// The request's texts are copied into one string, which each field
	// is a part of: one allocation instead of one a field.
	fields := [...][]byte{rec.auth, rec.authID, rec.method, rec.referer, rec.remoteIP, rec.url, rec.userAgent, rec.userIP, rec.errMsg}
	n := 0
	for _, f := range fields {
		n += len(f)
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, f := range fields {
		sb.Write(f)
	}
	all := sb.String()
	var strs [len(fields)]string
	for i, f := range fields {
		strs[i], all = all[:len(f)], all[len(f):]
	}
	e.Request = &Request{
		Auth: strs[0], AuthID: strs[1], ExecTime: rec.execTime, Method: strs[2], Referer: strs[3],
		RemoteIP: strs[4], Status: int(rec.status), URL: strs[5], UserAgent: strs[6], UserIP: strs[7],
	}
	if rec.flags&flagError != 0 {
		e.Request.Error = strs[8]
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
			v := allMatch
			if m != nil {
				v, _, _ = m.judge(c)
			}
			switch {
			case v == noneMatch:
				continue
			case v == allMatch && c.sealed:
				// A sealed chunk has its counts per hour.
				for _, h := range c.hours {
					counts[h.hour] += h.n
				}
				continue
			case v == allMatch:
				for i := range c.n {
					add(c.createdAt(i))
				}
				continue
			}
			for i, ok := range m.fill(c) {
				if ok {
					add(c.createdAt(i))
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
