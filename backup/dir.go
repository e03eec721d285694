package backup

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Sentinel errors. Errors returned by this package name the archive key,
// never a path on the server (PocketBase leaks its data dir in the
// delete error).
var (
	// ErrNotFound: no archive has this key.
	ErrNotFound = errors.New("backup: not found")
	// ErrInvalidName: the key does not pass [ValidKey].
	ErrInvalidName = errors.New("backup: invalid name")
	// ErrExists: an archive with this key already exists
	// (validation_backup_name_exists).
	ErrExists = errors.New("backup: already exists")
)

// tempPrefix starts the name of every temporary file Create writes. A dot
// can never appear before ".zip" in a valid name, so no temporary file is
// ever listed, opened or deleted as an archive.
const tempPrefix = ".tmp-"

// Dir is the backups folder, <data dir>/backups/. Every file operation goes
// through an [os.Root], so a key can never reach outside the folder.
type Dir struct {
	root *os.Root
	// publish serialises the "is the key free? then rename" step on
	// file systems without hard links.
	publish sync.Mutex
	// link is d.root.Link; tests replace it to run the fallback.
	link func(oldname, newname string) error
}

// Info describes one archive, as GET /api/backups lists it.
type Info struct {
	Key      string
	Modified time.Time
	Size     int64
}

// OpenDir opens the backups folder at path, creating it (mode 0700) if it
// does not exist.
func OpenDir(path string) (*Dir, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(path, 0o700); err != nil {
			return nil, fmt.Errorf("backup: create backups folder: %w", unpath(err))
		}
		// The new folder's entry in the data dir survives a crash.
		if err := syncPath(filepath.Dir(path)); err != nil {
			return nil, fmt.Errorf("backup: create backups folder: %w", err)
		}
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("backup: open backups folder: %w", unpath(err))
	}
	return &Dir{root: root, link: root.Link}, nil
}

// Close releases the folder.
func (d *Dir) Close() error { return d.root.Close() }

// List returns the archives, ascending by key as in PocketBase, automatic
// backups included. Files whose names are not valid keys ([ValidKey]), and anything that is not a regular
// file, are left out.
func (d *Dir) List() ([]Info, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("backup: list: %w", unpath(err))
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("backup: list: %w", unpath(err))
	}
	out := []Info{}
	for _, e := range entries {
		if !ValidKey(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("backup: list: %s: %w", e.Name(), unpath(err))
		}
		out = append(out, Info{Key: e.Name(), Modified: fi.ModTime().UTC(), Size: fi.Size()})
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Exists reports whether an archive with this key exists.
func (d *Dir) Exists(key string) bool {
	if !ValidKey(key) {
		return false
	}
	_, err := d.root.Lstat(key)
	return err == nil
}

// Stat returns the Info of one archive.
func (d *Dir) Stat(key string) (Info, error) {
	if !ValidKey(key) {
		return Info{}, fmt.Errorf("%w: %q", ErrInvalidName, key)
	}
	fi, err := d.root.Lstat(key)
	if err != nil {
		return Info{}, keyErr("stat", key, err)
	}
	if !fi.Mode().IsRegular() {
		return Info{}, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return Info{Key: key, Modified: fi.ModTime().UTC(), Size: fi.Size()}, nil
}

// Delete removes an archive. The caller checks [Lock.Busy] first: the
// archive being created or restored must not be deleted (as in PocketBase).
func (d *Dir) Delete(key string) error {
	if !ValidKey(key) {
		return fmt.Errorf("%w: %q", ErrInvalidName, key)
	}
	// Only an archive: Remove would also take an empty folder that
	// happens to bear an archive's name.
	fi, err := d.root.Lstat(key)
	if err != nil {
		return keyErr("delete", key, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	if err := d.root.Remove(key); err != nil {
		return keyErr("delete", key, err)
	}
	return d.syncDir()
}

// Open opens an archive for reading, for http.ServeContent. The caller
// closes it. The file stays readable even if the archive is deleted
// meanwhile.
func (d *Dir) Open(key string) (*os.File, error) {
	if !ValidKey(key) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidName, key)
	}
	f, err := d.root.OpenFile(key, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, keyErr("open", key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, keyErr("open", key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return f, nil
}

// CleanTemp removes the temporary files that a create interrupted by a
// crash left behind. Call it at start, before any create runs: it would
// also remove the temporary file of a create in progress.
func (d *Dir) CleanTemp() error {
	f, err := d.root.Open(".")
	if err != nil {
		return fmt.Errorf("backup: clean: %w", unpath(err))
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("backup: clean: %w", unpath(err))
	}
	var first error
	for _, n := range names {
		if !strings.HasPrefix(n, tempPrefix) {
			continue
		}
		if err := d.root.Remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = fmt.Errorf("backup: clean %s: %w", n, unpath(err))
		}
	}
	if first != nil {
		return first
	}
	return d.syncDir()
}

// syncDir fsyncs the folder, so that a rename or removal survives a crash.
func (d *Dir) syncDir() error {
	f, err := d.root.Open(".")
	if err != nil {
		return fmt.Errorf("backup: sync folder: %w", unpath(err))
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("backup: sync folder: %w", unpath(err))
	}
	return nil
}

func tempName() string {
	var b [12]byte
	rand.Read(b[:])
	return tempPrefix + hex.EncodeToString(b[:])
}

// keyErr turns a file-system error about an archive into one that names the
// key only.
func keyErr(op, key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return fmt.Errorf("backup: %s %s: %w", op, key, unpath(err))
}

// unpath strips the path out of *fs.PathError and *os.LinkError, keeping
// the underlying cause, so that no server path reaches a client.
func unpath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	if le, ok := errors.AsType[*os.LinkError](err); ok {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}
