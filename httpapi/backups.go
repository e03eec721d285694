package httpapi

import (
	"context"

	"strongbox/backup"
)

// Backups is the backup service behind the routes of interface §4.2.
// strongbox/httpapi/app implements it over the data dir it runs: it alone
// can capture every store at one instant and restart the process. The
// handlers own the checks, their order, the lock table (backup.Lock,
// PocketBase's) and every status and message; Backups does the work.
type Backups interface {
	// Dir is the backups folder, <data dir>/backups/.
	Dir() *backup.Dir
	// Lock is the one-operation lock. It outlives restarts in place.
	Lock() *backup.Lock
	// Limits bound what Verify, Extract and an upload accept.
	Limits() backup.Limits
	// MaxUpload is the largest archive POST /api/backups/upload accepts.
	MaxUpload() int64
	// Create captures every store at one instant, writers paused for
	// a moment only, and writes the archive key (backup.Dir.Create). The
	// caller holds the Lock (KindCreate, key).
	Create(ctx context.Context, key string) (backup.Info, error)
	// CanRestore returns nil if this process can restore, or why not
	// (no exec on this system), as a sentence a client may read.
	CanRestore() error
	// Restore replaces the data dir's contents with the archive key,
	// which the caller verified, and restarts the process on it (re-exec,
	// same PID). The caller holds the Lock (KindRestore, key), has answered
	// the request, and calls Restore from a goroutine with a context of its
	// own. Restore returns only if the process could not restart; the data
	// dir is then as it was before, and the caller releases the lock.
	Restore(ctx context.Context, key string) error
}
