package logstore

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strongbox/logstore/journal"
)

// load opens and indexes the existing segments.
func (s *Store) load() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("logstore: open %s: %w", s.dir, err)
	}
	var sidecars []string
	names := map[string]bool{}
	for _, de := range ents {
		if n := de.Name(); strings.HasSuffix(n, sidecarExt) || strings.HasSuffix(n, sidecarTmp) {
			sidecars = append(sidecars, n)
		}
		first, key, ok := parseSegmentName(de.Name())
		if !ok || !de.Type().IsRegular() {
			continue
		}
		names[de.Name()] = true
		s.segs = append(s.segs, &segment{
			path:     filepath.Join(s.dir, de.Name()),
			firstSeq: first,
			key:      key,
			lastSeq:  first - 1,
		})
	}
	slices.SortFunc(s.segs, func(a, b *segment) int { return cmp.Compare(a.firstSeq, b.firstSeq) })
	s.removeOrphans(sidecars, names)

	// Segments are independent: index each into its own partial index,
	// on all cores, then merge the partial indexes in order.
	parts := make([]*index, len(s.segs))
	errs := make([]error, len(s.segs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(s.segs)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(s.segs) {
					return
				}
				limit := int64(math.MaxInt64)
				if i+1 < len(s.segs) {
					limit = s.segs[i+1].firstSeq
				}
				parts[i], errs[i] = s.loadSegment(s.segs[i], limit)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.idx.merge(parts)
	s.segs = slices.DeleteFunc(s.segs, func(seg *segment) bool {
		if seg.f == nil {
			// Never reuse the sequence numbers of a set-aside segment.
			s.nextSeq = max(s.nextSeq, seg.firstSeq+1)
			return true
		}
		return false
	})
	return nil
}

// loadSegment opens seg and indexes its records (sequence numbers below
// limit) into a new partial index: from its sidecar when that is current,
// else by decoding its frames.
func (s *Store) loadSegment(seg *segment, limit int64) (*index, error) {
	if x, ok := s.loadSidecar(seg, limit); ok {
		seg.day = segmentDay(x, s.now())
		return x, nil
	}
	seg.needSidecar = true
	x := newIndex(s.tune)
	var rec record
	opts := s.journalOptions()
	opts.OnDamage = func(d journal.Damage) {
		s.log.Warn("logstore: damaged segment bytes dropped",
			"path", seg.path, "offset", d.Offset, "length", d.Length, "tornTail", d.Tail)
	}
	f, err := journal.Open(seg.path, opts, func(off int64, p []byte) error {
		if err := decodeRecord(p, &rec); err != nil || rec.seq >= limit {
			s.log.Warn("logstore: malformed record skipped", "path", seg.path, "offset", off)
			return nil
		}
		if err := x.add(seg, off, &rec); err != nil {
			s.log.Warn("logstore: record skipped", "path", seg.path, "offset", off, "error", err)
		}
		return nil
	})
	if errors.Is(err, journal.ErrNotJournal) {
		// Not a journal: its header is damaged. Keep the file for manual
		// recovery, out of the way, and carry on without it.
		s.log.Error("logstore: segment header damaged, segment set aside",
			"path", seg.path, "renamedTo", seg.path+".broken")
		if err := os.Rename(seg.path, seg.path+".broken"); err != nil {
			return nil, fmt.Errorf("logstore: open %s: %w", s.dir, err)
		}
		return newIndex(s.tune), nil
	}
	if err != nil && isStorage(err) && s.headerless(seg.path) {
		// Torn while its header was written, and the disk has no room to
		// finish it: it holds no entry, so it goes instead of failing Open.
		if rerr := s.fs.Remove(seg.path); rerr == nil {
			s.log.Warn("logstore: segment without a header deleted", "path", seg.path, "error", err)
			return newIndex(s.tune), nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("logstore: open %s: %w", s.dir, err)
	}
	seg.f = f
	x.sealAll()
	seg.day = segmentDay(x, s.now())
	return x, nil
}

// segmentDay is the UTC day of the first row of x, the partial index of
// a segment, or of now when it has none.
func segmentDay(x *index, now time.Time) int64 {
	if len(x.chunks) > 0 {
		return floorDiv(x.chunks[0].createdAt(0), dayMs)
	}
	return floorDiv(clampMs(now), dayMs)
}

// headerless reports whether the file at path is too short to hold a
// journal header.
func (s *Store) headerless(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() < journal.HeaderSize
}
