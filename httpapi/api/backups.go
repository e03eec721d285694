package api

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
	// Storage is where the archives are kept now: the backups folder,
	// <data dir>/backups/, or the S3 bucket of the settings backups.s3.
	// It follows the settings, so each request asks for it once.
	Storage() backup.Storage
	// Lock is the one-operation lock. It outlives restarts in place.
	Lock() *backup.Lock
	// Limits bound what Verify, Extract and an upload accept.
	Limits() backup.Limits
	// MaxUpload is the largest archive POST /api/backups/upload accepts.
	MaxUpload() int64
	// Create captures every store at one instant, writers paused for
	// a moment only, and writes the archive key (backup.Storage.Create). The
	// caller holds the Lock (KindCreate, key).
	Create(ctx context.Context, key string) (backup.Info, error)
	// CanRestore returns nil if this process can restore, or why not
	// (no exec on this system), as a sentence a client may read.
	CanRestore() error
	// Restore replaces the data dir's contents with the archive a, which
	// the caller fetched (backup.Storage.Fetch) and verified, and restarts
	// the process on it (re-exec, same PID). The caller holds the Lock
	// (KindRestore, a.Key()), has answered the request, and calls Restore
	// from a goroutine with a context of its own. Restore closes a, and
	// returns only if the process could not restart; the data dir is then
	// as it was before, and the caller releases the lock.
	Restore(ctx context.Context, a *backup.Archive) error
	// TestS3 checks the bucket of the settings backups.s3 (enabled): it
	// lists it, puts a probe object and deletes it (backup.ProbeBucket).
	// The error is the S3 client's, which never holds the secret.
	TestS3(ctx context.Context) error
}
