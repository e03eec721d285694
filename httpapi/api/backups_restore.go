package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"strongbox/backup"
)

// Messages of the restore route, besides msgBackupsLoad and msgBackupBusy
// (backups_routes.go). The first is the interface's (§7) and
// PocketBase's; the last two are ours, for an archive PocketBase
// would only discover was bad after answering.
const (
	msgRestoreMissing = "Missing or invalid backup file."
	msgRestoreInvalid = "The backup file is not a valid strongbox backup: "
	msgRestoreUnread  = "The backup file could not be read."
)

// RestoreTimeout bounds a restore running after its request was answered:
// waiting for the requests in flight, extracting and swapping.
// PocketBase gives its restore 10 minutes.
const RestoreTimeout = 10 * time.Minute

// handleBackupRestore handles POST /api/backups/{key}/restore (interface
// §4.2). Its checks, in order:
//
//  1. a guest is refused 401, a non-superuser 403;
//  2. no backups folder: 400 "Failed to load backups filesystem."
//     PocketBase answers 500 for restore, but §7 lists this message only as
//     a 400, and every other refusal of this route is a 400;
//  3. the backup lock is taken now, before answering (PocketBase takes
//     it a second after its 204, so a create, a delete of the same key or
//     a second restore sent within that second all succeed): if
//     another create or restore holds it, 400 "Try again later …";
//  4. no archive by that key: 400 "Missing or invalid backup file.";
//  5. this process cannot restore (Windows): 400 with the reason;
//  6. the archive cannot be fetched (on S3: downloaded into the backups
//     folder) or fails a full Verify: 400 saying why, in terms of its own
//     entries for a bad archive (never a server path); the data is
//     untouched.
//
// On any refusal the lock is released. Otherwise the answer is 204, and a
// goroutine, with a context of its own bounded by RestoreTimeout, calls
// Backups.Restore, which restarts the process on the restored data (same
// PID) and returns only if it could not: the error is logged and the lock
// released, and the server serves its old data again.
func (s *Server) handleBackupRestore(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	b := s.backups
	if b == nil {
		return errBadRequest(msgBackupsLoad, errors.New("httpapi: the backups folder cannot be opened"))
	}
	st := b.Storage()
	key := r.PathValue("key")
	release, ok := b.Lock().TryLock(backup.KindRestore, key)
	if !ok {
		return errBadRequest(msgBackupBusy, nil)
	}
	// The lock is held: the storage's work ends in time for the answer.
	ctx, cancel := workContext(r)
	defer cancel()
	// Any stored key, an automatic backup's (@auto_…) too: those are what
	// a restore most often wants. Exists refuses a key that is not one.
	if found, _ := st.Exists(ctx, key); !found {
		release()
		return s.restoreRefused(r, key, "no backup by that key", errBadRequest(msgRestoreMissing, nil))
	}
	if err := b.CanRestore(); err != nil {
		release()
		return s.restoreRefused(r, key, err.Error(), errBadRequest(err.Error(), err))
	}
	a, err := backup.FetchVerified(ctx, st, key, b.Limits())
	if err != nil {
		release()
		if ae, ok := errors.AsType[*backup.ArchiveError](err); ok {
			return s.restoreRefused(r, key, ae.Reason, errBadRequest(msgRestoreInvalid+ae.Reason+".", err))
		}
		if errors.Is(err, backup.ErrNotFound) {
			// Deleted meanwhile, or not a regular file (a folder or a
			// symbolic link by that name).
			return s.restoreRefused(r, key, "no backup by that key", errBadRequest(msgRestoreMissing, err))
		}
		return s.restoreRefused(r, key, err.Error(), errBadRequest(msgRestoreUnread, err))
	}
	s.log.Info("backup restore started", auditAttrs(r, "key", key)...)
	log := s.log
	go func() {
		defer release()
		ctx, cancel := context.WithTimeout(context.Background(), RestoreTimeout)
		defer cancel()
		if err := b.Restore(ctx, a); err != nil {
			log.Error("Failed to restore backup", "key", key, "err", err)
		}
	}()
	return noContent(w)
}

// restoreRefused logs a restore refused for the archive key (the reason,
// in words) as a warning of the audit trail, and returns answer.
func (s *Server) restoreRefused(r *http.Request, key, reason string, answer error) error {
	s.log.Warn("backup restore failed", auditAttrs(r, "key", key, "reason", reason)...)
	return answer
}
