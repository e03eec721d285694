package logstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"strongbox/logstore/journal"
)

// faultLogEvery is how often, at most, the writer logs that writes keep
// failing, so that a full disk does not flood the server's log.
const faultLogEvery = time.Minute

// commit writes batch to the active segment, fsyncs it and indexes it, then
// enforces the size cap.
func (s *Store) commit(batch []Entry) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.commitLocked(batch)
	s.noteFault(len(batch), err)
	if s.totalSize() > s.maxBytes {
		if _, rerr := s.retain(s.maxDays.Load()); rerr != nil {
			s.log.Error("logstore: retention", "error", rerr)
		}
	}
	return err
}

// totalSize returns the size of the segment files. The caller holds wmu.
func (s *Store) totalSize() int64 {
	var n int64
	for _, seg := range s.segs {
		n += seg.f.Size()
	}
	return n
}

// commitLocked is commit without the cap; the caller holds wmu.
func (s *Store) commitLocked(batch []Entry) error {
	if s.maxDays.Load() == 0 {
		return nil // logging was turned off while these waited
	}
	today := floorDiv(clampMs(s.now()), dayMs)
	if len(s.segs) == 0 {
		// No segment could be created (a full disk): try again, or lose
		// the batch like any the disk refuses.
		if err := s.newSegment(msgNoSpace); err != nil {
			return fmt.Errorf("logstore: write: %w", err)
		}
	}
	seg := s.segs[len(s.segs)-1]
	overfill := false // rotation failed: let the active segment grow past segSize
	if seg.rows > 0 && (seg.f.Size() >= s.segSize || today != seg.day) {
		overfill = s.rotate() != nil
	}
	if seg = s.segs[len(s.segs)-1]; seg.rows == 0 {
		seg.day = today // an empty segment takes the entries of today
	}
	var inBatch map[string]bool // caller-supplied ids taken in this batch
	for len(batch) > 0 {
		seg = s.segs[len(s.segs)-1]
		size := seg.f.Size()
		buf, pos := s.wbuf[:0], s.wpos[:0]
		n := 0 // entries of batch consumed
		for ; n < len(batch); n++ {
			e := &batch[n]
			if s.nextSeq > maxSeq {
				return fmt.Errorf("logstore: sequence numbers exhausted")
			}
			foreign := ""
			if e.ID != "" && validID(e.ID) && !inBatch[e.ID] && !s.idInUse(e.ID, seg.key) {
				foreign = e.ID
			}
			s.jbuf = s.encode(s.jbuf[:0], e, foreign)
			if len(s.jbuf) > journal.MaxRecord {
				s.log.Warn("logstore: log entry too large, dropped", "bytes", len(s.jbuf))
				continue
			}
			if !overfill && (len(pos) > 0 || seg.rows > 0) && size+int64(len(buf))+journal.FrameSize(len(s.jbuf)) > s.segSize {
				break // the rest goes to a new segment (an empty one takes any entry)
			}
			if foreign != "" {
				if inBatch == nil {
					inBatch = map[string]bool{}
				}
				inBatch[foreign] = true
			}
			s.nextSeq++
			pos = append(pos, len(buf))
			buf = journal.AppendFrame(buf, s.jbuf)
		}
		s.wbuf, s.wpos = buf, pos
		batch = batch[n:]
		if err := s.write(seg, buf, pos); err != nil {
			return err
		}
		if len(batch) > 0 {
			overfill = s.rotate() != nil
		}
	}
	return nil
}

// encode appends the payload of e (with the next sequence number) to b.
func (s *Store) encode(b []byte, e *Entry, foreignID string) []byte {
	e.validUTF8()
	var details, attrs []byte
	if r := e.Request; r != nil {
		if r.Error != "" {
			details = s.marshalJSON(r.Details)
		}
		if math.IsNaN(r.ExecTime) || math.IsInf(r.ExecTime, 0) {
			c := *r
			c.ExecTime = 0
			e.Request = &c
		}
	} else if len(e.Attrs) > 0 {
		attrs = s.marshalAttrs(e.Attrs)
	}
	return appendRecord(b, e, s.nextSeq, clampMs(e.Created), foreignID, details, attrs)
}

// write appends the frames in buf (starting at the offsets pos) to seg,
// fsyncs them and indexes them.
func (s *Store) write(seg *segment, buf []byte, pos []int) error {
	if len(pos) == 0 {
		return nil
	}
	off, err := seg.f.Write(buf)
	if err == nil {
		err = seg.f.Sync()
	}
	if err != nil {
		// The journal has cut the segment back to its last good frame and
		// takes the next batch as if this one had never been written:
		// these entries are lost (noteCommit logs it), nothing else.
		return fmt.Errorf("logstore: write: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var rec record
	for _, p := range pos {
		n := binary.LittleEndian.Uint32(buf[p+4:])
		err := decodeRecord(buf[p+journal.FrameOverhead:][:n], &rec)
		if err == nil {
			err = s.idx.add(seg, off+int64(p), &rec)
		}
		if err != nil { // only after a bug: the payload was just encoded
			s.log.Error("logstore: committed entry not indexed", "path", seg.path, "error", err)
		}
	}
	return nil
}

// idInUse reports whether a caller-supplied id is taken: by another
// caller-supplied id or by a derived id (current or future).
func (s *Store) idInUse(id string, key uint64) bool {
	if _, ok := s.idx.foreign.seqOf(id); ok {
		return true
	}
	seq, _ := idSeq(id)
	if d := makeID(seq, key); string(d[:]) == id {
		return true
	}
	if r, ok := s.idx.find(seq); ok {
		d := makeID(seq, r.c.seg.key)
		return string(d[:]) == id
	}
	return false
}

// marshalJSON encodes a request's details. A value encoding/json cannot
// encode is stored as its fmt text.
func (s *Store) marshalJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}

// marshalAttrs encodes the attributes of another log, replacing values
// encoding/json cannot encode by their fmt text.
func (s *Store) marshalAttrs(m map[string]any) []byte {
	b, err := json.Marshal(m)
	if err == nil {
		return b
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		if _, err := json.Marshal(v); err != nil {
			v = fmt.Sprint(v)
		}
		c[k] = v
	}
	b, _ = json.Marshal(c)
	return b
}

// isStorage reports whether err is a failure of the disk (full or
// failing), which a later write may not meet.
func isStorage(err error) bool {
	return errors.Is(err, journal.ErrStorageFull) || errors.Is(err, journal.ErrStorageFailed)
}

// noteFault records the outcome of committing n entries for Health, and
// logs a failing disk when it starts failing, at most every faultLogEvery
// while it fails, and when it works again. n is 0 for a failure that lost
// no entries (a segment Open or retention could not create), which the
// caller logged. The caller holds wmu.
func (s *Store) noteFault(n int, err error) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if err == nil {
		if s.fault != nil {
			s.log.Info("logstore: writes work again", "entriesLost", s.lost)
			s.fault, s.lost = nil, 0
		}
		return
	}
	if !isStorage(err) {
		s.log.Error("logstore: commit failed, log entries lost", "entries", n, "error", err)
		return
	}
	s.lost += int64(n)
	now := time.Now()
	if n > 0 && (s.fault == nil || now.Sub(s.faultLog) >= faultLogEvery) {
		s.log.Error("logstore: write failed, log entries lost", "entriesLost", s.lost, "error", err)
		s.faultLog = now
	}
	s.fault = err
}

// probeInterval is how often, at most, Health probes the disk of a
// degraded store (by Options.Now).
const probeInterval = time.Second

// Health returns nil while the store can write, or the error of the last
// failed write, which wraps journal.ErrStorageFull or
// journal.ErrStorageFailed. Entries are written within the flush interval
// of being added (a request logs one), and the first write that succeeds
// makes the store healthy again. So that it reports recovery even when
// nothing is logged (logging off, or no segment to write to), a degraded
// store probes the disk when asked, at most once per probeInterval: it
// creates the missing segment, or tests the active one (journal.File.Probe).
func (s *Store) Health() error {
	s.hmu.Lock()
	err := s.fault
	now := s.now()
	due := err != nil && (now.Sub(s.probeAt) >= probeInterval || now.Before(s.probeAt))
	if due {
		s.probeAt = now
	}
	s.hmu.Unlock()
	if !due || !s.wmu.TryLock() { // the writer is at it: its outcome will tell
		return err
	}
	defer s.wmu.Unlock()
	if s.closed {
		return err
	}
	var perr error
	if len(s.segs) == 0 {
		// Not rotate: a probe that fails is not news, and is not logged.
		var seg *segment
		if seg, perr = s.createSegment(s.nextSeq, s.key); perr == nil {
			s.addSegment(seg)
		}
	} else {
		perr = s.segs[len(s.segs)-1].f.Probe()
	}
	if perr != nil {
		s.hmu.Lock()
		s.fault = perr
		s.hmu.Unlock()
		return perr
	}
	s.noteFault(0, nil)
	return nil
}
