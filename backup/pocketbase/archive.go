package pocketbase

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
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
	max := opts.MaxArchiveBytes
	if max <= 0 {
		max = DefaultMaxArchiveBytes
	}
	files, err := pickFiles(path, zr.File, max)
	if err != nil {
		return "", err
	}
	dir, err = os.MkdirTemp(opts.TempDir, "strongbox-pocketbase-*")
	if err != nil {
		return "", fmt.Errorf("pocketbase: extracting %s: %w", path, err)
	}
	for _, f := range files {
		n, err := extractFile(f, filepath.Join(dir, f.Name), max)
		if err != nil {
			return "", errors.Join(fmt.Errorf("pocketbase: extracting %s from %s: %w", f.Name, path, err), os.RemoveAll(dir))
		}
		max -= n
	}
	return dir, nil
}

// pickFiles returns the database entries of an archive, after checking
// every entry's name, that each database file is there at most once as a
// regular file, that data.db is, and that their declared sizes fit in max.
func pickFiles(path string, all []*zip.File, max int64) ([]*zip.File, error) {
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
		if size > uint64(max) {
			return nil, fmt.Errorf("pocketbase: the database files of %s are larger than the limit of %d bytes", path, max)
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

// extractFile copies f to a new file at dst, at most its declared size and
// at most max bytes, and returns how many it wrote.
func extractFile(f *zip.File, dst string, max int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	limit := min(max, int64(min(f.UncompressedSize64, uint64(max))))
	n, err := io.Copy(out, io.LimitReader(rc, limit+1))
	if err == nil && n > limit {
		err = fmt.Errorf("larger than its declared %d bytes or than the limit of %d bytes", f.UncompressedSize64, max)
	}
	if err == nil && uint64(n) != f.UncompressedSize64 {
		err = fmt.Errorf("%d bytes where its header declares %d", n, f.UncompressedSize64)
	}
	return n, errors.Join(err, out.Close())
}
