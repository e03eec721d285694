package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"strongbox/authn/validation"
	"strongbox/backup"
	"strongbox/httpapi/settings"
	"strongbox/logstore/journal"
)

// nameProblem returns why name cannot be the name of an archive, in the
// words the API uses for the field (PocketBase's rules, in its order;
// the third rule, the name being taken, is validation.BackupNameExists),
// or "" if it can.
func nameProblem(name string) string {
	switch {
	case len(name) < 1 || len(name) > backup.MaxNameLen:
		return validation.LengthOutOfRange(1, backup.MaxNameLen).Message
	case !backup.ValidName(name):
		return validation.MatchInvalid().Message
	}
	return ""
}

// ListBackups returns the archives of the data dir opts.Dir, ascending by
// key: those in the bucket of the stored settings backups.s3 when it is
// enabled, else those in the backups folder. Reading the settings takes
// the data dir's lock for a moment; while a server runs on the dir (the
// lock is held), the settings cannot be read, and the backups folder is
// listed, as before backups could be on S3: GET /api/backups lists the
// bucket then. A data dir without a backups folder has none there.
func ListBackups(ctx context.Context, opts Options) ([]backup.Info, error) {
	path := filepath.Join(opts.Dir, "backups")
	s3, err := storedS3(opts)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !s3.Enabled {
		return []backup.Info{}, nil
	}
	d, err := backup.OpenDir(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return storageFor(opts, s3, d).st.List(ctx)
}

// storedS3 returns the stored settings backups.s3 of the data dir
// opts.Dir, or a disabled bucket while a server runs on it.
func storedS3(opts Options) (settings.S3, error) {
	lock, err := journal.LockDir(opts.Dir)
	if errors.Is(err, journal.ErrLocked) {
		return settings.S3{}, nil
	}
	if err != nil {
		return settings.S3{}, err
	}
	defer lock.Unlock()
	path := filepath.Join(opts.Dir, "settings.journal")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return settings.S3{}, nil // never written: the defaults
	}
	st, err := settings.Open(path, settings.Options{})
	if err != nil {
		return settings.S3{}, err
	}
	defer st.Close()
	return st.Get().Backups.S3, nil
}

// CreateBackup creates an archive of the data dir opts.Dir offline: it
// takes the data dir's lock (refused, with an error that says so, while a
// server runs on it: the API creates backups then), opens the stores,
// captures them and writes the archive name, or a generated name
// (backup.NewName) if name is empty. A name is checked with the rules and
// messages of POST /api/backups. version is recorded in the manifest. A
// data dir that does not exist is an error.
func CreateBackup(ctx context.Context, opts Options, name, version string) (backup.Info, error) {
	if name != "" {
		if msg := nameProblem(name); msg != "" {
			return backup.Info{}, fmt.Errorf("invalid backup name %q: %s", name, msg)
		}
	}
	// A backup of a dir that does not exist would create one first.
	if fi, err := os.Stat(opts.Dir); err != nil || !fi.IsDir() {
		return backup.Info{}, fmt.Errorf("data dir %s: not found", opts.Dir)
	}
	st, err := Open(opts, true)
	if err != nil {
		return backup.Info{}, err
	}
	defer st.Close()
	d, err := openBackups(opts.Dir)
	if err != nil {
		return backup.Info{}, err
	}
	defer d.Close()
	// Where the stored settings keep the archives: the folder or the
	// bucket of backups.s3.
	store := keyedStorage(opts, st.Settings.Get().Backups, d).st
	if name == "" {
		name = backup.NewName(time.Now(), func(k string) bool { ok, _ := store.Exists(ctx, k); return ok })
	} else if taken, err := store.Exists(ctx, name); err != nil {
		return backup.Info{}, err
	} else if taken {
		return backup.Info{}, fmt.Errorf("invalid backup name %q: %s", name, validation.BackupNameExists().Message)
	}
	c, err := st.Capture(nil)
	if err != nil {
		return backup.Info{}, err
	}
	info, err := writeArchive(ctx, store, name, c, version)
	if err != nil {
		return backup.Info{}, err
	}
	return info, st.Close()
}
