package app

import (
	"context"
	"errors"
	"io"

	"strongbox/backup"
	"strongbox/backup/age"
	"strongbox/backup/s3"
	"strongbox/httpapi/settings"
)

// Backups on S3. The settings backups.s3 choose where the archives are
// kept: the data dir's backups folder while disabled, the bucket while
// enabled (backup.NewS3Storage). The server follows the settings
// (followBackups); switching moves no archive, as in PocketBase: those
// kept where backups no longer go stay there, unlisted until switched
// back. The backups folder stays in use either way, for the temporary
// files of the bucket's uploads and restores.

// errS3Disabled is TestS3's answer while backups.s3 is disabled (the
// route refuses that case first).
var errS3Disabled = errors.New("app: backups.s3 is not enabled")

// archiveStore is the storage of the archives in force, and the bucket
// behind it (nil for the folder), or why the bucket cannot be used.
type archiveStore struct {
	st  backup.Storage
	obj backup.ObjectStore
	err error
}

// storage returns the storage in force: the folder until the settings
// are applied.
func (s *Server) storage() archiveStore {
	if p := s.bstore.Load(); p != nil {
		return *p
	}
	return archiveStore{st: s.bdir.Storage()}
}

// followBackups is the settings subscriber of the storage of archives:
// every committed change of backups.s3 takes effect for the next
// operation (one under way keeps the storage it started with).
func (s *Server) followBackups(v settings.Settings) {
	cur := keyedStorage(s.cfg.Options, v.Backups, s.bdir)
	if cur.err != nil {
		s.log.Error("backup: the S3 storage of backups cannot be used", "bucket", v.Backups.S3.Bucket, "err", cur.err)
	}
	s.bstore.Store(&cur)
}

// storageFor returns the storage of the settings c: the folder d while c
// is disabled, else the bucket through opts.ObjectStore (the S3 client of
// package backup/s3 when nil). A bucket whose client cannot be made (the
// settings invalid for it) is a storage whose every operation fails with
// why, so that the backup routes answer as for a backups filesystem that
// does not load, and never fall back to the folder unseen.
func storageFor(opts Options, c settings.S3, d *backup.Dir) archiveStore {
	if !c.Enabled {
		return archiveStore{st: d.Storage()}
	}
	newObj := opts.ObjectStore
	if newObj == nil {
		newObj = newBucket
	}
	obj, err := newObj(c)
	if err != nil {
		return archiveStore{st: failedStorage{err}, err: err}
	}
	return archiveStore{st: backup.NewS3Storage(obj, d), obj: obj}
}

// keyedStorage is storageFor the settings b.S3, with the age keys of
// b.Encryption (backup.WithKeys): the storage every create, upload,
// restore and check uses, so that each encrypts and decrypts as the
// settings say. Only a listing does without keys.
func keyedStorage(opts Options, b settings.Backups, d *backup.Dir) archiveStore {
	cur := storageFor(opts, b.S3, d)
	cur.st = backup.WithKeys(cur.st, archiveKeys(b.Encryption))
	return cur
}

// archiveKeys are the age keys of the settings e: the archives' and the
// continuous backup's.
func archiveKeys(e settings.Encryption) backup.Keys {
	id, recipients := e.Keys()
	var k backup.Keys
	if id != nil {
		k.Identities = []age.Identity{id}
	}
	k.Recipients = recipients
	return k
}

// newBucket is the default Options.ObjectStore: the S3 client of
// package backup/s3 for the settings c.
func newBucket(c settings.S3) (backup.ObjectStore, error) {
	cl, err := s3.New(s3.Config{
		Endpoint:       c.Endpoint,
		Region:         c.Region,
		Bucket:         c.Bucket,
		AccessKey:      c.AccessKey,
		Secret:         c.Secret,
		ForcePathStyle: c.ForcePathStyle,
	})
	if err != nil {
		return nil, err // not a nil *s3.Client in a non-nil interface
	}
	return cl, nil
}

// failedStorage is a backup.Storage whose every operation fails with err.
type failedStorage struct{ err error }

func (f failedStorage) List(context.Context) ([]backup.Info, error) { return nil, f.err }
func (f failedStorage) Stat(context.Context, string) (backup.Info, error) {
	return backup.Info{}, f.err
}
func (f failedStorage) Exists(context.Context, string) (bool, error) { return false, f.err }
func (f failedStorage) Open(context.Context, string) (backup.Reader, error) {
	return nil, f.err
}
func (f failedStorage) Delete(context.Context, string) error { return f.err }
func (f failedStorage) Fetch(context.Context, string) (*backup.Archive, error) {
	return nil, f.err
}
func (f failedStorage) Create(context.Context, string, backup.Source, backup.Meta) (backup.Info, error) {
	return backup.Info{}, f.err
}
func (f failedStorage) Put(context.Context, string, io.Reader, int64, backup.Limits) (backup.Info, error) {
	return backup.Info{}, f.err
}
