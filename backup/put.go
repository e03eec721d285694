package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge: an uploaded archive is larger than the allowed maximum.
var ErrTooLarge = errors.New("backup: archive too large")

// Put stores an uploaded archive under key: it streams r into a temporary
// file in the backups folder (at most maxSize bytes, or [ErrTooLarge]),
// fsyncs it, checks it with [Verify] and limits, then links it into place
// as Create does, never overwriting ([ErrExists]). An archive that is not a
// valid strongbox archive is refused with an [*ArchiveError], so it never
// reaches a restore. Whatever the outcome, no temporary file remains.
func (d *Dir) Put(ctx context.Context, key string, r io.Reader, maxSize int64, limits Limits) (Info, error) {
	if !ValidName(key) {
		return Info{}, fmt.Errorf("%w: %q", ErrInvalidName, key)
	}
	if d.Exists(key) {
		return Info{}, fmt.Errorf("%w: %s", ErrExists, key)
	}
	return d.received(ctx, key, r, maxSize, limits, func(fd *os.File, tmp string, _ int64) (Info, error) {
		if err := fd.Close(); err != nil {
			return Info{}, fmt.Errorf("backup: upload %s: %w", key, unpath(err))
		}
		if err := ctx.Err(); err != nil {
			return Info{}, fmt.Errorf("backup: upload %s: %w", key, err)
		}
		if err := d.publishTemp(tmp, key); err != nil {
			return Info{}, err
		}
		return d.Stat(key)
	})
}

// received receives an upload into a temporary file ([Dir.receive]) and
// hands it to keep, open, with its temporary name and length; whatever
// keep does, the temporary file is removed after.
func (d *Dir) received(ctx context.Context, key string, r io.Reader, maxSize int64, limits Limits, keep func(fd *os.File, tmp string, n int64) (Info, error)) (Info, error) {
	fd, tmp, n, err := d.receive(ctx, key, r, maxSize, limits)
	if err != nil {
		return Info{}, err
	}
	defer func() {
		fd.Close()
		d.root.Remove(tmp)
	}()
	return keep(fd, tmp, n)
}

// receive streams r into a new temporary file of the folder (at most
// maxSize bytes, or [ErrTooLarge]), fsyncs it and checks it with [Verify]
// and limits. It returns the file, open, its temporary name and its
// length; the caller closes and removes it. On error nothing remains.
func (d *Dir) receive(ctx context.Context, key string, r io.Reader, maxSize int64, limits Limits) (_ *os.File, _ string, n int64, err error) {
	tmp := tempName()
	fd, err := d.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, "", 0, fmt.Errorf("backup: upload %s: %w", key, unpath(err))
	}
	defer func() {
		if err != nil {
			fd.Close()
			d.root.Remove(tmp)
		}
	}()
	n, err = io.Copy(fd, io.LimitReader(ctxReader{ctx, r}, maxSize+1))
	if err != nil {
		return nil, "", 0, fmt.Errorf("backup: upload %s: %w", key, unpath(err))
	}
	if n > maxSize {
		return nil, "", 0, fmt.Errorf("%w: %s: more than %d bytes", ErrTooLarge, key, maxSize)
	}
	if err = fd.Sync(); err != nil {
		return nil, "", 0, fmt.Errorf("backup: upload %s: %w", key, unpath(err))
	}
	if _, err = Verify(fd, n, limits); err != nil {
		return nil, "", 0, fmt.Errorf("backup: upload %s: %w", key, errors.Unwrap(err))
	}
	return fd, tmp, n, nil
}
