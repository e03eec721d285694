package logstore

import (
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"strongbox/logstore/journal"
)

const (
	// Rotation that fails (a full disk cannot take a new segment file) is
	// retried after a back-off that doubles from minRotateWait to
	// maxRotateWait; meanwhile the active segment grows past its size.
	minRotateWait = time.Second
	maxRotateWait = time.Minute
)

// segment is one segment file: a journal of records with consecutive
// sequence numbers from firstSeq on.
type segment struct {
	path     string
	firstSeq int64
	key      uint64
	f        *journal.File

	// Guarded by Store.mu (written with Store.wmu held as well).
	lastSeq    int64 // last indexed sequence number; firstSeq-1 when empty
	rows       int
	maxCreated int64 // newest Created of its rows (Unix ms)
	day        int64 // UTC day it holds entries of, for rotation

	// The index sidecar (sidecar.go): the segment size its sidecar on
	// disk describes (0: none known); gone once retention deletes the
	// segment, so that no sidecar is written after; needSidecar, set by
	// the load, for a segment it decoded.
	sidecar     atomic.Int64
	gone        atomic.Bool
	needSidecar bool
}

// segmentName is the file name of the segment whose first record has
// sequence number firstSeq, in a directory whose id key is key.
func segmentName(firstSeq int64, key uint64) string {
	return fmt.Sprintf("%016x-%016x.seg", firstSeq, key)
}

// parseSegmentName is the inverse of segmentName.
func parseSegmentName(name string) (firstSeq int64, key uint64, ok bool) {
	if len(name) != 37 || name[16] != '-' || name[33:] != ".seg" {
		return 0, 0, false
	}
	a, err1 := strconv.ParseUint(name[:16], 16, 64)
	b, err2 := strconv.ParseUint(name[17:33], 16, 64)
	if err1 != nil || err2 != nil || a < 1 || a > maxSeq {
		return 0, 0, false
	}
	return int64(a), b, true
}

// journalOptions returns the options segments are opened with: an fsync
// slower than the group-commit window breaks the store's promise that an
// entry is durable within it, and is logged.
func (s *Store) journalOptions() journal.Options {
	return journal.Options{FS: s.fs, Logger: s.log, SyncWindow: s.window}
}

// createSegment creates an empty segment file whose first record will have
// sequence number first. If that fails, no file is left behind.
func (s *Store) createSegment(first int64, key uint64) (*segment, error) {
	path := filepath.Join(s.dir, segmentName(first, key))
	f, err := journal.Open(path, s.journalOptions(), nil)
	if err != nil {
		return nil, fmt.Errorf("logstore: create segment: %w", err)
	}
	return &segment{
		path:     path,
		firstSeq: first,
		key:      key,
		f:        f,
		lastSeq:  first - 1,
		day:      floorDiv(clampMs(s.now()), dayMs),
	}, nil
}

// Errors logged when a new segment cannot be created, by what it was for.
const (
	msgRotate   = "logstore: rotate segment: the active segment takes new entries meanwhile"
	msgRetain   = "logstore: retention: no room for a new segment, the expired active one is deleted all the same"
	msgNoSpace  = "logstore: create segment: log entries are lost until it can be created"
	msgOpenFull = "logstore: open: no room for a segment: the stored logs are served, new entries are lost until there is room"
)

// rotate starts a new active segment (see newSegment).
func (s *Store) rotate() error { return s.newSegment(msgRotate) }

// newSegment creates a segment and makes it the active one: the next one,
// or the first of a store that has none (its segments were created or
// deleted on a full disk). If that fails it logs why (msg), and further
// calls fail at once, with the same error, until a back-off has passed:
// the active segment, if any, takes the entries meanwhile. The caller
// holds wmu.
func (s *Store) newSegment(msg string) error {
	now := time.Now()
	if now.Before(s.rotAfter) {
		return s.rotErr
	}
	seg, err := s.createSegment(s.nextSeq, s.key)
	if err != nil {
		s.rotWait = min(max(2*s.rotWait, minRotateWait), maxRotateWait)
		s.rotAfter, s.rotErr = now.Add(s.rotWait), err
		s.log.Error(msg, "error", err, "retryIn", s.rotWait)
		return err
	}
	s.addSegment(seg)
	return nil
}

// addSegment makes seg, just created, the active segment and ends the
// rotation back-off; the segment active until now no longer grows, and its
// sidecar is written. The caller holds wmu.
func (s *Store) addSegment(seg *segment) {
	s.rotWait, s.rotAfter, s.rotErr = 0, time.Time{}, nil
	s.mu.Lock()
	if n := len(s.segs); n > 0 {
		s.sealRotated(s.segs[n-1])
	}
	s.segs = append(s.segs, seg)
	s.mu.Unlock()
}
