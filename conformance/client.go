package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// userAgent is sent with every request; request-log checks expect to find it
// in data.userAgent.
const userAgent = "strongbox-conformance/1"

// maxBody bounds how much of a response the suite reads.
const maxBody = 8 << 20

// Client is a check's handle on the server under test. It knows the base URL
// and the superuser token obtained at the start of the run, sends requests,
// and keeps the cleanups of the fixtures the check created. Each check gets
// its own Client; the runner runs its cleanups after the check returns.
type Client struct {
	base     string
	hc       *http.Client
	email    string
	password string
	su       string // superuser auth token, set by loginSuperuser
	shared   *shared
	opts     options // what Config allows beyond the base URL and credentials

	// pocketbaseReadings is set for the checks of pocketbase and strongbox
	// requirements: where the document leaves a choice open (a message §7
	// does not name, key order, the Z of stats dates) the check demands
	// PocketBase's choice. The checks of document requirements accept
	// every reading the document allows; see Client.strict.
	pocketbaseReadings bool

	cleanups []cleanup

	// sleep waits out a mail route's Retry-After (mailRetry): sleepCtx,
	// which tests replace.
	sleep func(context.Context, time.Duration) error

	// givenEmail, givenPassword and given are the superuser the suite was
	// given and its token; email, password and su are the superuser the
	// suite works as, a throwaway of the run's own (throwaway.go) or the
	// same. A reproduction (repro.go) logs in as the given one.
	givenEmail, givenPassword, given string

	lastMu   sync.Mutex
	last     *Exchange    // the latest request this check sent, for the report
	lastSent *sentRequest // the same request, whole, for its reproduction
	// tokens maps each token an answer carried to the request answered,
	// signups each email signed up to its request (repro.go).
	tokens  map[string]*sentRequest
	signups map[string]*sentRequest
}

type cleanup struct {
	what string
	fn   func(context.Context) error
}

// shared holds fixtures built once per run and reused by several checks.
type shared struct {
	mu       sync.Mutex
	logsDone bool
	logs     *logMarks
	logsErr  error

	// loggingOff caches what the server's settings say about request
	// logging; see Client.requestLoggingOff.
	settingsMu   sync.Mutex
	settingsDone bool
	loggingOff   bool

	// backupsErr caches whether the server can load its backup storage;
	// see Client.requireBackups.
	backupsMu   sync.Mutex
	backupsDone bool
	backupsErr  error

	// throttleErr caches whether the server throttles password logins;
	// see Client.requireLoginThrottle.
	throttleMu   sync.Mutex
	throttleDone bool
	throttleErr  error

	// eventsErr caches whether the server's log store keeps its own
	// events; see Client.requireEvents.
	eventsMu   sync.Mutex
	eventsDone bool
	eventsErr  error
}

// options are the parts of Config a check may consult.
type options struct {
	destructive    bool
	restartTimeout time.Duration
	wait           time.Duration // Config.WaitTimeout, else DefaultWaitTimeout
	smtpHost       string        // Config.SMTPHost, "" for 127.0.0.1
	oauth2Host     string        // Config.OAuth2Host, else Config.SMTPHost; "" for 127.0.0.1
}

func newClient(cfg Config) (*Client, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid base URL %q: want http(s)://host[:port]", cfg.BaseURL)
	}
	hc := cfg.Client
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	opts := options{destructive: cfg.Destructive, restartTimeout: cfg.RestartTimeout, wait: cfg.WaitTimeout,
		smtpHost: cfg.SMTPHost, oauth2Host: cfg.OAuth2Host}
	if opts.oauth2Host == "" {
		opts.oauth2Host = cfg.SMTPHost
	}
	if opts.restartTimeout <= 0 {
		opts.restartTimeout = DefaultRestartTimeout
	}
	if opts.wait <= 0 {
		opts.wait = DefaultWaitTimeout
	}
	return &Client{base: base, hc: hc, email: cfg.Email, password: cfg.Password, shared: &shared{}, opts: opts,
		sleep: sleepCtx, givenEmail: cfg.Email, givenPassword: cfg.Password}, nil
}

// forCheck returns a copy of c with an empty cleanup list.
func (c *Client) forCheck() *Client {
	return &Client{base: c.base, hc: c.hc, email: c.email, password: c.password, su: c.su, shared: c.shared, opts: c.opts,
		sleep: c.sleep, givenEmail: c.givenEmail, givenPassword: c.givenPassword, given: c.given}
}

// strict reports whether the check demands PocketBase's choice where the
// document leaves one open (see pocketbaseReadings). A document
// requirement whose check consults it has a pocketbase twin that runs the
// same check strictly (stricterReadings, requirements.go).
func (c *Client) strict() bool { return c.pocketbaseReadings }

// loginSuperuser obtains the superuser token every check may use.
func (c *Client) loginSuperuser(ctx context.Context) error {
	if c.email == "" || c.password == "" {
		return errors.New("superuser email and password are required")
	}
	r, err := c.post(ctx, "/api/collections/_superusers/auth-with-password", "",
		map[string]string{"identity": c.email, "password": c.password})
	if err != nil {
		return fmt.Errorf("superuser login: %w", err)
	}
	if r.status != http.StatusOK {
		return fmt.Errorf("superuser login as %s: expected 200, got %s", c.email, r)
	}
	var out struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || out.Token == "" {
		return fmt.Errorf("superuser login: no token in %s", r)
	}
	c.su = out.Token
	if c.email == c.givenEmail {
		c.given = out.Token
	}
	return nil
}

// Cleanup registers fn to run after the check returns, newest first. A
// failing cleanup turns a passing check into an Error.
func (c *Client) Cleanup(what string, fn func(context.Context) error) {
	c.cleanups = append(c.cleanups, cleanup{what: what, fn: fn})
}

func (c *Client) runCleanups(ctx context.Context) error {
	// Cleanups must run even when the run's context is already cancelled,
	// so give them a context of their own with a bound.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var errs []error
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		cl := c.cleanups[i]
		func() {
			defer func() {
				if p := recover(); p != nil {
					errs = append(errs, fmt.Errorf("%s: panic: %v", cl.what, p))
				}
			}()
			if err := cl.fn(cctx); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", cl.what, err))
			}
		}()
	}
	c.cleanups = nil
	return errors.Join(errs...)
}

// response is a fully read HTTP response.
type response struct {
	method string
	path   string
	status int
	header http.Header
	body   []byte
	// strict is the strict() of the check that sent the request, so that
	// expectError knows whether a message §7 does not name is checked.
	strict bool
}

// String summarises the response for failure details: status and a prefix
// of the body.
func (r *response) String() string {
	b := bodyText(redactToken(r.body), 400)
	if b == "" {
		b = "<empty body>"
	}
	return fmt.Sprintf("%d %s (%s %s)", r.status, b, r.method, redactPath(r.path))
}

// rawBody is a request body sent as is.
type rawBody struct {
	contentType string
	data        []byte
}

// streamBody is a request body of exactly n bytes read from r as it is
// sent, with that Content-Length, so that a large body never sits in memory.
// recipe is a shell command that writes the same bytes, for the report's
// reproduction.
type streamBody struct {
	contentType string
	r           io.Reader
	n           int64
	recipe      string
}

// do sends one request. path is relative to the base URL and may carry a
// query. auth is the whole Authorization header value ("" sends none).
// body is nil, url.Values (sent as a form), rawBody, streamBody, or
// anything else (sent as JSON).
func (c *Client) do(ctx context.Context, method, path, auth string, body any) (*response, error) {
	var hdr http.Header
	if auth != "" {
		hdr = http.Header{"Authorization": {auth}}
	}
	return c.doWith(ctx, method, path, hdr, body)
}

// doWith is do with arbitrary extra request headers, which replace the
// suite's own (User-Agent, Content-Type) of the same names. A mail route's
// 429 with a Retry-After the suite may wait for (mailRetry) is waited out
// and the request sent again, at most maxMailRetries times.
func (c *Client) doWith(ctx context.Context, method, path string, hdr http.Header, body any) (*response, error) {
	open, ctype, err := requestBody(body)
	if err != nil {
		return nil, err
	}
	for retries := 0; ; retries++ {
		r, err := c.send(ctx, method, path, hdr, open(), ctype, body)
		if err != nil || retries == maxMailRetries {
			return r, err
		}
		wait, ok := mailRetry(ctx, method, path, hdr, body, r)
		if !ok || c.sleep(ctx, wait) != nil {
			return r, nil
		}
	}
}

// requestBody returns how to open body for sending (again) and its
// Content-Type: nil sends none, url.Values a form, rawBody and streamBody
// as they are, anything else JSON. A streamBody opens once (mailRetry
// never sends one again).
func requestBody(body any) (open func() io.Reader, ctype string, err error) {
	var data []byte
	switch b := body.(type) {
	case nil:
		return func() io.Reader { return nil }, "", nil
	case url.Values:
		data, ctype = []byte(b.Encode()), "application/x-www-form-urlencoded"
	case rawBody:
		data, ctype = b.data, b.contentType
	case streamBody:
		return func() io.Reader { return b.r }, b.contentType, nil
	default:
		if data, err = json.Marshal(b); err != nil {
			return nil, "", fmt.Errorf("encoding request body: %w", err)
		}
		ctype = "application/json"
	}
	return func() io.Reader { return bytes.NewReader(data) }, ctype, nil
}

// send sends one request with the body rd, and reads the answer.
func (c *Client) send(ctx context.Context, method, path string, hdr http.Header, rd io.Reader, ctype string, body any) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if sb, ok := body.(streamBody); ok {
		req.ContentLength = sb.n
	}
	req.Header.Set("User-Agent", userAgent)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, vs := range hdr {
		req.Header.Del(k) // the caller's replace the defaults (User-Agent)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	sent := newSentRequest(method, path, hdr, ctype, body)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.remember(&Exchange{Method: method, Path: redactPath(path), Err: err.Error()}, sent)
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		c.remember(&Exchange{Method: method, Path: redactPath(path), Status: resp.StatusCode, Err: "reading body: " + err.Error()}, sent)
		return nil, fmt.Errorf("%s %s: reading body: %w", method, path, err)
	}
	r := &response{method: method, path: path, status: resp.StatusCode, header: resp.Header, body: data,
		strict: c.strict()}
	c.remember(r.exchange(), sent)
	c.recordAnswer(sent, r.status, r.body)
	return r, nil
}

// Exchange is one request a check sent and what the server answered, as
// the report shows it under a failure: never a header (the Authorization
// value stays out of reports), and only the first bytes of the body.
type Exchange struct {
	Method string `json:"method"`
	Path   string `json:"path"`             // relative to the base URL, with its query (a token parameter redacted)
	Status int    `json:"status,omitempty"` // 0 when no response came
	// Message is the message of the error envelope, when the body is one.
	Message string `json:"message,omitempty"`
	// Body is the first exchangeBodyMax bytes of the body ("…" marks a
	// cut), or, for a body that is not text, its length and first bytes in
	// hex (bodyText).
	Body string `json:"body,omitempty"`
	// Err says why no (complete) response came.
	Err string `json:"error,omitempty"`
}

// exchangeBodyMax bounds Exchange.Body.
const exchangeBodyMax = 300

// String renders e on one line: "GET /api/logs → 400 \"message\" {body…}".
func (e *Exchange) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s → ", e.Method, e.Path)
	if e.Status == 0 {
		b.WriteString("no response")
	} else {
		fmt.Fprintf(&b, "%d", e.Status)
		if e.Message != "" {
			fmt.Fprintf(&b, " %q", e.Message)
		}
		if e.Body != "" {
			b.WriteString(" " + e.Body)
		}
	}
	if e.Err != "" {
		b.WriteString(": " + e.Err)
	}
	return b.String()
}

// exchange summarises r for the report.
func (r *response) exchange() *Exchange {
	e := &Exchange{Method: r.method, Path: redactPath(r.path), Status: r.status}
	var env struct {
		Message *string `json:"message"`
	}
	if json.Unmarshal(r.body, &env) == nil && env.Message != nil {
		e.Message = *env.Message
	}
	e.Body = bodyText(redactToken(r.body), exchangeBodyMax)
	return e
}

// remember records e, and sent, the request whole, as the check's latest
// request.
func (c *Client) remember(e *Exchange, sent *sentRequest) {
	c.lastMu.Lock()
	c.last, c.lastSent = e, sent
	c.lastMu.Unlock()
}

// lastExchange returns the check's latest request, or nil.
func (c *Client) lastExchange() *Exchange {
	c.lastMu.Lock()
	defer c.lastMu.Unlock()
	return c.last
}

func (c *Client) get(ctx context.Context, path, auth string) (*response, error) {
	return c.do(ctx, http.MethodGet, path, auth, nil)
}

func (c *Client) post(ctx context.Context, path, auth string, body any) (*response, error) {
	return c.do(ctx, http.MethodPost, path, auth, body)
}

// withQuery appends q to path.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// query builds url.Values from key, value pairs.
func query(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	return q
}

// seg escapes one path segment.
func seg(s string) string { return url.PathEscape(s) }

// ---- response checks -------------------------------------------------------

// expectStatus fails unless r has the given status.
func expectStatus(r *response, status int) error {
	if r.status != status {
		return Mismatch(fmt.Sprintf("status %d", status), r.String())
	}
	return nil
}

// object decodes r's body as one JSON object.
func object(r *response) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil || m == nil {
		return nil, Mismatch("a JSON object", r.String())
	}
	return m, nil
}

// array decodes r's body as a JSON array.
func array(r *response) ([]any, error) {
	var a []any
	if err := json.Unmarshal(r.body, &a); err != nil || a == nil {
		return nil, Mismatch("a JSON array", r.String())
	}
	return a, nil
}

// okObject requires status 200 and a JSON object body.
func okObject(r *response) (map[string]any, error) {
	if err := expectStatus(r, http.StatusOK); err != nil {
		return nil, err
	}
	return object(r)
}

// getOK sends GET path with auth and requires 200 with a JSON object
// (okObject); it returns the answer too, for failure details.
func (c *Client) getOK(ctx context.Context, path, auth string) (*response, map[string]any, error) {
	r, err := c.get(ctx, path, auth)
	if err != nil {
		return nil, nil, err
	}
	m, err := okObject(r)
	return r, m, err
}

// envelope is a decoded error response.
type envelope struct {
	keys    []string // top-level keys in wire order
	data    map[string]any
	message string
	status  float64
}

// parseEnvelope decodes r as the §2.5 error envelope, requiring exactly the
// keys data, message and status with the right types.
func parseEnvelope(r *response) (*envelope, error) {
	keys, err := objectKeys(r.body)
	if err != nil {
		return nil, Mismatch("the JSON error envelope", r.String())
	}
	var raw struct {
		Data    json.RawMessage `json:"data"`
		Message *string         `json:"message"`
		Status  *float64        `json:"status"`
	}
	if err := json.Unmarshal(r.body, &raw); err != nil {
		return nil, Mismatch("the JSON error envelope", r.String())
	}
	if !sameKeys(keys, "data", "message", "status") {
		return nil, Mismatch("the error envelope to have exactly the keys data, message, status", fmt.Sprintf("keys %v in %s", keys, r))
	}
	var data map[string]any
	if err := json.Unmarshal(raw.Data, &data); err != nil || data == nil {
		return nil, Mismatch("envelope data to be an object", r.String())
	}
	if raw.Message == nil || raw.Status == nil {
		return nil, Mismatch("envelope message to be a string and status a number", r.String())
	}
	return &envelope{keys: keys, data: data, message: *raw.Message, status: *raw.Status}, nil
}

// expectError requires status, the error envelope with that status in its
// status field, and exactly message. When message is "" any message is
// accepted, and so it is when §7 does not name message (documentMessages)
// and the check accepts the document's readings (response.strict false):
// status and envelope shape are then all the document fixes.
func expectError(r *response, status int, message string) (*envelope, error) {
	if r.status != status {
		if message == "" {
			return nil, Mismatch(fmt.Sprintf("status %d with the error envelope", status), r.String())
		}
		return nil, Mismatch(fmt.Sprintf("%d %q", status, message), r.String())
	}
	env, err := parseEnvelope(r)
	if err != nil {
		return nil, err
	}
	if env.status != float64(status) {
		return nil, Mismatch(fmt.Sprintf("envelope status %d (the HTTP status)", status), fmt.Sprintf("%v in %s", env.status, r))
	}
	if message != "" && env.message != message && (r.strict || documentMessages[message]) {
		return nil, Mismatch(fmt.Sprintf("message %q", message), fmt.Sprintf("%q in %s", env.message, r))
	}
	return env, nil
}

// expectErrorEmptyData is expectError that also requires data to be {}.
func expectErrorEmptyData(r *response, status int, message string) error {
	env, err := expectError(r, status, message)
	if err != nil {
		return err
	}
	if len(env.data) != 0 {
		return Mismatch("an empty data object", r.String())
	}
	return nil
}

// objectKeys returns the top-level keys of a JSON object in wire order.
func objectKeys(body []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, errors.New("bad key")
		}
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// sameKeys reports whether keys holds exactly want, in any order.
func sameKeys(keys []string, want ...string) bool {
	if len(keys) != len(want) {
		return false
	}
	set := make(map[string]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

// mapKeys returns the keys of m.
func mapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// isJSONContentType reports whether the response declares application/json.
func isJSONContentType(r *response) bool {
	mt, _, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// plural returns n and noun, with the plural of noun (+s, y → ies) unless n is 1:
// "1 item", "2 items", "0 entries".
func plural(n int, noun string) string {
	switch {
	case n == 1:
	case strings.HasSuffix(noun, "y"):
		noun = strings.TrimSuffix(noun, "y") + "ies"
	default:
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
}

// jsonText renders v as compact JSON for failure details (so that 1795947734
// does not print as 1.795947734e+09).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ---- typed getters -----------------------------------------------------------

func getString(m map[string]any, key string) (string, bool) {
	s, ok := m[key].(string)
	return s, ok
}

func getNumber(m map[string]any, key string) (float64, bool) {
	f, ok := m[key].(float64)
	return f, ok
}

func getBool(m map[string]any, key string) (bool, bool) {
	b, ok := m[key].(bool)
	return b, ok
}

func getObject(m map[string]any, key string) (map[string]any, bool) {
	o, ok := m[key].(map[string]any)
	return o, ok
}

func getArray(m map[string]any, key string) ([]any, bool) {
	a, ok := m[key].([]any)
	return a, ok
}

// ---- fixtures ----------------------------------------------------------------

// newNonce returns n random characters from [a-z0-9], so that fixture
// names cannot collide with data already on the server.
func newNonce(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
