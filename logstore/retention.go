package logstore

import (
	"fmt"
	"math"
	"os"

	"strongbox/logstore/journal"
)

// SetRetention applies new settings.logs.maxDays and minLevel at once:
// segments whose entries are all older than maxDays days are deleted, and
// maxDays 0 deletes every stored entry (and the queued ones) and turns Add
// into a no-op until retention is set again. minLevel applies to later Adds.
func (s *Store) SetRetention(maxDays, minLevel int) error {
	if maxDays < 0 {
		return fmt.Errorf("logstore: negative maxDays %d", maxDays)
	}
	s.maxDays.Store(int64(maxDays))
	s.minLevel.Store(int64(minLevel))
	if maxDays == 0 {
		s.qmu.Lock()
		clear(s.queue)
		s.done += int64(len(s.queue))
		s.queue = s.queue[:0]
		s.qbytes = 0
		s.qcond.Broadcast()
		s.qmu.Unlock()
	}
	return s.enforceRetention()
}

// enforceRetention deletes the segments past the retention window: those
// whose newest entry is older than maxDays days (all of them with maxDays 0)
// and empty ones other than the active segment. The active segment is
// rotated first when it has to go. Then, while the segments left hold more
// than MaxBytes, it deletes the oldest one (never the active one).
func (s *Store) enforceRetention() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.retain()
}

// retain is enforceRetention; the caller holds wmu.
func (s *Store) retain() error {
	if s.closed {
		return ErrClosed
	}
	if len(s.segs) == 0 {
		return nil
	}
	maxDays := s.maxDays.Load()
	cutoff := int64(math.MaxInt64)
	if maxDays > 0 {
		cutoff = clampMs(s.now()) - min(maxDays, math.MaxInt64/dayMs/2)*dayMs
	}
	expired := func(seg *segment) bool {
		return maxDays == 0 || (seg.rows > 0 && seg.maxCreated < cutoff)
	}
	active := s.segs[len(s.segs)-1]
	if active.rows > 0 && expired(active) {
		if err := s.rotate(); err != nil {
			return err
		}
	}
	gone := map[*segment]bool{}
	var keep []*segment
	total := int64(0)
	for i, seg := range s.segs {
		if i < len(s.segs)-1 && (seg.rows == 0 || expired(seg)) {
			gone[seg] = true
		} else {
			keep = append(keep, seg)
			total += seg.f.Size()
		}
	}
	// The size cap: the oldest segments go first, never the active one.
	for len(keep) > 1 && total > s.maxBytes {
		seg := keep[0]
		size := seg.f.Size()
		s.log.Info("logstore: size cap reached, oldest segment dropped",
			"path", seg.path, "bytes", size, "entries", seg.rows, "totalBytes", total, "maxBytes", s.maxBytes)
		gone[seg] = true
		keep = keep[1:]
		total -= size
	}
	if len(gone) == 0 {
		return nil
	}
	s.mu.Lock()
	s.segs = keep
	s.idx.drop(gone)
	s.idx.compactDict()
	s.mu.Unlock()
	var first error
	for seg := range gone {
		if err := seg.f.Close(); err != nil && first == nil {
			first = err
		}
		if err := os.Remove(seg.path); err != nil && first == nil {
			first = err
		}
	}
	if err := journal.SyncDir(s.dir); err != nil && first == nil {
		first = err
	}
	if first != nil {
		return fmt.Errorf("logstore: retention: %w", first)
	}
	return nil
}
