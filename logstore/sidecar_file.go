package logstore

import (
	"os"
	"strings"

	"strongbox/logstore/journal"
)

// loadSidecar indexes seg from its sidecar and opens it without reading
// its frames. It reports false, changing nothing, when the sidecar is
// missing, damaged, stale (the segment's size or tail differs), of another
// segment or format: the caller then decodes the segment.
func (s *Store) loadSidecar(seg *segment, limit int64) (*index, bool) {
	b, err := os.ReadFile(sidecarPath(seg.path))
	if err != nil {
		return nil, false // none: the first start after an upgrade, or a crash
	}
	fi, err := os.Stat(seg.path)
	if err != nil {
		return nil, false
	}
	size := fi.Size()
	tail, err := tailCRC(seg.path, size)
	if err != nil {
		return nil, false
	}
	x, err := decodeSidecar(b, sidecarFile{seg: seg, size: size, tail: tail, limit: limit})
	if err == errSidecar {
		s.log.Warn("logstore: index sidecar damaged, segment decoded", "path", seg.path)
	}
	if err != nil {
		return nil, false
	}
	f, err := journal.OpenSized(seg.path, s.journalOptions(), size)
	if err != nil {
		seg.rows, seg.lastSeq, seg.maxCreated = 0, seg.firstSeq-1, 0
		return nil, false
	}
	seg.f = f
	seg.sidecar.Store(size)
	return x, true
}

// sidecarsLater writes the sidecars of segs, which no longer grow, in the
// background, one after the other; Close stops and waits for it.
func (s *Store) sidecarsLater(segs []*segment) {
	if len(segs) == 0 || s.scStop.Load() {
		return
	}
	s.scWG.Go(func() {
		for _, seg := range segs {
			if s.scStop.Load() {
				return
			}
			s.writeSidecar(seg, false)
		}
	})
}

// writeSidecar writes the sidecar of seg, unless it is deleted or its
// sidecar is current. A failure (a full disk) is logged and harmless: the
// segment is decoded at the next start. locked says whether the caller
// holds wmu, which lets it read the index without mu.
func (s *Store) writeSidecar(seg *segment, locked bool) {
	if seg.gone.Load() || seg.f == nil {
		return
	}
	size := seg.f.Size()
	if seg.sidecar.Load() == size {
		return
	}
	tail, err := tailCRC(seg.path, size)
	if err != nil {
		return // deleted meanwhile
	}
	if !locked {
		s.mu.RLock()
	}
	b := s.idx.encodeSidecar(seg, size, tail)
	if !locked {
		s.mu.RUnlock()
	}
	if b == nil {
		return
	}
	s.scMu.Lock()
	defer s.scMu.Unlock()
	if seg.gone.Load() {
		return
	}
	if err := s.storeSidecar(seg.path, b); err != nil {
		s.log.Warn("logstore: index sidecar not written: the segment is decoded at the next start",
			"path", seg.path, "error", err)
		return
	}
	seg.sidecar.Store(size)
}

// storeSidecar writes b as the sidecar of the segment at path: into a
// temporary file, fsynced, then renamed over the old sidecar. On error the
// temporary file is removed and the old sidecar, if any, stays (stale, so
// Open ignores it).
func (s *Store) storeSidecar(path string, b []byte) error {
	tmp := strings.TrimSuffix(path, ".seg") + sidecarTmp
	h, err := s.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = h.Write(b)
	if err == nil {
		err = h.Sync()
	}
	if cerr := h.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.fs.Rename(tmp, sidecarPath(path))
	}
	if err != nil {
		s.fs.Remove(tmp)
		return err
	}
	return s.fs.SyncDir(s.dir)
}

// sealForClose seals the last chunk and writes the sidecar of every
// segment that has no current one, the active one included: the next Open
// then reads no frame. The caller holds wmu, the writer has stopped and
// the background writers are done.
func (s *Store) sealForClose() {
	s.mu.Lock()
	s.idx.sealAll()
	s.mu.Unlock()
	for _, seg := range s.segs {
		s.writeSidecar(seg, true)
	}
}

// sealRotated seals the last chunk of prev, the segment that was active
// until now, and writes its sidecar in the background. The caller holds
// wmu and mu.
func (s *Store) sealRotated(prev *segment) {
	if n := len(s.idx.chunks); n > 0 && s.idx.chunks[n-1].seg == prev {
		s.idx.chunks[n-1].seal()
	}
	s.sidecarsLater([]*segment{prev})
}

// removeSidecar deletes the sidecar of seg, which retention deleted (or
// keeps its path for the next pass). The caller holds wmu.
func (s *Store) removeSidecar(seg *segment) error {
	seg.gone.Store(true)
	s.scMu.Lock()
	defer s.scMu.Unlock()
	return s.remove(sidecarPath(seg.path))
}

// removeOrphans deletes the sidecars (and temporary sidecars) among names
// whose segment is not in segs: left by a crash, or by a deletion that
// failed.
func (s *Store) removeOrphans(names []string, segs map[string]bool) {
	for _, name := range names {
		base, ok := strings.CutSuffix(name, sidecarExt)
		if ok && segs[base+".seg"] {
			continue
		}
		s.fs.Remove(s.dir + string(os.PathSeparator) + name)
	}
}
