package backup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// Extract writes the files of the archive key into dst, a folder that
// must not exist yet (its parent must), checking the archive as it goes in
// the one pass: its structure and manifest first, then each file's size
// and SHA-256 as it is written, within limits. Callers verify the archive
// before (a restore answers only after [Dir.Verify]); Extract checks again
// because the archive could change in between, and an archive that fails
// leaves nothing: dst is removed. Files and folders are created through
// an [os.Root] on dst, so no entry can land outside it whatever its name.
// Every file and folder is fsynced, and so is dst's parent. The manifest
// itself is not extracted.
func (d *Dir) Extract(key, dst string, limits Limits) error {
	f, err := d.Open(key)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return keyErr("extract", key, err)
	}
	return extractFrom(f, fi.Size(), key, dst, limits)
}

// extractFrom is Extract of the archive key held by r, of size bytes.
func extractFrom(r io.ReaderAt, size int64, key, dst string, limits Limits) error {
	v, err := open(r, size, limits)
	if err != nil {
		return fmt.Errorf("backup: extract %s: %w", key, err)
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return fmt.Errorf("backup: extract %s: create destination: %w", key, unpath(err))
	}
	if err := v.extract(dst); err != nil {
		os.RemoveAll(dst)
		return fmt.Errorf("backup: extract %s: %w", key, err)
	}
	return syncPath(filepath.Dir(dst))
}

func (v *verifier) extract(dst string) error {
	root, err := os.OpenRoot(dst)
	if err != nil {
		return unpath(err)
	}
	defer root.Close()
	dirs := []string{"."}
	for _, f := range v.entries {
		if dir := path.Dir(f.Name); dir != "." {
			if err := root.MkdirAll(dir, 0o700); err != nil {
				return unpath(err)
			}
			for ; dir != "."; dir = path.Dir(dir) {
				if !slices.Contains(dirs, dir) {
					dirs = append(dirs, dir)
				}
			}
		}
		out, err := root.OpenFile(f.Name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, unpath(err))
		}
		err = v.check(f, out)
		if err == nil {
			err = out.Sync()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidArchive) {
				err = fmt.Errorf("%s: %w", f.Name, unpath(err))
			}
			return err
		}
	}
	// Deepest first, so that each folder's entry in its parent is synced
	// after the folder itself.
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, dir := range dirs {
		if err := syncRoot(root, dir); err != nil {
			return err
		}
	}
	return nil
}

// syncRoot fsyncs the folder dir of root (see syncFolder).
func syncRoot(root *os.Root, dir string) error {
	f, err := root.Open(dir)
	if err != nil {
		return unpath(err)
	}
	return syncFolder(f)
}

// syncPath fsyncs the folder at dir (see syncFolder).
func syncPath(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return unpath(err)
	}
	return syncFolder(f)
}

// syncFolder fsyncs and closes the open folder f, so that the entries
// created or renamed in it survive a crash. Some systems cannot fsync a
// folder (they answer "invalid" or "unsupported"); there an entry is as
// durable as the system makes it, and that is not an error.
func syncFolder(f *os.File) error {
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return unpath(err)
	}
	return nil
}
