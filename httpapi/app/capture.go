package app

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"strongbox/backup"
	"strongbox/logstore/journal"
)

// capturer is a store a backup captures. Capture pauses the store's
// writers, returns the durable prefix of each of its files with a read
// descriptor held open, and leaves the writers paused until release is
// called; on error nothing stays paused or open. A new store joins backups
// by implementing it and taking its place in Stores.capturers, whose order
// is the fixed order in which the pauses are taken.
type capturer interface {
	Capture() (sections []*journal.Section, release func(), err error)
}

// capturers lists the open stores in the order a capture pauses them. The
// order is fixed, and agrees with the only nesting of their locks that
// exists elsewhere: a settings change applies the log settings while it
// holds the settings lock, so settings come before logs. The auth store
// comes last, so the writes users wait for (sign-ups, password changes) are
// paused only while its own journal is captured, not while the log
// segments are opened: the log writer's pause delays no response.
func (s *Stores) capturers() []capturer {
	cs := []capturer{s.Settings}
	if s.Logs != nil {
		cs = append(cs, s.Logs)
	}
	return append(cs, s.Auth)
}

// Capture is every store of a data dir as it was at one instant: the
// source of a backup. Close releases its descriptors; it is safe to call
// more than once, and must be called whether the source was copied or not.
type Capture struct {
	// Source lists the files, named relative to the data dir
	// ("auth.journal", "settings.journal", "logs/<segment>"), each with
	// the length committed at the instant of the capture.
	Source backup.Source
	// Created is that instant.
	Created time.Time
	// Paused is how long the writers of the stores were paused.
	Paused time.Duration

	sections []*journal.Section
}

// Close closes every file of the capture.
func (c *Capture) Close() error {
	var errs []error
	for _, sec := range c.sections {
		errs = append(errs, sec.Close())
	}
	return errors.Join(errs...)
}

// Capture pauses the writers of every store (taking their locks in a fixed
// order and holding them all at once), reads the length each file has
// committed, opens a read descriptor for it, and resumes the writers. The
// copy is left to the caller (backup.Dir.Create), with writers running:
// the descriptors keep reading the captured files even if a compaction
// replaces a journal or retention deletes a log segment meanwhile, and
// only the committed prefix of each is read, so a frame half-written at
// the instant of the capture is left out. The lock file, the backups
// folder and anything else in the data dir are not part of it.
//
// now, if not nil, tells the time of the capture (Capture.Created).
func (s *Stores) Capture(now func() time.Time) (*Capture, error) {
	if s.closed {
		return nil, errors.New("app: capture: the stores are closed")
	}
	if now == nil {
		now = time.Now
	}
	c := &Capture{}
	var releases []func()
	release := func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	start := time.Now()
	for _, st := range s.capturers() {
		secs, rel, err := st.Capture()
		if err != nil {
			release()
			c.Close()
			return nil, fmt.Errorf("app: capture: %w", err)
		}
		releases = append(releases, rel)
		c.sections = append(c.sections, secs...)
	}
	c.Created = now()
	release()
	c.Paused = time.Since(start)

	for _, sec := range c.sections {
		name, err := filepath.Rel(s.dir, sec.Path)
		if err != nil || !filepath.IsLocal(name) {
			c.Close()
			return nil, fmt.Errorf("app: capture: %s is not inside the data dir %s", sec.Path, s.dir)
		}
		c.Source = append(c.Source, backup.File{
			Name: filepath.ToSlash(name),
			Size: sec.Size,
			Open: func() (io.ReadCloser, error) { return io.NopCloser(sec.Reader()), nil },
		})
	}
	return c, nil
}
