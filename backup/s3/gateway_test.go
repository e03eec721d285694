package s3

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"strongbox/backup/s3/s3test"
)

// These tests run against a real S3 server, versitygw, which s3test
// starts when STRONGBOX_S3_GATEWAY names its binary (they skip otherwise).

func gatewayClient(t testing.TB, g s3test.Gateway, change func(*Config)) *Client {
	t.Helper()
	cfg := Config{Endpoint: g.Endpoint, Region: g.Region, Bucket: g.Bucket, AccessKey: g.AccessKey,
		Secret: g.Secret, ForcePathStyle: true, PartSize: minPartSize}
	if change != nil {
		change(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.retryBase = time.Millisecond
	return c
}

// createBucket sends PutBucket (CreateBucket) for c's bucket.
func createBucket(ctx context.Context, c *Client) error {
	return c.do(ctx, &request{op: "create bucket", method: http.MethodPut, retry: retryIdempotent}, discard)
}

// pattern is a reader of n deterministic bytes that holds none of them:
// a source of any size whose memory does not count.
type pattern struct {
	n, off int64
	h      hash.Hash // of what was read
}

func newPattern(n int64) *pattern { return &pattern{n: n, h: sha256.New()} }

func (p *pattern) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	for i := range b {
		x := uint64(p.off + int64(i))
		b[i] = byte(x*2654435761>>13) ^ byte(x)
	}
	p.off += int64(len(b))
	p.h.Write(b)
	return len(b), nil
}

func (p *pattern) sum() string { return hex.EncodeToString(p.h.Sum(nil)) }

func getSum(t *testing.T, c *Client, key string) string {
	t.Helper()
	rc, _, err := c.Get(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// assertNothingLeft checks that key does not exist and that no multipart
// upload is pending in the bucket.
func assertNothingLeft(t *testing.T, c *Client, key string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Head(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("Head(%s) after a failed upload = %v, want ErrNotFound", key, err)
	}
	ups, err := c.listMultipartUploads(ctx, "")
	if err != nil || len(ups) != 0 {
		t.Errorf("pending uploads after a failed upload: %v, %v", ups, err)
	}
}

func TestGatewayRoundTrip(t *testing.T) {
	g := s3test.Start(t)
	c := gatewayClient(t, g, nil)
	ctx := context.Background()

	// 1,200 objects listed across pages of 100.
	const n = 1200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	keys := make(chan string)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				errs <- c.Put(ctx, k, []byte(k), "text/plain")
			}
		}()
	}
	for i := 0; i < n; i++ {
		keys <- fmt.Sprintf("many/%04d @x.txt", i)
	}
	close(keys)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c.maxKeys = 100
	objs, err := c.List(ctx, "many/")
	if err != nil || len(objs) != n {
		t.Fatalf("List = %d objects, %v; want %d", len(objs), err, n)
	}
	for i, o := range objs {
		if want := fmt.Sprintf("many/%04d @x.txt", i); o.Key != want || o.Size != int64(len(want)) || o.LastModified.IsZero() {
			t.Fatalf("object %d = %+v, want key %s", i, o, want)
		}
	}
	if objs, err := c.List(ctx, "none/"); err != nil || len(objs) != 0 {
		t.Fatalf("List(none/) = %v, %v", objs, err)
	}

	// Head and ranged gets.
	const key = "many/0042 @x.txt"
	obj, err := c.Head(ctx, key)
	if err != nil || obj.Size != int64(len(key)) || obj.ETag == "" {
		t.Fatalf("Head = %+v, %v", obj, err)
	}
	if _, err := c.Head(ctx, "many/nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Head(missing) = %v, want ErrNotFound", err)
	}
	if _, _, err := c.Get(ctx, "many/nope", 0, -1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(missing) = %v, want ErrNotFound", err)
	}
	for _, rg := range []struct {
		off, n int64
		want   string
	}{{0, -1, key}, {5, -1, key[5:]}, {5, 4, key[5:9]}, {0, 3, key[:3]}, {3, 0, ""}} {
		rc, o, err := c.Get(ctx, key, rg.off, rg.n)
		if err != nil {
			t.Fatalf("Get(%d, %d) = %v", rg.off, rg.n, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != rg.want || o.Size != int64(len(key)) {
			t.Errorf("Get(%d, %d) = %q (size %d), %v; want %q", rg.off, rg.n, b, o.Size, err, rg.want)
		}
	}

	// Upload of ~40 MiB in 5 MiB parts, then delete.
	src := newPattern(40<<20 + 12345)
	up, err := c.Upload(ctx, "archive.zip", src, "application/zip")
	if err != nil || up.Size != src.n {
		t.Fatalf("Upload = %+v, %v", up, err)
	}
	if got := getSum(t, c, "archive.zip"); got != src.sum() {
		t.Fatalf("the stored archive differs from what was uploaded")
	}
	for _, k := range []string{"archive.zip", "archive.zip", key} { // twice: deleting a missing key is fine
		if err := c.Delete(ctx, k); err != nil {
			t.Fatalf("Delete(%s) = %v", k, err)
		}
	}
	if _, err := c.Head(ctx, "archive.zip"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Head after Delete = %v", err)
	}
	// A small body goes in one PutObject; an empty one too.
	for _, size := range []int64{0, 1000} {
		src := newPattern(size)
		if obj, err := c.Upload(ctx, "small.zip", src, "application/zip"); err != nil || obj.Size != size {
			t.Fatalf("Upload(%d bytes) = %+v, %v", size, obj, err)
		}
		if got := getSum(t, c, "small.zip"); got != src.sum() {
			t.Fatalf("small upload differs")
		}
	}
	assertNothingLeft(t, c, "archive.zip")
}

// An upload of any size buffers at most two parts: 40 MiB in 5 MiB parts
// allocates far less than the 40 MiB a buffering client would.
func TestGatewayUploadMemory(t *testing.T) {
	g := s3test.Start(t)
	c := gatewayClient(t, g, nil)
	ctx := context.Background()
	src := newPattern(40 << 20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := c.Upload(ctx, "mem.zip", src, "application/zip"); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Upload of 40 MiB in 5 MiB parts allocated %.1f MiB", float64(alloc)/(1<<20))
	if alloc > 3*minPartSize {
		t.Errorf("Upload allocated %d bytes, more than three parts of %d", alloc, minPartSize)
	}
}

// A second bucket made with PutBucket is usable, and a client of a bucket
// that does not exist gets NoSuchBucket.
func TestGatewayBuckets(t *testing.T) {
	g := s3test.Start(t)
	ctx := context.Background()
	other := gatewayClient(t, g, func(cfg *Config) { cfg.Bucket = "other-bucket" })
	if _, err := other.List(ctx, ""); !hasCode(err, "NoSuchBucket") {
		t.Fatalf("List of a missing bucket = %v, want NoSuchBucket", err)
	}
	if _, err := other.Upload(ctx, "k.zip", newPattern(12<<20), ""); !hasCode(err, "NoSuchBucket") {
		t.Fatalf("Upload to a missing bucket = %v, want NoSuchBucket", err)
	}
	if err := createBucket(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := other.Put(ctx, "k", []byte("v"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(g.Dir, "other-bucket", "k")); err != nil {
		t.Fatal(err)
	}
}

func hasCode(err error, code string) bool {
	var se *Error
	return errors.As(err, &se) && se.Code == code
}

// BenchmarkGatewayUpload reports the throughput of Upload (16 MiB parts)
// to versitygw on loopback.
func BenchmarkGatewayUpload(b *testing.B) {
	g := s3test.Start(b)
	c := gatewayClient(b, g, func(cfg *Config) { cfg.PartSize = 0 })
	const size = 64 << 20
	b.SetBytes(size)
	for i := 0; b.Loop(); i++ {
		if _, err := c.Upload(context.Background(), fmt.Sprintf("bench-%d.zip", i), newPattern(size), "application/zip"); err != nil {
			b.Fatal(err)
		}
	}
}
