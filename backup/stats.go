package backup

import (
	"sync"
	"time"
)

// Stats keeps the outcome of the creates its caller records, for the
// server's metrics: the server records every create (manual and automatic)
// in one Stats that lives as long as it serves. Its zero value is ready;
// it is safe for concurrent use.
type Stats struct {
	mu sync.Mutex
	s  StatsSnapshot
}

// StatsSnapshot is what a Stats recorded. The Last fields are those of
// the last create that succeeded (zero before one did).
type StatsSnapshot struct {
	Succeeded, Failed uint64
	LastSuccess       time.Time     // when it ended
	LastDuration      time.Duration // how long it took
	LastSize          int64         // the archive's bytes
}

// Record records a create that began at start and ended at end, with the
// archive info made or the error err.
func (s *Stats) Record(start, end time.Time, info Info, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.s.Failed++
		return
	}
	s.s.Succeeded++
	s.s.LastSuccess, s.s.LastDuration, s.s.LastSize = end, end.Sub(start), info.Size
}

// Snapshot returns what s recorded so far.
func (s *Stats) Snapshot() StatsSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}
