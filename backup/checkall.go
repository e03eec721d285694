package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// CheckReport is the outcome of one [CheckAll]: what `restic check
// --read-data` tells of a repository, for the archives of a [Storage].
type CheckReport struct {
	Started, Ended time.Time
	// Checked counts the archives read in full and found good.
	Checked int
	// Gone counts the archives listed but deleted before they were read
	// (a pruning, a DELETE): neither good nor bad.
	Gone int
	// Bytes is what was read of the archives, in bytes.
	Bytes int64
	// Bad lists the archives that failed, in key order.
	Bad []BadArchive
	// Err says why the check did not go through the whole list (the
	// listing failed, or the check was cancelled); "" when it did.
	Err string
}

// BadArchive is an archive that failed a check, and why: Reason is the
// [*ArchiveError]'s reason (in terms of the archive's entries) when it is
// damaged, or the storage's error when it could not be read, which names
// the key, never a server path or a secret ([Storage]).
type BadArchive struct {
	Key      string
	Reason   string
	Unread   bool // it could not be read; else it was read and is damaged
	Modified time.Time
}

// OK reports whether the check went through every archive and found no
// bad one.
func (r CheckReport) OK() bool { return r.Err == "" && len(r.Bad) == 0 }

// CheckAll reads every archive of st through once and verifies it as
// [VerifyStored] does, one after the other, and reports what it found.
// It stops early, saying so in Err, when ctx ends. now stamps the report.
func CheckAll(ctx context.Context, st Storage, limits Limits, now func() time.Time) CheckReport {
	rep := CheckReport{Started: now()}
	list, err := st.List(ctx)
	if err != nil {
		rep.Err = "list the archives: " + err.Error()
		rep.Ended = now()
		return rep
	}
	for _, info := range list {
		if ctx.Err() != nil {
			rep.Err = "cancelled: " + context.Cause(ctx).Error()
			break
		}
		n, err := VerifyStored(ctx, st, info.Key, limits)
		rep.Bytes += n
		switch {
		case err == nil:
			rep.Checked++
		case errors.Is(err, ErrNotFound):
			rep.Gone++
		case ctx.Err() != nil:
			rep.Err = "cancelled: " + context.Cause(ctx).Error()
		default:
			bad := BadArchive{Key: info.Key, Reason: err.Error(), Unread: true, Modified: info.Modified}
			if ae, ok := errors.AsType[*ArchiveError](err); ok {
				bad.Reason, bad.Unread = ae.Reason, false
			}
			rep.Bad = append(rep.Bad, bad)
		}
	}
	rep.Ended = now()
	return rep
}

// VerifyStored reads the archive key of st and verifies it as [Verify]
// does, without a local copy: an archive in a bucket is streamed by
// ranged GETs, read in order, each entry through once (so memory stays
// bounded by the zip directory and a few buffers, whatever the size). It
// returns the bytes read. A read failure (the bucket unreachable, the
// object cut short) is returned as such, never as an [*ArchiveError]: only
// bytes that were read and are wrong make an archive invalid.
func VerifyStored(ctx context.Context, st Storage, key string, limits Limits) (int64, error) {
	r, err := st.Open(ctx, key)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	size := r.Info().Size
	ra := &readTracker{ctx: ctx, size: size}
	if at, ok := r.(io.ReaderAt); ok {
		ra.at = at
	} else {
		ra.at = &seqReaderAt{r: r, size: size}
	}
	zr, zsize, err := keysOf(st).open(ra, size) // an age file: its plaintext
	if err != nil && ra.err == nil {
		return ra.n, fmt.Errorf("backup: verify %s: %w", key, err)
	}
	if err == nil {
		_, err = Verify(zr, zsize, limits)
	}
	if ra.err != nil {
		return ra.n, fmt.Errorf("backup: verify %s: read: %w", key, ra.err)
	}
	if err != nil {
		return ra.n, fmt.Errorf("backup: verify %s: %w", key, errors.Unwrap(err))
	}
	return ra.n, nil
}

// readTracker counts the bytes read through at, stops at ctx's end, and
// keeps the first read error other than the end of the archive, which
// Verify would otherwise report as damage of the entry being read.
type readTracker struct {
	ctx  context.Context
	at   io.ReaderAt
	size int64
	n    int64
	err  error
}

func (t *readTracker) ReadAt(p []byte, off int64) (int, error) {
	if err := t.ctx.Err(); err != nil {
		t.keep(err)
		return 0, err
	}
	n, err := t.at.ReadAt(p, off)
	t.n += int64(n)
	if err != nil && !(err == io.EOF && off+int64(n) >= t.size) {
		t.keep(err)
	}
	return n, err
}

func (t *readTracker) keep(err error) {
	if t.err == nil {
		t.err = err
	}
}

// maxSkip is the forward gap seqReaderAt reads through rather than
// asking for a new range: the local header and name between two entries.
const maxSkip = 64 << 10

// seqReaderAt reads an archive opened as a stream (a bucket's object) at
// any offset: a read that follows the previous one, or a little past it,
// goes on in the same stream; any other seeks, which the object reader
// turns into a new ranged GET at its next read.
type seqReaderAt struct {
	r    io.ReadSeeker
	size int64
	pos  int64
}

func (s *seqReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	if d := off - s.pos; d < 0 || d > maxSkip {
		if _, err := s.r.Seek(off, io.SeekStart); err != nil {
			return 0, err
		}
		s.pos = off
	} else if d > 0 {
		n, err := io.CopyN(io.Discard, s.r, d)
		s.pos += n
		if err != nil {
			return 0, err
		}
	}
	want := p
	if rest := s.size - off; int64(len(want)) > rest {
		want = want[:rest]
	}
	n, err := io.ReadFull(s.r, want)
	s.pos += int64(n)
	if err != nil {
		return n, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
