package backup_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/backup"
	"strongbox/backup/backuptest"
	"strongbox/backup/s3"
	"strongbox/backup/s3/s3test"
)

// bigArchive returns a valid archive of files files of size bytes each,
// incompressible (seeded), so that reading it is reading its size.
func bigArchive(t testing.TB, files, size int) []byte {
	t.Helper()
	dir := t.TempDir()
	d, err := backup.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	var src backup.Source
	for i := range files {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		src = append(src, backup.File{Name: fmt.Sprintf("logs/%d.seg", i), Size: int64(size), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(string(data))), nil
		}})
	}
	if _, err := d.Create(t.Context(), "x.zip", src, backup.Meta{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "x.zip"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// damaged returns data with one byte flipped a third of the way in, in
// the first entry's content.
func damaged(data []byte) []byte {
	out := append([]byte(nil), data...)
	out[len(out)/3] ^= 0xff
	return out
}

var checkClock = func() time.Time { return time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC) }

// TestCheckAll: every archive of a folder or a bucket is read through
// once; a damaged or truncated one is reported bad with the reason Verify
// gives, one that cannot be read as unread (not damaged), one deleted
// meanwhile as gone; a bucket's archive is streamed in a few ranged GETs,
// not one per read.
func TestCheckAll(t *testing.T) {
	good := bigArchive(t, 3, 300<<10)
	archives := map[string][]byte{
		"a-good.zip":      good,
		"b-damaged.zip":   damaged(good),
		"c-truncated.zip": good[:len(good)-200],
		"d-notzip.zip":    []byte("hello"),
		"@auto_e.zip":     good,
	}
	wantBad := map[string]string{
		"b-damaged.zip":   "entry \"logs/1.seg\": zip: checksum error",
		"c-truncated.zip": "not a zip file",
		"d-notzip.zip":    "not a zip file",
	}
	for _, onS3 := range []bool{false, true} {
		t.Run(map[bool]string{false: "folder", true: "bucket"}[onS3], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "backups")
			d, err := backup.OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			st := d.Storage()
			bucket := &backuptest.Bucket{}
			if onS3 {
				st = backup.NewS3Storage(bucket, d)
			}
			for k, data := range archives {
				if onS3 {
					bucket.Set(k, data)
				} else if err := os.WriteFile(filepath.Join(dir, k), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rep := backup.CheckAll(t.Context(), st, backup.Limits{}, checkClock)
			if rep.Checked != 2 || rep.Err != "" || rep.OK() || len(rep.Bad) != len(wantBad) {
				t.Fatalf("CheckAll = %+v, want 2 checked, %d bad", rep, len(wantBad))
			}
			for _, b := range rep.Bad {
				if want, ok := wantBad[b.Key]; !ok || !strings.Contains(b.Reason, want) || b.Unread {
					t.Errorf("bad %s: %q (unread %v), want a reason with %q", b.Key, b.Reason, b.Unread, want)
				}
				if strings.Contains(b.Reason, dir) {
					t.Errorf("bad %s: the reason %q names the server's folder", b.Key, b.Reason)
				}
			}
			// Each good archive read once; each bad one at most once.
			total := int64(0)
			for _, data := range archives {
				total += int64(len(data))
			}
			if rep.Bytes < 2*int64(len(good)) || rep.Bytes > total+64<<10 {
				t.Errorf("read %d bytes, want between %d and %d", rep.Bytes, 2*len(good), total)
			}
			if onS3 {
				gets := 0
				for _, g := range bucket.Gets() {
					if strings.HasPrefix(g, "a-good.zip ") {
						gets++
					}
				}
				// The directory, the manifest, the entries in one stream.
				if gets > 6 {
					t.Errorf("%d GETs for one archive of 3 entries, want at most 6: %q", gets, bucket.Gets())
				}
			}
		})
	}
}

// TestCheckAllUnreadAndGone: a bucket that fails mid-archive makes it
// unread, not damaged; one deleted between the listing and its read is
// gone; a failed listing or a cancelled context says so in Err.
func TestCheckAllUnreadAndGone(t *testing.T) {
	good := bigArchive(t, 2, 200<<10)
	d, err := backup.OpenDir(filepath.Join(t.TempDir(), "backups"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var gets atomic.Int32
	errCut := errors.New("connection reset by peer")
	bucket := &backuptest.Bucket{Fail: func(op, key string) error {
		switch {
		case op == "get" && key == "cut.zip" && gets.Add(1) > 3:
			return errCut
		case op == "head" && key == "gone.zip":
			return fmt.Errorf("fake: %w", s3.ErrNotFound)
		}
		return nil
	}}
	for _, k := range []string{"cut.zip", "gone.zip", "ok.zip"} {
		bucket.Set(k, good)
	}
	st := backup.NewS3Storage(bucket, d)
	rep := backup.CheckAll(t.Context(), st, backup.Limits{}, checkClock)
	if rep.Checked != 1 || rep.Gone != 1 || len(rep.Bad) != 1 || !rep.Bad[0].Unread || !strings.Contains(rep.Bad[0].Reason, errCut.Error()) {
		t.Fatalf("CheckAll = %+v, want 1 checked, 1 gone, cut.zip unread", rep)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if rep := backup.CheckAll(ctx, st, backup.Limits{}, checkClock); rep.Err == "" || rep.Checked != 0 {
		t.Errorf("cancelled CheckAll = %+v, want an Err and nothing checked", rep)
	}
	bucket.Fail = func(op, key string) error {
		if op == "list" {
			return errors.New("AccessDenied")
		}
		return nil
	}
	if rep := backup.CheckAll(t.Context(), st, backup.Limits{}, checkClock); !strings.Contains(rep.Err, "AccessDenied") || rep.OK() {
		t.Errorf("CheckAll with a failed listing = %+v, want its error", rep)
	}
}

// BenchmarkVerifyStored reads and verifies an archive of 4 × 4 MiB of
// incompressible files from the folder and from an in-memory bucket
// (b.SetBytes: MB/s is the check's read speed).
func BenchmarkVerifyStored(b *testing.B) {
	data := bigArchive(b, 4, 4<<20)
	for _, onS3 := range []bool{false, true} {
		b.Run(map[bool]string{false: "folder", true: "bucket"}[onS3], func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "backups")
			d, err := backup.OpenDir(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			st := d.Storage()
			if onS3 {
				bucket := &backuptest.Bucket{}
				bucket.Set("x.zip", data)
				st = backup.NewS3Storage(bucket, d)
			} else if err := os.WriteFile(filepath.Join(dir, "x.zip"), data, 0o600); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := backup.VerifyStored(b.Context(), st, "x.zip", backup.Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifyStoredGateway reads and verifies a 64 MiB archive of
// incompressible files from versitygw on loopback (STRONGBOX_S3_GATEWAY):
// the check's read speed from a real S3 server, streamed by ranged GETs.
func BenchmarkVerifyStoredGateway(b *testing.B) {
	if os.Getenv(s3test.EnvGateway) == "" {
		b.Skip(s3test.EnvGateway + " is not set")
	}
	g := s3test.Start(b)
	cl, err := s3.New(s3.Config{Endpoint: g.Endpoint, Region: g.Region, Bucket: g.Bucket, AccessKey: g.AccessKey, Secret: g.Secret, ForcePathStyle: true})
	if err != nil {
		b.Fatal(err)
	}
	data := bigArchive(b, 4, 16<<20)
	if _, err := cl.Upload(b.Context(), "x.zip", bytes.NewReader(data), "application/zip"); err != nil {
		b.Fatal(err)
	}
	d, err := backup.OpenDir(filepath.Join(b.TempDir(), "backups"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	st := backup.NewS3Storage(cl, d)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := backup.VerifyStored(b.Context(), st, "x.zip", backup.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
