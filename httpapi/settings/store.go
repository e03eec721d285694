package settings

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"strongbox/logstore/journal"
)

// Options configure Open.
type Options struct {
	// Logger receives the journal's warnings, such as an fsync slower than
	// the durability window (journal.DefaultSyncWindow); nil discards them.
	Logger *slog.Logger
	// FS is the journal's file system; nil means journal.OS (tests inject
	// faults with journaltest).
	FS journal.FS
	// Now is the clock of Health's probes; nil means time.Now.
	Now func() time.Time
}

// Store holds the current settings. It is safe for concurrent use; Get is
// lock-free, since the request logger reads the settings on every request.
type Store struct {
	mu   sync.Mutex // serialises Update and the calls to subscribers
	cur  atomic.Pointer[Settings]
	j    *journal.File
	now  func() time.Time
	log  *slog.Logger
	subs []*subscriber // guarded by mu

	lastProbe atomic.Int64 // Unix ns of Health's last probe
}

// Open opens the settings journal at path (created with the defaults if
// missing).
func Open(path string, opts Options) (*Store, error) {
	s := &Store{now: opts.Now, log: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	cur, found := Defaults(), false
	jopts := journal.Options{Strict: true, FS: opts.FS, Logger: opts.Logger}
	j, err := journal.Open(path, jopts, func(off int64, p []byte) error {
		rec := record{Settings: Defaults()}
		if err := json.Unmarshal(p, &rec); err != nil {
			return fmt.Errorf("decode %s at offset %d: %w", path, off, err)
		}
		if rec.V > recordVersion || rec.V < 0 {
			return fmt.Errorf("%s at offset %d: format version %d, but this strongbox reads versions up to %d: run a newer strongbox on this data dir", path, off, rec.V, recordVersion)
		}
		cur, found = rec.Settings, true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	s.j = j
	s.cur.Store(&cur)
	if !found {
		if err := s.save(cur); err != nil {
			j.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close closes the journal and drops the subscribers.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = nil
	return s.j.Close()
}

// probeInterval is how often, at most, Health probes the disk of a degraded
// store.
const probeInterval = time.Second

// Health returns nil while the settings can be saved, or the error of the
// last failed save (wrapping journal.ErrStorageFull or ErrStorageFailed);
// the next save is tried afresh. A degraded store probes the disk, at most
// once per probeInterval, so that it reports recovery without a save.
func (s *Store) Health() error {
	err := s.j.Fault()
	if err == nil {
		return nil
	}
	now := s.now().UnixNano()
	if last := s.lastProbe.Load(); now-last >= int64(probeInterval) && s.lastProbe.CompareAndSwap(last, now) {
		err = s.j.Probe()
	}
	return err
}

// Capture pauses Update and returns the settings journal's durable prefix
// as a section, for a backup that captures every store at one instant.
// Update waits until release is called (Get does not); the caller releases
// as soon as every store is captured, and copies the section afterwards.
// On error nothing stays paused. The caller closes the section.
func (s *Store) Capture() (_ []*journal.Section, release func(), err error) {
	s.mu.Lock()
	sec, err := s.j.Capture()
	if err != nil {
		s.mu.Unlock()
		return nil, nil, fmt.Errorf("settings: capture: %w", err)
	}
	return []*journal.Section{sec}, sync.OnceFunc(s.mu.Unlock), nil
}

// Get returns the current settings, secrets included. The slices in it are
// shared and must not be modified.
func (s *Store) Get() Settings { return *s.cur.Load() }

// Update changes the settings: it calls edit with a copy of the current
// settings, keeps the stored secret of any secret edit left empty (the
// public view never shows them, so a client sends them back empty),
// validates the result and stores it durably. It returns the settings now
// current, or edit's error as it is, or a validation.Errors, or the save's
// error (wrapping journal.ErrStorageFull or journal.ErrStorageFailed); on
// an error nothing has changed. Updates are serialised: edit sees the
// result of every update committed before it.
//
// Before Update returns, every subscriber has been called with the new
// settings (see Subscribe): a change is in effect once it is acknowledged.
func (s *Store) Update(edit func(*Settings) error) (Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.Get()
	next := cur.clone()
	if err := edit(&next); err != nil {
		return Settings{}, err
	}
	next = next.clone() // lists an edit set to null are empty
	next.keepSecrets(cur)
	if errs := next.validate(); len(errs) > 0 {
		return Settings{}, errs
	}
	if err := s.save(next); err != nil {
		return Settings{}, err
	}
	for _, sub := range s.subs {
		sub.fn(next)
	}
	return next, nil
}

// Subscribe calls fn with the current settings, at once, and then with the
// new settings after every committed change, until cancel is called or the
// store is closed. This is how a subsystem applies its part of the
// settings, at start and on every change, without anyone doing it for it.
//
// The calls are made in commit order, never concurrently (for one
// subscriber or across subscribers), each with the settings that change
// committed; fn misses none and sees none twice. They are made within the
// commit, by Update, under the lock that serialises changes, before Update
// returns: a change is in effect in every subsystem by the time it is
// acknowledged. So fn must be quick: a slow subscriber delays the
// acknowledgement of the change and the next changes (never Get). It must
// not panic, and must not call Update, Subscribe or a cancel function of
// this store, which would deadlock. What fails in applying a change is
// fn's to report (a log, its own health); the change stays committed.
// The slices in the settings are shared and must not be modified.
//
// Once cancel returns, fn is not called again. Calling cancel more than
// once is harmless.
func (s *Store) Subscribe(fn func(Settings)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := &subscriber{fn: fn}
	fn(s.Get())
	s.subs = append(s.subs, sub)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.subs = slices.DeleteFunc(s.subs, func(x *subscriber) bool { return x == sub })
	}
}

// subscriber is one Subscribe call: a pointer, so that the same fn
// subscribed twice is two subscribers.
type subscriber struct{ fn func(Settings) }

// record is one frame of the settings journal: the whole document with its
// format version V (recordVersion when written; see "Journal" in the
// package doc). A frame without it was written before the field
// existed, in version 1.
type record struct {
	V int `json:"v"`
	Settings
}

// recordVersion is the format version of the frames this strongbox writes,
// and the newest it reads.
const recordVersion = 1

// save appends v and makes it current. The caller holds s.mu (or is Open).
// The change is durable, and current, before the journal is compacted:
// compaction only reclaims space, so a compaction that fails (even one
// whose new file is in place but whose folder could not be synced) leaves
// the change applied, never answered with an error and kept on disk.
func (s *Store) save(v Settings) error {
	b, err := json.Marshal(record{V: recordVersion, Settings: v})
	if err != nil {
		return err
	}
	if _, err = s.j.Append(b); err == nil {
		err = s.j.Sync()
	}
	if err != nil {
		return fmt.Errorf("settings: save: %w", err)
	}
	s.cur.Store(&v)
	if s.j.Size() > 256<<10 {
		err := s.j.Compact(func(w *journal.Writer) error {
			_, err := w.Append(b)
			return err
		})
		if err != nil {
			s.log.Warn("settings journal: compaction failed; the journal stays as it is", "err", err)
		}
	}
	return nil
}
