package backup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"strongbox/backup/s3"
)

// Object describes one object of a bucket: the S3 client's [s3.Object].
type Object = s3.Object

// ObjectStore is an S3-compatible bucket, the operations an S3 storage of
// archives needs. The S3 client ([*s3.Client]) is one as it is; a fake
// bucket of the tests is another. An ObjectStore reports a missing key
// (Head, Get) with an error matching [s3.ErrNotFound], which the storage
// turns into [ErrNotFound].
type ObjectStore interface {
	// List returns every object whose key starts with prefix.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Head describes the object key.
	Head(ctx context.Context, key string) (Object, error)
	// Get reads n bytes of the object key from offset off; n < 0 reads
	// to its end.
	Get(ctx context.Context, key string, off, n int64) (io.ReadCloser, Object, error)
	// Put stores a small object whole.
	Put(ctx context.Context, key string, body []byte, contentType string) error
	// Upload stores r under key by multipart upload: the object appears
	// only once complete, and an upload that fails (r's error included)
	// is aborted, leaving nothing.
	Upload(ctx context.Context, key string, r io.Reader, contentType string) (Object, error)
	// Delete removes the object key.
	Delete(ctx context.Context, key string) error
}

var _ ObjectStore = (*s3.Client)(nil)

// s3Storage keeps the archives in a bucket, each under its key at the
// bucket's root, as PocketBase keeps its backups. Keys are [ValidKey]s, so
// none holds a slash, a dot segment or a leading slash: no key names an
// object outside the archives, and objects whose keys are not valid
// (another application's, a test probe's) are never listed, opened or
// deleted.
type s3Storage struct {
	obj  ObjectStore
	keys Keys
	// stage is the local backups folder, which holds the temporary files:
	// an upload while it is verified, an archive fetched for a restore.
	stage *Dir
}

const zipType = "application/zip"

// NewS3Storage returns the [Storage] of the archives in the bucket obj.
// stage is the data dir's backups folder: uploads are verified there
// before they reach the bucket, and a restore downloads its archive there.
//
// This is the constructor the server and the CLI call with the S3 client
// of the settings backups.s3.
func NewS3Storage(obj ObjectStore, stage *Dir) Storage {
	return &s3Storage{obj: obj, stage: stage}
}

func (s *s3Storage) List(ctx context.Context) ([]Info, error) {
	objs, err := s.obj.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("backup: list: %w", err)
	}
	out := []Info{}
	for _, o := range objs {
		if ValidKey(o.Key) {
			out = append(out, objectInfo(o))
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

func objectInfo(o Object) Info {
	return Info{Key: o.Key, Modified: o.LastModified.UTC(), Size: o.Size}
}

func (s *s3Storage) Stat(ctx context.Context, key string) (Info, error) {
	if !ValidKey(key) {
		return Info{}, fmt.Errorf("%w: %q", ErrInvalidName, key)
	}
	o, err := s.obj.Head(ctx, key)
	if err != nil {
		return Info{}, objectErr("stat", key, err)
	}
	o.Key = key
	return objectInfo(o), nil
}

func (s *s3Storage) Exists(ctx context.Context, key string) (bool, error) {
	_, err := s.Stat(ctx, key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrInvalidName):
		return false, nil
	}
	return false, err
}

// free returns ErrExists if key is taken, or the failure to find out.
func (s *s3Storage) free(ctx context.Context, key string) error {
	ok, err := s.Exists(ctx, key)
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("%w: %s", ErrExists, key)
	}
	return nil
}

func (s *s3Storage) Delete(ctx context.Context, key string) error {
	// DeleteObject succeeds on a missing key: the HEAD tells the client
	// its archive was not there, as the folder does.
	if _, err := s.Stat(ctx, key); err != nil {
		return err
	}
	if err := s.obj.Delete(ctx, key); err != nil {
		return bucketErr("delete", key, err)
	}
	return nil
}

// Create streams the zip writer into a multipart upload through a pipe:
// the archive is never on disk nor whole in memory, and appears under its
// key only when the upload completes. The name was checked free first (a
// HEAD); a concurrent create is kept out by the [Lock], and an upload
// that takes the name meanwhile is detected by a second HEAD before the
// upload starts. A failure of either side aborts the upload.
func (s *s3Storage) Create(ctx context.Context, key string, src Source, meta Meta) (Info, error) {
	if !ValidKey(key) {
		return Info{}, fmt.Errorf("%w: %q", ErrInvalidName, key)
	}
	if err := s.free(ctx, key); err != nil {
		return Info{}, err
	}
	if err := checkSource(key, src); err != nil {
		return Info{}, err
	}
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		err := writeZip(ctx, pw, key, src, meta, s.keys)
		pw.CloseWithError(cmpErr(err, io.EOF))
		written <- err
	}()
	o, err := s.obj.Upload(ctx, key, pr, zipType)
	pr.CloseWithError(cmpErr(err, io.ErrClosedPipe)) // stops the writer if the upload gave up
	// The side that failed first is the cause: the other fails with
	// its error, through the pipe.
	if werr := <-written; werr != nil && (err == nil || !errors.Is(werr, err)) {
		return Info{}, werr
	}
	if err != nil {
		return Info{}, bucketErr("create", key, err)
	}
	return s.uploaded(ctx, key, o)
}

// cmpErr returns err, or def if err is nil.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// uploaded is the Info of the object key that Upload just completed.
func (s *s3Storage) uploaded(ctx context.Context, key string, o Object) (Info, error) {
	if o.LastModified.IsZero() {
		return s.Stat(context.WithoutCancel(ctx), key)
	}
	o.Key = key
	return objectInfo(o), nil
}

// Put verifies the upload before it reaches the bucket: the body is
// streamed into a temporary file in the local backups folder (on the data
// dir's disk, never whole in memory) and verified there, as [Dir.Put]
// does, then uploaded from the file. A refused upload never touches the
// bucket.
func (s *s3Storage) Put(ctx context.Context, key string, r io.Reader, maxSize int64, limits Limits) (Info, error) {
	if !ValidName(key) {
		return Info{}, fmt.Errorf("%w: %q", ErrInvalidName, key)
	}
	if err := s.free(ctx, key); err != nil {
		return Info{}, err
	}
	return s.stage.received(ctx, key, r, maxSize, limits, s.keys, func(fd *os.File, _ string, n int64) (Info, error) {
		if err := s.free(ctx, key); err != nil {
			return Info{}, err
		}
		o, err := s.obj.Upload(ctx, key, io.NewSectionReader(fd, 0, n), zipType)
		if err != nil {
			return Info{}, bucketErr("upload", key, err)
		}
		return s.uploaded(ctx, key, o)
	})
}

// Fetch downloads the archive into a temporary file of the local backups
// folder ([Dir.CleanTemp] removes it if the process dies first).
func (s *s3Storage) Fetch(ctx context.Context, key string) (*Archive, error) {
	if !ValidKey(key) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidName, key)
	}
	tmp := tempName()
	fd, err := s.stage.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("backup: fetch %s: %w", key, unpath(err))
	}
	a := &Archive{key: key, f: fd, remove: func() error { return s.stage.root.Remove(tmp) }}
	if err := s.download(ctx, a); err != nil {
		a.Close()
		return nil, err
	}
	return a.openZip(s.keys)
}

func (s *s3Storage) download(ctx context.Context, a *Archive) error {
	body, o, err := s.obj.Get(ctx, a.key, 0, -1)
	if err != nil {
		return objectErr("fetch", a.key, err)
	}
	defer body.Close()
	n, err := io.Copy(a.f, ctxReader{ctx, body})
	if err == nil && o.Size > 0 && n != o.Size {
		err = fmt.Errorf("short download: %d of %d bytes", n, o.Size)
	}
	if err == nil {
		err = a.f.Sync()
	}
	if err != nil {
		return fmt.Errorf("backup: fetch %s: %w", a.key, unpath(err))
	}
	a.size = n
	return nil
}

func (s *s3Storage) Open(ctx context.Context, key string) (Reader, error) {
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	return &objectReader{ctx: ctx, obj: s.obj, info: info}, nil
}

// objectReader reads an object from its current offset with one ranged
// GET, issued at the first Read after a Seek: a download of a Range asks
// the bucket for those bytes only, and a HEAD reads nothing.
type objectReader struct {
	ctx  context.Context
	obj  ObjectStore
	info Info
	off  int64
	body io.ReadCloser
}

func (r *objectReader) Info() Info { return r.info }

func (r *objectReader) Read(p []byte) (int, error) {
	if r.off >= r.info.Size {
		return 0, io.EOF
	}
	if r.body == nil {
		body, _, err := r.obj.Get(r.ctx, r.info.Key, r.off, -1)
		if err != nil {
			return 0, objectErr("read", r.info.Key, err)
		}
		r.body = body
	}
	n, err := r.body.Read(p)
	r.off += int64(n)
	if err == io.EOF && r.off < r.info.Size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (r *objectReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.info.Size
	}
	if offset < 0 {
		return 0, errors.New("backup: seek before the start")
	}
	if offset != r.off {
		r.Close()
		r.off = offset
	}
	return offset, nil
}

func (r *objectReader) Close() error {
	if r.body == nil {
		return nil
	}
	err := r.body.Close()
	r.body = nil
	return err
}

// objectErr names the key and the operation of a bucket's error to a
// Head or a Get, mapping a missing key to [ErrNotFound]. The error is the
// client's: an S3 error code and message, never a credential.
func objectErr(op, key string, err error) error {
	if errors.Is(err, s3.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return bucketErr(op, key, err)
}

// bucketErr names the key and the operation of a bucket's error to any
// other request: only a Head or a Get tells of a missing key (the client
// reads any 404 without a body as one, and a Delete or an Upload gets
// such an answer only from a proxy), so nothing is mapped.
func bucketErr(op, key string, err error) error {
	return fmt.Errorf("backup: %s %s: %w", op, key, err)
}

// probePrefix starts the key of the object ProbeBucket writes, in a
// "folder" of its own as PocketBase's test does, so that it is never a
// [ValidKey].
const probePrefix = "sb_settings_test_"

// ProbeError is the failure of one step of [ProbeBucket].
type ProbeError struct {
	Step string // "failed to list the bucket", "failed to upload a test file" …
	Err  error  // the client's error, unchanged
}

// Error is the step and the client's error.
func (e *ProbeError) Error() string { return e.Step + ": " + e.Err.Error() }

// Unwrap returns the client's error.
func (e *ProbeError) Unwrap() error { return e.Err }

// ProbeBucket checks that the bucket can be listed and written: it lists
// it, puts a small object under a fresh prefix and deletes it, as
// PocketBase's S3 test does. It returns the first failure as a
// [*ProbeError] wrapping the client's error unchanged (an S3 error keeps
// its code and message).
func ProbeBucket(ctx context.Context, obj ObjectStore) error {
	if _, err := obj.List(ctx, probePrefix); err != nil {
		return &ProbeError{"failed to list the bucket", err}
	}
	var b [4]byte
	rand.Read(b[:])
	key := probePrefix + hex.EncodeToString(b[:]) + "/test.txt"
	if err := obj.Put(ctx, key, []byte("test"), "text/plain"); err != nil {
		return &ProbeError{"failed to upload a test file", err}
	}
	if err := obj.Delete(ctx, key); err != nil {
		return &ProbeError{"failed to delete a test file", err}
	}
	return nil
}
