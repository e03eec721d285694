package pocketbase

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// DefaultMaxArchiveBytes bounds what Open extracts from an archive when
// Options.MaxArchiveBytes is 0.
const DefaultMaxArchiveBytes = 64 << 30

// dbFiles are the entries of a backup archive Open extracts: PocketBase
// v0.31.0 zips its whole data dir (the databases, their write-ahead logs,
// the uploaded files under storage/, and files of its own), its files at
// the archive's root.
var dbFiles = map[string]bool{
	"data.db": true, "data.db-wal": true,
	"auxiliary.db": true, "auxiliary.db-wal": true,
}

// extract extracts the database files of the archive at path into a new
// private dir, returned, and checks every entry's name on the way: an
// archive with a name that leaves it is refused whole.
func extract(path string, opts Options) (dir string, err error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return "", fmt.Errorf("pocketbase: %s is neither a PocketBase data dir (pb_data) nor a .zip backup archive: %w", path, err)
	}
	defer zr.Close()
	budget := opts.MaxArchiveBytes
	if budget <= 0 {
		budget = DefaultMaxArchiveBytes
	}
	files, err := pickFiles(path, zr.File, budget)
	if err != nil {
		return "", err
	}
	dir, err = os.MkdirTemp(opts.TempDir, "strongbox-pocketbase-*")
	if err != nil {
		return "", fmt.Errorf("pocketbase: extracting %s: %w", path, err)
	}
	for _, f := range files {
		if err := extractFile(f, filepath.Join(dir, f.Name)); err != nil {
			return "", errors.Join(fmt.Errorf("pocketbase: extracting %s from %s: %w", f.Name, path, err), os.RemoveAll(dir))
		}
	}
	return dir, nil
}

// pickFiles returns the database entries of an archive, after checking
// every entry's name, that each database file is there at most once as a
// regular file, that data.db is, and that their declared sizes fit in budget.
func pickFiles(path string, all []*zip.File, budget int64) ([]*zip.File, error) {
	var files []*zip.File
	seen := map[string]bool{}
	var size uint64
	for _, f := range all {
		if !localName(f.Name) {
			return nil, fmt.Errorf("pocketbase: %s has an entry named %q, which points outside the archive: not an archive PocketBase made", path, f.Name)
		}
		if !dbFiles[f.Name] {
			continue
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("pocketbase: %s holds %s twice: not an archive PocketBase made", path, f.Name)
		}
		seen[f.Name] = true
		if !f.Mode().IsRegular() {
			return nil, fmt.Errorf("pocketbase: %s: %s is not a regular file (mode %v): not an archive PocketBase made", path, f.Name, f.Mode())
		}
		size += f.UncompressedSize64
		if f.UncompressedSize64 > math.MaxInt64 || size > uint64(budget) {
			return nil, fmt.Errorf("pocketbase: the database files of %s are larger than the limit of %d bytes", path, budget)
		}
		files = append(files, f)
	}
	if !seen["data.db"] {
		return nil, fmt.Errorf("pocketbase: %s holds no data.db at its root: not a PocketBase backup archive", path)
	}
	return files, nil
}

// localName reports whether an entry's name stays inside the archive: a
// relative slash-separated path without "..", backslashes or a volume.
func localName(name string) bool {
	if name == "" || strings.Contains(name, `\`) || strings.HasPrefix(name, "/") {
		return false
	}
	for _, elem := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if elem == ".." {
			return false
		}
	}
	return filepath.IsLocal(filepath.FromSlash(name))
}

// extractFile copies f to a new file at dst, at most its declared size
// (pickFiles checked that the declared sizes fit in the limit).
func extractFile(f *zip.File, dst string) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(rc, int64(f.UncompressedSize64)+1))
	if err == nil && uint64(n) != f.UncompressedSize64 {
		err = fmt.Errorf("%d bytes or more where its header declares %d", n, f.UncompressedSize64)
	}
	return errors.Join(err, out.Close())
}
