package logstore

import (
	"slices"
)

// Tail is what After returns: the entries that follow a sequence number,
// in the order they were stored.
type Tail struct {
	// Entries are the entries after the sequence number asked for, oldest
	// first.
	Entries []Entry

	// Last is the sequence number (rowid) of the last of Entries: where
	// the next call goes on from. With no entries it is the one asked
	// for.
	Last int64

	// Gap counts the sequence numbers between the one asked for and Last
	// that no entry holds: entries deleted before they were read
	// (retention, the size cap), or never stored (a batch the disk
	// refused, a damaged frame skipped at Open).
	Gap int64

	// Newest is the sequence number of the newest indexed entry, 0 when
	// the store is empty: Newest - Last entries remain after these.
	Newest int64

	// Key is the id key of the store's directory (see Segments), 0 while
	// it has no segment. A sequence number means something only with its
	// key: a new directory (logging turned off with maxDays 0, then a
	// restart; another data dir restored) draws a new key and starts its
	// sequence again at 1.
	Key uint64
}

// After returns up to n entries whose sequence number is greater than
// seq, oldest first: an ordered read of the store from a position, for a
// reader that keeps its own cursor (the export of package
// strongbox/logstore/otlp). Only durable entries are indexed, so every
// entry it returns is on disk.
func (s *Store) After(seq int64, n int) (Tail, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := Tail{Last: seq}
	if s.closed {
		return t, ErrClosed
	}
	if len(s.segs) > 0 {
		t.Key = s.segs[len(s.segs)-1].key
	}
	x := s.idx
	if len(x.chunks) == 0 {
		return t, nil
	}
	last := x.chunks[len(x.chunks)-1]
	t.Newest = last.rowSeq(last.n - 1)
	if n <= 0 || t.Newest <= seq {
		return t, nil
	}
	// The first chunk whose row 0 comes after seq, and the one before it,
	// which may hold rows after seq too.
	ci, _ := slices.BinarySearchFunc(x.chunks, seq, func(c *chunk, seq int64) int {
		if c.seq0 > seq {
			return 1
		}
		return -1
	})
	rows := make([]row, 0, min(n, x.rows))
	for _, c := range x.chunks[max(ci-1, 0):] {
		for i := range c.n {
			if c.rowSeq(i) > seq {
				rows = append(rows, row{c, i})
				if len(rows) == n {
					break
				}
			}
		}
		if len(rows) == n {
			break
		}
	}
	entries, err := s.readEntries(rows) // neighbours: a read per span, not per entry
	if err != nil {
		return Tail{Last: seq, Key: t.Key, Newest: t.Newest}, err
	}
	t.Entries = entries
	for _, r := range rows {
		t.Gap += r.seq() - t.Last - 1
		t.Last = r.seq()
	}
	return t, nil
}
