package app

import (
	"os"
	"runtime/debug"
	"time"
)

// The Go runtime lets the heap grow to twice what is live before it
// collects (GOGC=100). Most of a busy server's live heap is the log
// store's index, which only grows, so the heap would double over it: 10
// million logs would take twice their index. With Config.MemoryLimit the
// server instead sets the runtime's soft memory limit from the index's
// size, and follows it as it grows: memoryBase for everything else plus
// the index and a quarter of it (memoryLimit). The index is almost all
// pointer-free arrays, so the collections the limit brings cost little.
// A limit the operator set (GOMEMLIMIT) is kept.
const (
	memoryBase     = 32 << 20
	memoryInterval = 2 * time.Second
)

// memoryLimit returns the memory limit for an index of the given size.
func memoryLimit(index int64) int64 { return memoryBase + index + index/4 }

// followMemory sets the memory limit from the log store's index now and
// every memoryInterval until done is closed.
func (s *Server) followMemory(done <-chan struct{}) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	t := time.NewTicker(memoryInterval)
	defer t.Stop()
	for {
		s.capMu.RLock()
		st := s.stores
		s.capMu.RUnlock()
		if st != nil && st.Logs != nil {
			debug.SetMemoryLimit(memoryLimit(st.Logs.IndexBytes()))
		}
		select {
		case <-t.C:
		case <-done:
			return
		}
	}
}
