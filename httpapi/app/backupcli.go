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

// ListBackups returns the archives in the backups folder of the data dir
// dir, ascending by key. It reads the folder only, so it takes no lock and
// works while a server runs on dir; a data dir without a backups folder
// has none.
func ListBackups(dir string) ([]backup.Info, error) {
	path := filepath.Join(dir, "backups")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return []backup.Info{}, nil
	}
	d, err := backup.OpenDir(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.List()
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
	if name == "" {
		name = backup.NewName(time.Now(), d.Exists)
	} else if d.Exists(name) {
		return backup.Info{}, fmt.Errorf("invalid backup name %q: %s", name, validation.BackupNameExists().Message)
	}
	c, err := st.Capture(nil)
	if err != nil {
		return backup.Info{}, err
	}
	info, err := writeArchive(ctx, d, name, c, version)
	if err != nil {
		return backup.Info{}, err
	}
	return info, st.Close()
}
