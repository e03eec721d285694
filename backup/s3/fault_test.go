package s3

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/backup/s3/s3test"
)

// fault is what the proxy does with a request.
type fault int

const (
	pass        fault = iota
	cutMidBody        // read 1 MiB of the body, then drop the connection
	answer500         // answer 500 InternalError
	answer503         // answer 503 SlowDown
	stallAnswer       // read the body, then say nothing until the client leaves
)

// faultProxy is a loopback proxy in front of the gateway that applies a
// rule to each request: rule gets the request and how many requests of
// the same step (method and kind) came before it.
type faultProxy struct {
	rp       *httputil.ReverseProxy
	rule     func(r *http.Request, nth int) fault
	mu       sync.Mutex
	seen     map[string]int
	injected int // faults applied
}

func startProxy(t *testing.T, target string, rule func(*http.Request, int) fault) (string, *faultProxy) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{rp: httputil.NewSingleHostReverseProxy(u), rule: rule, seen: map[string]int{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL, p
}

func (p *faultProxy) faults() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.injected
}

// step names a request's kind: "PUT part 2", "POST complete", "GET /bucket/key".
func step(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case q.Has("partNumber"):
		return r.Method + " part " + q.Get("partNumber")
	case r.Method == http.MethodPost && q.Has("uploadId"):
		return "POST complete"
	}
	return r.Method + " " + r.URL.Path
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	s := step(r)
	nth := p.seen[s]
	p.seen[s]++
	f := p.rule(r, nth)
	if f != pass {
		p.injected++
	}
	p.mu.Unlock()
	switch f {
	case pass:
		p.rp.ServeHTTP(w, r)
	case cutMidBody:
		_, _ = io.CopyN(io.Discard, r.Body, 1<<20)
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	case answer500, answer503:
		_, _ = io.Copy(io.Discard, r.Body)
		code, status := "InternalError", http.StatusInternalServerError
		if f == answer503 {
			code, status = "SlowDown", http.StatusServiceUnavailable
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "<Error><Code>%s</Code><Message>injected</Message></Error>", code)
	case stallAnswer:
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}
}

// on returns a rule that applies f to the requests of step s whose rank
// (from 0) is below times, and lets everything else pass.
func on(s string, times int, f fault) func(*http.Request, int) fault {
	return func(r *http.Request, nth int) fault {
		if step(r) == s && nth < times {
			return f
		}
		return pass
	}
}

// Each fault ends in a successful retry or a clear error, and a failed
// upload leaves neither its key nor a pending multipart upload.
func TestGatewayFaults(t *testing.T) {
	g := s3test.Start(t)
	const size = 12 << 20 // parts of 5, 5 and 2 MiB
	tests := []struct {
		name   string
		rule   func(*http.Request, int) fault
		change func(*Config)
		err    string // "" = the upload succeeds
	}{
		{name: "connection cut mid-part, retried", rule: on("PUT part 2", 1, cutMidBody)},
		{name: "connection cut mid-part every time", rule: on("PUT part 2", 99, cutMidBody),
			change: func(c *Config) { c.MaxRetries = 2 }, err: "s3: upload part 2: "},
		{name: "500 and 503 on parts, retried", rule: func(r *http.Request, nth int) fault {
			switch {
			case step(r) == "PUT part 1" && nth == 0:
				return answer500
			case step(r) == "PUT part 3" && nth < 2:
				return answer503
			}
			return pass
		}},
		{name: "503 on Complete, retried", rule: on("POST complete", 2, answer503)},
		{name: "500 on Complete every time", rule: on("POST complete", 99, answer500),
			change: func(c *Config) { c.MaxRetries = 1 }, err: "s3: upload: InternalError: injected (HTTP 500)"},
		{name: "slow answer past the timeout, retried", rule: on("PUT part 1", 1, stallAnswer),
			change: func(c *Config) { c.Timeout = 2 * time.Second }},
		{name: "slow answer past the timeout every time", rule: on("PUT part 1", 99, stallAnswer),
			change: func(c *Config) { c.Timeout = 2 * time.Second; c.MaxRetries = -1 }, err: "s3: upload part 1: no progress within 2s"},
		{name: "wrong secret", rule: on("", 0, pass),
			change: func(c *Config) { c.Secret = "wrong-secret-0123456789" }, err: "s3: upload: SignatureDoesNotMatch: "},
		{name: "missing bucket", rule: on("", 0, pass),
			change: func(c *Config) { c.Bucket = "no-such-bucket" }, err: "s3: upload: NoSuchBucket: "},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			endpoint, proxy := startProxy(t, g.Endpoint, tt.rule)
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
				if proxy.faults() == 0 {
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
	rule := func(r *http.Request, nth int) fault {
		switch {
		case nth == 0:
			return answer500
		case nth == 1:
			return answer503
		}
		return pass
	}
	endpoint, proxy := startProxy(t, g.Endpoint, rule)
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
	if n := proxy.faults(); n != 8 { // a 500 and a 503 for each step
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
