package s3

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Config says where the bucket is and how to talk to it. Only Region,
// Bucket, AccessKey and Secret are required.
type Config struct {
	// Endpoint is the base URL of the S3 service, http or https, without a
	// path: "https://s3.example.com", "http://127.0.0.1:9000". Empty means
	// AWS: https://s3.<Region>.amazonaws.com.
	Endpoint string
	// Region is the region of the signing scope ("us-east-1"; "auto" for
	// Cloudflare R2).
	Region string
	// Bucket is the bucket's name (S3's naming rules: 3–63 characters,
	// lowercase letters, digits, '.' and '-').
	Bucket string
	// AccessKey and Secret are the key pair that signs every request. The
	// secret appears in no error and no log line.
	AccessKey string
	Secret    string
	// ForcePathStyle addresses the bucket as the first path segment
	// (endpoint/bucket/key) instead of as a host name (bucket.endpoint/key).
	// Most self-hosted servers (MinIO, versitygw, Ceph) want it. A bucket
	// whose name has a dot is always addressed path-style over https, as
	// a wildcard certificate covers one label only; so is a bucket on an
	// endpoint that is an IP address or localhost, which no bucket name
	// can prefix.
	ForcePathStyle bool
	// PartSize is the size of the parts of a multipart upload: 0 means
	// 16 MiB; at least 5 MiB (S3's minimum for all parts but the last) and
	// at most 5 GiB. An upload buffers at most two parts.
	PartSize int64
	// HTTPClient sends the requests; nil means a client with dial and TLS
	// handshake timeouts that follows no redirect.
	HTTPClient *http.Client
	// Now is the signing clock; nil means time.Now.
	Now func() time.Time
	// Timeout bounds each request's silence: a request fails when this
	// long passes without its body being read, its answer starting, or a
	// byte of its answer arriving. 0 means 30 s.
	Timeout time.Duration
	// CallTimeout bounds each call as a whole, however its server
	// trickles: every attempt, the waits between them and the reading of
	// the answer (of a Get, until the caller closes the body); for List,
	// every page. A call that moves a body has more time as its bytes
	// move (MinRate). 0 means 2 minutes.
	CallTimeout time.Duration
	// MinRate is the slowest, in bytes per second, that a body may move
	// on average: each byte sent or received gives its call 1/MinRate s
	// more than CallTimeout, so a part or a Get of n bytes has at most
	// CallTimeout + n/MinRate, and a body that trickles fails at about
	// CallTimeout. 0 means 32 KiB/s.
	MinRate int64
	// MaxRetries is how many times a failed idempotent step is tried
	// again; 0 means 4, a negative value means none.
	MaxRetries int
	// Rand is the source of the backoff's jitter, in [0, 1), safe for
	// concurrent use; nil means math/rand/v2.
	Rand func() float64
}

const (
	defaultPartSize = 16 << 20
	minPartSize     = 5 << 20
	maxPartSize     = 5 << 30
	maxParts        = 10000
	// MaxPutSize is the largest body Put takes: Put is for small objects
	// (a probe, a manifest); archives go through Upload.
	MaxPutSize = 5 << 20

	maxXMLAnswer   = 1 << 20
	maxErrorAnswer = 64 << 10

	defaultCallTimeout = 2 * time.Minute
	defaultMinRate     = 32 << 10

	// MaxListPages and MaxListKeys bound one List: past either it fails
	// with ErrListTooLong instead of growing without end. A bucket of
	// archives holds tens to thousands of them, and S3 answers up to
	// 1,000 keys a page: 50,000 keys are 50 full pages, some 10 MB in
	// memory (5 MB more per 100 bytes of key), and 200 pages leave room
	// for servers that answer pages of 250 keys.
	MaxListPages = 200
	MaxListKeys  = 50_000
	// maxTokenLen bounds a continuation token, which the client keeps
	// (every token seen, to detect a loop) and sends back: S3's are a
	// few hundred bytes, and 4 KiB leaves room for a server that encodes
	// a key of 1,024 bytes in its token.
	maxTokenLen = 4 << 10
)

// Client talks to one bucket. It is safe for concurrent use.
type Client struct {
	scheme, host string // of the endpoint
	bucket       string
	pathStyle    bool
	creds        credentials
	http         *http.Client
	now          func() time.Time
	timeout      time.Duration
	callTimeout  time.Duration
	minRate      int64
	maxRetries   int
	rand         func() float64

	// Knobs that tests lower: the part size (below S3's minimum), the
	// page size of List, the first backoff delay, and the bounds of a
	// List.
	partSize  int64
	maxKeys   int
	retryBase time.Duration
	listPages int
	listKeys  int
}

// New checks cfg and returns a client for its bucket. It sends nothing.
func New(cfg Config) (*Client, error) {
	if err := validRegion(cfg.Region); err != nil {
		return nil, err
	}
	if err := ValidBucket(cfg.Bucket); err != nil {
		return nil, err
	}
	if cfg.AccessKey == "" || cfg.Secret == "" {
		return nil, errors.New("s3: the access key and the secret are required")
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = "https://s3." + cfg.Region + ".amazonaws.com"
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("s3: endpoint %q is not an http(s) URL without a path", cfg.Endpoint)
	}
	c := &Client{
		scheme:      u.Scheme,
		host:        u.Host,
		bucket:      cfg.Bucket,
		pathStyle:   cfg.ForcePathStyle || (u.Scheme == "https" && strings.Contains(cfg.Bucket, ".")) || noBucketHost(u.Hostname()),
		creds:       credentials{accessKey: cfg.AccessKey, secret: cfg.Secret, region: cfg.Region, service: "s3"},
		http:        cfg.HTTPClient,
		now:         cfg.Now,
		timeout:     cfg.Timeout,
		callTimeout: cmp.Or(max(cfg.CallTimeout, 0), defaultCallTimeout),
		minRate:     cmp.Or(max(cfg.MinRate, 0), defaultMinRate),
		maxRetries:  cfg.MaxRetries,
		rand:        cfg.Rand,
		partSize:    cfg.PartSize,
		retryBase:   100 * time.Millisecond,
		listPages:   MaxListPages,
		listKeys:    MaxListKeys,
	}
	switch {
	case c.partSize == 0:
		c.partSize = defaultPartSize
	case c.partSize < minPartSize || c.partSize > maxPartSize:
		return nil, fmt.Errorf("s3: part size %d is outside [5 MiB, 5 GiB]", cfg.PartSize)
	}
	if c.http == nil {
		c.http = defaultHTTPClient()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = 4
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.rand == nil {
		c.rand = rand.Float64
	}
	return c, nil
}

func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 10 * time.Second
	tr.MaxIdleConnsPerHost = 4
	// An archive is stored as it is: no transparent gzip that would make
	// a Range count bytes of another representation.
	tr.DisableCompression = true
	return &http.Client{
		Transport: tr,
		// S3 answers a wrong region or addressing with a redirect whose
		// body says why; the error is more useful than following it
		// without the signature matching.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// validRegion accepts the region names of AWS and of the compatible
// services ("us-east-1", "auto", "fr-par"): letters, digits, '-' and '_'.
func validRegion(r string) error {
	if r == "" || len(r) > 64 {
		return errors.New("s3: the region is required (at most 64 characters)")
	}
	for _, c := range r {
		if !isAlnum(c) && c != '-' && c != '_' {
			return fmt.Errorf("s3: region %q may hold only letters, digits, '-' and '_'", r)
		}
	}
	return nil
}

// ValidBucket reports whether name follows S3's bucket naming rules: 3 to
// 63 characters; lowercase letters, digits, '.' and '-'; a letter or digit
// at each end; no "..", and not shaped like an IPv4 address.
func ValidBucket(name string) error {
	bad := func(why string) error { return fmt.Errorf("s3: bucket name %q %s", name, why) }
	if len(name) < 3 || len(name) > 63 {
		return bad("must have 3 to 63 characters")
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return bad("may hold only lowercase letters, digits, '.' and '-'")
		}
	}
	if !isAlnum(rune(name[0])) || !isAlnum(rune(name[len(name)-1])) {
		return bad("must begin and end with a letter or a digit")
	}
	if strings.Contains(name, "..") {
		return bad(`must not contain ".."`)
	}
	if ip := net.ParseIP(name); ip != nil {
		return bad("must not be an IP address")
	}
	return nil
}

func isAlnum(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// validKey refuses the keys that could reach past the key the caller
// meant: S3 would store "a/../b" as it is, but a proxy or a path-style
// server that cleans paths would not, so a key with an empty, "." or ".."
// segment, or a leading "/", is refused rather than sent. Keys are also
// valid UTF-8 without control characters, at most 1024 bytes (S3's limit).
func validKey(key string) error {
	if key == "" || len(key) > 1024 || !utf8.ValidString(key) {
		return fmt.Errorf("s3: key %q is empty, longer than 1024 bytes or not UTF-8", key)
	}
	for _, c := range key {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("s3: key %q holds a control character", key)
		}
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("s3: key %q has an empty, \".\" or \"..\" segment", key)
		}
	}
	return nil
}

// target returns the host and the encoded path of a key ("" = the bucket).
func (c *Client) target(key string) (host, path string) {
	if c.pathStyle {
		path = "/" + c.bucket
		if key != "" {
			path += "/" + key
		}
		return c.host, encodePath(path)
	}
	return c.bucket + "." + c.host, encodePath("/" + key)
}

// ErrNotFound is what Head and Get return (wrapped in an *Error, so test
// it with errors.Is) when the key does not exist: S3's NoSuchKey, or a 404
// to a HEAD, which has no body to tell a missing key from a missing bucket.
var ErrNotFound = errors.New("s3: no such key")

// Error is an error answer of the S3 service, from the status and the XML
// body (<Error><Code>…</Code><Message>…</Message><RequestId>…).
type Error struct {
	Status    int    // HTTP status (200 for an error inside a 200 answer to Complete)
	Code      string // S3's error code: "AccessDenied", "NoSuchBucket", …; "" when the answer had no body
	Message   string // S3's message, without the secret
	RequestID string // the service's request id, for its operator
	Op        string // the operation: "list", "head", "get", "put", "upload", "delete", …
}

// Error returns "s3: OP: CODE: MESSAGE (HTTP STATUS, request id ID)". It
// never holds the secret or a signature: the request's headers are not
// part of it, and New's secret is removed from the service's message.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("s3: " + e.Op + ": ")
	if e.Code != "" {
		b.WriteString(e.Code + ": ")
	}
	b.WriteString(e.Message)
	fmt.Fprintf(&b, " (HTTP %d", e.Status)
	if e.RequestID != "" {
		b.WriteString(", request id " + e.RequestID)
	}
	b.WriteString(")")
	return b.String()
}

// noBucketHost reports whether host cannot take a bucket name as a first
// label: an IP address, or localhost.
func noBucketHost(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil || strings.EqualFold(host, "localhost")
}

// S3Code returns the service's error code and message, for a caller that
// reports them (the settings test of a bucket) without knowing this type.
func (e *Error) S3Code() (code, message string) { return e.Code, e.Message }

// Is makes errors.Is(err, ErrNotFound) true for a missing key.
func (e *Error) Is(target error) bool {
	return target == ErrNotFound && (e.Code == "NoSuchKey" || e.Code == "" && e.Status == http.StatusNotFound)
}
