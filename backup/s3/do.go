package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// retryPolicy says which failures of a step may be tried again.
type retryPolicy int

const (
	// retryNone: never (a step whose repetition could do harm).
	retryNone retryPolicy = iota
	// retryIdempotent: on 5xx, 429 and connection errors (List, Head,
	// Get before its body is returned, Put, UploadPart, Delete, Abort).
	retryIdempotent
	// retryAnswered: on 5xx and 429 only, which say the step was not
	// done. CreateMultipartUpload: after a connection error, an upload may
	// have been created whose id never reached us; a new one would orphan it.
	retryAnswered
	// retryComplete: on 5xx and connection errors, not 429.
	// CompleteMultipartUpload; a retry after a lost answer to a Complete
	// that did succeed gets NoSuchUpload, which Upload checks (see complete).
	retryComplete
)

// request is one S3 step.
type request struct {
	op     string // for errors: "list", "head", …
	method string
	key    string // "" = the bucket
	query  url.Values
	header http.Header // extra headers to send and sign (Content-Type, Range)
	body   []byte
	retry  retryPolicy
	// stream keeps the answer's body open for the caller (Get): handle
	// then owns it and must close it.
	stream bool
	// okStatus lists further statuses that are not errors (404 for Delete).
	okStatus []int
}

// errTimeout is the cause of a request ended by the silence watchdog.
var errTimeout = errors.New("no progress within the timeout")

// errMalformed marks an answer that is not what S3 sends; it is not retried.
var errMalformed = errors.New("malformed answer")

// do sends r, retrying as r.retry allows with jittered exponential
// backoff, and calls handle with each answer of a 2xx (or okStatus)
// status until handle succeeds. handle runs inside the attempt, so an
// answer cut while handle reads it is retried too. Error answers become
// *Error; connection errors are wrapped as "s3: OP: …". The whole call,
// its retries and the reading of its answer included (of a stream,
// until the caller closes the body), is bounded by its deadline
// (newDeadline).
func (c *Client) do(ctx context.Context, r *request, handle func(*http.Response) error) error {
	d := c.newDeadline(ctx)
	err := c.tries(d, r, handle)
	if err != nil || !r.stream {
		d.stop()
	}
	return err
}

// tries is do's loop of attempts, on the deadline's context.
func (c *Client) tries(d *deadline, r *request, handle func(*http.Response) error) error {
	ctx := d.ctx
	payloadHash := emptySHA256
	if len(r.body) > 0 {
		sum := sha256.Sum256(r.body)
		payloadHash = hex.EncodeToString(sum[:])
	}
	for attempt := 0; ; attempt++ {
		err := c.attempt(d, r, payloadHash, handle)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("s3: %s: %w", r.op, context.Cause(ctx))
		}
		if attempt >= c.maxRetries || !retryable(r.retry, err) {
			return err
		}
		if !c.backoff(ctx, attempt) {
			return fmt.Errorf("s3: %s: %w", r.op, context.Cause(ctx))
		}
	}
}

// deadline ends a call when its time is up: CallTimeout from its start,
// plus 1/MinRate s for each byte of a body sent or received. A server
// that trickles thus cannot hold a call much past CallTimeout, whatever
// the silence watchdog allows, and a long transfer that moves at MinRate
// or faster is never cut: a progress-based bound, for the parts of an
// upload and for a Get whose body is streamed to a client, whose sizes
// vary from a few bytes to gigabytes. The timer is armed for the time
// known to be left and, when it fires, re-armed for what the bytes moved
// meanwhile added, so a read costs an atomic add only.
type deadline struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	start  time.Time
	base   time.Duration
	rate   int64
	moved  atomic.Int64
	timer  *time.Timer
}

func (c *Client) newDeadline(parent context.Context) *deadline {
	ctx, cancel := context.WithCancelCause(parent)
	d := &deadline{ctx: ctx, cancel: cancel, start: time.Now(), base: c.callTimeout, rate: c.minRate}
	d.timer = time.AfterFunc(d.base, d.expire)
	return d
}

// allowed is the call's time so far: base and the time its bytes earned.
func (d *deadline) allowed() time.Duration {
	earned := float64(d.moved.Load()) / float64(d.rate) * float64(time.Second)
	return d.base + time.Duration(min(earned, float64(math.MaxInt64/2)))
}

func (d *deadline) expire() {
	if d.ctx.Err() != nil {
		return // stopped meanwhile
	}
	allowed := d.allowed()
	if left := time.Until(d.start.Add(allowed)); left > 0 {
		d.timer.Reset(left)
		return
	}
	d.cancel(&deadlineError{allowed.Round(time.Millisecond)})
}

// progress counts n bytes of a body moved.
func (d *deadline) progress(n int) { d.moved.Add(int64(n)) }

// stop ends the call's context and its timer.
func (d *deadline) stop() {
	d.timer.Stop()
	d.cancel(nil)
}

// deadlineError is the cause of a call ended by its deadline; it is a
// context.DeadlineExceeded for errors.Is.
type deadlineError struct{ after time.Duration }

func (e *deadlineError) Error() string { return fmt.Sprintf("not done within %v", e.after) }
func (e *deadlineError) Unwrap() error { return context.DeadlineExceeded }

// retryable classifies err under policy p.
func retryable(p retryPolicy, err error) bool {
	if p == retryNone || errors.Is(err, errMalformed) {
		return false
	}
	var se *Error
	if !errors.As(err, &se) {
		return p == retryIdempotent || p == retryComplete // a connection error
	}
	switch {
	case se.Status >= 500 || se.Code == "InternalError" || se.Code == "SlowDown":
		return true
	case se.Status == http.StatusTooManyRequests:
		return p != retryComplete
	}
	return false
}

// backoff waits before retry attempt+1: full jitter over an exponential
// ceiling (retryBase·2^attempt, at most 10 s). It returns false when ctx
// ends first.
func (c *Client) backoff(ctx context.Context, attempt int) bool {
	ceiling := float64(c.retryBase) * math.Pow(2, float64(attempt))
	ceiling = math.Min(ceiling, float64(10*time.Second))
	t := time.NewTimer(time.Duration(c.rand() * ceiling))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// attempt sends r once, on the context of the call's deadline d. A
// watchdog cancels the attempt when c.timeout passes without progress:
// the body being read by the transport, the answer's headers, or a read
// of the answer's body.
func (c *Client) attempt(d *deadline, r *request, payloadHash string, handle func(*http.Response) error) error {
	actx, cancel := context.WithCancelCause(d.ctx)
	dog := time.AfterFunc(c.timeout, func() { cancel(errTimeout) })
	stop := func() { dog.Stop(); cancel(nil) }
	req, err := c.newRequest(actx, r, payloadHash, dog, d)
	if err != nil {
		stop()
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		stop()
		return c.connErr(r.op, actx, err)
	}
	dog.Reset(c.timeout)
	body := &watchedBody{rc: resp.Body, dog: dog, timeout: c.timeout, stop: stop, deadline: d,
		wrap: func(err error) error { return c.connErr(r.op, actx, err) }}
	resp.Body = body
	if !okStatus(r, resp.StatusCode) {
		defer body.Close()
		return c.answerError(r.op, resp)
	}
	err = handle(resp)
	if err != nil || !r.stream {
		body.Close()
	} else {
		// The caller reads the body: closing it ends the call.
		body.owner = d
	}
	if errors.Is(err, errMalformed) {
		err = fmt.Errorf("s3: %s: %w", r.op, err)
	}
	return err
}

func okStatus(r *request, status int) bool {
	if status/100 == 2 {
		return true
	}
	for _, s := range r.okStatus {
		if s == status {
			return true
		}
	}
	return false
}

// newRequest builds and signs the HTTP request of r.
func (c *Client) newRequest(ctx context.Context, r *request, payloadHash string, dog *time.Timer, d *deadline) (*http.Request, error) {
	host, path := c.target(r.key)
	query := canonicalQuery(r.query)
	u := &url.URL{Scheme: c.scheme, Host: host, RawQuery: query}
	var err error
	if u.Path, err = url.PathUnescape(path); err != nil {
		return nil, fmt.Errorf("s3: %s: %w", r.op, err)
	}
	u.RawPath = path
	var body io.Reader
	if len(r.body) > 0 {
		body = &progressReader{r: bytes.NewReader(r.body), dog: dog, timeout: c.timeout, deadline: d}
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("s3: %s: %w", r.op, err)
	}
	req.ContentLength = int64(len(r.body))
	signedHeader := http.Header{"Host": {host}}
	for k, vs := range r.header {
		signedHeader[k] = vs
	}
	now := c.now() // one reading: the header and the signature must agree
	signedHeader.Set("X-Amz-Date", now.UTC().Format(amzDate))
	signedHeader.Set("X-Amz-Content-Sha256", payloadHash)
	s := c.creds.sign(r.method, path, r.query, signedHeader, payloadHash, now)
	for k, vs := range signedHeader {
		if k != "Host" {
			req.Header[k] = vs
		}
	}
	req.Header.Set("Authorization", s.authorization)
	return req, nil
}

// connErr words a transport error: "s3: OP: dial tcp …", the silence
// timeout, or the call's deadline.
func (c *Client) connErr(op string, actx context.Context, err error) error {
	cause := context.Cause(actx)
	if cause == errTimeout {
		return fmt.Errorf("s3: %s: no progress within %v: %w", op, c.timeout, errTimeout)
	}
	if _, ok := errors.AsType[*deadlineError](cause); ok {
		return fmt.Errorf("s3: %s: %w", op, cause)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("s3: %s: %w", op, err)
}

// answerError turns an error answer into an *Error.
func (c *Client) answerError(op string, resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorAnswer))
	e := decodeError(data)
	e.Op, e.Status = op, resp.StatusCode
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Amz-Request-Id")
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	e.Message = c.redact(e.Message)
	return e
}

// redact removes the secret from a text the service wrote, in case a
// server echoes it (none known does).
func (c *Client) redact(s string) string {
	if len(c.creds.secret) >= 8 {
		s = strings.ReplaceAll(s, c.creds.secret, "[secret]")
	}
	return s
}

// decodeError parses an S3 error body; what is not XML leaves the fields empty.
func decodeError(data []byte) *Error {
	var x struct {
		XMLName   xml.Name `xml:"Error"`
		Code      string   `xml:"Code"`
		Message   string   `xml:"Message"`
		RequestID string   `xml:"RequestId"`
	}
	if err := xml.Unmarshal(data, &x); err != nil {
		return &Error{}
	}
	return &Error{Code: x.Code, Message: x.Message, RequestID: x.RequestID}
}

// decodeXML reads at most maxXMLAnswer bytes of an answer into v.
func decodeXML(r io.Reader, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, maxXMLAnswer+1))
	if err != nil {
		return err
	}
	if len(data) > maxXMLAnswer {
		return fmt.Errorf("%w: XML answer longer than %d bytes", errMalformed, maxXMLAnswer)
	}
	if err := xml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	return nil
}

// progressReader resets the watchdog at each read of a request body,
// and counts the bytes read against the call's deadline.
type progressReader struct {
	r        io.Reader
	dog      *time.Timer
	timeout  time.Duration
	deadline *deadline
}

func (p *progressReader) Read(b []byte) (int, error) {
	p.dog.Reset(p.timeout)
	n, err := p.r.Read(b)
	p.deadline.progress(n)
	return n, err
}

// watchedBody resets the watchdog at each read of an answer and counts
// its bytes against the call's deadline; Close stops the watchdog
// (ending the attempt's context) and, for the body of a stream returned
// to the caller, the call's deadline.
type watchedBody struct {
	rc       io.ReadCloser
	dog      *time.Timer
	timeout  time.Duration
	stop     func()
	deadline *deadline
	owner    *deadline         // the call's deadline, once the body is the caller's
	wrap     func(error) error // words a read error as connErr does
	once     sync.Once
}

func (w *watchedBody) Read(b []byte) (int, error) {
	n, err := w.rc.Read(b)
	if n > 0 {
		w.dog.Reset(w.timeout)
		w.deadline.progress(n)
	}
	if err != nil && err != io.EOF {
		err = w.wrap(err)
	}
	return n, err
}

func (w *watchedBody) Close() error {
	err := w.rc.Close()
	w.once.Do(func() {
		w.stop()
		if w.owner != nil {
			w.owner.stop()
		}
	})
	return err
}

// parseSize reads a decimal header value; -1 when absent or bad.
func parseSize(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}
