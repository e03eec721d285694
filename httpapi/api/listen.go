package api

import (
	"bytes"
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strongbox/httpapi/ratelimit"
)

// Connection-level defaults of NewHTTPServer. Per-request deadlines (the
// body and the response) are set per route instead; see routes.go.
const (
	// DefaultReadHeaderTimeout bounds the time to receive a request's
	// line and headers, so a client that connects and stalls is dropped.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout bounds how long a keep-alive connection waits for
	// its next request.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxHeaderBytes bounds a request's line and headers. An auth
	// token is well under 1 KiB; net/http allows 4 KiB more than this.
	DefaultMaxHeaderBytes = 32 << 10
	// DefaultMaxConns is the connection cap when the descriptor limit
	// allows it (see MaxConns).
	DefaultMaxConns = 4096
	// fdHeadroom is kept free of connections for the stores' files, the
	// listener and the runtime.
	fdHeadroom = 256
	// capLogEvery is the least time between two "connection cap reached"
	// log lines.
	capLogEvery = 10 * time.Second
)

// HTTPConfig configures the http.Server and listener NewHTTPServer builds.
// Zero fields take the defaults above.
type HTTPConfig struct {
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	MaxConns          int          // concurrent connections; 0 = MaxConns()
	MaxConnsPerClient int          // concurrent connections of one client address (an IPv6 /64); 0 = MaxConns/8
	Logger            *slog.Logger // nil = discard
}

// MaxConns is the default cap on concurrent connections: DefaultMaxConns,
// or fewer when the process's descriptor limit (RLIMIT_NOFILE) minus a
// headroom of 256 for the stores is lower, so that accept never fails
// with "too many open files".
func MaxConns() int {
	n := DefaultMaxConns
	if lim := fileLimit(); lim > 0 {
		n = min(n, max(lim-fdHeadroom, lim/2, 1))
	}
	return n
}

// NewHTTPServer returns the http.Server that serves h with strongbox's
// connection limits, and ln wrapped to enforce them; serve the one on the
// other: srv.Serve(ln).
//
// The wrapped listener caps concurrent connections, in all and per client
// (see capListener). At a cap a new connection takes the slot of the
// connection that has waited longest without a request, closing it; when
// every connection is busy with a request it is not kept waiting (a
// waiting connection still holds a descriptor and the client learns
// nothing): it is answered at once with a 503 envelope and closed, and the
// refusals are logged at most once every 10 seconds. The accepted connections rewrite the plain-text
// errors net/http writes by itself (malformed request, headers too large,
// unsupported transfer encoding or protocol version, failed expectation)
// as the JSON envelope; see rewriteServerError.
func NewHTTPServer(h http.Handler, ln net.Listener, cfg HTTPConfig) (*http.Server, net.Listener) {
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = MaxConns()
	}
	if cfg.MaxConnsPerClient <= 0 {
		cfg.MaxConnsPerClient = max(cfg.MaxConns/8, 1)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{
		Handler: h,
		// ReadTimeout and WriteTimeout stay 0: the deadlines for the body
		// and the response are per route (Limits), set when the handler
		// starts, so that a route that needs long ones can have them.
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		// "OPTIONS *" reaches the handler, which answers it with an
		// envelope instead of net/http's empty 200.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	l := newCapListener(ln, cfg.MaxConns, cfg.MaxConnsPerClient, cfg.Logger)
	srv.ConnState = l.connState
	return srv, l
}

// capListener caps the connections it has accepted and not yet closed, in
// all and per client address (an IPv4 address or an IPv6 /64): one client
// can hold at most an eighth of the slots by default, so a few flooding
// clients cannot shut every other client out. At the cap, a new
// connection takes the slot of the connection that has waited longest
// without a request in progress (idle between keep-alive requests, or
// accepted and not yet sent one): closing it costs its client a reconnect
// at most, and it keeps connections that hold slots while doing nothing
// from refusing those that want to work. Only when every connection is
// busy with a request is a new one refused. Likewise a client at its own
// share gives up the slot of its own connection that has waited longest.
type capListener struct {
	net.Listener
	max, maxPerClient int
	log               *slog.Logger

	mu        sync.Mutex
	open      int                   // connections open
	perClient map[string]int        // connections open per client (at most open keys)
	waiting   list.List             // *serverConn without a request in progress, longest waiting first
	byClient  map[string]*list.List // the same, per client
	elems     map[*serverConn][2]*list.Element
	logs      logEvery // the "cap reached" line

	// unanswered counts the open connections that are new or have a
	// request in progress (not idle); accepting, the Accept calls under
	// way. Drain waits for both to reach 0.
	unanswered int
	accepting  int
}

func newCapListener(ln net.Listener, n, perClient int, log *slog.Logger) *capListener {
	return &capListener{Listener: ln, max: n, maxPerClient: perClient, log: log,
		perClient: map[string]int{}, byClient: map[string]*list.List{}, elems: map[*serverConn][2]*list.Element{}}
}

// Accept returns the next connection that fits under the caps, refusing
// the others as they arrive.
func (l *capListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	l.accepting++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.accepting--
		l.mu.Unlock()
	}()
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := c.RemoteAddr().String()
		if host, _, err := net.SplitHostPort(client); err == nil {
			client = host
		}
		client = ratelimit.ClientKey(client)
		sc := &serverConn{Conn: c}
		sc.release = func() { l.give(sc, client) }
		if l.take(sc, client) {
			return sc, nil
		}
		l.refuse(c, client)
	}
}

// take reserves a slot for sc, a connection of client, if the client's
// share allows: a free slot, or else the slot of the connection waiting
// longest without a request, which it closes.
func (l *capListener) take(sc *serverConn, client string) bool {
	l.mu.Lock()
	var from *list.List // where a victim must come from, when at a cap
	full := true
	switch {
	case l.perClient[client] >= l.maxPerClient:
		from = l.byClient[client] // nil when none of the client's waits
	case l.open >= l.max:
		from = &l.waiting
	default:
		full = false
	}
	var victim *serverConn
	if full {
		if from == nil || from.Len() == 0 {
			l.mu.Unlock()
			return false
		}
		victim = from.Front().Value.(*serverConn)
		l.forget(victim)
		victim.evicted = true
		l.drop(victim.client)
	}
	l.open++
	l.perClient[client]++
	l.unanswered++
	sc.client = client
	l.wait(sc)
	l.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
	}
	return true
}

// give frees the slot of a closed connection, unless it was taken over.
func (l *capListener) give(sc *serverConn, client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(sc)
	if !sc.idle {
		sc.idle = true // counted out once
		l.unanswered--
	}
	if !sc.evicted {
		l.drop(client)
	}
}

// drop counts one connection of client less. The caller holds l.mu.
func (l *capListener) drop(client string) {
	l.open--
	if l.perClient[client]--; l.perClient[client] <= 0 {
		delete(l.perClient, client)
	}
}

// wait puts sc at the back of the waiting lists. The caller holds l.mu.
func (l *capListener) wait(sc *serverConn) {
	l.forget(sc)
	cl := l.byClient[sc.client]
	if cl == nil {
		cl = list.New()
		l.byClient[sc.client] = cl
	}
	l.elems[sc] = [2]*list.Element{l.waiting.PushBack(sc), cl.PushBack(sc)}
}

// forget takes sc off the waiting lists. The caller holds l.mu.
func (l *capListener) forget(sc *serverConn) {
	e, ok := l.elems[sc]
	if !ok {
		return
	}
	l.waiting.Remove(e[0])
	cl := l.byClient[sc.client]
	cl.Remove(e[1])
	if cl.Len() == 0 {
		delete(l.byClient, sc.client)
	}
	delete(l.elems, sc)
}

// connState is the http.Server's ConnState hook: a connection waits while
// it is new or idle, and works while a request is in progress.
func (l *capListener) connState(c net.Conn, state http.ConnState) {
	sc, ok := c.(*serverConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if sc.evicted || sc.closed.Load() {
		return
	}
	switch state {
	case http.StateActive:
		l.forget(sc)
		if sc.idle {
			sc.idle = false
			l.unanswered++
		}
	case http.StateIdle:
		l.wait(sc)
		if !sc.idle {
			sc.idle = true
			l.unanswered--
		}
	}
}

// Drain stops ln, a listener of NewHTTPServer, accepting connections
// and waits until every connection it accepted is idle or closed: its
// request answered. The socket itself stays open if another descriptor
// holds it (a restore keeps one for the process it execs), so new
// connections wait in its backlog meanwhile. Call it before
// http.Server.Shutdown, which closes unanswered a connection whose request
// it reads after it began: a request that reached the server just before
// is then answered instead of cut. It returns when ctx ends, with its
// error, if some connection still waits for its request.
func Drain(ctx context.Context, ln net.Listener) error {
	l, ok := ln.(*capListener)
	if !ok {
		return ln.Close()
	}
	err := l.Close()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		l.mu.Lock()
		busy := l.unanswered > 0 || l.accepting > 0
		l.mu.Unlock()
		if !busy {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// waitingConns returns the number of connections without a request in
// progress.
func (l *capListener) waitingConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting.Len()
}

// openConns returns the number of connections open.
func (l *capListener) openConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// refusal is the whole answer to a connection over the cap.
var refusal = errorResponse(http.StatusServiceUnavailable, msgTooManyConns)

// refuse answers c with a 503 envelope and closes it. The write goes to
// an empty socket buffer, so it does not block; the deadline is a
// safeguard. The client may still see a reset instead of the answer if
// its request was already in flight: this is best effort.
func (l *capListener) refuse(c net.Conn, client string) {
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(refusal)
	c.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if refused, ok := l.logs.event(); ok {
		// The line names the last client refused, and whether it was at
		// its own share (a flood from one address) or all slots were busy.
		l.log.Warn("connection cap reached: refusing new connections", "cap", l.max, "perClient", l.maxPerClient, "open", l.open,
			"refused", refused, "lastClient", client, "atClientShare", l.perClient[client] >= l.maxPerClient)
	}
}

// serverConn is an accepted connection: it frees its slot when closed and
// rewrites net/http's own plain-text errors.
type serverConn struct {
	net.Conn
	release func()
	closed  atomic.Bool
	client  string // its client key; set under the listener's lock
	evicted bool   // its slot was given to another connection (listener's lock)
	idle    bool   // idle between requests, or closed (listener's lock)
}

func (c *serverConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.release()
	}
	return err
}

// CloseWrite lets net/http half-close the connection after an error, as
// it does on a *net.TCPConn.
func (c *serverConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *serverConn) Write(p []byte) (int, error) {
	if b, ok := rewriteServerError(p); ok {
		if _, err := c.Conn.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// textErrorHeaders is what net/http (server.go, conn.serve) writes after
// the status line of the errors it answers by itself, before any handler
// runs, each in a single Write on the connection:
//
//	HTTP/1.1 431 Request Header Fields Too Large + textErrorHeaders + body
//	HTTP/1.1 501 Not Implemented + textErrorHeaders + "Unsupported transfer encoding"
//	HTTP/1.1 400 Bad Request: missing required Host header + textErrorHeaders + body
//	HTTP/1.1 400 Bad Request + textErrorHeaders + "400 Bad Request"
//
// A handler's response never matches: net/http adds a Date header to it,
// and this server's responses are application/json.
const textErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// expectationFailed starts the one other response net/http writes without
// the handler: 417 for an Expect header other than 100-continue, with an
// empty body (response.sendExpectationFailed). No handler here answers 417.
const expectationFailed = "HTTP/1.1 417 Expectation Failed\r\n"

// rewriteServerError recognises p as one of net/http's own error
// responses and returns it as the JSON envelope.
func rewriteServerError(p []byte) ([]byte, bool) {
	if bytes.HasPrefix(p, []byte(expectationFailed)) && bytes.HasSuffix(p, []byte("\r\n\r\n")) {
		return errorResponse(http.StatusExpectationFailed, msgExpectationFailed), true
	}
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(p, []byte(proto)) {
		return nil, false
	}
	line, _, ok := bytes.Cut(p, []byte("\r\n"))
	if !ok || !bytes.HasPrefix(p[len(line):], []byte(textErrorHeaders)) {
		return nil, false
	}
	status := string(line[len(proto):])
	code, err := strconv.Atoi(status[:min(3, len(status))])
	if err != nil || code < 400 || code > 599 {
		return nil, false
	}
	_, detail, _ := strings.Cut(status, ": ")
	return errorResponse(code, serverErrorMessage(code, detail)), true
}

// serverErrorMessage is the envelope's message for one of net/http's own
// errors, whose detail (after "400 Bad Request: ") is a fixed phrase such
// as "missing required Host header".
func serverErrorMessage(code int, detail string) string {
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		return msgHeadersTooLarge
	case http.StatusNotImplemented:
		return msgUnsupportedEncoding
	case http.StatusHTTPVersionNotSupported:
		return msgUnsupportedVersion
	case http.StatusBadRequest:
		if detail == "" {
			return msgBadRequest
		}
		return msgBadRequest + " " + strings.ToUpper(detail[:1]) + detail[1:] + "."
	}
	return http.StatusText(code) + "."
}

// errorResponse is a complete HTTP/1.1 response carrying the error
// envelope, with the security headers of every response, that closes the
// connection.
func errorResponse(code int, msg string) []byte {
	body, _ := marshal(envelope{Data: map[string]any{}, Message: msg, Status: code})
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Length: %d\r\nContent-Type: application/json\r\n", code, http.StatusText(code), len(body))
	for _, h := range securityHeaderValues {
		fmt.Fprintf(&b, "%s: %s\r\n", http.CanonicalHeaderKey(h[0]), h[1])
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// logEvery limits a log line about a repeated event (a refusal, a failed
// write) to one per capLogEvery, with the number of events it stands for,
// so that a flood of them cannot flood the log. The zero value is ready;
// callers serialise its use.
type logEvery struct {
	last   time.Time
	events int // since the last line
}

// event records one event and reports whether to log a line now, and how
// many events that line stands for.
func (e *logEvery) event() (events int, now bool) {
	e.events++
	if t := time.Now(); t.Sub(e.last) >= capLogEvery {
		events, e.last, e.events = e.events, t, 0
		return events, true
	}
	return 0, false
}
