// Package backuptest is a test helper: an in-memory S3 bucket, a
// backup.ObjectStore, for the tests of the packages that keep archives on
// S3 (backup.NewS3Storage).
package backuptest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"strongbox/backup"
	"strongbox/backup/s3"
)

// Bucket is an in-memory backup.ObjectStore. As S3 does, an upload's
// object appears only once the whole body was read, and an upload whose
// body fails stores nothing. The zero Bucket is empty and ready.
type Bucket struct {
	// Now is the clock of LastModified; nil = time.Now.
	Now func() time.Time
	// Fail, if set, is called before each operation ("list", "head",
	// "get", "put", "upload", "delete") with its key; an error it returns
	// is the operation's.
	Fail func(op, key string) error

	mu      sync.Mutex
	objects map[string]stored
	gets    []string // "key off n" of each Get
}

type stored struct {
	data []byte
	mod  time.Time
}

var _ backup.ObjectStore = (*Bucket)(nil)

func (b *Bucket) check(op, key string) error {
	if b.Fail != nil {
		return b.Fail(op, key)
	}
	return nil
}

func (b *Bucket) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

func (b *Bucket) object(key string, s stored) backup.Object {
	return backup.Object{Key: key, Size: int64(len(s.data)), LastModified: s.mod, ETag: fmt.Sprintf("%q", fmt.Sprint(len(s.data)))}
}

// List returns the objects whose key starts with prefix, by key.
func (b *Bucket) List(ctx context.Context, prefix string) ([]backup.Object, error) {
	if err := b.check("list", prefix); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []backup.Object
	for k, s := range b.objects {
		if strings.HasPrefix(k, prefix) {
			out = append(out, b.object(k, s))
		}
	}
	slices.SortFunc(out, func(x, y backup.Object) int { return strings.Compare(x.Key, y.Key) })
	return out, nil
}

// Head describes an object, or fails with s3.ErrNotFound, as the S3
// client does.
func (b *Bucket) Head(ctx context.Context, key string) (backup.Object, error) {
	if err := b.check("head", key); err != nil {
		return backup.Object{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.objects[key]
	if !ok {
		return backup.Object{}, fmt.Errorf("backuptest: %s: %w", key, s3.ErrNotFound)
	}
	return b.object(key, s), nil
}

// Get reads n bytes (n < 0: to the end) of an object from off.
func (b *Bucket) Get(ctx context.Context, key string, off, n int64) (io.ReadCloser, backup.Object, error) {
	if err := b.check("get", key); err != nil {
		return nil, backup.Object{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gets = append(b.gets, fmt.Sprint(key, " ", off, " ", n))
	s, ok := b.objects[key]
	if !ok {
		return nil, backup.Object{}, fmt.Errorf("backuptest: %s: %w", key, s3.ErrNotFound)
	}
	data := s.data[min(off, int64(len(s.data))):]
	if n >= 0 {
		data = data[:min(n, int64(len(data)))]
	}
	return io.NopCloser(bytes.NewReader(data)), b.object(key, s), nil
}

// Put stores body under key.
func (b *Bucket) Put(ctx context.Context, key string, body []byte, contentType string) error {
	if err := b.check("put", key); err != nil {
		return err
	}
	b.Set(key, body)
	return nil
}

// Upload reads r to its end, then stores it under key; nothing if r fails.
func (b *Bucket) Upload(ctx context.Context, key string, r io.Reader, contentType string) (backup.Object, error) {
	if err := b.check("upload", key); err != nil {
		return backup.Object{}, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return backup.Object{}, fmt.Errorf("backuptest: upload %s aborted: %w", key, err)
	}
	b.Set(key, data)
	return b.Head(ctx, key)
}

// Delete removes an object; a missing one is no error, as in S3.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := b.check("delete", key); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objects, key)
	return nil
}

// Set stores data under key, dated now.
func (b *Bucket) Set(key string, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objects == nil {
		b.objects = map[string]stored{}
	}
	b.objects[key] = stored{data: bytes.Clone(data), mod: b.now().UTC().Truncate(time.Second)}
}

// Data returns the content of an object and whether it exists.
func (b *Bucket) Data(key string) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.objects[key]
	return s.data, ok
}

// Keys returns the keys of the objects, sorted.
func (b *Bucket) Keys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	keys := make([]string, 0, len(b.objects))
	for k := range b.objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Gets returns "key off n" for each Get so far.
func (b *Bucket) Gets() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.gets)
}
