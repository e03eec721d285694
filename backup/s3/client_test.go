package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func fakeResponse(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
}

const testSecret = "s3cr3t-never-shown-0123456789"

func TestNewValidates(t *testing.T) {
	ok := Config{Region: "us-east-1", Bucket: "my-bucket", AccessKey: "AK", Secret: testSecret}
	tests := []struct {
		name   string
		change func(*Config)
		ok     bool
	}{
		{"AWS by default", func(*Config) {}, true},
		{"http endpoint", func(c *Config) { c.Endpoint = "http://127.0.0.1:9000" }, true},
		{"https endpoint with slash", func(c *Config) { c.Endpoint = "https://s3.example.com/" }, true},
		{"R2 region", func(c *Config) { c.Region = "auto" }, true},
		{"ftp endpoint", func(c *Config) { c.Endpoint = "ftp://s3.example.com" }, false},
		{"endpoint with path", func(c *Config) { c.Endpoint = "https://s3.example.com/bucket" }, false},
		{"endpoint with user", func(c *Config) { c.Endpoint = "https://u:p@s3.example.com" }, false},
		{"endpoint without host", func(c *Config) { c.Endpoint = "https://" }, false},
		{"no region", func(c *Config) { c.Region = "" }, false},
		{"region with slash", func(c *Config) { c.Region = "us/east" }, false},
		{"short bucket", func(c *Config) { c.Bucket = "ab" }, false},
		{"uppercase bucket", func(c *Config) { c.Bucket = "MyBucket" }, false},
		{"bucket with ..", func(c *Config) { c.Bucket = "a..b" }, false},
		{"bucket ending in -", func(c *Config) { c.Bucket = "abc-" }, false},
		{"IP bucket", func(c *Config) { c.Bucket = "192.168.1.1" }, false},
		{"bucket with slash", func(c *Config) { c.Bucket = "a/b/c" }, false},
		{"no access key", func(c *Config) { c.AccessKey = "" }, false},
		{"no secret", func(c *Config) { c.Secret = "" }, false},
		{"small parts", func(c *Config) { c.PartSize = 1 << 20 }, false},
		{"5 MiB parts", func(c *Config) { c.PartSize = 5 << 20 }, true},
	}
	for _, tt := range tests {
		cfg := ok
		tt.change(&cfg)
		_, err := New(cfg)
		if (err == nil) != tt.ok {
			t.Errorf("%s: New = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), testSecret) {
			t.Errorf("%s: the error shows the secret: %v", tt.name, err)
		}
	}
}

func TestAddressing(t *testing.T) {
	tests := []struct {
		cfg        Config
		key        string
		host, path string
	}{
		{Config{Region: "eu-west-3", Bucket: "b-1"}, "a b.zip", "b-1.s3.eu-west-3.amazonaws.com", "/a%20b.zip"},
		{Config{Region: "eu-west-3", Bucket: "b-1"}, "", "b-1.s3.eu-west-3.amazonaws.com", "/"},
		{Config{Endpoint: "http://127.0.0.1:9000", Region: "us-east-1", Bucket: "b-1", ForcePathStyle: true}, "x/y.zip", "127.0.0.1:9000", "/b-1/x/y.zip"},
		{Config{Endpoint: "http://127.0.0.1:9000", Region: "us-east-1", Bucket: "b-1", ForcePathStyle: true}, "", "127.0.0.1:9000", "/b-1"},
		{Config{Endpoint: "https://s3.example.com", Region: "us-east-1", Bucket: "my.bucket"}, "k", "s3.example.com", "/my.bucket/k"},
		{Config{Endpoint: "https://s3.example.com", Region: "us-east-1", Bucket: "b-1"}, "k", "b-1.s3.example.com", "/k"},
		// No bucket name can prefix an IP address or localhost.
		{Config{Endpoint: "http://127.0.0.1:9000", Region: "us-east-1", Bucket: "b-1"}, "k", "127.0.0.1:9000", "/b-1/k"},
		{Config{Endpoint: "http://[::1]:9000", Region: "us-east-1", Bucket: "b-1"}, "k", "[::1]:9000", "/b-1/k"},
		{Config{Endpoint: "http://localhost:9000", Region: "us-east-1", Bucket: "b-1"}, "k", "localhost:9000", "/b-1/k"},
	}
	for _, tt := range tests {
		tt.cfg.AccessKey, tt.cfg.Secret = "AK", testSecret
		c, err := New(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		host, path := c.target(tt.key)
		if host != tt.host || path != tt.path {
			t.Errorf("%+v %q: %s %s, want %s %s", tt.cfg, tt.key, host, path, tt.host, tt.path)
		}
	}
}

func TestKeysThatCouldEscape(t *testing.T) {
	c, err := New(Config{Endpoint: "http://127.0.0.1:1", Region: "us-east-1", Bucket: "b-1", AccessKey: "AK", Secret: testSecret, ForcePathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "../other/x.zip", "/x.zip", "a/./b", "a//b", "a/..", "x\x00y", "x\ny", strings.Repeat("k", 1025), "\xff"} {
		if _, err := c.Head(context.Background(), key); err == nil || !strings.Contains(err.Error(), "key") {
			t.Errorf("Head(%q) = %v, want a refused key", key, err)
		}
	}
}

// script is a fake S3 server answering each request with the next of its
// answers (the last one repeats), recording the requests.
type script struct {
	mu      sync.Mutex
	answers []func(http.ResponseWriter, *http.Request)
	seen    []string
	bodies  [][]byte
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, r.Method+" "+r.URL.RequestURI())
	s.bodies = append(s.bodies, body)
	a := s.answers[min(len(s.seen), len(s.answers))-1]
	s.mu.Unlock()
	a(w, r)
}

func (s *script) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func status(code int, xmlBody string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		fmt.Fprint(w, xmlBody)
	}
}

func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// cutAnswer promises a longer body than it sends, then drops the connection.
func cutAnswer(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Length", "1000")
	w.WriteHeader(200)
	fmt.Fprint(w, "<ListBucketResult><IsTrunc")
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

func stall(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

const emptyList = `<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>`

// newFakeClient serves s and returns a client for it with fast backoff.
func newFakeClient(t *testing.T, s *script, change func(*Config)) *Client {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := Config{Endpoint: srv.URL, Region: "us-east-1", Bucket: "b-1", AccessKey: "AK", Secret: testSecret,
		ForcePathStyle: true, Rand: func() float64 { return 0.5 }, Timeout: 5 * time.Second}
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

// Idempotent steps are retried on 5xx, 429 and connection errors; other
// errors, and any error past MaxRetries, end the step with a clear error.
func TestRetries(t *testing.T) {
	ok := status(200, emptyList)
	tests := []struct {
		name     string
		answers  []func(http.ResponseWriter, *http.Request)
		retries  int
		requests int
		err      string // "" = success
	}{
		{"500 then 503 then ok", []func(http.ResponseWriter, *http.Request){status(500, `<Error><Code>InternalError</Code></Error>`), status(503, `<Error><Code>SlowDown</Code></Error>`), ok}, 0, 3, ""},
		{"429 then ok", []func(http.ResponseWriter, *http.Request){status(429, ""), ok}, 0, 2, ""},
		{"connection cut then ok", []func(http.ResponseWriter, *http.Request){hangUp, ok}, 0, 2, ""},
		{"cut answer then ok", []func(http.ResponseWriter, *http.Request){cutAnswer, ok}, 0, 2, ""},
		{"AccessDenied is final", []func(http.ResponseWriter, *http.Request){status(403, errorSeeds[0])}, 0, 1, "s3: list: AccessDenied: Access Denied (HTTP 403, request id 656c76696e6727732072657175657374)"},
		{"malformed is final", []func(http.ResponseWriter, *http.Request){status(200, "<Nope/>")}, 0, 1, "s3: list: malformed answer"},
		{"503 past the retries", []func(http.ResponseWriter, *http.Request){status(503, "")}, 2, 3, "s3: list: Service Unavailable (HTTP 503)"},
		{"no retries", []func(http.ResponseWriter, *http.Request){status(500, "")}, -1, 1, "s3: list: Internal Server Error (HTTP 500)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{answers: tt.answers}
			c := newFakeClient(t, s, func(cfg *Config) { cfg.MaxRetries = tt.retries })
			_, err := c.List(context.Background(), "")
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)) {
				t.Errorf("List = %v, want %q", err, tt.err)
			}
			if got := len(s.requests()); got != tt.requests {
				t.Errorf("%d requests, want %d: %v", got, tt.requests, s.requests())
			}
		})
	}
}

// A server that stays silent past the timeout fails the attempt; the
// retry gets its answer.
func TestTimeout(t *testing.T) {
	s := &script{answers: []func(http.ResponseWriter, *http.Request){stall, status(200, emptyList)}}
	c := newFakeClient(t, s, func(cfg *Config) { cfg.Timeout = 300 * time.Millisecond })
	if _, err := c.List(context.Background(), ""); err != nil {
		t.Fatalf("List = %v", err)
	}
	s = &script{answers: []func(http.ResponseWriter, *http.Request){stall}}
	c = newFakeClient(t, s, func(cfg *Config) { cfg.Timeout = 300 * time.Millisecond; cfg.MaxRetries = -1 })
	_, err := c.List(context.Background(), "")
	if err == nil || !strings.Contains(err.Error(), "s3: list: no progress within 300ms") {
		t.Fatalf("List = %v, want a timeout", err)
	}
}

// Create is retried only on error answers; Complete on 5xx and
// connection errors, and on an error inside a 200 answer, but not on 429.
func TestUploadStepRetries(t *testing.T) {
	create := status(200, `<InitiateMultipartUploadResult><UploadId>U1</UploadId></InitiateMultipartUploadResult>`)
	part := func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("ETag", `"e"`) }
	done := status(200, `<CompleteMultipartUploadResult><ETag>"x-2"</ETag></CompleteMultipartUploadResult>`)
	abort := status(204, "")
	type answers = []func(http.ResponseWriter, *http.Request)
	tests := []struct {
		name    string
		answers answers
		err     string
		methods string
	}{
		{"ok", answers{create, part, part, done}, "", "POST PUT PUT POST"},
		{"create 503 retried", answers{status(503, ""), create, part, part, done}, "", "POST POST PUT PUT POST"},
		{"create cut not retried", answers{hangUp}, "s3: upload: ", "POST"},
		{"complete 200 with InternalError retried", answers{create, part, part,
			status(200, `<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`), done}, "", "POST PUT PUT POST POST"},
		{"complete 429 not retried, aborted", answers{create, part, part, status(429, ""), abort}, "s3: upload: Too Many Requests (HTTP 429)", "POST PUT PUT POST DELETE"},
		{"part 400 not retried, aborted", answers{create, status(400, `<Error><Code>InvalidPart</Code></Error>`), abort},
			"s3: upload part 1: InvalidPart", "POST PUT DELETE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{answers: tt.answers}
			c := newFakeClient(t, s, nil)
			c.partSize = 4
			_, err := c.Upload(context.Background(), "k.zip", strings.NewReader("12345678"), "application/zip")
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)) {
				t.Errorf("Upload = %v, want %q", err, tt.err)
			}
			var methods []string
			for _, r := range s.requests() {
				methods = append(methods, strings.Fields(r)[0])
			}
			if got := strings.Join(methods, " "); got != tt.methods {
				t.Errorf("requests %s, want %s: %v", got, tt.methods, s.requests())
			}
		})
	}
}

// Each part is sent with its own SHA-256, and Complete lists the parts.
func TestUploadSignsEachPart(t *testing.T) {
	var mu sync.Mutex
	var hashes []string
	s := &script{answers: []func(http.ResponseWriter, *http.Request){
		status(200, `<InitiateMultipartUploadResult><UploadId>U1</UploadId></InitiateMultipartUploadResult>`),
		func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				mu.Lock()
				hashes = append(hashes, r.Header.Get("X-Amz-Content-Sha256"))
				mu.Unlock()
				w.Header().Set("ETag", `"e`+r.URL.Query().Get("partNumber")+`"`)
				return
			}
			fmt.Fprint(w, `<CompleteMultipartUploadResult><ETag>"x-3"</ETag></CompleteMultipartUploadResult>`)
		},
	}}
	c := newFakeClient(t, s, nil)
	c.partSize = 4
	obj, err := c.Upload(context.Background(), "k.zip", strings.NewReader("aaaabbbbcc"), "")
	if err != nil || obj.Size != 10 || obj.ETag != "x-3" {
		t.Fatalf("Upload = %+v, %v", obj, err)
	}
	for i, part := range []string{"aaaa", "bbbb", "cc"} {
		if got, wantH := hashes[i], sha256Hex([]byte(part)); got != wantH {
			t.Errorf("part %d hash %s, want %s", i+1, got, wantH)
		}
	}
	last := s.bodies[len(s.bodies)-1]
	wantBody := `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&#34;e1&#34;</ETag></Part>` +
		`<Part><PartNumber>2</PartNumber><ETag>&#34;e2&#34;</ETag></Part><Part><PartNumber>3</PartNumber><ETag>&#34;e3&#34;</ETag></Part></CompleteMultipartUpload>`
	if string(last) != wantBody {
		t.Errorf("complete body %s, want %s", last, wantBody)
	}
}

// A reader that fails, or a context that ends, mid-upload aborts it.
func TestUploadAbortsOnReaderError(t *testing.T) {
	s := &script{answers: []func(http.ResponseWriter, *http.Request){
		status(200, `<InitiateMultipartUploadResult><UploadId>U1</UploadId></InitiateMultipartUploadResult>`),
		func(w http.ResponseWriter, r *http.Request) { w.Header().Set("ETag", `"e"`) },
	}}
	c := newFakeClient(t, s, nil)
	c.partSize = 4
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("aaaabb"), &failReader{boom})
	_, err := c.Upload(context.Background(), "k.zip", r, "")
	if !errors.Is(err, boom) {
		t.Fatalf("Upload = %v, want boom", err)
	}
	reqs := s.requests()
	if last := reqs[len(reqs)-1]; !strings.HasPrefix(last, "DELETE /b-1/k.zip?uploadId=U1") {
		t.Errorf("last request %s, want the abort: %v", last, reqs)
	}
}

type failReader struct{ err error }

func (f *failReader) Read([]byte) (int, error) { return 0, f.err }

// No error shows the secret or a signature.
func TestErrorsHideSecrets(t *testing.T) {
	s := &script{answers: []func(http.ResponseWriter, *http.Request){hangUp}}
	c := newFakeClient(t, s, func(cfg *Config) { cfg.MaxRetries = -1 })
	for _, err := range []error{
		func() error { _, err := c.List(context.Background(), ""); return err }(),
		c.Put(context.Background(), "k", []byte("x"), ""),
		func() error { _, err := c.Upload(context.Background(), "k", bytes.NewReader(nil), ""); return err }(),
	} {
		if err == nil || strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), "Signature") {
			t.Errorf("error %v", err)
		}
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Requests are signed with the injected clock, the payload's hash and the
// headers S3 checks.
func TestRequestSigning(t *testing.T) {
	var got http.Header
	s := &script{answers: []func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
	}}}
	when := time.Date(2026, 11, 27, 10, 15, 0, 0, time.FixedZone("CET", 3600))
	c := newFakeClient(t, s, func(cfg *Config) { cfg.Now = func() time.Time { return when } })
	if err := c.Put(context.Background(), "a b.zip", []byte("hello"), "application/zip"); err != nil {
		t.Fatal(err)
	}
	if r := s.requests()[0]; r != "PUT /b-1/a%20b.zip" {
		t.Errorf("request %s", r)
	}
	want := map[string]string{
		"X-Amz-Date":           "20261127T091500Z",
		"X-Amz-Content-Sha256": sha256Hex([]byte("hello")),
		"Content-Type":         "application/zip",
	}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("%s: %q, want %q", k, got.Get(k), v)
		}
	}
	auth := got.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AK/20261127/us-east-1/s3/aws4_request, "+
		"SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, Signature=") || strings.Contains(auth, testSecret) {
		t.Errorf("Authorization %q", auth)
	}
}
