package s3

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"strongbox/backup/s3/s3test"
)

// Each fault ends in a successful retry or a clear error, and a failed
// upload leaves neither its key nor a pending multipart upload.
func TestGatewayFaults(t *testing.T) {
	g := s3test.Start(t)
	const size = 12 << 20 // parts of 5, 5 and 2 MiB
	tests := []struct {
		name   string
		rule   s3test.Rule
		change func(*Config)
		err    string // "" = the upload succeeds
	}{
		{name: "connection cut mid-part, retried", rule: s3test.On("PUT part 2", 1, s3test.CutMidBody)},
		{name: "connection cut mid-part every time", rule: s3test.On("PUT part 2", 99, s3test.CutMidBody),
			change: func(c *Config) { c.MaxRetries = 2 }, err: "s3: upload part 2: "},
		{name: "500 and 503 on parts, retried", rule: func(r *http.Request, nth int) s3test.Fault {
			switch {
			case s3test.Step(r) == "PUT part 1" && nth == 0:
				return s3test.Answer500
			case s3test.Step(r) == "PUT part 3" && nth < 2:
				return s3test.Answer503
			}
			return s3test.Pass
		}},
		{name: "503 on Complete, retried", rule: s3test.On("POST complete", 2, s3test.Answer503)},
		{name: "500 on Complete every time", rule: s3test.On("POST complete", 99, s3test.Answer500),
			change: func(c *Config) { c.MaxRetries = 1 }, err: "s3: upload: InternalError: injected (HTTP 500)"},
		{name: "slow answer past the timeout, retried", rule: s3test.On("PUT part 1", 1, s3test.StallAnswer),
			change: func(c *Config) { c.Timeout = 2 * time.Second }},
		{name: "slow answer past the timeout every time", rule: s3test.On("PUT part 1", 99, s3test.StallAnswer),
			change: func(c *Config) { c.Timeout = 2 * time.Second; c.MaxRetries = -1 }, err: "s3: upload part 1: no progress within 2s"},
		{name: "wrong secret", rule: s3test.On("", 0, s3test.Pass),
			change: func(c *Config) { c.Secret = "wrong-secret-0123456789" }, err: "s3: upload: SignatureDoesNotMatch: "},
		{name: "missing bucket", rule: s3test.On("", 0, s3test.Pass),
			change: func(c *Config) { c.Bucket = "no-such-bucket" }, err: "s3: upload: NoSuchBucket: "},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy := s3test.StartProxy(t, g.Endpoint, tt.rule)
			endpoint := proxy.URL
			c := gatewayClient(t, g, func(cfg *Config) {
				cfg.Endpoint = endpoint
				if tt.change != nil {
					tt.change(cfg)
				}
			})
			key := fmt.Sprintf("fault-%d.zip", i)
			src := newPattern(size)
			obj, err := c.Upload(context.Background(), key, src, "application/zip")
			direct := gatewayClient(t, g, nil)
			if tt.err == "" {
				if err != nil || obj.Size != size {
					t.Fatalf("Upload = %+v, %v; want success", obj, err)
				}
				if getSum(t, direct, key) != src.sum() {
					t.Fatal("the stored archive differs from what was uploaded")
				}
				if proxy.Faults() == 0 {
					t.Fatal("no fault was injected")
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Fatalf("Upload = %v, want %q…", err, tt.err)
			}
			if strings.Contains(err.Error(), "wrong-secret") || strings.Contains(err.Error(), g.Secret) {
				t.Fatalf("the error shows a secret: %v", err)
			}
			assertNothingLeft(t, direct, key)
		})
	}
}

// Idempotent reads survive 500, 503 and cuts too.
func TestGatewayReadFaults(t *testing.T) {
	g := s3test.Start(t)
	direct := gatewayClient(t, g, nil)
	ctx := context.Background()
	if err := direct.Put(ctx, "r.txt", []byte("0123456789"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	rule := func(r *http.Request, nth int) s3test.Fault {
		switch {
		case nth == 0:
			return s3test.Answer500
		case nth == 1:
			return s3test.Answer503
		}
		return s3test.Pass
	}
	proxy := s3test.StartProxy(t, g.Endpoint, rule)
	endpoint := proxy.URL
	c := gatewayClient(t, g, func(cfg *Config) { cfg.Endpoint = endpoint })
	if objs, err := c.List(ctx, ""); err != nil || len(objs) != 1 {
		t.Fatalf("List = %v, %v", objs, err)
	}
	if obj, err := c.Head(ctx, "r.txt"); err != nil || obj.Size != 10 {
		t.Fatalf("Head = %+v, %v", obj, err)
	}
	rc, _, err := c.Get(ctx, "r.txt", 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(b) != "234" {
		t.Fatalf("Get = %q, %v", b, err)
	}
	if err := c.Delete(ctx, "r.txt"); err != nil {
		t.Fatal(err)
	}
	if n := proxy.Faults(); n != 8 { // a 500 and a 503 for each step
		t.Fatalf("%d faults injected, want 8", n)
	}
}

// An upload whose context ends mid-way, or whose reader fails, is aborted.
func TestGatewayUploadInterrupted(t *testing.T) {
	g := s3test.Start(t)
	c := gatewayClient(t, g, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &cancelAfter{r: newPattern(20 << 20), n: 7 << 20, cancel: cancel}
	if _, err := c.Upload(ctx, "cancelled.zip", r, ""); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("Upload = %v, want context canceled", err)
	}
	assertNothingLeft(t, c, "cancelled.zip")
	boom := io.MultiReader(newPattern(11<<20), &failReader{fmt.Errorf("disk on fire")})
	if _, err := c.Upload(context.Background(), "failed.zip", boom, ""); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("Upload = %v, want the reader's error", err)
	}
	assertNothingLeft(t, c, "failed.zip")
}

// cancelAfter cancels a context once n bytes have been read.
type cancelAfter struct {
	r      io.Reader
	n      int64
	cancel func()
}

func (c *cancelAfter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if c.n -= int64(n); c.n <= 0 {
		c.cancel()
	}
	return n, err
}
