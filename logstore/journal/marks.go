package journal

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// Commit marks: the instants at which the bytes of a journal became
// durable, for a point-in-time restore of a stream of its changes. Each
// successful Sync that moves the durable prefix records one Mark: the new
// end of the prefix and the instant the fsync returned, which is before
// the store acknowledges what it covered. The marks are kept in memory
// only, at most MaxMarks per file; a capture copies them.

// MaxMarks bounds the commit marks a File keeps. Past it the older half
// is merged into one, Coarse, mark: a capture every few hundred
// milliseconds needs far fewer, and only a consumer that falls behind by
// more than MaxMarks/2 fsyncs sees its oldest marks merged.
const MaxMarks = 1024

// Mark says that the bytes of a journal before End were durable at Time.
// Marks of one file ascend in End and never descend in Time (a clock that
// steps back is clamped). Coarse marks a merged mark, or the first mark of
// a file opened with frames already in it: some of its bytes may have
// been committed before Time, at an instant no longer known; for an exact
// mark every byte since the previous mark was committed by the one fsync
// that returned at Time.
type Mark struct {
	End    int64
	Time   time.Time
	Coarse bool
}

// marks is the bounded list of a file's commit marks.
type marks struct {
	now  func() time.Time
	list []Mark
}

// add records that the durable prefix now ends at end.
func (m *marks) add(end int64, coarse bool) {
	t := m.now()
	if n := len(m.list); n > 0 {
		last := m.list[n-1]
		if end <= last.End {
			return
		}
		if t.Before(last.Time) {
			t = last.Time
		}
	}
	if len(m.list) == MaxMarks {
		// Merge the older half into one mark, at once: a copy of half the
		// list every MaxMarks/2 adds, not of the whole list at each.
		half := MaxMarks / 2
		m.list[half].Coarse = true
		m.list = append(m.list[:0], m.list[half:]...)
	}
	m.list = append(m.list, Mark{End: end, Time: t, Coarse: coarse})
}

// reset drops every mark and starts anew at end: the file was replaced
// by a compaction whose content is all durable now.
func (m *marks) reset(end int64) {
	m.list = nil
	m.add(end, false)
}

// upTo returns a copy of the marks with End ≤ end.
func (m *marks) upTo(end int64) []Mark {
	n := 0
	for n < len(m.list) && m.list[n].End <= end {
		n++
	}
	return append([]Mark(nil), m.list[:n]...)
}

// newIdentity returns a random identity for a file's content: a new one
// at Open and at every Compact, so that a reader of captures can tell a
// journal replaced by a compaction from one that grew.
func newIdentity() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) | 1
}
