package api

import (
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strongbox/authn"
	"strongbox/authn/mail"
	"strongbox/authn/oauth2"
	"strongbox/httpapi/ratelimit"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
	"strongbox/logstore/otlp"
)

// Defaults of the per-route limits (see the table in routes.go) and of the
// budget shared by all request bodies.
const (
	// DefaultBodyLimit is the largest request body of a JSON route. The
	// one route that takes a file, the backup upload, streams it to disk
	// (Limits.Stream), so none needs PocketBase's 32 MiB.
	DefaultBodyLimit = 1 << 20
	// DefaultAuthBodyLimit is the largest request body of an auth action
	// (login, refresh, impersonate, file token): a few short strings.
	DefaultAuthBodyLimit = 64 << 10
	// DefaultBodyBudget bounds the request bodies being read and decoded
	// at once, across all requests: the bytes they received and the cost
	// of their values (see routes.go), a quarter of it per client address.
	// A body that does not fit is refused with 503 instead of waiting.
	DefaultBodyBudget = 32 << 20
	// DefaultReadTimeout is the time a client has to send a request's
	// body, from the end of its headers.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout is the time the server has to write a response,
	// from the end of the request's headers, handling included.
	DefaultWriteTimeout = 30 * time.Second
)

// Config holds a Server's dependencies.
type Config struct {
	Auth *authn.Store
	// Logs is the request log (required). Its retention and minimum
	// level are the log store's to follow: the caller subscribes it to
	// Settings (strongbox/httpapi/app does).
	Logs *logstore.Store
	// Settings are the application settings (required), which the
	// settings routes read and change. NewServer applies the server's
	// part of them (the request log's options, the trusted proxy, the
	// rate limits) as they are; the caller subscribes
	// Server.ApplySettings to them for every change, and ends that
	// subscription (strongbox/httpapi/app does both).
	Settings     *settings.Store
	Logger       *slog.Logger     // the server's own log; nil = discard
	Now          func() time.Time // nil = time.Now
	BodyLimit    int64            // JSON routes' body limit; 0 = DefaultBodyLimit
	BodyBudget   int64            // bytes of request bodies in flight; 0 = DefaultBodyBudget
	ReadTimeout  time.Duration    // body deadline of the routes; 0 = DefaultReadTimeout
	WriteTimeout time.Duration    // response deadline of the routes; 0 = DefaultWriteTimeout
	// LoginPolicy is the password-login throttle; nil = ratelimit.DefaultPolicy.
	LoginPolicy *ratelimit.Policy
	// Restarter restarts the server this API runs in; nil = it cannot be
	// restarted. The backups restore route will use it.
	Restarter Restarter
	// Backups serves the backup routes (§4.2); nil = the backups folder
	// cannot be loaded, and the routes answer as PocketBase does then.
	Backups Backups
	// Mail sends the mails of record auth (OTP, verification, password
	// reset, email change); nil = mails are dropped, with a warning.
	Mail mail.Sender
	// OAuth2 exchanges OAuth2 codes for users (auth-with-oauth2); nil =
	// OAuth2 sign-in answers as a provider failure. httpapi/app passes the
	// real client of strongbox/authn/oauth2.
	OAuth2 oauth2.Exchanger
	// Rand is the randomness of the OAuth2 state and PKCE values
	// auth-methods hands out, safe for concurrent use; nil = crypto/rand.
	Rand io.Reader
	// RealtimeIdle ends a realtime stream that has sent no event for that
	// long; 0 = DefaultRealtimeIdle.
	RealtimeIdle time.Duration
	// MaxRealtime bounds the realtime streams open at once; 0 = a quarter
	// of MaxConns(), the default connection cap, since each stream holds
	// a connection for as long as it is open.
	MaxRealtime int
	// MaxRealtimePerClient bounds the streams of one client address (an
	// IPv6 /64) at once; 0 = a 64th of MaxRealtime.
	MaxRealtimePerClient int
	// MaxRealtimePerGroup bounds the streams of one group of client
	// addresses (an IPv4 /24, an IPv6 /48) at once; 0 = a 16th of
	// MaxRealtime, and never less than MaxRealtimePerClient.
	MaxRealtimePerGroup int
	// MailPerClient and MailPerTarget limit the mail-sending requests
	// (request-otp, request-password-reset, request-verification,
	// request-email-change) per client address and per target address; a
	// zero MaxRequests = DefaultMailPerClient, DefaultMailPerTarget.
	MailPerClient, MailPerTarget ratelimit.Rule
	// Metrics learns how each request ended (observe.go); nil = nobody.
	Metrics Observer
	// LogExport reports the state of the OTLP log export, false when it
	// is off (GET /api/logs/export); nil = off.
	LogExport func() (otlp.State, bool)
	// BackupCheck runs the check of the stored archives (GET and POST
	// /api/backups/check); nil = those routes answer 400.
	BackupCheck BackupCheck
	// BackupStream reports the state of the continuous backup (GET
	// /api/backups/stream); nil = off.
	BackupStream func() StreamState
}

// Restarter restarts the running server in place: it waits for the
// requests in flight, closes every store, runs step over the data dir while
// nothing is open (a restore swaps the stores' files there) and reopens the
// stores. It is all a handler knows of the process it runs in; see
// strongbox/httpapi/app for the semantics. Restart waits for every request
// in flight, so a handler answers first and then restarts from a goroutine
// with a context of its own, not one derived from the request's.
type Restarter interface {
	Restart(ctx context.Context, step func(dir string) error) error
}

// Server is the API. It is an http.Handler.
type Server struct {
	auth        *authn.Store
	logs        *logstore.Store
	settings    *settings.Store
	log         *slog.Logger
	now         func() time.Time
	jsonLimits  Limits // JSON routes
	authLimits  Limits // auth actions
	budget      *budget
	mux         *http.ServeMux
	handler     http.Handler
	login       *ratelimit.Guard        // the password-login throttle
	otpAttempts *ratelimit.Limiter      // the OTP attempt limit (otpAttemptRule)
	mailLimits  mailLimits              // the mail-sending requests' limits (maillimit.go)
	applied     atomic.Pointer[applied] // the server's part of the settings (ApplySettings)
	restarter   Restarter
	mail        mail.Sender               // nil = mails are dropped (see Config.Mail)
	oauth2      oauth2.Exchanger          // nil: OAuth2 sign-in fails (see Config.OAuth2)
	rand        io.Reader                 // nil = crypto/rand (see Config.Rand)
	backups     Backups                   // nil: the backups folder cannot be loaded
	realtime    *realtime                 // the realtime streams (realtime.go)
	logExport   func() (otlp.State, bool) // nil: no log export (see Config.LogExport)
	stream      func() StreamState        // nil: no continuous backup (see Config.BackupStream)
	metrics     Observer                  // nil: none (Config.Metrics)
	backupCheck BackupCheck               // nil: none (Config.BackupCheck)

	storageLogMu sync.Mutex
	storageLog   logEvery               // requests refused for a full or failing disk
	storageSeen  atomic.Pointer[string] // the degraded stores last seen (noteStorage); nil: none yet

	privateLogMu sync.Mutex
	privateLog   logEvery // OAuth2 sign-ins refused for a provider on a private address
}

// NewServer builds the API with its routes and middleware.
func NewServer(cfg Config) *Server {
	s := &Server{
		auth:     cfg.Auth,
		logs:     cfg.Logs,
		settings: cfg.Settings,
		log:      cfg.Logger,
		now:      cfg.Now,
		mux:      http.NewServeMux(),
	}
	s.restarter = cfg.Restarter
	s.mail = cfg.Mail
	s.oauth2 = cfg.OAuth2
	s.rand = cfg.Rand
	s.backups = cfg.Backups
	s.metrics = cfg.Metrics
	s.logExport = cfg.LogExport
	s.backupCheck = cfg.BackupCheck
	s.stream = cfg.BackupStream
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.jsonLimits = Limits{
		Body:  orDefault(cfg.BodyLimit, DefaultBodyLimit),
		Read:  orDefault(cfg.ReadTimeout, DefaultReadTimeout),
		Write: orDefault(cfg.WriteTimeout, DefaultWriteTimeout),
	}
	s.authLimits = s.jsonLimits
	s.authLimits.Body = min(s.jsonLimits.Body, DefaultAuthBodyLimit)
	s.budget = newBudget(max(orDefault(cfg.BodyBudget, DefaultBodyBudget), s.jsonLimits.Body), s.jsonLimits.Body, s.log)
	policy := ratelimit.DefaultPolicy
	if cfg.LoginPolicy != nil {
		policy = *cfg.LoginPolicy
	}
	s.login = ratelimit.NewGuard(policy, s.now)
	s.otpAttempts = ratelimit.NewLimiter(ratelimit.DefaultMaxWindows, s.now)
	s.mailLimits = newMailLimits(cfg.MailPerClient, cfg.MailPerTarget, s.now)
	maxRT := cfg.MaxRealtime
	if maxRT <= 0 {
		maxRT = max(MaxConns()/realtimeShareOfConns, 1)
	}
	maxRTPer := cfg.MaxRealtimePerClient
	if maxRTPer <= 0 {
		maxRTPer = max(maxRT/64, 1)
	}
	maxRTGroup := cfg.MaxRealtimePerGroup
	if maxRTGroup <= 0 {
		maxRTGroup = max(maxRT/16, maxRTPer)
	}
	s.realtime = newRealtime(orDefault(cfg.RealtimeIdle, DefaultRealtimeIdle), maxRT, maxRTPer, maxRTGroup)
	// The settings as they are; the caller applies every change.
	s.ApplySettings(cfg.Settings.Get())
	s.addRoutes()
	// Rate limits run once the caller is known (superusers are exempt) and
	// before any body is read; body limits and deadlines are per route.
	// The query string is checked once the caller is known too, for the
	// request log to name them.
	s.handler = s.withState(s.recoverPanics(s.securityHeaders(s.canonicalPath(s.loadAuth(s.checkQuery(s.rateLimit(s.mux)))))))
	return s
}

func orDefault[T int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// handler is an HTTP handler that returns its failure instead of writing it.
type handler func(w http.ResponseWriter, r *http.Request) error

// handle adapts h to http.Handler, rendering a returned error as the
// PocketBase error envelope.
func (s *Server) handle(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.renderError(w, r, err)
		}
	})
}

// state is what the middleware learns about a request as it runs: who is
// calling, and how it ended. One is allocated per request.
type state struct {
	start   time.Time         // by the injected clock, for the request log
	ip      string            // the client's address, through the trusted proxy headers (clientIP)
	client  string            // its key in the rate limits and budgets (ratelimit.ClientKey of ip)
	arrived time.Time         // by the wall clock, for the deadlines
	limits  Limits            // of the route, once the mux has chosen it
	forms   []*multipart.Form // parsed multipart forms, removed at the end
	query   url.Values        // the query parameters (checkQuery)
	col     *authn.Collection // auth collection of the caller, nil for guests
	rec     *authn.Record     // authenticated record, nil for guests
	token   string            // the raw auth token that authenticated the request
	claims  *authn.Claims     // its verified claims
	status  int               // status written
	wrote   bool              // a status has been written
	err     *Error            // the error rendered, if any
	quiet   bool              // a success is not request-logged (the logs routes)
	route   string            // the pattern of the route the mux chose, "" before
}

type stateKey struct{}

func stateOf(r *http.Request) *state {
	st, _ := r.Context().Value(stateKey{}).(*state)
	return st
}

// isSuperuser reports whether the request is authenticated as a superuser.
func (st *state) isSuperuser() bool { return st.col != nil && st.col.IsSuperusers() }

// recorder captures the status of a response.
type recorder struct {
	http.ResponseWriter
	st *state
}

func (w *recorder) WriteHeader(code int) {
	if !w.st.wrote {
		w.st.wrote, w.st.status = true, code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if !w.st.wrote {
		w.st.wrote, w.st.status = true, http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withState attaches the per-request state and the status recorder, and
// logs the request once it has been answered. It is the outermost
// middleware, so it also sets the JSON routes' deadlines for the requests
// no route handles (a CORS preflight, a redirect, an unread body), and
// removes the temporary files of any multipart form parsed on the way,
// whatever the outcome: net/http removes only those of the request it
// passed in, not of the copies made by WithContext.
func (s *Server) withState(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := s.applied.Load().clientIP(r, remoteIP(r))
		st := &state{start: s.now(), arrived: time.Now(), limits: s.jsonLimits, ip: ip, client: ratelimit.ClientKey(ip)}
		setDeadlines(w, r, st)
		defer st.removeForms()
		r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
		next.ServeHTTP(&recorder{ResponseWriter: w, st: st}, r)
		s.logRequest(r, st)
		if s.metrics != nil {
			s.observe(r, st)
		}
	})
}

// removeForms removes the temporary files of the request's multipart
// forms.
func (st *state) removeForms() {
	for _, f := range st.forms {
		f.RemoveAll()
	}
	st.forms = nil
}

// recoverPanics turns a panicking handler into a logged 500 envelope.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			s.renderError(w, r, newError(http.StatusInternalServerError, msgBadRequest, nil))
		}()
		next.ServeHTTP(w, r)
	})
}

// securityHeaderValues are the headers PocketBase sends on every response.
var securityHeaderValues = [][2]string{
	{"X-XSS-Protection", "1; mode=block"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "SAMEORIGIN"},
}

// securityHeaders adds the headers PocketBase sends on every response, and
// answers CORS as PocketBase's default configuration does (any origin), so
// that browser apps using the official SDK work.
func (s *Server) securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, kv := range securityHeaderValues {
			h.Set(kv[0], kv[1])
		}
		h.Add("Vary", "Origin")
		if r.Header.Get("Origin") != "" {
			h.Set("Access-Control-Allow-Origin", "*")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Add("Vary", "Access-Control-Request-Method")
				h.Add("Vary", "Access-Control-Request-Headers")
				h.Set("Access-Control-Allow-Methods", "GET,HEAD,PUT,PATCH,POST,DELETE")
				if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
					h.Set("Access-Control-Allow-Headers", req)
				}
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// loadAuth authenticates the request from its Authorization header: a raw
// token or "Bearer <token>" (exact case). Only auth tokens count. A missing
// or invalid token leaves the request a guest's, as PocketBase does;
// routes that need auth refuse it themselves.
func (s *Server) loadAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "); tok != "" {
			if c, rec, claims, err := s.auth.VerifyToken(tok, authn.TokenAuth); err == nil {
				st := stateOf(r)
				st.col, st.rec, st.token, st.claims = c, rec, tok, claims
			}
		}
		next.ServeHTTP(w, r)
	})
}

// requireSuperuser refuses guests (401) and non-superusers (403 with msg).
func requireSuperuser(r *http.Request, msg string) error {
	st := stateOf(r)
	if st.rec == nil {
		return errUnauthorized()
	}
	if !st.isSuperuser() {
		return errForbidden(msg)
	}
	return nil
}

// requireAuth refuses guests.
func requireAuth(r *http.Request) error {
	if stateOf(r).rec == nil {
		return errUnauthorized()
	}
	return nil
}
