// Command strongbox serves an application backend's backups, request logs
// and record authentication over an HTTP JSON API compatible with
// PocketBase v0.31, and runs the black-box conformance suite against any
// such server.
//
//	strongbox serve [--http 127.0.0.1:8090] [--dir ./sb_data]
//	strongbox superuser upsert|create|update|delete EMAIL [PASSWORD] [--dir ./sb_data]
//	strongbox conformance [--url URL --email E --password P] [--only PREFIX]
//	strongbox logs seed [--n 1000000] [--dir ./sb_data]
//	strongbox version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"strongbox/authn"
	"strongbox/conformance"
	"strongbox/httpapi"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
	"strongbox/logstore/journal"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	self = invocation(os.Args[0])
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "strongbox:", err)
		os.Exit(1)
	}
}

// The usage line of each command; usage is all of them.
const (
	serveUsage       = "strongbox serve [--http 127.0.0.1:8090] [--dir ./sb_data]"
	superuserUsage   = "strongbox superuser upsert|create|update|delete EMAIL [PASSWORD] [--dir ./sb_data]"
	conformanceUsage = "strongbox conformance [--url URL --email EMAIL --password PASSWORD] [--only ID-PREFIX]"
	logsUsage        = "strongbox logs seed [--n 1000000] [--dir ./sb_data]"
	versionUsage     = "strongbox version"

	usage = "usage:\n  " + serveUsage + "\n  " + superuserUsage + "\n  " + conformanceUsage + "\n  " + logsUsage + "\n  " + versionUsage
)

// self is how the user started this program, for the commands it prints:
// "go run ." when run through go run, else the path it was started by.
var self = "strongbox"

// named returns usage text with the program named as the user started it.
func named(text string) string {
	return strings.ReplaceAll(text, "strongbox ", self+" ")
}

// invocation derives self from the program's argv[0]: go run builds the
// binary as .../go-build…/exe/NAME in the temporary directory.
func invocation(arg0 string) string {
	p := filepath.ToSlash(arg0)
	if strings.Contains(p, "/go-build") && strings.Contains(p, "/exe/") {
		return "go run ."
	}
	if arg0 == "" {
		return "strongbox"
	}
	return arg0
}

// parseArgs parses a command's flags, which may come before, between or
// after its positional arguments, and returns the positional arguments:
// at least min and at most max of them (max < 0: any number). On --help or
// -h it prints the command's usage and flags to stdout and reports done, so
// that the command returns nil (exit 0). A bad flag or a wrong number of
// arguments is an error that carries the usage.
func parseArgs(fs *flag.FlagSet, args []string, cmdUsage string, min, max int, stdout io.Writer) (pos []string, done bool, err error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	usageErr := func(format string, a ...any) error {
		return fmt.Errorf(format+"\nusage: %s", append(a, named(cmdUsage))...)
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(stdout, "usage: %s\n", named(cmdUsage))
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return nil, true, nil
			}
			return nil, false, usageErr("%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case max >= 0 && len(pos) > max:
		return nil, false, usageErr("unexpected argument %q", pos[max])
	case len(pos) < min:
		return nil, false, usageErr("missing arguments")
	}
	return pos, false, nil
}

// run is the whole program: main only wires it to the process. Tests call
// it directly, with their own arguments, environment and output.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("no command\n" + named(usage))
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], getenv, stdout, stderr)
	case "superuser":
		return cmdSuperuser(ctx, args[1:], getenv, stdout)
	case "conformance":
		return cmdConformance(ctx, args[1:], getenv, stdout, stderr)
	case "logs":
		return cmdLogs(args[1:], getenv, stdout, stderr)
	case "version", "--version", "-v":
		if _, done, err := parseArgs(flag.NewFlagSet("version", flag.ContinueOnError), args[1:], versionUsage, 0, 0, stdout); done || err != nil {
			return err
		}
		fmt.Fprintln(stdout, "strongbox", version)
		return nil
	case "help", "--help", "-h":
		fmt.Fprintln(stdout, named(usage))
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], named(usage))
}

// config is the configuration of a data dir's stores.
type config struct {
	dir          string
	bcryptCost   int
	bcryptSlots  int   // concurrent bcrypt computations; 0 = one per CPU
	logsMaxBytes int64 // cap on stored request logs; 0 = logstore's default
	err          error // a malformed environment value
}

func baseConfig(fs *flag.FlagSet, getenv func(string) string) *config {
	c := &config{bcryptCost: authn.DefaultCost}
	fs.StringVar(&c.dir, "dir", envOr(getenv, "STRONGBOX_DIR", "./sb_data"), "data directory (env STRONGBOX_DIR)")
	if v := getenv("STRONGBOX_BCRYPT_COST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			c.err = fmt.Errorf("STRONGBOX_BCRYPT_COST=%q is not a number", v)
		}
		c.bcryptCost = n
	}
	if v := getenv("STRONGBOX_LOGS_MAX_MB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 1<<30 {
			c.err = fmt.Errorf("STRONGBOX_LOGS_MAX_MB=%q is not a size in MiB", v)
		}
		c.logsMaxBytes = n << 20
	}
	return c
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

// stores are the open stores of a data dir.
type stores struct {
	lock     *journal.DirLock
	auth     *authn.Store
	settings *settings.Store
	logs     *logstore.Store // only opened by serve
	closed   bool
}

// lockDir takes the data dir's lock, explaining a refusal.
func lockDir(dir string) (*journal.DirLock, error) {
	lock, err := journal.LockDir(dir)
	if errors.Is(err, journal.ErrLocked) {
		return nil, fmt.Errorf("data dir %s is in use by a running strongbox server: %w; stop it first (or use the API while it runs)", dir, err)
	}
	return lock, err
}

// openStores locks the data dir and opens its auth and settings stores,
// and the log store too when withLogs is set.
func openStores(cfg *config, logger *slog.Logger, withLogs bool) (_ *stores, err error) {
	if cfg.err != nil {
		return nil, cfg.err
	}
	lock, err := lockDir(cfg.dir)
	if err != nil {
		return nil, err
	}
	st := &stores{lock: lock}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	hasher, err := authn.NewHasher(cfg.bcryptCost, cfg.bcryptSlots)
	if err != nil {
		return nil, err
	}
	if st.auth, err = authn.Open(filepath.Join(cfg.dir, "auth.journal"), authn.Options{Hasher: hasher, Logger: logger}); err != nil {
		return nil, err
	}
	if st.settings, err = settings.Open(filepath.Join(cfg.dir, "settings.journal")); err != nil {
		return nil, err
	}
	if withLogs {
		ls := st.settings.Get().Logs
		st.logs, err = logstore.Open(filepath.Join(cfg.dir, "logs"), logstore.Options{
			Logger: logger, MaxDays: ls.MaxDays, MinLevel: ls.MinLevel, MaxBytes: cfg.logsMaxBytes,
		})
		if err != nil {
			return nil, err
		}
	}
	return st, nil
}

// Close flushes and closes every store, then releases the data dir. It may
// be called more than once.
func (s *stores) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.logs != nil {
		errs = append(errs, s.logs.Close())
	}
	if s.settings != nil {
		errs = append(errs, s.settings.Close())
	}
	if s.auth != nil {
		errs = append(errs, s.auth.Close())
	}
	errs = append(errs, s.lock.Unlock())
	return errors.Join(errs...)
}

func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg := baseConfig(fs, getenv)
	addr := fs.String("http", envOr(getenv, "STRONGBOX_HTTP", "127.0.0.1:8090"), "address to listen on (env STRONGBOX_HTTP)")
	if _, done, err := parseArgs(fs, args, serveUsage, 0, 0, stdout); done || err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	cfg.bcryptSlots = reserveScheduler(getenv)
	st, err := openStores(cfg, logger, true)
	if err != nil {
		return err
	}
	defer st.Close()

	// Bind first: the first superuser is created, and its credentials
	// printed, only once the server can be reached, so that a start that
	// fails (a bad --http) leaves no account whose password nobody saw.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	login, err := ensureSuperuser(ctx, st.auth, getenv)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	api := httpapi.NewServer(httpapi.Config{Auth: st.auth, Logs: st.logs, Settings: st.settings, Logger: logger})
	srv, ln := httpapi.NewHTTPServer(api, ln, httpapi.HTTPConfig{Logger: logger})
	printLogin(stdout, base, cfg.dir, login)
	fmt.Fprintf(stdout, "strongbox %s listening on %s (data dir %s)\n", version, base, cfg.dir)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: waiting for in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	return st.Close()
}

// reserveScheduler gives Go's scheduler two slots (Ps) more than there are
// CPUs, unless the user set GOMAXPROCS, and returns the CPU count: the
// number of concurrent bcrypt computations. Logins then can never occupy
// every P, so cheap requests keep Ps of their own while bcrypt runs on all
// CPUs at a lower OS priority (see authn.Hasher). Two spare Ps rather than
// one: a P whose low-priority thread the kernel has set aside would stall
// the goroutines queued on it; with two, the other P runs them. Measured on
// 2 cores: /api/health p99 during a login flood 10-12 ms with one spare P,
// 5-6 ms with two, at the same login throughput. It changes the setting
// once per process.
func reserveScheduler(getenv func(string) string) int {
	schedOnce.Do(func() {
		cpus = runtime.GOMAXPROCS(0)
		if getenv("GOMAXPROCS") == "" {
			runtime.GOMAXPROCS(cpus + 2)
		}
	})
	return cpus
}

var (
	schedOnce sync.Once
	cpus      int
)

// loginInfo says how to log in as a superuser. Created is set when
// ensureSuperuser just created the account; Password only when it chose
// the password itself (one the operator set is never echoed back).
type loginInfo struct {
	Email, Password string
	Created         bool
}

// ensureSuperuser creates the first superuser of a new data dir, from
// STRONGBOX_SUPERUSER_EMAIL / STRONGBOX_SUPERUSER_PASSWORD or with a random
// password, so that a plain `strongbox serve` is usable at once.
func ensureSuperuser(ctx context.Context, auth *authn.Store, getenv func(string) string) (loginInfo, error) {
	su := auth.Superusers()
	if recs := auth.Records(su); len(recs) > 0 {
		return loginInfo{Email: recs[0].Email}, nil
	}
	email := envOr(getenv, "STRONGBOX_SUPERUSER_EMAIL", "admin@localhost")
	login := loginInfo{Email: email, Created: true}
	password := getenv("STRONGBOX_SUPERUSER_PASSWORD")
	if password == "" {
		p, err := authn.NewRandom(nil).Password(20)
		if err != nil {
			return loginInfo{}, err
		}
		password, login.Password = p, p
	}
	if _, err := auth.CreateSuperuser(ctx, email, password); err != nil {
		return loginInfo{}, fmt.Errorf("create the first superuser %s: %w", email, err)
	}
	return login, nil
}

func printLogin(w io.Writer, base, dir string, l loginInfo) {
	pw, reset := "PASSWORD", "Forgot the password? Stop the server and run"
	switch {
	case l.Password != "":
		fmt.Fprintf(w, "\nCreated the first superuser (shown only this once):\n  email:    %s\n  password: %s\n", l.Email, l.Password)
		pw, reset = l.Password, "Change the password with the server stopped"
	case l.Created:
		fmt.Fprintf(w, "\nCreated the first superuser %s with the password set in STRONGBOX_SUPERUSER_PASSWORD.\n", l.Email)
	}
	fmt.Fprintf(w, "\nLog in as %s:\n  curl -X POST %s/api/collections/_superusers/auth-with-password \\\n    -H 'Content-Type: application/json' -d '{\"identity\":\"%s\",\"password\":\"%s\"}'\n", l.Email, base, l.Email, pw)
	fmt.Fprintf(w, "%s: %s superuser update %s NEWPASSWORD --dir %s\n\n", reset, self, l.Email, dir)
}

func cmdSuperuser(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("superuser", flag.ContinueOnError)
	cfg := baseConfig(fs, getenv)
	pos, done, err := parseArgs(fs, args, superuserUsage, 2, 3, stdout)
	if done || err != nil {
		return err
	}
	action, email := pos[0], pos[1]
	password := ""
	if len(pos) > 2 {
		password = pos[2]
	}
	switch action {
	case "upsert", "create", "update":
		if password == "" {
			return errors.New("missing password argument\nusage: " + named(superuserUsage))
		}
	case "delete":
		if len(pos) > 2 {
			return fmt.Errorf("unexpected argument %q: delete takes no password\nusage: %s", pos[2], named(superuserUsage))
		}
	default:
		return fmt.Errorf("unknown superuser action %q (want upsert, create, update or delete)\nusage: %s", action, named(superuserUsage))
	}
	if !authn.ValidEmail(email) {
		return fmt.Errorf("invalid email address %q", email)
	}
	st, err := openStores(cfg, nil, false)
	if err != nil {
		return err
	}
	defer st.Close()
	su := st.auth.Superusers()
	rec, exists := st.auth.FindByEmail(su, email)
	switch {
	case action == "create" && exists:
		return fmt.Errorf("superuser %q already exists", email)
	case action == "update" && !exists:
		return fmt.Errorf("superuser %q doesn't exist", email)
	case action == "delete" && !exists:
		fmt.Fprintf(stdout, "Superuser %q is missing or already deleted.\n", email)
		return nil
	case action == "delete":
		if err := st.auth.DeleteRecord(su, rec.ID); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Successfully deleted superuser %q.\n", email)
		return nil
	}
	if _, err := st.auth.UpsertSuperuser(ctx, email, password); err != nil {
		var ve authn.ValidationError
		if errors.As(err, &ve) {
			for field, fe := range ve {
				return fmt.Errorf("invalid %s: %s", field, fe.Message)
			}
		}
		return err
	}
	fmt.Fprintf(stdout, "Successfully saved superuser %q.\n", email)
	return st.Close()
}

func cmdConformance(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	url := fs.String("url", "", "base URL of the server to check (default: start a throwaway strongbox)")
	email := fs.String("email", "", "superuser email")
	password := fs.String("password", "", "superuser password")
	only := fs.String("only", "", "run only requirements whose ID starts with this")
	if _, done, err := parseArgs(fs, args, conformanceUsage, 0, 0, stdout); done || err != nil {
		return err
	}
	cfg := conformance.Config{BaseURL: *url, Email: *email, Password: *password, Only: *only}
	if cfg.BaseURL == "" {
		stop, base, err := startThrowaway(ctx, getenv, stderr)
		if err != nil {
			return err
		}
		defer stop()
		cfg.BaseURL, cfg.Email, cfg.Password = base, throwawayEmail, throwawayPassword
	}
	report := conformance.Run(ctx, cfg)
	report.Print(stdout)
	if _, failed, _, errored := report.Counts(); failed+errored > 0 {
		return fmt.Errorf("conformance: %d failed, %d errors", failed, errored)
	}
	return nil
}

const (
	throwawayEmail    = "conformance@localhost"
	throwawayPassword = "conformance-password"
)

// startThrowaway serves a fresh strongbox on a temporary data dir and a free
// loopback port, returning its base URL and a function that stops it and
// removes the dir.
func startThrowaway(ctx context.Context, getenv func(string) string, stderr io.Writer) (func(), string, error) {
	dir, err := os.MkdirTemp("", "strongbox-conformance-")
	if err != nil {
		return nil, "", err
	}
	env := map[string]string{
		"STRONGBOX_SUPERUSER_EMAIL":    throwawayEmail,
		"STRONGBOX_SUPERUSER_PASSWORD": throwawayPassword,
		"STRONGBOX_BCRYPT_COST":        envOr(getenv, "STRONGBOX_BCRYPT_COST", "4"),
	}
	ctx, cancel := context.WithCancel(ctx)
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--http", "127.0.0.1:0", "--dir", dir},
			func(k string) string { return env[k] }, addrWriter(addr), stderr)
	}()
	stop := func() {
		cancel()
		<-done
		os.RemoveAll(dir)
	}
	select {
	case base := <-addr:
		return stop, base, nil
	case err := <-done:
		os.RemoveAll(dir)
		cancel()
		return nil, "", fmt.Errorf("start throwaway server: %v", err)
	}
}

// addrWriter is an io.Writer for serve's output that sends the base URL of
// its "listening on" line to ch, once.
type addrWriter chan string

func (w addrWriter) Write(p []byte) (int, error) {
	var v, base string
	if n, _ := fmt.Sscanf(string(p), "strongbox %s listening on %s", &v, &base); n == 2 {
		select {
		case w <- base:
		default:
		}
	}
	return len(p), nil
}

func cmdLogs(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("logs seed", flag.ContinueOnError)
	cfg := baseConfig(fs, getenv)
	n := fs.Int("n", 1000000, "number of synthetic request logs to add")
	pos, done, err := parseArgs(fs, args, logsUsage, 1, 1, stdout)
	if done || err != nil {
		return err
	}
	if pos[0] != "seed" {
		return fmt.Errorf("unknown logs action %q\nusage: %s", pos[0], named(logsUsage))
	}
	if *n < 0 {
		return errors.New("--n must not be negative")
	}
	if cfg.err != nil {
		return cfg.err
	}
	lock, err := lockDir(cfg.dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	start := time.Now()
	if err := logstore.Seed(filepath.Join(cfg.dir, "logs"), *n, logstore.Options{}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Added %d synthetic request logs to %s in %s.\n", *n, filepath.Join(cfg.dir, "logs"), time.Since(start).Round(time.Millisecond))
	return nil
}
