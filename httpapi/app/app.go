package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	strongmail "strongbox/authn/mail"
	"strongbox/authn/oauth2"
	"strongbox/backup"
	"strongbox/httpapi/api"
	"strongbox/httpapi/ratelimit"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
	"strongbox/logstore/journal"
	"strongbox/logstore/otlp"
)

// Defaults of Config.
const (
	// DefaultShutdownTimeout is how long a graceful stop waits for the
	// requests in flight.
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultRestartHold is how long a request that arrives during a
	// restart waits for it to end before it is answered 503.
	DefaultRestartHold = 10 * time.Second
)

var (
	// ErrNotRunning is returned by Restart before Run serves or once it
	// has begun to stop.
	ErrNotRunning = errors.New("app: the server is not running")
	// ErrInRequest is returned by Restart when its context derives from a
	// request's. Restart waits for every request in flight: called by a
	// handler with its request's context, it would wait for itself.
	ErrInRequest = errors.New("app: restart with a request's context: answer the request, then restart with a context of its own")
)

// Config configures a Server.
type Config struct {
	Options // the data dir and its stores

	// Addr is the TCP address to listen on, such as 127.0.0.1:8090; port 0
	// picks a free one (OnReady tells which). The image a restore execs
	// adopts the socket the old one listened on instead (handover.go).
	Addr string
	// SuperuserEmail and SuperuserPassword are the first superuser of a
	// new data dir: DefaultSuperuserEmail and a random password (reported
	// in Ready.Login) when empty.
	SuperuserEmail, SuperuserPassword string
	// OnReady, if set, is called once when the server is bound and
	// serving, on Run's goroutine: Run does not watch its context until
	// OnReady returns.
	OnReady func(Ready)
	// ShutdownTimeout bounds a graceful stop; 0 = DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// RestartHold bounds how long a request waits for a restart to end;
	// 0 = DefaultRestartHold.
	RestartHold time.Duration
	// Exec replaces the process image after a restore (see restore.go);
	// nil = syscall.Exec. Tests inject one: returning nil stands for an
	// exec that succeeded (Run then returns as if the process had ended,
	// and the descriptor handed over in envv stays open, as across a real
	// exec, for a second Run to adopt).
	Exec func(path string, argv, envv []string) error
	// NoExec, if set, says why this process must not re-exec (it serves
	// inside another program, such as a test): restore refuses with it.
	NoExec error

	// MemoryLimit, set by a process that runs this one server, sizes the
	// Go runtime's memory limit from the log store's index (memlimit.go).
	MemoryLimit bool

	// Version is the strongbox version, recorded in the manifest of every
	// archive the server creates.
	Version string
	// MaxUpload is the largest archive an upload may send; 0 =
	// DefaultMaxUpload.
	MaxUpload int64
	// BackupLimits bound what verifying, extracting and uploading an
	// archive accept; zero fields take backup.DefaultLimits.
	BackupLimits backup.Limits

	// MailDrain bounds how long a graceful stop delivers the mails still
	// queued; 0 = DefaultMailDrain.
	MailDrain time.Duration
	// MailTLSConfig, if set, is the TLS configuration of every SMTP
	// exchange (tests trust their sink's certificate with it); nil = the
	// system roots.
	MailTLSConfig *tls.Config

	// MetricsAddr, if set, is the TCP address /metrics is served on, in
	// the Prometheus text format (metrics.go): a listener of its own,
	// never the API's. Empty: no metrics, and nothing recorded.
	MetricsAddr string

	// OAuth2AllowPrivate lets the OAuth2 provider URLs a superuser
	// configures reach loopback, link-local and private addresses (a
	// provider on the server's own network, or a test's on 127.0.0.1);
	// false refuses them (oauth2.Options.AllowPrivate).
	OAuth2AllowPrivate bool

	// Export, if set, ships every stored log to an OTLP/HTTP receiver
	// (package strongbox/logstore/otlp; export.go); nil = no export.
	Export *otlp.Config

	// LoginPolicy is the password-login throttle; nil =
	// ratelimit.DefaultPolicy. Tests of the suite's checks space a slowed
	// identity's checks less than the default second.
	LoginPolicy *ratelimit.Policy
}

// Ready is what OnReady learns once the server serves.
type Ready struct {
	Addr    net.Addr // the bound address
	Login   Login    // how to log in, and whether the superuser was just created
	Metrics net.Addr // the metrics listener's bound address; nil without Config.MetricsAddr
}

// Server owns a running strongbox over a data dir: its lock, its stores,
// the listener and the http.Server. Run serves until its context ends;
// Restart closes the stores and reopens them in between (see the package
// documentation).
type Server struct {
	cfg  Config
	log  *slog.Logger // the server's events: stderr (Config.Logger) and events
	gate *gate
	wrap func(http.Handler) http.Handler // tests: wraps each API built

	// life is a one-slot semaphore held while the server starts, restarts
	// or stops; it guards the fields below.
	life     chan struct{}
	state    int     // notStarted, running or stopped
	stores   *Stores // the open stores; nil after a failed reopen
	unfollow func()  // ends the subscriptions to the settings of stores (subscribeSettings)
	downErr  error   // why stores is nil
	// notRestored is why the data of a restore did not open at start, so
	// that the start rolled it back (openRecovered); Run logs it once the
	// old data serves.
	notRestored error
	serving     serving // the http.Server and listener, for a restore to close (restore.go)

	// capMu is held for reading by a backup while it captures the stores,
	// and for writing while stores is closed or replaced: a capture never
	// sees closed stores. A writer holds life too.
	capMu sync.RWMutex

	// Backups. bdir and block live as long as the process serves,
	// across restarts; auto runs the auto-backup schedule.
	bdir   *backup.Dir
	bstore atomic.Pointer[archiveStore] // where the archives go now (s3.go)
	block  backup.Lock
	auto   *autoBackups
	check  *archiveCheck    // the check of the stored archives (check.go)
	now    func() time.Time // the clock of backups and of their schedule

	// Mail: the queue lives as long as the process serves; its transport
	// follows the settings of the open stores (mail.go).
	mail          *strongmail.Queue
	mailTransport atomic.Pointer[strongmail.Transport]

	// providers talks to the OAuth2 providers for every API the server
	// builds: one client, so that restarts keep its connections and the
	// providers' cached signing keys (30 s per exchange, 1 MiB per
	// answer).
	providers *oauth2.Client

	// events is the log store the server's events go to besides stderr
	// (logstore.Handler): the open store, nil while none is open.
	events atomic.Pointer[logstore.Store]

	// metrics serves /metrics (nil without Config.MetricsAddr); apiServer
	// is the API serving now, bstats the outcome of backups (metrics.go).
	metrics   *serverMetrics
	apiServer atomic.Pointer[api.Server]
	bstats    backup.Stats
	// The log export (export.go), while Config.Export is set: it lives
	// as long as the process serves, across restarts. appName is the
	// settings' application name, its default service.name.
	exporter     *otlp.Exporter
	stopExporter func()
	appName      atomic.Pointer[string]

	// stream is the continuous backup to the bucket (stream.go).
	stream streamer
}

const (
	notStarted = iota
	running
	stopped
)

// New returns a Server for cfg; Run starts it.
func New(cfg Config) *Server {
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.RestartHold <= 0 {
		cfg.RestartHold = DefaultRestartHold
	}
	base := cfg.Logger
	if base == nil {
		base = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.MailDrain <= 0 {
		cfg.MailDrain = DefaultMailDrain
	}
	cfg.BackupLimits = withStoresCheck(cfg.BackupLimits.WithDefaults(), cfg.Dir)
	s := &Server{cfg: cfg, gate: newGate(cfg.RestartHold), life: make(chan struct{}, 1), now: time.Now,
		providers: oauth2.NewClient(oauth2.Options{AllowPrivate: cfg.OAuth2AllowPrivate})}
	// The server's events go to stderr and, while the stores are open, to
	// the log store, as PocketBase keeps its own; so do the warnings of
	// the auth and settings stores. The log store's own warnings go to
	// stderr only: it logs a full queue while it holds the queue.
	s.log = slog.New(logstore.NewHandler(base.Handler(), s.events.Load))
	s.cfg.eventLog = s.log
	s.auto = newAutoBackups(s)
	s.check = newArchiveCheck(s)
	s.metrics = newServerMetrics(s, time.Now())
	return s
}

// Run binds Addr (or adopts the socket a restore handed over,
// handover.go), locks the data dir, recovers a restore that was
// interrupted or awaits confirmation (see restore.go), opens its stores,
// creates the first superuser of a new data dir, calls OnReady, confirms a
// pending restore (deletes the old data) and serves until ctx ends. Then
// it stops gracefully: it waits for the requests in flight (and for a
// restart under way), closes the stores and releases the dir. It returns
// nil after a graceful stop, and an error if the server could not start,
// could not serve, or stopped while its stores could not be reopened.
func (s *Server) Run(ctx context.Context) error {
	s.life <- struct{}{}
	srv, ln, lock, login, pending, err := s.start(ctx)
	<-s.life
	if err != nil {
		return err
	}
	s.newExport()
	if s.metrics != nil {
		s.metrics.serve()
		defer s.metrics.close()
	}
	if s.cfg.MemoryLimit {
		done := make(chan struct{})
		defer close(done)
		go s.followMemory(done)
	}
	var serveErr error
	for first := true; ; first = false {
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(ln) }()
		if first {
			if s.cfg.OnReady != nil {
				s.cfg.OnReady(Ready{Addr: ln.Addr(), Login: login, Metrics: s.metrics.addr()})
			}
			s.reportNotRestored(pending.Key)
			if pending.Pending {
				s.life <- struct{}{} // no restart or restore meanwhile
				s.confirmRestore(pending)
				<-s.life
			}
			s.auto.start()
			s.check.start()
			s.startExport()
		}
		select {
		case serveErr = <-errc:
		case <-ctx.Done():
		}
		s.life <- struct{}{} // wait for a restart under way
		if next := s.serving.resume; next != nil {
			// A restore closed the server to re-exec, the exec failed, and
			// it serves again on the old data: go on serving.
			srv, ln, serveErr, s.serving.resume = next.srv, next.ln, nil, nil
			<-s.life
			continue
		}
		break
	}
	// An automatic backup under way is cancelled; one that cannot start
	// any more.
	s.auto.stop()
	s.check.stop() // a check under way is cancelled
	s.stopExport() // the cursor stays where the receiver acknowledged
	defer func() { <-s.life }()
	s.state = stopped
	if s.serving.execed {
		// Only a test's Exec returns: the process "ended" there.
		return errors.Join(s.stopMail(), s.bdir.Close(), lock.Unlock())
	}
	var errs []error
	if serveErr != nil {
		errs = append(errs, serveErr)
		srv.Close()
	} else {
		s.log.Info("server stopping", "version", s.cfg.Version)
		s.log.Info("shutting down: waiting for in-flight requests")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			errs = append(errs, err)
			srv.Close()
		}
	}
	// The mails the last requests queued go out (for a bounded time)
	// before the stores close; the transport stays the one last seen.
	if err := s.stopMail(); err != nil {
		s.log.Error("shutting down: mail queue", "err", err)
	}
	if s.stores != nil {
		errs = append(errs, s.closeStores())
	} else {
		errs = append(errs, fmt.Errorf("app: stopped with the data dir closed: %w", s.downErr))
	}
	errs = append(errs, s.bdir.Close(), lock.Unlock())
	return errors.Join(errs...)
}

// start binds, opens the stores and creates the first superuser: all
// that comes before serving. The caller holds life.
func (s *Server) start(ctx context.Context) (_ *http.Server, _ net.Listener, _ *journal.DirLock, _ Login, pending backup.Recovery, err error) {
	if s.state != notStarted {
		return nil, nil, nil, Login{}, pending, errors.New("app: Run called twice")
	}
	s.state = stopped // a failed start is final too
	// The socket a restore handed over, if this image is the one it
	// execed (handover.go); first of all, so that the variables are gone
	// from the environment whatever fails next. Connections wait in its
	// backlog while the stores open.
	//
	// Bind before anything touches the data dir: a start that cannot bind
	// (a bad address, a port in use) creates nothing, neither the dir nor
	// the first superuser, whose password nobody would see.
	ln := adoptListener(s.log)
	if ln == nil {
		if ln, err = net.Listen("tcp", s.cfg.Addr); err != nil {
			return nil, nil, nil, Login{}, pending, err
		}
	}
	defer func() {
		if err != nil {
			ln.Close()
		}
	}()
	if s.metrics != nil {
		if err := s.metrics.listen(s.cfg.MetricsAddr); err != nil {
			return nil, nil, nil, Login{}, pending, err
		}
		defer func() {
			if err != nil {
				s.metrics.close()
			}
		}()
	}
	lock, err := LockDir(s.cfg.Dir)
	if err != nil {
		return nil, nil, nil, Login{}, pending, err
	}
	// The backups folder, before anything runs that could create a
	// backup: CleanTemp removes the temporary files of a crashed create.
	bdir, err := openBackups(s.cfg.Dir)
	if err != nil {
		return nil, nil, nil, Login{}, pending, errors.Join(err, lock.Unlock())
	}
	st, pending, notRestored, err := openRecovered(s.cfg.Options, true, s.log)
	if err != nil {
		return nil, nil, nil, Login{}, pending, errors.Join(err, bdir.Close(), lock.Unlock())
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, st.Close(), bdir.Close(), lock.Unlock())
		}
	}()
	login, err := ensureSuperuser(ctx, st.Auth, s.cfg.SuperuserEmail, s.cfg.SuperuserPassword)
	if err != nil {
		return nil, nil, nil, Login{}, pending, err
	}
	s.bdir, s.notRestored = bdir, notRestored
	s.startMail()
	s.state = running
	s.gate.open(s.useStores(st))
	srv, capped := s.serving.set(s.gate, ln, s.log)
	s.log.Info("server started", "version", s.cfg.Version, "addr", ln.Addr().String())
	return srv, capped, lock, login, pending, nil
}

// useStores makes st the open stores, builds the HTTP API over them and
// subscribes every subsystem to their settings (subscribeSettings) until
// closeStores. It returns the API, for the gate. The caller holds life.
func (s *Server) useStores(st *Stores) http.Handler {
	srv := api.NewServer(api.Config{
		Auth: st.Auth, Logs: st.Logs, Settings: st.Settings, Logger: s.log, Restarter: s,
		Backups: backups{s}, Mail: s.mail, OAuth2: s.providers, Metrics: s.metrics.observer(), LogExport: s.ExportState,
		BackupCheck:  s.check,
		BackupStream: s.StreamState,
		LoginPolicy:  s.cfg.LoginPolicy,
	})
	s.apiServer.Store(srv)
	s.unfollow = s.subscribeSettings(st, srv)
	s.capMu.Lock()
	s.stores = st
	s.capMu.Unlock()
	s.events.Store(st.Logs)
	var h http.Handler = srv
	if s.wrap != nil {
		h = s.wrap(h)
	}
	return h
}

// subscribeSettings is the one place that subscribes to the settings of
// st, and the function it returns the one that ends those subscriptions
// (closeStores calls it). Each subsystem applies its own part of the
// settings, at once and then on every committed change, before the change
// is acknowledged (settings.Store.Subscribe): the log store its retention
// and minimum level (logSettings), the storage of archives backups.s3
// (followBackups), the continuous backup backups.continuous
// (followStream), the auto-backup schedule settings.backups
// (autoBackups.reload), the check's schedule checkCron
// (archiveCheck.reload), the mail queue its transport (followMail), the
// log export the application's name (followAppName), and the API the
// request log's options, the trusted proxy and the rate limits
// (api.Server.ApplySettings).
func (s *Server) subscribeSettings(st *Stores, srv *api.Server) (unsubscribe func()) {
	var subs []func(settings.Settings)
	if st.Logs != nil {
		subs = append(subs, logSettings(st.Logs, s.log))
	}
	subs = append(subs, s.followBackups, s.followStream, s.auto.reload, s.check.reload, s.followMail, s.followAppName, srv.ApplySettings)
	cancels := make([]func(), 0, len(subs))
	for _, fn := range subs {
		cancels = append(cancels, st.Settings.Subscribe(fn))
	}
	return func() {
		for _, cancel := range cancels {
			cancel()
		}
	}
}

// closeStores ends the subscriptions to the settings of the open stores
// and closes them, if any. The caller holds life and has closed the gate
// (or stopped serving).
func (s *Server) closeStores() error {
	// The events logged from now on go to stderr only: a closed store
	// would drop them.
	s.events.Store(nil)
	s.apiServer.Store(nil)
	if s.unfollow != nil {
		s.unfollow()
		s.unfollow = nil
	}
	s.stopStream()
	s.capMu.Lock()
	defer s.capMu.Unlock()
	if s.stores == nil {
		return nil
	}
	err := s.stores.Close()
	s.stores = nil
	return err
}

// Restart closes every store, runs step (if not nil) over the data dir
// while nothing is open, and reopens the stores, in this process and on
// the same listener (see the package documentation for what clients see).
// It waits for the requests in flight for as long as ctx allows; if ctx
// ends first, nothing has changed and it returns the context's error.
//
// It returns the step's error, after reopening the stores on what the step
// left on disk; undoing a failed step is the caller's job (a second Restart
// can do it). If the stores cannot be reopened, the server answers 503
// until a later Restart reopens them, and the error says so.
func (s *Server) Restart(ctx context.Context, step func(dir string) error) error {
	release, err := s.takeLife(ctx, "restart")
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	if err := s.gate.close(ctx); err != nil {
		return fmt.Errorf("app: restart: waiting for the requests in flight: %w", err)
	}
	// No request is inside the API, and new ones wait at the gate.
	if err := s.closeStores(); err != nil {
		// A store may not have been flushed: the step does not run over
		// it, and the stores reopen on what is on disk.
		return s.reopen(start, fmt.Errorf("app: restart: close the stores: %w", err))
	}
	return s.reopen(start, runStep(step, s.cfg.Dir))
}

// runStep runs step over dir, turning a panic into an error: the stores
// are closed, and the server must still reopen them.
func runStep(step func(dir string) error, dir string) (err error) {
	if step == nil {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("app: restart: step panicked: %v", v)
		}
	}()
	if err := step(dir); err != nil {
		return fmt.Errorf("app: restart: step: %w", err)
	}
	return nil
}

// reopen opens the stores from disk and lets the held requests through to
// a new API over them, or leaves the gate down. It returns prior joined
// with a reopen failure. The caller holds life.
func (s *Server) reopen(start time.Time, prior error) error {
	st, err := openStores(s.cfg.Options, true)
	if err != nil {
		s.downErr = fmt.Errorf("app: reopen the stores of %s: %w", s.cfg.Dir, err)
		s.gate.fail()
		s.log.Error("restart failed: answering 503 until a restart reopens the stores", "dir", s.cfg.Dir, "err", s.downErr, "stepErr", prior)
		return errors.Join(prior, s.downErr)
	}
	s.downErr = nil
	s.gate.open(s.useStores(st))
	if prior != nil {
		s.log.Warn("restarted on the data as the failed step left it", "dir", s.cfg.Dir, "took", time.Since(start), "err", prior)
	} else {
		s.log.Info("restarted", "dir", s.cfg.Dir, "took", time.Since(start))
	}
	return prior
}

// takeLife takes life for a restart or a restore named op, while the
// server runs: never with a request's context (the request would wait for
// itself), and only as long as ctx allows.
func (s *Server) takeLife(ctx context.Context, op string) (release func(), err error) {
	if s.gate.fromRequest(ctx) {
		return nil, ErrInRequest
	}
	select {
	case s.life <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("app: %s: %w", op, context.Cause(ctx))
	}
	if s.state != running {
		<-s.life
		return nil, ErrNotRunning
	}
	return func() { <-s.life }, nil
}
