package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostile is a loopback S3 server that answers a listing, or any call,
// in a way that never ends: every page truncated with a fresh token, a
// token that comes back, an answer trickled a byte at a time. Its
// handlers end when the test does (stop), so that closing it never waits.
type hostile struct {
	srv      *httptest.Server
	stop     chan struct{}
	requests atomic.Int64
}

// startHostile serves h; the handler may watch stop.
func startHostile(t *testing.T, h func(hs *hostile, w http.ResponseWriter, r *http.Request)) *hostile {
	t.Helper()
	hs := &hostile{stop: make(chan struct{})}
	hs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs.requests.Add(1)
		h(hs, w, r)
	}))
	var once sync.Once
	t.Cleanup(hs.srv.Close)
	t.Cleanup(func() { once.Do(func() { close(hs.stop) }) }) // runs first
	return hs
}

// client is a client of the hostile server with fast retries, change
// applied to its Config.
func (hs *hostile) client(t *testing.T, change func(*Config)) *Client {
	t.Helper()
	cfg := Config{Endpoint: hs.srv.URL, Region: "us-east-1", Bucket: "b-1", AccessKey: "AK", Secret: testSecret,
		ForcePathStyle: true, Rand: func() float64 { return 0.5 }}
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

// listPage writes a truncated page (next != "") or the last one, with
// keys objects.
func writeListPage(w http.ResponseWriter, next string, keys int) {
	var b strings.Builder
	b.WriteString("<ListBucketResult>")
	if next != "" {
		fmt.Fprintf(&b, "<IsTruncated>true</IsTruncated><NextContinuationToken>%s</NextContinuationToken>", next)
	} else {
		b.WriteString("<IsTruncated>false</IsTruncated>")
	}
	for i := range keys {
		fmt.Fprintf(&b, "<Contents><Key>k-%s-%d.zip</Key><Size>1</Size><LastModified>2026-11-27T10:00:00Z</LastModified></Contents>", next, i)
	}
	b.WriteString("</ListBucketResult>")
	io.WriteString(w, b.String())
}

// TestListHasAnEnd: a server that always answers "truncated" cannot make
// a listing endless: past MaxListPages pages or MaxListKeys keys, or at a
// token seen before or too long, List fails at once with a clear error.
func TestListHasAnEnd(t *testing.T) {
	tests := []struct {
		name     string
		next     func(n int64) string // the token of the nth answer (1, 2, …)
		keys     int                  // a page
		maxKeys  int                  // the client's MaxListKeys, if not 0
		err      string
		tooLong  bool  // errors.Is(err, ErrListTooLong)
		requests int64 // how many pages were asked for
	}{
		{name: "fresh token, empty pages", next: func(n int64) string { return fmt.Sprintf("t%d", n) },
			err: "s3: list: the listing is too long: more than 200 pages", tooLong: true, requests: MaxListPages},
		// Lowered from MaxListKeys: decoding 50 pages of 1,000 keys
		// takes seconds on a busy machine.
		{name: "fresh token, full pages", next: func(n int64) string { return fmt.Sprintf("t%d", n) }, keys: 1000, maxKeys: 5000,
			err: "s3: list: the listing is too long: more than 5000 keys", tooLong: true, requests: 6},
		{name: "token repeats itself", next: func(int64) string { return "same" },
			err: `s3: list: malformed answer: continuation token "same" repeats`, requests: 2},
		{name: "token comes back", next: func(n int64) string { return []string{"a", "b", "c"}[(n-1)%3] }, keys: 10,
			err: `s3: list: malformed answer: continuation token "a" repeats`, requests: 4},
		{name: "fresh tokens of 5 KiB", next: func(n int64) string { return fmt.Sprintf("%d%s", n, strings.Repeat("x", 5<<10)) },
			err: "s3: list: malformed answer: a continuation token of 5121 bytes", requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := startHostile(t, func(hs *hostile, w http.ResponseWriter, r *http.Request) {
				writeListPage(w, tt.next(hs.requests.Load()), tt.keys)
			})
			c := hs.client(t, nil)
			if tt.maxKeys != 0 {
				c.listKeys = tt.maxKeys
			}
			// A safety net: a List that did not end would fail with the
			// deadline's error instead of tt.err. The pages asked for are
			// counted below; a wall-clock bound would only measure the machine.
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			objs, err := c.List(ctx, "")
			if err == nil || err.Error() != tt.err {
				t.Fatalf("List = %d objects, %v; want %q", len(objs), err, tt.err)
			}
			if errors.Is(err, ErrListTooLong) != tt.tooLong {
				t.Errorf("errors.Is(%v, ErrListTooLong) = %v, want %v", err, !tt.tooLong, tt.tooLong)
			}
			if got := hs.requests.Load(); got != tt.requests {
				t.Errorf("%d pages asked for, want %d", got, tt.requests)
			}
		})
	}
}

// trickle writes b's bytes, then spaces, one every 20 ms, flushed, until
// the client or the test goes away.
func trickle(hs *hostile, w io.Writer, flush func(), r *http.Request, b string) {
	for i := 0; ; i++ {
		c := byte(' ')
		if i < len(b) {
			c = b[i]
		}
		if _, err := w.Write([]byte{c}); err != nil {
			return
		}
		flush()
		select {
		case <-r.Context().Done():
			return
		case <-hs.stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// trickleBody answers 200, then trickles its body.
func trickleBody(hs *hostile, w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Length", "1000000")
	w.Header().Set("ETag", `"e"`)
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	trickle(hs, w, w.(http.Flusher).Flush, r, "<ListBucketResult>")
}

// trickleHeaders trickles the answer's status line and headers.
func trickleHeaders(hs *hostile, w http.ResponseWriter, r *http.Request) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	trickle(hs, buf, func() { buf.Flush() }, r, "HTTP/1.1 200 OK\r\nX-Pad: ")
}

// TestCallDeadline: every call has a deadline as a whole, however its
// server trickles (one byte every 20 ms resets the silence watchdog, 5 s
// here, each time): a listing of pages that each take long, the headers
// or the body of each kind of answer.
func TestCallDeadline(t *testing.T) {
	const callTimeout = 300 * time.Millisecond
	uploadStart := `<InitiateMultipartUploadResult><UploadId>U1</UploadId></InitiateMultipartUploadResult>`
	type answer = func(hs *hostile, w http.ResponseWriter, r *http.Request)
	calls := []struct {
		name string
		call func(ctx context.Context, c *Client) error
	}{
		{"list", func(ctx context.Context, c *Client) error { _, err := c.List(ctx, ""); return err }},
		{"head", func(ctx context.Context, c *Client) error { _, err := c.Head(ctx, "k.zip"); return err }},
		{"get", func(ctx context.Context, c *Client) error {
			body, _, err := c.Get(ctx, "k.zip", 0, -1)
			if err != nil {
				return err
			}
			defer body.Close()
			_, err = io.Copy(io.Discard, body)
			return err
		}},
		{"put", func(ctx context.Context, c *Client) error { return c.Put(ctx, "k.zip", []byte("x"), "") }},
		{"delete", func(ctx context.Context, c *Client) error { return c.Delete(ctx, "k.zip") }},
		{"upload part 1", func(ctx context.Context, c *Client) error {
			c.partSize = 4
			_, err := c.Upload(ctx, "k.zip", strings.NewReader("12345678"), "")
			return err
		}},
	}
	answers := []struct {
		name   string
		answer answer
	}{
		{"trickled headers", trickleHeaders},
		{"trickled body", trickleBody},
	}
	for _, a := range answers {
		for _, call := range calls {
			if a.name == "trickled body" && call.name == "head" {
				continue // a HEAD answer has no body
			}
			t.Run(a.name+"/"+call.name, func(t *testing.T) {
				t.Parallel()
				hs := startHostile(t, func(hs *hostile, w http.ResponseWriter, r *http.Request) {
					switch q := r.URL.Query(); {
					case r.Method == http.MethodPost && q.Has("uploads"):
						io.WriteString(w, uploadStart)
					case r.Method == http.MethodDelete && q.Has("uploadId"):
						w.WriteHeader(http.StatusNoContent)
					default:
						a.answer(hs, w, r)
					}
				})
				c := hs.client(t, func(cfg *Config) { cfg.Timeout = 5 * time.Second; cfg.CallTimeout = callTimeout })
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
				defer cancel()
				start := time.Now()
				err := call.call(ctx, c)
				took := time.Since(start)
				want := "s3: " + call.name + ": not done within "
				if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("%s = %v, want %q…", call.name, err, want)
				}
				if took < callTimeout || took > callTimeout+time.Second {
					t.Errorf("%s failed after %v, want about %v", call.name, took, callTimeout)
				}
				if strings.Contains(err.Error(), testSecret) {
					t.Errorf("the error shows the secret: %v", err)
				}
			})
		}
	}
	t.Run("list of slow pages", func(t *testing.T) {
		t.Parallel()
		// Each page comes in 100 ms, well within the silence timeout:
		// the listing as a whole has CallTimeout.
		hs := startHostile(t, func(hs *hostile, w http.ResponseWriter, r *http.Request) {
			time.Sleep(100 * time.Millisecond)
			writeListPage(w, fmt.Sprintf("t%d", hs.requests.Load()), 1)
		})
		c := hs.client(t, func(cfg *Config) { cfg.Timeout = 5 * time.Second; cfg.CallTimeout = callTimeout })
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second) // a safety net
		defer cancel()
		start := time.Now()
		_, err := c.List(ctx, "")
		if err == nil || !strings.HasPrefix(err.Error(), "s3: list: not done within 300ms") {
			t.Fatalf("List = %v, want the listing's deadline", err)
		}
		if took := time.Since(start); took > callTimeout+time.Second {
			t.Errorf("List failed after %v", took)
		}
		if n := hs.requests.Load(); n > 4 {
			t.Errorf("%d pages asked for in %v", n, callTimeout)
		}
	})
}

// TestDeadlineFollowsProgress: a body that moves at MinRate or faster is
// never cut, however long it takes, while one that moves slower fails:
// the deadline of a Get streamed to a client fits its size.
func TestDeadlineFollowsProgress(t *testing.T) {
	const chunk, chunks = 4 << 10, 10 // 40 KiB in about a second
	hs := startHostile(t, func(hs *hostile, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(chunk*chunks))
		w.WriteHeader(200)
		for range chunks {
			w.Write([]byte(strings.Repeat("z", chunk)))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	tests := []struct {
		name    string
		minRate int64
		err     string // "" = the whole body arrives
	}{
		{"faster than MinRate", 10 << 10, ""},
		{"slower than MinRate", 1 << 20, "s3: get: not done within "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hs.client(t, func(cfg *Config) { cfg.CallTimeout = 200 * time.Millisecond; cfg.MinRate = tt.minRate })
			body, _, err := c.Get(t.Context(), "k.zip", 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			defer body.Close()
			b, err := io.ReadAll(body)
			switch {
			case tt.err == "" && (err != nil || len(b) != chunk*chunks):
				t.Errorf("Get read %d bytes, %v; want %d", len(b), err, chunk*chunks)
			case tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)):
				t.Errorf("Get read %d bytes, %v; want %q…", len(b), err, tt.err)
			}
		})
	}
}
