package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"time"
	"unicode/utf8"

	"strongbox/authn"
	"strongbox/authn/validation"
	"strongbox/backup"
)

// The backup routes (§4.2), except the restore. Every one is for
// superusers: the list answers a non-superuser with msgSuperusersOnly
// (§7 row 7), the others with msgNotAllowed (§7 row 8), and the download
// takes a superuser file token in its query instead of the Authorization
// header (§5.10). The lock table is PocketBase's (documented on
// backup.Lock): list, download and upload neither check nor take the lock;
// create takes it; delete refuses only the archive the running operation
// creates or restores.

// Messages of the backup routes.
const (
	msgBackupsLoad         = "Failed to load backups filesystem."
	msgBackupBusy          = "Try again later - another backup/restore process has already been started."
	msgBackupCreateFailed  = "Failed to create backup."
	msgBackupUploadFailed  = "Failed to upload backup."
	msgBackupInUse         = "The backup is currently being used and cannot be deleted."
	msgBackupDeleteMissing = "Invalid or already deleted backup file."
	msgBackupDeleteFailed  = "Failed to delete backup."
	msgFileForbidden       = "Insufficient permissions to access the resource."
	msgFilesystemInit      = "Filesystem initialization failure."
)

// BackupTimeout bounds one backup create, upload or download: the
// deadlines of those routes and the context of a create. A data dir of
// several gigabytes takes minutes, not hours, on any disk or link such a
// server runs on.
const BackupTimeout = time.Hour

// uploadOverhead is what a multipart body may carry besides the file: its
// boundaries, part headers and small fields. A body declaring more than
// the largest upload plus this is refused before it is read.
const uploadOverhead = 1 << 20

// zipMagic are the first bytes of a zip file: a local file header, or the
// end of central directory record of an empty zip.
var zipMagic = [][]byte{[]byte("PK\x03\x04"), []byte("PK\x05\x06")}

// errNoBackups is the cause logged when Config.Backups is nil.
var errNoBackups = errors.New("httpapi: no backups folder")

// backupEntry is one element of the backup list (§2.1), keys in
// PocketBase's order.
type backupEntry struct {
	Modified string `json:"modified"`
	Key      string `json:"key"`
	Size     int64  `json:"size"`
}

// backupTimeFormat is the format of backupEntry.Modified, in UTC.
const backupTimeFormat = "2006-01-02 15:04:05.000Z"

// handleBackupsList handles GET /api/backups.
func (s *Server) handleBackupsList(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgSuperusersOnly); err != nil {
		return err
	}
	if s.backups == nil {
		return errBadRequest(msgBackupsLoad, errNoBackups)
	}
	ctx, cancel := workContext(r)
	defer cancel()
	infos, err := s.backups.Storage().List(ctx)
	if err != nil {
		return errBadRequest(msgBackupsLoad, err)
	}
	list := make([]backupEntry, 0, len(infos))
	for _, in := range infos {
		list = append(list, backupEntry{Modified: in.Modified.UTC().Format(backupTimeFormat), Key: in.Key, Size: in.Size})
	}
	return writeJSON(w, r, http.StatusOK, list)
}

// handleBackupCreate handles POST /api/backups. The checks, in
// PocketBase's order: the lock, the body, the name; then the backup
// runs to its end before the answer, whether or not the client waits.
func (s *Server) handleBackupCreate(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	if s.backups == nil {
		return errBadRequest(msgBackupCreateFailed, errNoBackups)
	}
	lock, st := s.backups.Lock(), s.backups.Storage()
	if _, _, held := lock.Held(); held {
		return errBadRequest(msgBackupBusy, nil)
	}
	// A client that goes away does not cancel the backup: it would
	// only throw the work away. The work ends in time for the answer.
	ctx, cancel := context.WithDeadline(context.WithoutCancel(r.Context()), answerBy(r))
	defer cancel()
	b, err := bind(r)
	if err != nil {
		return err
	}
	name, err := b.str("name")
	if err != nil {
		return err
	}
	key := name
	if name == "" {
		// A name the storage cannot check is tried all the same: Create
		// checks it again, and fails as the storage does.
		key = backup.NewName(s.now(), func(k string) bool { ok, _ := st.Exists(ctx, k); return ok })
	} else if fe, err := checkBackupName(ctx, st, name); err != nil {
		return errBadRequest(msgBackupCreateFailed, err)
	} else if fe != nil {
		return errValidation(msgValidationFailed, validation.Errors{"name": fe})
	}
	// The lock names the actual key, generated or not, so that the
	// archive being written cannot be deleted (§3 rule 2).
	release, ok := lock.TryLock(backup.KindCreate, key)
	if !ok {
		return errBadRequest(msgBackupBusy, nil)
	}
	defer release()
	if _, err := s.backups.Create(ctx, key); err != nil {
		if errors.Is(err, backup.ErrExists) {
			// An upload took the name meanwhile.
			return errValidation(msgValidationFailed, validation.Errors{"name": validation.BackupNameExists()})
		}
		s.log.Error("backup create failed", auditAttrs(r, "key", key, "err", err)...)
		return errBadRequest(msgBackupCreateFailed, err)
	}
	s.log.Info("backup created", auditAttrs(r, "key", key)...)
	// Free the lock before answering: a client that reads the 204 may
	// start the next operation at once.
	release()
	return noContent(w)
}

// checkBackupName checks the name of a backup to create, the first
// failing rule only, as in PocketBase; the error is the storage's failure
// to tell whether the name is taken.
func checkBackupName(ctx context.Context, st backup.Storage, name string) (*validation.Error, error) {
	switch {
	case utf8.RuneCountInString(name) > backup.MaxNameLen:
		return validation.LengthOutOfRange(1, backup.MaxNameLen), nil
	case !backup.ValidName(name):
		return validation.MatchInvalid(), nil
	}
	taken, err := st.Exists(ctx, name)
	if taken {
		return validation.BackupNameExists(), nil
	}
	return nil, err
}

// handleBackupUpload handles POST /api/backups/upload. The body is
// streamed: the first file of the multipart field "file" goes straight to
// a temporary file in the backups folder (backup.Storage.Put), and is
// stored under its own base name once verified as a strongbox archive (in
// the bucket, when backups are on S3: nothing reaches it before). The
// file is a zip file or an age file (an encrypted archive, which the
// identity of backups.encryption must open); a plain one is stored
// encrypted while encryption is on (backup.Keys).
func (s *Server) handleBackupUpload(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	if s.backups == nil {
		return errBadRequest(msgBadRequest, errNoBackups)
	}
	maxSize := s.backups.MaxUpload()
	if r.ContentLength > maxSize+uploadOverhead {
		w.Header().Set("Connection", "close")
		return uploadInvalid(validation.FileSizeLimit(maxSize))
	}
	// The whole body, whatever parts it has besides the file, is bounded
	// as its declared length is.
	r.Body = http.MaxBytesReader(w, r.Body, maxSize+uploadOverhead)
	part, err := firstFile(r, "file")
	if err != nil {
		return uploadReadError(w, err, maxSize)
	}
	if part == nil {
		return uploadInvalid(validation.Required())
	}
	name := part.FileName()
	head := make([]byte, 4)
	n, err := io.ReadFull(part, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return uploadReadError(w, err, maxSize)
	}
	head = head[:n]
	if !isZip(head) && !backup.IsEncrypted(head) {
		return uploadInvalid(validation.InvalidMimeType(name, "application/zip"))
	}
	st := s.backups.Storage()
	ctx, cancel := workContext(r)
	defer cancel()
	if !backup.ValidName(name) {
		return uploadInvalid(validation.New(validation.CodeMatchInvalid,
			"The file name must be 1 to 150 lowercase letters, digits, _ or -, then .zip."))
	}
	if taken, _ := st.Exists(ctx, name); taken {
		return uploadInvalid(validation.BackupFileExists())
	}
	_, err = st.Put(ctx, name, io.MultiReader(bytes.NewReader(head), part), maxSize, s.backups.Limits())
	switch {
	case err == nil:
		s.log.Info("backup uploaded", auditAttrs(r, "key", name)...)
		return noContent(w)
	case errors.Is(err, backup.ErrExists):
		return uploadInvalid(validation.BackupFileExists())
	case errors.Is(err, backup.ErrTooLarge):
		return uploadReadError(w, &http.MaxBytesError{Limit: maxSize}, maxSize)
	}
	if ae, ok := errors.AsType[*backup.ArchiveError](err); ok {
		s.log.Warn("backup upload failed", auditAttrs(r, "key", name, "reason", ae.Reason)...)
		return uploadInvalid(validation.InvalidBackup(ae.Reason))
	}
	if r.Context().Err() != nil {
		// The client went away: nothing was stored, and nobody reads
		// the answer.
		return errBadRequest(msgBackupUploadFailed, err)
	}
	if e := uploadReadError(w, err, maxSize); e != nil {
		return e
	}
	s.log.Error("backup upload failed", auditAttrs(r, "key", name, "err", err)...)
	return errBadRequest(msgBackupUploadFailed, err)
}

// uploadReadError is the answer to an upload whose body failed as it was
// read: past the maximum, a data.file size error; the body's own failure
// (deadline, budget) as it is; nil for any other error.
func uploadReadError(w http.ResponseWriter, err error, maxSize int64) error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		w.Header().Set("Connection", "close")
		return uploadInvalid(validation.FileSizeLimit(maxSize))
	}
	return nil
}

// uploadInvalid is a refused upload: §7 row 3 names the generic message,
// with the failure under data.file.
func uploadInvalid(fe *validation.Error) error {
	return errValidation(msgBadRequest, validation.Errors{"file": fe})
}

// firstFile returns the first file part of field in the multipart body of
// r, positioned at its content, or nil if there is none. A body that is not
// multipart, or not well formed, has no file (PocketBase ignores parse
// errors too); a body that fails as it is read (deadline, budget, size) is
// that failure.
func firstFile(r *http.Request, field string) (*multipart.Part, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, nil
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			if _, ok := errors.AsType[*Error](err); ok {
				return nil, err
			}
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				return nil, err
			}
			return nil, nil
		}
		if p.FormName() == field && p.FileName() != "" {
			return p, nil
		}
	}
}

// isZip reports whether head, the first bytes of a file, are those of a
// zip file.
func isZip(head []byte) bool {
	for _, m := range zipMagic {
		if bytes.HasPrefix(head, m) {
			return true
		}
	}
	return false
}

// handleBackupDelete handles DELETE /api/backups/{key}.
func (s *Server) handleBackupDelete(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	if s.backups == nil {
		return errBadRequest(msgBackupsLoad, errNoBackups)
	}
	// §3 rule 2: the archive being created or restored is in use
	// (PocketBase's message); §3's table and §7 row 2: any other delete
	// while an operation runs is refused too, which PocketBase allows.
	key := r.PathValue("key")
	lock := s.backups.Lock()
	if lock.Busy(key) {
		return errBadRequest(msgBackupInUse, nil)
	}
	if _, _, held := lock.Held(); held {
		return errBadRequest(msgBackupBusy, nil)
	}
	ctx, cancel := workContext(r)
	defer cancel()
	err := s.backups.Storage().Delete(ctx, key)
	switch {
	case err == nil:
		s.log.Info("backup deleted", auditAttrs(r, "key", key)...)
		return noContent(w)
	case errors.Is(err, backup.ErrNotFound), errors.Is(err, backup.ErrInvalidName):
		return errBadRequest(msgBackupDeleteMissing, err)
	}
	s.log.Error("backup delete failed", auditAttrs(r, "key", key, "err", err)...)
	return errBadRequest(msgBackupDeleteFailed, err)
}

// handleBackupDownload handles GET (and HEAD) /api/backups/{key}?token=….
// Only a superuser file token in the query grants it; the Authorization
// header plays no part (§5.10), as in PocketBase.
func (s *Server) handleBackupDownload(w http.ResponseWriter, r *http.Request) error {
	c, _, _, err := s.auth.VerifyToken(query(r).Get("token"), authn.TokenFile)
	if err != nil || !c.IsSuperusers() {
		return errForbidden(msgFileForbidden)
	}
	if s.backups == nil {
		return errBadRequest(msgFilesystemInit, errNoBackups)
	}
	key := r.PathValue("key")
	ctx, cancel := workContext(r)
	defer cancel()
	f, err := s.backups.Storage().Open(ctx, key)
	if errors.Is(err, backup.ErrNotFound) || errors.Is(err, backup.ErrInvalidName) {
		return errNotFound(err)
	}
	if err != nil {
		return errBadRequest(msgFilesystemInit, err)
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": key}))
	h.Set("Content-Security-Policy", "default-src 'none'; media-src 'self'; style-src 'unsafe-inline'; sandbox")
	// An archive holds every record and secret: no cache keeps a copy.
	h.Set("Cache-Control", "no-store")
	// An archive on S3 is read by ranged GETs from the offset ServeContent
	// seeks to: a Range asks the bucket for those bytes only, a HEAD for
	// none.
	http.ServeContent(w, r, "", f.Info().Modified, f)
	return nil
}

// canBackup reports whether no backup or restore runs now (GET /api/health,
// as PocketBase reports its lock; without a backups folder, nothing runs).
func (s *Server) canBackup() bool {
	if s.backups == nil {
		return true
	}
	_, _, held := s.backups.Lock().Held()
	return !held
}

// backupLimits are the limits of a backup create, download or restore: a
// JSON route's body, and BackupTimeout to write the answer. A restore
// verifies the whole archive before it answers, which on gigabytes takes
// longer than a JSON route's deadline; past it the 204 could not be
// written, and the process would restart on a client told nothing.
func backupLimits(json Limits) Limits {
	json.Write = BackupTimeout
	return json
}

// uploadLimits are the limits of the backup upload: a streamed body, and
// BackupTimeout to receive it and to answer.
func uploadLimits() Limits {
	return Limits{Read: BackupTimeout, Write: BackupTimeout, Stream: true}
}
