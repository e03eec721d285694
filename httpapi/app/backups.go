package app

import (
	"context"
	"errors"
	"path/filepath"

	"strongbox/backup"
	"strongbox/httpapi"
)

// TODO(bk-rst): this file is the least of httpapi.Backups that the restore
// route needs (Dir, Lock, Limits), in the shape of the capture branch
// (bk-cap), which implements Create, MaxUpload and the backups folder
// properly. On merge keep bk-cap's backups.go and drop this one: restore.go
// needs only the backups type, its Dir and Limits, and Server.log and cfg.

// DefaultMaxUpload is the largest archive an upload may hold.
const DefaultMaxUpload int64 = 1 << 30

// backups is the Server's httpapi.Backups: the routes of §4.2 call it.
// CanRestore and Restore are in restore.go.
type backups struct{ srv *Server }

var _ httpapi.Backups = backups{}

// Dir returns the backups folder, <data dir>/backups/, opened on first
// use, or nil if it cannot be opened (the routes then answer that the
// backups file system cannot be loaded, and the reason is logged).
func (b backups) Dir() *backup.Dir {
	s := b.srv
	s.bdirMu.Lock()
	defer s.bdirMu.Unlock()
	if s.bdir == nil {
		d, err := backup.OpenDir(filepath.Join(s.cfg.Dir, "backups"))
		if err != nil {
			s.log.Error("open the backups folder", "err", err)
			return nil
		}
		s.bdir = d
	}
	return s.bdir
}

// Lock is the one-operation lock of the process; it outlives restarts.
func (b backups) Lock() *backup.Lock { return &b.srv.block }

// Limits are backup.DefaultLimits.
func (b backups) Limits() backup.Limits { return backup.Limits{} }

// MaxUpload is DefaultMaxUpload.
func (b backups) MaxUpload() int64 { return DefaultMaxUpload }

// Create is not part of this branch (see the TODO above).
func (b backups) Create(context.Context, string) (backup.Info, error) {
	return backup.Info{}, errors.New("app: backup create is not implemented in this branch")
}
