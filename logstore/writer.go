package logstore

import "time"

const (
	// bigBatch is the queue length at which the writer commits at once
	// instead of waiting for the rest of the window.
	bigBatch = 16384

	// maxBatch is the most entries the writer commits in one batch.
	maxBatch = 65536
)

// Add queues e for the writer and returns at once: it never waits for the
// disk. The entry is durable and visible to queries within
// Options.FlushInterval (or after Flush). Add does nothing while logging is
// off (MaxDays 0), for an entry below MinLevel and after Close; it drops the
// entry, with a warning, when MaxPending entries or MaxPendingBytes of text
// are already queued. Strings that are not valid UTF-8 are stored with
// their invalid bytes replaced by U+FFFD.
func (s *Store) Add(e Entry) {
	if s.maxDays.Load() == 0 || int64(e.Level) < s.minLevel.Load() {
		return
	}
	if e.Created.IsZero() {
		e.Created = s.now()
	}
	size := entryText(&e)
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closing {
		return
	}
	if len(s.queue) >= MaxPending || s.qbytes+s.wbytes+size > s.maxPendingBytes {
		s.dropped++
		if now := time.Now(); now.Sub(s.dropWarn) >= time.Second {
			s.dropWarn = now
			s.log.Warn("logstore: writer queue full, log entries dropped", "dropped", s.dropped)
		}
		return
	}
	s.queue = append(s.queue, e)
	s.queued++
	s.qbytes += size
	switch len(s.queue) {
	case 1:
		s.firstAt = time.Now()
		s.signal()
	case bigBatch:
		s.signal()
	}
}

// entryText returns the bytes of text of e that count against
// MaxPendingBytes: its strings (attributes and details, which are rare and
// produced by the server, count little).
func entryText(e *Entry) int64 {
	n := len(e.ID) + len(e.Message)
	if r := e.Request; r != nil {
		n += len(r.Auth) + len(r.AuthID) + len(r.Method) + len(r.Referer) + len(r.RemoteIP) +
			len(r.URL) + len(r.UserAgent) + len(r.UserIP) + len(r.Error)
		if d, ok := r.Details.(string); ok {
			n += len(d)
		}
	} else {
		for k, v := range e.Attrs {
			n += len(k) + 16
			if t, ok := v.(string); ok {
				n += len(t)
			}
		}
	}
	return int64(n)
}

func (s *Store) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Flush waits until every entry added before the call is durable and
// indexed, and returns the error of a failed write of one of them.
func (s *Store) Flush() error {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closing {
		return ErrClosed
	}
	start, target := s.done, s.queued
	if target > s.flushReq {
		s.flushReq = target
	}
	s.signal()
	for s.done < target {
		s.qcond.Wait()
	}
	if s.failErr != nil && s.failEnd > start {
		return s.failErr
	}
	return nil
}

// run is the writer: it commits the queue in batches, at the latest one
// window after the oldest queued entry arrived, and enforces retention once
// a minute.
func (s *Store) run() {
	defer close(s.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		s.qmu.Lock()
		n := len(s.queue)
		closing := s.closing
		var wait time.Duration
		if n > 0 && n < bigBatch && !closing && s.flushReq <= s.done {
			wait = s.window - time.Since(s.firstAt)
		}
		var batch []Entry
		if n > 0 && wait <= 0 {
			// At most maxBatch entries per commit keeps the write buffer
			// (about 250 bytes an entry) bounded after a burst.
			k := min(n, maxBatch)
			batch = s.queue[:k:k]
			if k == n {
				s.queue = s.spare[:0]
				s.wbytes, s.qbytes = s.qbytes, 0
			} else {
				s.queue = s.queue[k:]
				s.wbytes = 0
				for i := range batch {
					s.wbytes += entryText(&batch[i])
				}
				s.qbytes -= s.wbytes
			}
			s.spare = nil
		}
		s.qmu.Unlock()

		if batch != nil {
			err := s.commit(batch)
			clear(batch)
			s.qmu.Lock()
			s.wbytes = 0
			s.done += int64(len(batch))
			if err != nil {
				s.failEnd, s.failErr = s.done, err
			}
			s.spare = batch[:0]
			s.qcond.Broadcast()
			s.qmu.Unlock()
			continue
		}
		if closing {
			return
		}
		var tc <-chan time.Time
		if n > 0 {
			timer.Reset(wait)
			tc = timer.C
		}
		select {
		case <-s.wake:
		case <-tc:
		case <-s.stop:
		case <-tick.C:
			if err := s.enforceRetention(); err != nil {
				s.log.Error("logstore: retention", "error", err)
			}
		}
		if tc != nil && !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}
