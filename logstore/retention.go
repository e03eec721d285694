package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
)

// SetRetention applies new settings.logs.maxDays and minLevel at once:
// segments whose entries are all older than maxDays days are deleted, and
// maxDays 0 deletes every stored entry (and the queued ones) and turns Add
// into a no-op until retention is set again. minLevel applies to later Adds.
//
// Deleting needs no space, so a full disk does not stop it: when it
// returns, the entries are gone from the index and their files from the
// directory. Only a file the file system refuses to delete (an I/O error,
// not a full disk) makes it fail; those files are no longer listed, and
// every later retention pass tries again.
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

// Trim deletes what retention with maxDays days (0: every stored entry)
// deletes, without changing the retention, and returns the bytes of
// segment files deleted. It is for a caller that needs space to save a
// lower logs.maxDays on a full disk: deleting needs none, so it frees the
// space first, then saves, then applies the setting with SetRetention.
func (s *Store) Trim(maxDays int) (int64, error) {
	if maxDays < 0 {
		return 0, fmt.Errorf("logstore: negative maxDays %d", maxDays)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.retain(int64(maxDays))
}

// enforceRetention deletes the segments past the retention window: those
// whose newest entry is older than maxDays days (all of them with maxDays 0)
// and empty ones other than the active segment. Then, while the segments
// left hold more than MaxBytes, it deletes the oldest one (never the active
// one).
func (s *Store) enforceRetention() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.retain(s.maxDays.Load())
	return err
}

// retain is enforceRetention with a retention of maxDays days; it returns
// the bytes deleted. The caller holds wmu.
//
// When the active segment has to go, an empty one is started first, which
// keeps the sequence and the id key for the next entries. A full disk has
// no room for it: the active segment goes all the same, and the empty one
// is created after the deletion, if that made room, or else by the next
// commit (or Health's probe), from the sequence and key in memory.
func (s *Store) retain(maxDays int64) (int64, error) {
	if s.closed {
		return 0, ErrClosed
	}
	first := s.removeStale()
	if len(s.segs) == 0 {
		return 0, first
	}
	cutoff := int64(math.MaxInt64)
	if maxDays > 0 {
		cutoff = clampMs(s.now()) - min(maxDays, math.MaxInt64/dayMs/2)*dayMs
	}
	expired := func(seg *segment) bool {
		return maxDays == 0 || (seg.rows > 0 && seg.maxCreated < cutoff)
	}
	dropActive := false
	if active := s.segs[len(s.segs)-1]; active.rows > 0 && expired(active) {
		dropActive = s.newSegment(msgRetain) != nil
	}
	gone := map[*segment]bool{}
	var keep []*segment
	total := int64(0)
	for i, seg := range s.segs {
		if i < len(s.segs)-1 && (seg.rows == 0 || expired(seg)) || i == len(s.segs)-1 && dropActive {
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
		return 0, first
	}
	s.mu.Lock()
	s.segs = keep
	s.idx.drop(gone)
	s.idx.compactDict()
	s.mu.Unlock()
	freed := int64(0)
	for seg := range gone {
		size := seg.f.Size()
		s.retained.Add(int64(seg.rows))
		s.retainedBytes.Add(size)
		seg.f.Discard() // the file goes: nothing in it needs an fsync
		if err := s.remove(seg.path); err != nil {
			first = cmp.Or(first, err)
			continue
		}
		freed += size
		first = cmp.Or(first, s.removeSidecar(seg))
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		first = cmp.Or(first, err)
	}
	if dropActive && len(s.segs) == 0 {
		// The deletion may have made room for the segment that rotate
		// could not create: if not, it is not news (newSegment logged it).
		// Health reports the missing segment, and its probe creates it.
		if seg, err := s.createSegment(s.nextSeq, s.key); err == nil {
			s.addSegment(seg)
		} else {
			s.noteFault(0, err)
		}
	}
	if first != nil {
		return freed, fmt.Errorf("logstore: retention: %w", first)
	}
	return freed, nil
}

// remove deletes the segment file path, or keeps it for the next pass to
// try again. The caller holds wmu.
func (s *Store) remove(path string) error {
	if err := s.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.stale = append(s.stale, path)
		return err
	}
	return nil
}

// removeStale tries again to delete the files earlier passes could not,
// and returns the first error. The caller holds wmu.
func (s *Store) removeStale() error {
	paths := s.stale
	s.stale = nil
	var first error
	for _, p := range paths {
		first = cmp.Or(first, s.remove(p))
	}
	return first
}
