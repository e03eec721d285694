package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultBatch      = 1000
	DefaultPoll       = 500 * time.Millisecond
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = 15 * time.Second
	// maxRetryAfter caps the wait a receiver's Retry-After asks for.
	maxRetryAfter = 10 * time.Minute
	// maxAnswer is how much of a receiver's answer is read, and
	// maxAnswerText how much of it an error quotes.
	maxAnswer, maxAnswerText = 64 << 10, 200
)

// Batch is what a Source returns: records after a position, oldest first.
type Batch struct {
	Records []Record
	Last    int64  // position of the last record; the one asked for when none
	Gap     int64  // positions skipped before or between the records: entries deleted unexported
	Newest  int64  // position of the newest entry stored
	Key     uint64 // what the positions are of (the log directory's id key); 0 = unknown
}

// Source reads the log store: up to n records after position after. An
// error (the store closed for a restart) makes the export wait and ask
// again.
type Source func(after int64, n int) (Batch, error)

// Options configure an Exporter.
type Options struct {
	Config     Config
	Source     Source
	Resource   func() Resource // asked for each batch (the app name may change)
	CursorPath string          // where the cursor is saved
	Logger     *slog.Logger    // nil = discard
	Client     *http.Client    // nil = a client of its own

	Batch      int           // records per request; 0 = DefaultBatch
	Poll       time.Duration // how often a caught-up export looks for new logs; 0 = DefaultPoll
	MinBackoff time.Duration // first retry's wait; 0 = DefaultMinBackoff
	MaxBackoff time.Duration // longest wait between retries; 0 = DefaultMaxBackoff

	// Now, Sleep and Jitter are the clock, the wait and the randomness of
	// the back-off (tests inject them): Sleep waits d or until ctx ends;
	// Jitter returns a number in [0, 1). nil = the real ones.
	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
	Jitter func() float64
}

// State is what the export has done, for the logs settings.
type State struct {
	Endpoint    string // scheme://host/path, nothing secret
	Protocol    string
	Behind      int64 // entries stored and not yet acknowledged
	Exported    int64 // records the receiver acknowledged since start
	Failed      int64 // records skipped because the receiver refused them (400)
	Lost        int64 // entries deleted (retention) before they were exported
	LastSuccess time.Time
	LastError   string
	LastErrorAt time.Time
	// Oldest is when the oldest log not yet acknowledged was created, as
	// far as the export has read (the first of the batch it is sending,
	// or a lower bound once that batch is sent); zero when caught up.
	// The age of the export's lag is Now minus Oldest.
	Oldest time.Time
}

// Exporter ships the log store's entries to an OTLP/HTTP receiver, at
// least once, from a durable cursor (see the package documentation).
type Exporter struct {
	o    Options
	log  *slog.Logger
	gz   *gzip.Writer
	body bytes.Buffer
	raw  []byte // the last body before gzip, reused
	recs []byte // scratch of appendProto, reused

	mu    sync.Mutex
	state State
}

// New returns an Exporter; Run runs it.
func New(o Options) *Exporter {
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	if o.Client == nil {
		o.Client = &http.Client{Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 2,
			IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second,
		},
			// A redirect is an answer, not followed: the headers (an API
			// key) would go to wherever it points.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if o.Resource == nil {
		o.Resource = func() Resource { return Resource{} }
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	gz, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed) // a valid level
	return &Exporter{o: o, log: log, gz: gz, state: State{Endpoint: o.Config.Redacted(), Protocol: o.Config.Protocol}}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// State returns the export's state.
func (e *Exporter) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state
}

func (e *Exporter) update(fn func(s *State)) {
	e.mu.Lock()
	fn(&e.state)
	e.mu.Unlock()
}

// Run exports until ctx ends. It loads the cursor, then reads a batch
// after it, sends it (retrying until the receiver takes it, skipping it
// on a 400), saves the cursor past it, and goes on; caught up, it looks
// for new entries every Poll.
func (e *Exporter) Run(ctx context.Context) {
	cur, err := loadCursor(e.o.CursorPath)
	if err != nil {
		e.log.Warn("log export: cursor unreadable: exporting from the oldest stored log (the receiver may get some twice)", "path", e.o.CursorPath, "err", err)
	}
	for ctx.Err() == nil {
		next, wait := e.step(ctx, cur)
		if next != cur {
			if err := saveCursor(e.o.CursorPath, next); err != nil {
				e.log.Error("log export: cursor not saved: a restart will export the last batch again", "err", err)
				e.fail(err)
			}
			cur = next
		}
		if wait {
			e.o.Sleep(ctx, e.o.Poll)
		}
	}
}

// step reads and ships one batch after cur; it returns the new cursor,
// and whether the export is caught up (or the store unreadable) and
// should wait.
func (e *Exporter) step(ctx context.Context, cur Cursor) (Cursor, bool) {
	b, err := e.o.Source(cur.Seq, e.o.Batch)
	if err != nil {
		return cur, true
	}
	switch {
	case b.Key != 0 && b.Key != cur.Key:
		if cur.Key != 0 {
			e.log.Warn("log export: the log store is another one (a new or restored log directory): exporting it from its oldest log")
		}
		return Cursor{Key: b.Key}, false
	case b.Newest < cur.Seq:
		e.log.Warn("log export: the log store went back (a restored backup): exporting from its newest log on", "cursor", cur.Seq, "newest", b.Newest)
		return Cursor{Key: cur.Key, Seq: b.Newest}, false
	}
	if b.Gap > 0 {
		e.log.Warn("log export: logs deleted before they were exported", "count", b.Gap,
			"reason", "retention (logs.maxDays) or the size cap deleted them while the receiver was behind, or the disk refused them")
		e.update(func(s *State) { s.Lost += b.Gap })
	}
	e.update(func(s *State) {
		s.Behind = b.Newest - cur.Seq
		s.Oldest = time.Time{}
		if len(b.Records) > 0 {
			s.Oldest = b.Records[0].Time
		}
	})
	next := Cursor{Key: cur.Key, Seq: b.Last}
	if len(b.Records) == 0 {
		return next, true
	}
	if !e.ship(ctx, b.Records, cur.Seq) {
		return cur, false // ctx ended
	}
	e.update(func(s *State) {
		s.Behind = b.Newest - b.Last
		s.Oldest = time.Time{}
		if s.Behind > 0 {
			s.Oldest = b.Records[len(b.Records)-1].Time // the next is no older
		}
	})
	return next, false
}

// ship sends records (those after position after) until the receiver
// takes them, or refuses them for good (a 400, logged and counted, the
// batch skipped), or ctx ends (false). Between retries it keeps
// State.Behind current: the logs stored meanwhile wait too.
func (e *Exporter) ship(ctx context.Context, records []Record, after int64) bool {
	body := e.encode(records)
	for attempt := 0; ; attempt++ {
		res := e.send(ctx, body)
		if ctx.Err() != nil {
			return false
		}
		now := e.o.Now()
		switch {
		case res.err == nil:
			e.update(func(s *State) { s.Exported += int64(len(records)); s.LastSuccess = now })
			return true
		case res.permanent:
			e.log.Error("log export: the receiver refused a batch: skipped", "records", len(records), "err", res.err)
			e.update(func(s *State) { s.Failed += int64(len(records)) })
			e.fail(res.err)
			return true
		}
		e.fail(res.err)
		if b, err := e.o.Source(after, 0); err == nil && b.Newest >= after {
			e.update(func(s *State) { s.Behind = b.Newest - after })
		}
		wait := e.backoff(attempt)
		if res.retryAfter > 0 {
			wait = min(res.retryAfter, maxRetryAfter)
		}
		if attempt == 0 || attempt%10 == 9 {
			e.log.Warn("log export: retrying", "attempt", attempt+1, "in", wait, "err", res.err)
		}
		if e.o.Sleep(ctx, wait) != nil {
			return false
		}
	}
}

func (e *Exporter) fail(err error) {
	now := e.o.Now()
	e.update(func(s *State) { s.LastError, s.LastErrorAt = err.Error(), now })
}

// backoff is the wait before retry attempt+1: MinBackoff doubling up to
// MaxBackoff, of which a random half ("equal jitter"), so that many
// servers do not retry in step.
func (e *Exporter) backoff(attempt int) time.Duration {
	d := e.o.MaxBackoff
	if attempt < 30 {
		d = min(e.o.MinBackoff<<attempt, e.o.MaxBackoff)
	}
	return d/2 + time.Duration(e.o.Jitter()*float64(d/2))
}

// encode returns the gzipped request body of records.
func (e *Exporter) encode(records []Record) []byte {
	res := e.o.Resource()
	if e.o.Config.Protocol == ProtoJSON {
		e.raw = AppendJSON(e.raw[:0], res, records)
	} else {
		e.raw, e.recs = appendProto(e.raw[:0], e.recs, res, records)
	}
	e.body.Reset()
	e.gz.Reset(&e.body)
	e.gz.Write(e.raw) // a bytes.Buffer does not fail
	e.gz.Close()
	return bytes.Clone(e.body.Bytes())
}

type result struct {
	err        error
	permanent  bool          // the receiver refused the data: do not retry
	retryAfter time.Duration // its Retry-After, 0 if none
}

// send POSTs one request body, within the configured timeout.
func (e *Exporter) send(ctx context.Context, body []byte) result {
	ctx, cancel := context.WithTimeout(ctx, e.o.Config.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.o.Config.Endpoint, bytes.NewReader(body))
	if err != nil {
		return result{err: errors.New("the endpoint is not a valid URL"), permanent: true}
	}
	for _, h := range e.o.Config.Headers {
		req.Header.Set(h[0], h[1])
	}
	ct := "application/x-protobuf"
	if e.o.Config.Protocol == ProtoJSON {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := e.o.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text would quote the endpoint, query and all
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %v", e.o.Config.Timeout)
		}
		return result{err: fmt.Errorf("POST %s: %w", e.state.Endpoint, err)}
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return result{}
	}
	r := result{err: fmt.Errorf("POST %s: %s%s", e.state.Endpoint, resp.Status, answerText(answer))}
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		r.permanent = true // the same bytes would be refused again
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		r.retryAfter = retryAfter(resp.Header.Get("Retry-After"), e.o.Now())
	}
	return r
}

// answerText is the start of a receiver's answer, for an error message.
func answerText(b []byte) string {
	s := strings.ToValidUTF8(strings.TrimSpace(string(b)), "?")
	if s == "" {
		return ""
	}
	if len(s) > maxAnswerText {
		s = strings.ToValidUTF8(s[:maxAnswerText], "") + "…"
	}
	return ": " + strconv.Quote(s)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date; 0 when
// absent or malformed.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(min(n, 1<<20)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
