package logstore

// Counters are a store's sizes and running totals, for the server's
// metrics: a snapshot, cheap enough to take at every scrape (it takes no
// lock a commit holds while it writes). The totals count from Open: a
// store reopened starts them again.
type Counters struct {
	Entries int   // entries in the index
	Bytes   int64 // size of the segment files
	// Retained and RetainedBytes are the entries and segment bytes that
	// retention (maxDays, the size cap, Trim) deleted.
	Retained, RetainedBytes int64
	// Dropped is the entries Add dropped because the writer's queue was
	// full; Pending the entries queued and not yet committed.
	Dropped, Pending int64
}

// Counters returns the store's counters now.
func (s *Store) Counters() Counters {
	s.mu.RLock()
	c := Counters{Entries: s.idx.rows}
	for _, seg := range s.segs {
		c.Bytes += seg.f.Size()
	}
	s.mu.RUnlock()
	c.Retained, c.RetainedBytes = s.retained.Load(), s.retainedBytes.Load()
	s.qmu.Lock()
	c.Dropped, c.Pending = s.dropped, s.queued-s.done
	s.qmu.Unlock()
	return c
}
