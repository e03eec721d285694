package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"time"
)

// Limits bound one request of a route. The deadlines count from the
// moment the request's headers were read (ReadHeaderTimeout bounds those),
// and are set on the connection with http.ResponseController, so each
// route can have its own: long ones only where a route needs them (backup
// upload and download, server-sent events).
//
// The bytes of a body count against the shared body budget as they
// arrive, so Body must not exceed the budget's share of one client: a
// route that takes larger bodies (a backup upload) has to stream them to
// disk and be exempted from the budget.
type Limits struct {
	Body  int64         // largest request body, in bytes; unused when Stream
	Read  time.Duration // to receive the whole body
	Write time.Duration // to handle the request and write the whole response
	// Stream marks a route whose handler streams the body to disk and
	// bounds its size itself (the backup upload): the body is charged
	// streamCharge once, for the buffers reading it, instead of its
	// bytes, and has no limit here.
	Stream bool
}

// streamCharge is what a streamed body holds in the body budget: the
// buffers of a multipart reader and of the copy to disk.
const streamCharge = 64 << 10

// Errors of reading a request body, rendered as they are.
var (
	errBodyTimeout = newError(http.StatusRequestTimeout, msgBodyTimeout, nil)
	errBodyBudget  = newError(http.StatusServiceUnavailable, msgServerBusy, nil)
)

// route adapts h to an http.Handler that applies the limits l to its
// request: the deadlines, the body limit (a declared Content-Length over
// it is refused at once, a longer chunked body when it is read) and the
// shared body budget.
func (s *Server) route(l Limits, h handler) http.Handler {
	next := s.handle(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateOf(r)
		st.limits, st.route = l, r.Pattern
		setDeadlines(w, r, st)
		if len(r.TransferEncoding) > 0 {
			// A chunked request may also have carried a Content-Length,
			// which net/http drops before the handler sees it; such a
			// request may be an attempt at request smuggling, after which
			// the connection must not be reused (RFC 9112 §6.1). Chunked
			// requests are rare, so each one closes its connection.
			w.Header().Set("Connection", "close")
		}
		if hasBody(r) && l.Stream {
			b := &requestBody{
				body:   r.Body,
				w:      w,
				budget: s.budget,
				client: st.client,
				stream: true,
			}
			defer b.release()
			if err := b.take(streamCharge); err != nil {
				s.renderError(w, r, err)
				return
			}
			r.Body = b
		} else if hasBody(r) {
			if r.ContentLength > l.Body {
				w.Header().Set("Connection", "close")
				s.renderError(w, r, newError(http.StatusRequestEntityTooLarge, msgTooLarge, nil))
				return
			}
			b := &requestBody{
				body:   http.MaxBytesReader(w, r.Body, l.Body),
				w:      w,
				budget: s.budget,
				client: st.client,
			}
			switch ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct {
			case "application/x-www-form-urlencoded":
				b.sep = '&'
			case "multipart/form-data":
				b.sep = '\n'
			}
			defer b.release()
			r.Body = b
		}
		next.ServeHTTP(w, r)
	})
}

func hasBody(r *http.Request) bool { return r.Body != nil && r.Body != http.NoBody }

// setDeadlines sets the read deadline of a request with a body and the
// write deadline of its response, from st.limits. A ResponseWriter that
// cannot (httptest's recorder) is left without.
func setDeadlines(w http.ResponseWriter, r *http.Request, st *state) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(st.arrived.Add(st.limits.Write))
	if hasBody(r) {
		// Only with a body: without one net/http is already reading the
		// connection in the background, and a deadline there would cancel
		// the request's context.
		rc.SetReadDeadline(st.arrived.Add(st.limits.Read))
	}
}

// answerMargin is the most of a route's write deadline that answerBy
// keeps for encoding and writing the answer (a tenth of it, if less).
const answerMargin = 2 * time.Second

// answerBy is when a handler's work for r must end for its answer to be
// written within the route's write deadline: that deadline less a tenth
// of the route's time, at most answerMargin.
func answerBy(r *http.Request) time.Time {
	st := stateOf(r)
	if st == nil {
		return time.Now().Add(DefaultWriteTimeout - answerMargin)
	}
	return st.arrived.Add(st.limits.Write - min(st.limits.Write/10, answerMargin))
}

// workContext is the context of the storage work a handler does for r:
// r's, ending at answerBy(r). A storage that never answers (an S3 bucket
// that trickles, or whose listing never ends) thus gets the route's
// error in time, instead of holding the request until its client leaves
// and the backup lock, if the handler holds it, as long.
func workContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithDeadline(r.Context(), answerBy(r))
}

// requestBody is a route's request body. Each read takes the bytes it
// received from the shared budget (and, for a form, the cost of a value
// for each '&' of a urlencoded one, each line of a multipart one), in the
// name of the client's address;
// all are given back when the handler returns. A body that stalls thus
// holds only the bytes it sent, whatever length it declared. A read whose
// bytes do not fit fails with errBodyBudget (503): the bytes of that one
// read are the most by which the bodies in memory can exceed the budget,
// per connection. A read that misses the deadline fails with
// errBodyTimeout; the end of the body lifts the read deadline, since
// net/http then reads the connection in the background and a deadline
// there would cancel the request's context. After any failure the
// connection is closed once answered: what is left of the body cannot be
// trusted to frame the next request.
type requestBody struct {
	body   io.ReadCloser // http.MaxBytesReader over the original body
	w      http.ResponseWriter
	budget *budget
	client string // the client's key in the budget (ratelimit.ClientKey)
	held   int64  // bytes taken
	sep    byte   // of a form: each one in the body is charged a value
	stream bool   // charged streamCharge once, not per byte (Limits.Stream)
	err    error  // the budget's refusal, returned by every later read
}

func (b *requestBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	if n > 0 && !b.stream {
		charge := int64(n)
		if b.sep != 0 {
			// Parsing a form makes values for each pair ('&') or for
			// each line of a multipart body's headers (part, header),
			// as decoding JSON does for each element (see
			// checkJSONShape): net/url keeps at most 10,000 pairs,
			// mime/multipart 1,000 parts, and a part costs less than
			// the four lines it takes at least.
			charge += int64(bytes.Count(p[:n], []byte{b.sep})) * jsonValueCost
		}
		if err := b.take(charge); err != nil {
			return 0, err
		}
	}
	switch {
	case err == nil:
	case err == io.EOF:
		http.NewResponseController(b.w).SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.w.Header().Set("Connection", "close")
		err = errBodyTimeout
	default:
		b.w.Header().Set("Connection", "close")
	}
	return n, err
}

// take takes n more bytes from the budget for this body: the bytes it
// received, or the cost of the values decoded from them (see
// checkJSONShape). When they do not fit, the body fails with errBodyBudget.
func (b *requestBody) take(n int64) error {
	if b.err != nil {
		return b.err
	}
	if !b.budget.take(b.client, n) {
		b.w.Header().Set("Connection", "close")
		b.err = errBodyBudget
		if b.held+n > b.budget.share {
			// This body alone is more than a client may hold: retrying
			// cannot help, so it is too large, not the server busy.
			b.err = newError(http.StatusRequestEntityTooLarge, msgTooLarge, nil)
		}
		return b.err
	}
	b.held += n
	return nil
}

func (b *requestBody) Close() error { return b.body.Close() }

func (b *requestBody) release() {
	b.budget.give(b.client, b.held)
	b.held = 0
}

// budget is a byte semaphore for the request bodies being read and
// decoded. It never waits: bytes that do not fit are refused, so the
// memory taken by bodies stays under its size whatever clients send. One
// client address may hold at most share bytes of it (a quarter, or one
// body's limit if that is more), so that no single client can fill it and
// shut the others out.
type budget struct {
	mu    sync.Mutex
	size  int64
	share int64 // most bytes one client may hold
	free  int64
	held  map[string]int64 // bytes held per client; only clients holding some
	log   *slog.Logger
	logs  logEvery // the "budget exhausted" line
}

// newBudget returns a budget of size bytes, of which one client may hold
// a quarter, or minShare if that is more (the largest body a route takes).
func newBudget(size, minShare int64, log *slog.Logger) *budget {
	return &budget{size: size, share: min(size, max(size/4, minShare)), free: size, held: map[string]int64{}, log: log}
}

// take takes n bytes for client if they are free and within its share.
func (b *budget) take(client string, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n <= b.free && b.held[client]+n <= b.share {
		b.free -= n
		b.held[client] += n
		return true
	}
	if refused, ok := b.logs.event(); ok {
		what := "request body budget exhausted"
		if n <= b.free {
			what = "a client's share of the request body budget exhausted"
		}
		b.log.Warn(what+": refusing bodies with 503", "budget", b.size, "share", b.share, "refused", refused)
	}
	return false
}

// give returns n bytes of client.
func (b *budget) give(client string, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.free += n
	if b.held[client] -= n; b.held[client] <= 0 {
		delete(b.held, client)
	}
}

// inUse is the number of bytes taken.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size - b.free
}

// heldBy is the number of bytes client holds.
func (b *budget) heldBy(client string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held[client]
}

// canonicalPath answers the requests ServeMux would answer by itself in
// plain text or HTML, with the envelope and the same status: "OPTIONS *"
// (400), and a path that is not canonical, with empty segments, "." or
// ".." (307 to the cleaned path, query kept, as Go 1.22+'s ServeMux does:
// a client repeats its method and body). CONNECT, which no route takes, is
// the JSON 404 whatever its target.
func (s *Server) canonicalPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RequestURI == "*" {
			w.Header().Set("Connection", "close")
			s.renderError(w, r, errBadRequest(msgBadRequest, nil))
			return
		}
		if r.Method == http.MethodConnect {
			// No route takes CONNECT, and its authority form
			// (CONNECT host:port) has no path the catch-all route could
			// match, so ServeMux would answer in plain text.
			w.Header().Set("Connection", "close")
			s.renderError(w, r, errNotFound(nil))
			return
		}
		p := r.URL.EscapedPath()
		c := cleanPath(p)
		if c == p {
			next.ServeHTTP(w, r)
			return
		}
		if r.URL.RawQuery != "" {
			c += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", c)
		s.renderError(w, r, newError(http.StatusTemporaryRedirect, msgRedirect, nil))
	})
}

// cleanPath is net/http's: the canonical path for p, with a trailing
// slash kept. The result never starts with "//", so the Location cannot
// point at another host.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		if len(p) == len(np)+1 && strings.HasPrefix(p, np) {
			np = p
		} else {
			np += "/"
		}
	}
	return np
}
