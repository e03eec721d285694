package backup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"strongbox/backup/age"
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
	return d.put(ctx, key, r, maxSize, limits, Keys{})
}

// put is Put, the upload opened and encrypted as k says ([Keys]).
func (d *Dir) put(ctx context.Context, key string, r io.Reader, maxSize int64, limits Limits, k Keys) (Info, error) {
	if !ValidName(key) {
		return Info{}, fmt.Errorf("%w: %q", ErrInvalidName, key)
	}
	if d.Exists(key) {
		return Info{}, fmt.Errorf("%w: %s", ErrExists, key)
	}
	return d.received(ctx, key, r, maxSize, limits, k, func(fd *os.File, tmp string, _ int64) (Info, error) {
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
func (d *Dir) received(ctx context.Context, key string, r io.Reader, maxSize int64, limits Limits, k Keys, keep func(fd *os.File, tmp string, n int64) (Info, error)) (Info, error) {
	fd, tmp, n, err := d.receive(ctx, key, r, maxSize, limits, k)
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
// maxSize bytes received, or [ErrTooLarge]), encrypting a plain upload
// on its way if k has recipients (so that its plaintext never reaches
// the disk), fsyncs it and checks it with [Verify] and limits, opened
// with k. It returns the file, open, its temporary name and its length;
// the caller closes and removes it. On error nothing remains.
func (d *Dir) receive(ctx context.Context, key string, r io.Reader, maxSize int64, limits Limits, k Keys) (_ *os.File, _ string, n int64, err error) {
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
	n, err = copyUpload(fd, io.LimitReader(ctxReader{ctx, r}, maxSize+1), k)
	if err != nil {
		return nil, "", 0, fmt.Errorf("backup: upload %s: %w", key, unpath(err))
	}
	if n > maxSize {
		return nil, "", 0, fmt.Errorf("%w: %s: more than %d bytes", ErrTooLarge, key, maxSize)
	}
	if err = fd.Sync(); err != nil {
		return nil, "", 0, fmt.Errorf("backup: upload %s: %w", key, unpath(err))
	}
	stored, err := fd.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, "", 0, fmt.Errorf("backup: upload %s: %w", key, unpath(err))
	}
	zr, zsize, err := k.open(fd, stored)
	if err == nil {
		_, err = Verify(zr, zsize, limits)
		err = errors.Unwrap(err)
	}
	if err != nil {
		return nil, "", 0, fmt.Errorf("backup: upload %s: %w", key, err)
	}
	return fd, tmp, stored, nil
}

// copyUpload copies an upload r to fd and returns the bytes read from r:
// as they are, unless k encrypts and r is not an age file already.
func copyUpload(fd *os.File, r io.Reader, k Keys) (int64, error) {
	if !k.encrypting() {
		return io.Copy(fd, r)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(len("age-encryption.org/v1\n")); IsEncrypted(head) {
		return io.Copy(fd, br)
	}
	w, err := age.Encrypt(fd, k.Recipients...)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, br)
	if err != nil {
		return n, err
	}
	return n, w.Close()
}
