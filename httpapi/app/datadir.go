package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"strongbox/backup"
)

// dataEntries are the entries whose presence at the root of a dir shows
// that it is a strongbox data dir: the stores' files, the archives, and
// the work folder of a restore under way.
var dataEntries = []string{"auth.journal", "settings.journal", "logs", "backups", backup.WorkDir}

// RequireData returns an error naming dir unless dir exists and holds
// strongbox data. The commands that work on existing data (updating or
// deleting a superuser, creating or restoring a backup) check it first,
// so that a mistyped --dir is refused instead of becoming a new, empty
// data dir.
func RequireData(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("data dir %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("data dir %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("data dir %s is not a directory", dir)
	}
	for _, name := range dataEntries {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("data dir %s holds no strongbox data (no auth.journal, settings.journal, logs or backups in it)", dir)
}
