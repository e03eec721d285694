package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"strongbox/backup"
	"strongbox/backup/s3"
	"strongbox/httpapi/settings"
)

// newBucket is the default Options.ObjectStore: the S3 client of
// package backup/s3 for the settings c.
func newBucket(c settings.S3) (backup.ObjectStore, error) {
	cl, err := s3.New(s3.Config{
		Endpoint:       c.Endpoint,
		Region:         c.Region,
		Bucket:         c.Bucket,
		AccessKey:      c.AccessKey,
		Secret:         c.Secret,
		ForcePathStyle: c.ForcePathStyle,
	})
	if err != nil {
		return nil, err
	}
	return bucket{cl}, nil
}

// bucket is an *s3.Client as a backup.ObjectStore: the same operations,
// with backup's Object and a missing key reported as backup.ErrNotFound.
type bucket struct{ c *s3.Client }

func object(o s3.Object) backup.Object {
	return backup.Object{Key: o.Key, Size: o.Size, LastModified: o.LastModified, ETag: o.ETag}
}

// missing adds backup.ErrNotFound to the error of a missing key.
func missing(err error) error {
	if errors.Is(err, s3.ErrNotFound) {
		return fmt.Errorf("%w: %w", backup.ErrNotFound, err)
	}
	return err
}

func (b bucket) List(ctx context.Context, prefix string) ([]backup.Object, error) {
	list, err := b.c.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]backup.Object, len(list))
	for i, o := range list {
		out[i] = object(o)
	}
	return out, nil
}

func (b bucket) Head(ctx context.Context, key string) (backup.Object, error) {
	o, err := b.c.Head(ctx, key)
	return object(o), missing(err)
}

func (b bucket) Get(ctx context.Context, key string, off, n int64) (io.ReadCloser, backup.Object, error) {
	r, o, err := b.c.Get(ctx, key, off, n)
	return r, object(o), missing(err)
}

func (b bucket) Put(ctx context.Context, key string, body []byte, contentType string) error {
	return b.c.Put(ctx, key, body, contentType)
}

func (b bucket) Upload(ctx context.Context, key string, r io.Reader, contentType string) (backup.Object, error) {
	o, err := b.c.Upload(ctx, key, r, contentType)
	return object(o), err
}

func (b bucket) Delete(ctx context.Context, key string) error { return b.c.Delete(ctx, key) }
