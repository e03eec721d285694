package app

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"strongbox/backup"
)

// TODO(bk-rst): this file is the least of httpapi.Backups that the restore
// route needs (Dir, Lock, Limits); the capture branch (bk-cap) implements
// Create, MaxUpload and the backups folder properly. On merge, keep
// theirs, drop this file, and keep CanRestore and Restore (restore.go) on
// whichever type serves as httpapi.Backups.

// backups is the server's backups folder, opened on first use, and the
// one-operation lock, which outlives restarts in place.
type backups struct {
	mu   sync.Mutex
	dir  *backup.Dir
	lock backup.Lock
}

// DefaultMaxUpload is the largest archive an upload may hold.
const DefaultMaxUpload = 1 << 30

// Dir returns the backups folder, <data dir>/backups/, or nil if it cannot
// be opened (the routes then answer that the backups file system cannot be
// loaded, and the reason is logged).
func (s *Server) Dir() *backup.Dir {
	s.bk.mu.Lock()
	defer s.bk.mu.Unlock()
	if s.bk.dir == nil {
		d, err := backup.OpenDir(filepath.Join(s.cfg.Dir, "backups"))
		if err != nil {
			s.log.Error("open the backups folder", "err", err)
			return nil
		}
		s.bk.dir = d
	}
	return s.bk.dir
}

// Lock returns the one-operation lock of create and restore.
func (s *Server) Lock() *backup.Lock { return &s.bk.lock }

// Limits returns the limits archives are verified and extracted with.
func (s *Server) Limits() backup.Limits { return backup.Limits{} }

// MaxUpload returns the largest archive an upload may hold.
func (s *Server) MaxUpload() int64 { return DefaultMaxUpload }

// Create is not part of this branch (see the TODO above).
func (s *Server) Create(context.Context, string) (backup.Info, error) {
	return backup.Info{}, errors.New("app: backup create is not implemented in this branch")
}
