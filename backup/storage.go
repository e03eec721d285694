package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// Storage is where the archives are kept: the backups folder
// ([Dir.Storage]) or an S3 bucket ([NewS3Storage]). The backup routes,
// the auto backups and the backup CLI use it, never a [Dir] directly, so
// that each works on either. Every key is a [ValidKey]; errors match
// [ErrNotFound], [ErrInvalidName], [ErrExists], [ErrTooLarge] and
// [ErrInvalidArchive] (an [*ArchiveError]) as the [Dir] methods of the
// same names document, and name the key, never a server path or secret.
type Storage interface {
	// List returns the archives, ascending by key.
	List(ctx context.Context) ([]Info, error)
	// Stat returns the Info of one archive.
	Stat(ctx context.Context, key string) (Info, error)
	// Exists reports whether an archive has this key; false for a key
	// that is not valid.
	Exists(ctx context.Context, key string) (bool, error)
	// Open opens an archive for reading and seeking, for a download
	// (http.ServeContent). The caller closes it.
	Open(ctx context.Context, key string) (Reader, error)
	// Create writes the archive key from src, streamed, never
	// overwriting; see [Dir.Create]. The caller holds the [Lock].
	Create(ctx context.Context, key string, src Source, meta Meta) (Info, error)
	// Put stores an upload under key once it is verified as a strongbox
	// archive, never overwriting; see [Dir.Put]. A refused upload leaves
	// nothing behind.
	Put(ctx context.Context, key string, r io.Reader, maxSize int64, limits Limits) (Info, error)
	// Delete removes an archive; the caller checks [Lock.Busy] first.
	Delete(ctx context.Context, key string) error
	// Fetch returns the archive key as a local file, for a restore: the
	// archive itself in the backups folder, or a temporary copy (in the
	// backups folder, so on the data dir's file system) of one kept
	// elsewhere. A fetch that fails leaves nothing. The caller closes it,
	// which removes a temporary copy.
	Fetch(ctx context.Context, key string) (*Archive, error)
}

// FetchVerified fetches the archive key as a local file (an archive on
// S3 is downloaded into the backups folder, on the data dir's file
// system) and verifies it in full, for a restore. On failure nothing
// remains and nothing changed. The caller closes the archive.
func FetchVerified(ctx context.Context, st Storage, key string, limits Limits) (*Archive, error) {
	a, err := st.Fetch(ctx, key)
	if err != nil {
		return nil, err
	}
	if _, err := a.Verify(limits); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Reader is an archive opened for a download.
type Reader interface {
	io.ReadSeeker
	io.Closer
	// Info is the archive's key, size and modification time.
	Info() Info
}

// Archive is an archive as a local file, which a restore verifies and
// extracts ([Storage.Fetch]).
type Archive struct {
	key    string
	f      *os.File
	size   int64
	remove func() error // removes a temporary copy; nil for the archive itself
	zip    io.ReaderAt  // the zip file: f, or its plaintext if f is encrypted
	zsize  int64
}

// openZip opens the zip file of a, as the storage's keys do (see
// [Keys]); on failure it closes a.
func (a *Archive) openZip(k Keys) (*Archive, error) {
	zr, zsize, err := k.open(a.f, a.size)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("backup: open %s: %w", a.key, err)
	}
	a.zip, a.zsize = zr, zsize
	return a, nil
}

// Key is the archive's key in its storage.
func (a *Archive) Key() string { return a.key }

// Size is the archive's length in bytes, as stored (encrypted or not).
func (a *Archive) Size() int64 { return a.size }

// Verify checks the archive, as [Dir.Verify] does, and returns its manifest.
func (a *Archive) Verify(limits Limits) (*Manifest, error) {
	m, err := Verify(a.zip, a.zsize, limits)
	if err != nil {
		return nil, fmt.Errorf("backup: verify %s: %w", a.key, errors.Unwrap(err))
	}
	return m, nil
}

// Extract writes the archive's files into dst, as [Dir.Extract] does.
func (a *Archive) Extract(dst string, limits Limits) error {
	return extractFrom(a.zip, a.zsize, a.key, dst, limits)
}

// Close closes the file and removes it if it is a temporary copy.
func (a *Archive) Close() error {
	err := a.f.Close()
	if a.remove != nil {
		err = errors.Join(err, a.remove())
	}
	return err
}

// Storage returns the folder as a [Storage]: each method is the Dir's own,
// the context unused, with no [Keys] until [WithKeys] gives some.
func (d *Dir) Storage() Storage { return dirStorage{d: d} }

type dirStorage struct {
	d    *Dir
	keys Keys
}

func (s dirStorage) List(context.Context) ([]Info, error)             { return s.d.List() }
func (s dirStorage) Stat(_ context.Context, key string) (Info, error) { return s.d.Stat(key) }
func (s dirStorage) Exists(_ context.Context, key string) (bool, error) {
	return s.d.Exists(key), nil
}
func (s dirStorage) Delete(_ context.Context, key string) error { return s.d.Delete(key) }

func (s dirStorage) Create(ctx context.Context, key string, src Source, meta Meta) (Info, error) {
	return s.d.create(ctx, key, src, meta, s.keys)
}

func (s dirStorage) Put(ctx context.Context, key string, r io.Reader, maxSize int64, limits Limits) (Info, error) {
	return s.d.put(ctx, key, r, maxSize, limits, s.keys)
}

func (s dirStorage) Open(_ context.Context, key string) (Reader, error) {
	f, info, err := s.open(key)
	if err != nil {
		return nil, err
	}
	return fileReader{f, info}, nil
}

func (s dirStorage) Fetch(_ context.Context, key string) (*Archive, error) {
	f, info, err := s.open(key)
	if err != nil {
		return nil, err
	}
	a := &Archive{key: key, f: f, size: info.Size}
	return a.openZip(s.keys)
}

// open opens the archive key and describes the file opened, which stays
// readable if the archive is deleted meanwhile.
func (s dirStorage) open(key string) (*os.File, Info, error) {
	f, err := s.d.Open(key)
	if err != nil {
		return nil, Info{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Info{}, keyErr("open", key, err)
	}
	return f, Info{Key: key, Modified: fi.ModTime().UTC(), Size: fi.Size()}, nil
}

type fileReader struct {
	*os.File
	info Info
}

func (r fileReader) Info() Info { return r.info }
