package backup_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"strongbox/backup"
	"strongbox/backup/backuptest"
	"strongbox/backup/s3"
)

// s3Fixture is an S3 storage over an in-memory bucket, with its staging
// folder.
type s3Fixture struct {
	bucket *backuptest.Bucket
	stage  *backup.Dir
	path   string // the staging folder
	st     backup.Storage
}

func newS3Fixture(t *testing.T) *s3Fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backups")
	d, err := backup.OpenDir(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	clock := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	b := &backuptest.Bucket{Now: func() time.Time { return clock }}
	return &s3Fixture{bucket: b, stage: d, path: path, st: backup.NewS3Storage(b, d)}
}

// staged lists what the staging folder holds: nothing, after any call.
func (f *s3Fixture) staged(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(f.path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func oneFile(name, content string) backup.Source {
	return backup.Source{{Name: name, Size: int64(len(content)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(content)), nil
	}}}
}

// TestS3StorageRoundTrip: create, list, stat, open with seeks, fetch and
// delete on a bucket, keys only at its root and only valid ones.
func TestS3StorageRoundTrip(t *testing.T) {
	f := newS3Fixture(t)
	ctx := t.Context()
	info, err := f.st.Create(ctx, "a.zip", oneFile("auth.journal", "hello"), backup.Meta{Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	data, ok := f.bucket.Data("a.zip")
	if !ok || info.Size != int64(len(data)) || info.Key != "a.zip" {
		t.Fatalf("Create = %+v; bucket holds %d bytes (%v)", info, len(data), ok)
	}
	if _, err := backup.Verify(bytes.NewReader(data), int64(len(data)), backup.Limits{}); err != nil {
		t.Fatalf("the uploaded archive does not verify: %v", err)
	}
	if _, err := f.st.Create(ctx, "a.zip", oneFile("x", "y"), backup.Meta{}); !errors.Is(err, backup.ErrExists) {
		t.Errorf("Create of a taken key = %v, want ErrExists", err)
	}
	// Objects that are not archives are never listed.
	f.bucket.Set("other/b.zip", []byte("x"))
	f.bucket.Set("notes.txt", []byte("x"))
	f.bucket.Set("@auto_sb_backup_20261127100000.zip", data)
	list, err := f.st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, i := range list {
		keys = append(keys, i.Key)
	}
	if diff := cmp.Diff([]string{"@auto_sb_backup_20261127100000.zip", "a.zip"}, keys); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	for _, key := range []string{"../a.zip", "/a.zip", "other/b.zip", "notes.txt", "A.zip", ""} {
		if ok, _ := f.st.Exists(ctx, key); ok {
			t.Errorf("Exists(%q) = true", key)
		}
		if err := f.st.Delete(ctx, key); !errors.Is(err, backup.ErrInvalidName) && !errors.Is(err, backup.ErrNotFound) {
			t.Errorf("Delete(%q) = %v", key, err)
		}
	}
	if _, ok := f.bucket.Data("other/b.zip"); !ok {
		t.Error("a Delete reached an object outside the archives")
	}

	r, err := f.st.Open(ctx, "a.zip")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seek(10, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 5)
	if _, err := io.ReadFull(r, part); err != nil || !bytes.Equal(part, data[10:15]) {
		t.Errorf("read at 10 = %q, %v; want %q", part, err, data[10:15])
	}
	r.Close()
	if gets := f.bucket.Gets(); len(gets) != 1 || gets[0] != "a.zip 10 -1" {
		t.Errorf("GETs = %q, want one ranged from 10", gets)
	}

	a, err := f.st.Fetch(ctx, "a.zip")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(backup.Limits{}); err != nil || a.Size() != int64(len(data)) {
		t.Errorf("fetched archive: size %d, verify %v", a.Size(), err)
	}
	if len(f.staged(t)) != 1 {
		t.Errorf("staging folder while fetched = %q, want the copy", f.staged(t))
	}
	a.Close()
	if err := f.st.Delete(ctx, "a.zip"); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Delete(ctx, "a.zip"); !errors.Is(err, backup.ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
	if got := f.staged(t); len(got) != 0 {
		t.Errorf("staging folder holds %q", got)
	}
}

// TestS3StoragePutVerifiesFirst: an upload reaches the bucket only once
// verified; a refused one (not an archive, too large, a failing body, a
// failing bucket) leaves nothing there nor in the staging folder.
func TestS3StoragePutVerifiesFirst(t *testing.T) {
	good := archiveOf(t, "hello")
	for _, tt := range []struct {
		name    string
		body    io.Reader
		max     int64
		fail    error
		want    error
		stored  bool
		stageOK bool
	}{
		{name: "good", body: bytes.NewReader(good), max: 1 << 20, stored: true},
		{name: "not an archive", body: strings.NewReader("PK\x03\x04 nope"), max: 1 << 20, want: backup.ErrInvalidArchive},
		{name: "too large", body: bytes.NewReader(good), max: 10, want: backup.ErrTooLarge},
		{name: "body fails", body: io.MultiReader(bytes.NewReader(good[:20]), iotestErr{}), max: 1 << 20, want: errBody},
		{name: "bucket fails", body: bytes.NewReader(good), max: 1 << 20, fail: errBucket, want: errBucket},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newS3Fixture(t)
			f.bucket.Fail = func(op, key string) error {
				if op == "upload" {
					return tt.fail
				}
				return nil
			}
			_, err := f.st.Put(t.Context(), "up.zip", tt.body, tt.max, backup.Limits{})
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Put = %v, want %v", err, tt.want)
			}
			if _, ok := f.bucket.Data("up.zip"); ok != tt.stored {
				t.Errorf("stored = %v, want %v", ok, tt.stored)
			}
			if got := f.staged(t); len(got) != 0 {
				t.Errorf("staging folder holds %q", got)
			}
		})
	}
}

var (
	errBody   = errors.New("body cut")
	errBucket = errors.New("AccessDenied: Access Denied")
)

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errBody }

// archiveOf returns a valid archive of one file.
func archiveOf(t *testing.T, content string) []byte {
	t.Helper()
	d, err := backup.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Create(t.Context(), "x.zip", oneFile("auth.journal", content), backup.Meta{}); err != nil {
		t.Fatal(err)
	}
	f, err := d.Open("x.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestS3StorageCreateFails: a create whose source or upload fails leaves
// nothing in the bucket, and says which side failed.
func TestS3StorageCreateFails(t *testing.T) {
	errOpen := errors.New("open failed")
	bad := backup.Source{{Name: "auth.journal", Size: 3, Open: func() (io.ReadCloser, error) { return nil, errOpen }}}
	for _, tt := range []struct {
		name string
		src  backup.Source
		fail error
		want error
	}{
		{"source fails", bad, nil, errOpen},
		{"upload fails", oneFile("auth.journal", "x"), errBucket, errBucket},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newS3Fixture(t)
			f.bucket.Fail = func(op, key string) error {
				if op == "upload" {
					return tt.fail
				}
				return nil
			}
			_, err := f.st.Create(t.Context(), "c.zip", tt.src, backup.Meta{})
			if !errors.Is(err, tt.want) {
				t.Errorf("Create = %v, want %v", err, tt.want)
			}
			if keys := f.bucket.Keys(); len(keys) != 0 {
				t.Errorf("bucket holds %q", keys)
			}
		})
	}
}

// TestS3StorageFetchFails: a download that fails leaves no copy behind.
func TestS3StorageFetchFails(t *testing.T) {
	f := newS3Fixture(t)
	f.bucket.Set("r.zip", archiveOf(t, "x"))
	f.bucket.Fail = func(op, key string) error {
		if op == "get" {
			return errBucket
		}
		return nil
	}
	if _, err := f.st.Fetch(t.Context(), "r.zip"); !errors.Is(err, errBucket) {
		t.Errorf("Fetch = %v, want the bucket's error", err)
	}
	if _, err := f.st.Fetch(t.Context(), "missing.zip"); err == nil {
		t.Error("Fetch of a missing key succeeded")
	}
	if got := f.staged(t); len(got) != 0 {
		t.Errorf("staging folder holds %q", got)
	}
}

// TestProbeBucket: the probe lists, puts and deletes, and reports the
// step that failed with the client's error.
func TestProbeBucket(t *testing.T) {
	for _, op := range []string{"", "list", "put", "delete"} {
		b := &backuptest.Bucket{Fail: func(o, key string) error {
			if o == op {
				return errBucket
			}
			return nil
		}}
		err := backup.ProbeBucket(context.Background(), b)
		if op == "" {
			if err != nil || len(b.Keys()) != 0 {
				t.Errorf("probe = %v, bucket %q", err, b.Keys())
			}
			continue
		}
		pe, ok := errors.AsType[*backup.ProbeError](err)
		if !ok || !errors.Is(err, errBucket) || pe.Step == "" {
			t.Errorf("probe failing at %s = %v", op, err)
		}
	}
}

func ExampleNewS3Storage() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "strongbox-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	stage, err := backup.OpenDir(filepath.Join(dir, "backups"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stage.Close()
	bucket := &backuptest.Bucket{} // in production: the S3 client of backups.s3
	st := backup.NewS3Storage(bucket, stage)
	if _, err := st.Create(ctx, "nightly.zip", oneFile("auth.journal", "data"), backup.Meta{Version: "1.0.0"}); err != nil {
		fmt.Println(err)
		return
	}
	bucket.Set("photos/cat.jpg", []byte("not an archive"))
	list, _ := st.List(ctx)
	for _, i := range list {
		fmt.Println(i.Key)
	}
	fmt.Println(bucket.Keys())
	// Output:
	// nightly.zip
	// [nightly.zip photos/cat.jpg]
}

// TestS3StorageClientErrors: the S3 client's errors, as the bucket's,
// reach the caller whole, and a missing key to a Head or a Get (S3's
// NoSuchKey, or a 404 without a body) is ErrNotFound; a 404 without a body
// to a Delete or an Upload, which only a proxy sends, is not.
func TestS3StorageClientErrors(t *testing.T) {
	noSuchKey := func(op string) error { return &s3.Error{Status: 404, Code: "NoSuchKey", Op: op} }
	bare404 := func(op string) error { return &s3.Error{Status: 404, Op: op} }
	denied := func(op string) error { return &s3.Error{Status: 403, Code: "AccessDenied", Op: op} }
	stat := func(st backup.Storage) error { _, err := st.Stat(t.Context(), "a.zip"); return err }
	fetch := func(st backup.Storage) error { _, err := st.Fetch(t.Context(), "a.zip"); return err }
	del := func(st backup.Storage) error { return st.Delete(t.Context(), "a.zip") }
	create := func(st backup.Storage) error {
		_, err := st.Create(t.Context(), "c.zip", oneFile("auth.journal", "x"), backup.Meta{})
		return err
	}
	for _, tt := range []struct {
		name     string
		op       string // the bucket operation that fails
		err      func(op string) error
		call     func(backup.Storage) error
		notFound bool
	}{
		{"head NoSuchKey", "head", noSuchKey, stat, true},
		{"head 404", "head", bare404, stat, true},
		{"head denied", "head", denied, stat, false},
		{"get NoSuchKey", "get", noSuchKey, fetch, true},
		{"get denied", "get", denied, fetch, false},
		{"delete 404", "delete", bare404, del, false},
		{"upload 404", "upload", bare404, create, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newS3Fixture(t)
			f.bucket.Set("a.zip", archiveOf(t, "x"))
			f.bucket.Fail = func(op, key string) error {
				if op == tt.op {
					return tt.err(op)
				}
				return nil
			}
			err := tt.call(f.st)
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, backup.ErrNotFound) != tt.notFound {
				t.Errorf("err = %v, want ErrNotFound %v", err, tt.notFound)
			}
			if _, ok := errors.AsType[*s3.Error](err); !ok && !tt.notFound {
				t.Errorf("err = %v, want the client's *s3.Error in it", err)
			}
		})
	}
}

// TestS3StorageListSkipsStream: the objects of the continuous backup
// (package backup/stream, under "stream/") are never listed as
// archives, even those whose last segment looks like one.
func TestS3StorageListSkipsStream(t *testing.T) {
	f := newS3Fixture(t)
	ctx := context.Background()
	if _, err := f.st.Create(ctx, "a.zip", oneFile("auth.journal", "x"), backup.Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stream/gens/0001", "stream/data/0001/0000000000", "stream/data/0001/b.zip", "stream/c.zip"} {
		f.bucket.Set(k, []byte("x"))
	}
	list, err := f.st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Key != "a.zip" {
		t.Fatalf("List = %v, want a.zip alone", list)
	}
}
