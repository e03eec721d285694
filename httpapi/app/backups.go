package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"strongbox/backup"
	"strongbox/httpapi/api"
)

// DefaultMaxUpload is the largest archive POST /api/backups/upload accepts
// unless Config.MaxUpload says otherwise.
const DefaultMaxUpload int64 = 16 << 30

// ErrNotOpen is returned by a backup that finds the stores closed: a
// restart is under way (or failed) and has not reopened them yet.
var ErrNotOpen = errors.New("app: the data dir is not open (the server is restarting)")

// backups is the Server's api.Backups: the routes of §4.2 call it.
// CanRestore and Restore are in restore.go.
type backups struct{ srv *Server }

var _ api.Backups = backups{}

// Storage is where the archives are kept now: the backups folder, opened
// once per process by Run, or the bucket of the settings backups.s3
// (followBackups).
func (b backups) Storage() backup.Storage { return b.srv.storage().st }

// TestS3 probes the bucket of the settings in force (backup.ProbeBucket).
func (b backups) TestS3(ctx context.Context) error {
	cur := b.srv.storage()
	if cur.obj == nil {
		return cmp.Or(cur.err, errS3Disabled)
	}
	return backup.ProbeBucket(ctx, cur.obj)
}

// Lock is the one-operation lock of the process; it outlives restarts.
func (b backups) Lock() *backup.Lock { return &b.srv.block }

// Limits are Config.BackupLimits (backup.DefaultLimits for zero fields).
func (b backups) Limits() backup.Limits { return b.srv.cfg.BackupLimits }

// MaxUpload is Config.MaxUpload.
func (b backups) MaxUpload() int64 { return b.srv.cfg.MaxUpload }

// Create captures the stores and writes the archive key. The caller holds
// the Lock.
func (b backups) Create(ctx context.Context, key string) (backup.Info, error) {
	return b.srv.createBackup(ctx, key)
}

// openBackups opens <dir>/backups and removes what a create interrupted by
// a crash left there. The caller holds the data dir's lock, and nothing
// creates a backup yet.
func openBackups(dir string) (*backup.Dir, error) {
	d, err := backup.OpenDir(filepath.Join(dir, "backups"))
	if err != nil {
		return nil, err
	}
	if err := d.CleanTemp(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// createBackup captures the open stores and writes the archive key. The
// capture happens under capMu, so a restart cannot close the stores in
// the middle of it; once captured, the copy reads descriptors of its own
// and a restart may go on. While the stores are closed it fails with
// ErrNotOpen.
func (s *Server) createBackup(ctx context.Context, key string) (_ backup.Info, err error) {
	if !backup.ValidKey(key) {
		return backup.Info{}, fmt.Errorf("%w: %q", backup.ErrInvalidName, key)
	}
	// The outcome, for the metrics: a failure is the server's, unless
	// the name is bad or taken.
	start := s.now()
	var info backup.Info
	defer func() {
		if !errors.Is(err, backup.ErrExists) {
			s.bstats.Record(start, s.now(), info, err)
		}
	}()
	store := s.storage().st
	if taken, err := store.Exists(ctx, key); err != nil || taken {
		return backup.Info{}, cmp.Or(err, fmt.Errorf("%w: %s", backup.ErrExists, key))
	}
	s.capMu.RLock()
	st := s.stores
	if st == nil {
		s.capMu.RUnlock()
		return backup.Info{}, ErrNotOpen
	}
	c, err := st.Capture(s.now)
	s.capMu.RUnlock()
	if err != nil {
		return backup.Info{}, err
	}
	defer c.Close()
	s.log.Debug("backup: stores captured", "key", key, "files", len(c.Source), "paused", c.Paused)
	info, err = writeArchive(ctx, store, key, c, s.cfg.Version)
	return info, err
}

// writeArchive copies a capture into the archive key and closes it.
func writeArchive(ctx context.Context, st backup.Storage, key string, c *Capture, version string) (backup.Info, error) {
	info, err := st.Create(ctx, key, c.Source, backup.Meta{Version: version, Created: c.Created})
	return info, errors.Join(err, c.Close())
}

// elapsed rounds a duration for the log.
func elapsed(start time.Time) time.Duration { return time.Since(start).Round(time.Millisecond) }
