package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"strongbox/authn"
	"strongbox/authn/validation"
	"strongbox/conformance"
	"strongbox/httpapi/app"
	"strongbox/logstore"
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
	superuserUsage   = "strongbox superuser upsert|create|update|delete|otp EMAIL [PASSWORD] [--dir ./sb_data]"
	conformanceUsage = "strongbox conformance [--url URL --email EMAIL --password PASSWORD] [--profile document|pocketbase|strongbox] [--run REGEXP] [--only ID-PREFIX] [--destructive] [--known NAME|FILE] [--json FILE] [--junit FILE] [--timeout DURATION] [--smtp-host HOST] [--oauth2-host HOST]"
	logsUsage        = "strongbox logs seed [--n 1000000] [--dir ./sb_data]"
	backupUsage      = "strongbox backup list|create [NAME]|restore KEY [--dir ./sb_data]"
	versionUsage     = "strongbox version"

	usage = "usage:\n  " + serveUsage + "\n  " + superuserUsage + "\n  " + conformanceUsage + "\n  " + logsUsage + "\n  " + backupUsage + "\n  " + versionUsage
)

// self is how the user started this program, for the commands it prints:
// "go run ." when run through go run, else the path it was started by.
var self = "strongbox"

// named returns usage text with the program named as the user started it.
func named(text string) string {
	return strings.ReplaceAll(text, "strongbox ", self+" ")
}

// invocation derives self from the program's argv[0]: go run builds the
// binary in a go-build folder, a temporary one (.../go-build123/b001/exe/
// NAME) or, since Go 1.24, the build cache (.../go-build/ab/HASH-d/NAME).
func invocation(arg0 string) string {
	if strings.Contains(filepath.ToSlash(arg0), "/go-build") {
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
		return cmdServe(ctx, args[1:], getenv, stdout, stderr, nil)
	case "superuser":
		return cmdSuperuser(ctx, args[1:], getenv, stdout)
	case "conformance":
		return cmdConformance(ctx, args[1:], getenv, stdout, stderr)
	case "logs":
		return cmdLogs(args[1:], getenv, stdout, stderr)
	case "backup":
		return cmdBackup(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version", "-v":
		if _, done, err := parseArgs(flag.NewFlagSet("version", flag.ContinueOnError), args[1:], versionUsage, 0, 0, stdout); done || err != nil {
			return err
		}
		fmt.Fprintln(stdout, "strongbox", version)
		return nil
	case "help", "--help", "-help", "-h":
		fmt.Fprintln(stdout, named(usage))
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], named(usage))
}

// config is the configuration of a data dir's stores, from flags and the
// environment.
type config struct {
	app.Options
	err error // a malformed environment value
}

func baseConfig(fs *flag.FlagSet, getenv func(string) string) *config {
	c := &config{Options: app.Options{BcryptCost: authn.DefaultCost}}
	fs.StringVar(&c.Dir, "dir", envOr(getenv, "STRONGBOX_DIR", "./sb_data"), "data directory (env STRONGBOX_DIR)")
	if v := getenv("STRONGBOX_BCRYPT_COST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			c.err = fmt.Errorf("STRONGBOX_BCRYPT_COST=%q is not a number", v)
		}
		c.BcryptCost = n
	}
	if n, err := envMiB(getenv, "STRONGBOX_LOGS_MAX_MB"); err != nil {
		c.err = err
	} else {
		c.LogsMaxBytes = n
	}
	return c
}

// envMiB returns the environment variable key, a size in MiB from 1 to
// 2^30, in bytes; 0 when it is unset.
func envMiB(getenv func(string) string, key string) (int64, error) {
	v := getenv(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > 1<<30 {
		return 0, fmt.Errorf("%s=%q is not a size in MiB", key, v)
	}
	return n << 20, nil
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

// cmdServe runs `strongbox serve`. ready, if not nil, is called with the
// server's base URL once it serves (tests and the throwaway server of
// `conformance` learn the address so).
func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready func(base string)) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg := baseConfig(fs, getenv)
	addr := fs.String("http", envOr(getenv, "STRONGBOX_HTTP", "127.0.0.1:8090"), "address to listen on (env STRONGBOX_HTTP)")
	if _, done, err := parseArgs(fs, args, serveUsage, 0, 0, stdout); done || err != nil {
		return err
	}
	if cfg.err != nil {
		return cfg.err
	}
	maxUpload, err := envMiB(getenv, "STRONGBOX_BACKUP_MAX_UPLOAD_MB")
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	cfg.BcryptSlots = reserveScheduler(getenv)
	srv := app.New(app.Config{
		Options:           cfg.Options,
		Version:           version,
		MaxUpload:         maxUpload,
		Addr:              *addr,
		SuperuserEmail:    getenv("STRONGBOX_SUPERUSER_EMAIL"),
		SuperuserPassword: getenv("STRONGBOX_SUPERUSER_PASSWORD"),
		NoExec:            inProcess(ready),
		OnReady: func(r app.Ready) {
			base := "http://" + r.Addr.String()
			if err := printLogin(stdout, base, cfg.Dir, r.Login); err != nil && r.Login.Password != "" {
				// A password shown nowhere would be lost: say it on
				// stderr when stdout cannot take it.
				printLogin(stderr, base, cfg.Dir, r.Login)
			}
			// The ready line: a parent process learns from it that the
			// server serves, and where (see readyLine). Each start prints
			// it, the re-exec of a restore included.
			fmt.Fprintf(stdout, "strongbox %s listening on %s (data dir %s)\n", version, base, cfg.Dir)
			if ready != nil {
				ready(base)
			}
		},
	})
	return srv.Run(ctx)
}

// inProcess returns why a server started with a ready callback (by a test
// or by `strongbox conformance`, inside their process) must not restart
// itself by exec, which would replace the process it runs in; nil for the
// server of `strongbox serve`.
func inProcess(ready func(string)) error {
	if ready == nil {
		return nil
	}
	return errors.New("Restoring a backup needs a server started by `strongbox serve`: this one runs inside another command, which restarting it would replace.")
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

// printLogin tells how to log in, with the first superuser's credentials
// when they were just created; it reports a failed write.
func printLogin(w io.Writer, base, dir string, l app.Login) error {
	var b strings.Builder
	pw, reset := "PASSWORD", "Forgot the password? Stop the server and run"
	switch {
	case l.Password != "":
		fmt.Fprintf(&b, "\nCreated the first superuser (shown only this once):\n  email:    %s\n  password: %s\n", l.Email, l.Password)
		pw, reset = l.Password, "Change the password with the server stopped"
	case l.Created:
		fmt.Fprintf(&b, "\nCreated the first superuser %s with the password set in STRONGBOX_SUPERUSER_PASSWORD.\n", l.Email)
	}
	fmt.Fprintf(&b, "\nLog in as %s:\n  curl -X POST %s/api/collections/_superusers/auth-with-password \\\n    -H 'Content-Type: application/json' -d '{\"identity\":\"%s\",\"password\":\"%s\"}'\n", l.Email, base, l.Email, pw)
	fmt.Fprintf(&b, "%s: %s superuser update %s NEWPASSWORD --dir %s\n\n", reset, self, l.Email, dir)
	_, err := io.WriteString(w, b.String())
	return err
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
	case "delete", "otp":
		if len(pos) > 2 {
			return fmt.Errorf("unexpected argument %q: %s takes no password\nusage: %s", pos[2], action, named(superuserUsage))
		}
	default:
		return fmt.Errorf("unknown superuser action %q (want upsert, create, update, delete or otp)\nusage: %s", action, named(superuserUsage))
	}
	if !authn.ValidEmail(email) {
		return fmt.Errorf("invalid email address %q", email)
	}
	if cfg.err != nil {
		return cfg.err
	}
	st, err := app.Open(cfg.Options, false)
	if err != nil {
		return err
	}
	defer st.Close()
	su := st.Auth.Superusers()
	rec, exists := st.Auth.FindByEmail(su, email)
	switch {
	case action == "create" && exists:
		return fmt.Errorf("superuser %q already exists", email)
	case action == "update" && !exists:
		return fmt.Errorf("superuser %q doesn't exist", email)
	case action == "delete" && !exists:
		fmt.Fprintf(stdout, "Superuser %q is missing or already deleted.\n", email)
		return nil
	case action == "delete":
		if err := st.Auth.DeleteRecord(su, rec.ID); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Successfully deleted superuser %q.\n", email)
		return nil
	case action == "otp":
		return superuserOTP(st.Auth, email, stdout)
	}
	if _, err := st.Auth.UpsertSuperuser(ctx, email, password); err != nil {
		if ve, ok := errors.AsType[validation.Errors](err); ok {
			return fmt.Errorf("invalid %w", ve)
		}
		return err
	}
	fmt.Fprintf(stdout, "Successfully saved superuser %q.\n", email)
	return st.Close()
}

// superuserOTP prints a fresh OTP of the superuser with this email, and
// sends no mail (recovery when mail is broken).
func superuserOTP(auth *authn.Store, email string, stdout io.Writer) error {
	id, code, err := auth.SuperuserOTP(email)
	switch {
	case errors.Is(err, authn.ErrNotFound):
		return fmt.Errorf("superuser %q doesn't exist", email)
	case errors.Is(err, authn.ErrOTPOff):
		return errors.New("OTP auth is not enabled for the _superusers collection: enable otp (which brings MFA) on _superusers first")
	case err != nil:
		return err
	}
	fmt.Fprintf(stdout, "Successfully created OTP for superuser %q:\n  otpId:    %s\n  password: %s\n  valid for %d seconds; it is a second factor: sign in with the password first, then auth-with-otp with the mfaId\n",
		email, id, code, auth.Superusers().OTP.Duration)
	return nil
}

// cmdConformance runs the conformance suite against --url, or against a
// throwaway strongbox when no --url is given, prints one line per
// requirement, writes the --json and --junit reports, and fails when any
// requirement failed or errored (a known deviation does not).
func cmdConformance(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	url := fs.String("url", "", "base URL of the server to check (default: $CONFORMANCE_BASE_URL, else start a throwaway strongbox)")
	email := fs.String("email", "", "superuser email (default: $CONFORMANCE_EMAIL)")
	password := fs.String("password", "", "superuser password (default: $CONFORMANCE_PASSWORD, which keeps it off the command line)")
	profile := fs.String("profile", "document", "whose rules to check: document, pocketbase (includes document) or strongbox (includes both)")
	run := fs.String("run", "", "run only requirements whose ID matches this regular expression (as go test -run)")
	only := fs.String("only", "", "run only requirements whose ID starts with this")
	destructive := fs.Bool("destructive", false, "also run the checks that replace the server's data (a full backup restore, which restarts it)")
	known := fs.String("known", "", "report the known deviations of this implementation as KNOWN, not FAIL: "+
		strings.Join(conformance.KnownImplementations(), ", ")+", or the path of a .tsv file (ID<TAB>reason lines)")
	jsonFile := fs.String("json", "", "also write the report as JSON to this file")
	junitFile := fs.String("junit", "", "also write the report as JUnit XML to this file")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound on the whole run (each check is also bounded, by "+
		conformance.DefaultCheckTimeout.String()+")")
	smtpHost := fs.String("smtp-host", "", "address of this host the server under test can reach the suite's SMTP sink at (default 127.0.0.1)")
	oauth2Host := fs.String("oauth2-host", "", "address of this host the server under test can reach the suite's OAuth2 provider at (default: --smtp-host, else 127.0.0.1)")
	if _, done, err := parseArgs(fs, args, conformanceUsage, 0, 0, stdout); done || err != nil {
		return err
	}
	// The environment of go test ./conformance stands in for a flag not
	// given, so that a CI job sets the server and its credentials once.
	for _, f := range []struct {
		v   *string
		env string
	}{{url, "CONFORMANCE_BASE_URL"}, {email, "CONFORMANCE_EMAIL"}, {password, "CONFORMANCE_PASSWORD"}} {
		if *f.v == "" {
			*f.v = getenv(f.env)
		}
	}
	prof, err := conformance.ParseProfile(*profile)
	if err != nil {
		return fmt.Errorf("conformance: --profile: %w", err)
	}
	if *timeout <= 0 {
		return fmt.Errorf("conformance: --timeout %s: want a positive duration", *timeout)
	}
	cfg := conformance.Config{BaseURL: *url, Email: *email, Password: *password, Only: *only, Match: *run,
		Profile: prof, Known: *known, Destructive: *destructive, SMTPHost: *smtpHost, OAuth2Host: *oauth2Host}
	if err := cfg.Validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, *timeout, fmt.Errorf("the run's --timeout of %s elapsed", *timeout))
	defer cancel()
	if cfg.BaseURL == "" {
		// A full restore re-executes the server, which would replace this
		// process: the destructive checks need a server of its own.
		start := startThrowaway
		if cfg.Destructive {
			start = startThrowawayChild
		}
		tw, err := start(ctx, getenv, stderr)
		if err != nil {
			return err
		}
		defer tw.stop()
		cfg.BaseURL, cfg.Email, cfg.Password = tw.base, throwawayEmail, tw.password
	}
	report := conformance.Run(ctx, cfg)
	report.Print(stdout)
	var errs []error
	if *jsonFile != "" {
		errs = append(errs, conformance.WriteFile(*jsonFile, report.WriteJSON))
	}
	if *junitFile != "" {
		errs = append(errs, conformance.WriteFile(*junitFile, report.WriteJUnit))
	}
	if report.Err != nil {
		errs = append(errs, report.Err)
	} else if t := report.Tally(); t.Failed+t.Errored > 0 {
		errs = append(errs, fmt.Errorf("conformance: %d failed, %d errored", t.Failed, t.Errored))
	}
	return errors.Join(errs...)
}

// throwawayEmail is the superuser of a throwaway server; its password is
// generated for each run.
const throwawayEmail = "conformance@localhost"

// throwaway is a fresh strongbox on a temporary data dir and a loopback
// port, started by `strongbox conformance` when given no --url.
type throwaway struct {
	base     string // its base URL
	password string // the password of throwawayEmail
	stop     func() // stops the server and removes its data dir
}

// throwawayEnv is the environment of a throwaway server: its first
// superuser, and a cheap bcrypt cost unless the user set one.
func throwawayEnv(getenv func(string) string, password string) map[string]string {
	return map[string]string{
		"STRONGBOX_SUPERUSER_EMAIL":    throwawayEmail,
		"STRONGBOX_SUPERUSER_PASSWORD": password,
		"STRONGBOX_BCRYPT_COST":        envOr(getenv, "STRONGBOX_BCRYPT_COST", "4"),
	}
}

// startThrowaway serves a throwaway strongbox inside this process, on a
// free loopback port. It refuses a restore (see inProcess).
func startThrowaway(ctx context.Context, getenv func(string) string, stderr io.Writer) (*throwaway, error) {
	dir, err := os.MkdirTemp("", "strongbox-conformance-")
	if err != nil {
		return nil, err
	}
	password := rand.Text()
	env := throwawayEnv(getenv, password)
	ctx, cancel := context.WithCancel(ctx)
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- cmdServe(ctx, []string{"--http", "127.0.0.1:0", "--dir", dir},
			func(k string) string { return env[k] }, io.Discard, stderr, func(base string) { addr <- base })
	}()
	select {
	case base := <-addr:
		return &throwaway{base: base, password: password, stop: func() {
			cancel()
			<-done
			os.RemoveAll(dir)
		}}, nil
	case err := <-done:
		os.RemoveAll(dir)
		cancel()
		return nil, fmt.Errorf("start throwaway server: %v", err)
	}
}

// startThrowawayChild serves a throwaway strongbox as a child process, the
// same executable running `serve` on a free loopback port, so that a
// restore can re-execute it (the re-executed image keeps the socket, so
// the port stays). Its superuser's password reaches it through the
// environment, never the command line; its log goes to stderr.
func startThrowawayChild(ctx context.Context, getenv func(string) string, stderr io.Writer) (*throwaway, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start throwaway server: %w", err)
	}
	dir, err := os.MkdirTemp("", "strongbox-conformance-")
	if err != nil {
		return nil, err
	}
	password := rand.Text()
	var env []string
	for k, v := range throwawayEnv(getenv, password) {
		env = append(env, k+"="+v)
	}
	c, err := startServeChild(ctx, exe, "127.0.0.1:0", dir, env, stderr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start throwaway server: %w", err)
	}
	return &throwaway{base: c.base, password: password, stop: func() {
		if err := c.stop(); err != nil {
			fmt.Fprintf(stderr, "strongbox: throwaway server: %v\n", err)
		}
		os.RemoveAll(dir)
	}}, nil
}

// serveChild is `strongbox serve` running as a child process.
type serveChild struct {
	cmd  *exec.Cmd
	base string // the base URL its first start printed
	// starts receives the base URL of each later start: a restore
	// re-executes the process, which prints its ready line again.
	starts chan string
	done   chan struct{} // closed once the process has exited
	err    error         // Wait's result, set before done is closed
}

// startServeChild runs `exe serve --http addr --dir dir` with env added to
// this process's environment and its log sent to stderr, and returns once
// it serves: when it prints its ready line, "strongbox VERSION listening
// on http://ADDR (data dir DIR)", on stdout (the rest of stdout is
// discarded). It fails if the process exits first, with the end of its
// log, or when ctx ends, and then leaves no process behind.
func startServeChild(ctx context.Context, exe, addr, dir string, env []string, stderr io.Writer) (*serveChild, error) {
	c := &serveChild{starts: make(chan string, 16), done: make(chan struct{})}
	first := make(chan string, 1)
	seen := false // lineWriter calls line from one goroutine at a time
	tail := &tailWriter{}
	c.cmd = exec.Command(exe, "serve", "--http", addr, "--dir", dir)
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stderr = io.MultiWriter(stderr, tail)
	c.cmd.Stdout = &lineWriter{line: func(line string) {
		base, ok := readyLine(line)
		switch {
		case !ok:
		case !seen:
			seen = true
			first <- base
		default:
			select {
			case c.starts <- base:
			default: // nobody follows the restarts this far
			}
		}
	}}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	select {
	case c.base = <-first:
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("serve exited before it was ready: %v: %s", c.err, tail.last())
	case <-ctx.Done():
		c.stop()
		return nil, fmt.Errorf("serve did not get ready: %w", context.Cause(ctx))
	}
}

// readyLine returns the base URL in the line `serve` prints on stdout
// once it serves, "strongbox VERSION listening on http://ADDR (data dir
// DIR)", and whether line is one.
func readyLine(line string) (base string, ok bool) {
	head, rest, ok := strings.Cut(line, " listening on ")
	if !ok || !strings.HasPrefix(head, "strongbox ") || !strings.HasPrefix(rest, "http://") {
		return "", false
	}
	return strings.Fields(rest)[0], true
}

// stop asks the child to stop gracefully (SIGTERM; on Windows, which has
// no signals, it kills it), kills it if it has not exited 10 s later, and
// returns its exit error.
func (c *serveChild) stop() error {
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.cmd.Process.Kill()
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("serve (pid %d) did not stop within 10 s of SIGTERM: killed", c.cmd.Process.Pid)
	}
	return c.err
}

// lineWriter calls line with each complete line written to it.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // no line is that long: drop it
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// tailWriter keeps the last 4 KiB written to it.
type tailWriter struct {
	mu sync.Mutex
	b  []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if n := len(w.b) - 4<<10; n > 0 {
		w.b = w.b[n:]
	}
	return len(p), nil
}

// last returns the last non-empty line written.
func (w *tailWriter) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.TrimSpace(string(w.b))
	return s[strings.LastIndexByte(s, '\n')+1:]
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
	lock, err := app.LockDir(cfg.Dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	start := time.Now()
	if err := logstore.Seed(filepath.Join(cfg.Dir, "logs"), *n, logstore.Options{}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Added %d synthetic request logs to %s in %s.\n", *n, filepath.Join(cfg.Dir, "logs"), time.Since(start).Round(time.Millisecond))
	return nil
}

// cmdBackup runs `strongbox backup list|create|restore`.
func cmdBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	cfg := baseConfig(fs, getenv)
	pos, done, err := parseArgs(fs, args, backupUsage, 1, 2, stdout)
	if done || err != nil {
		return err
	}
	if cfg.err != nil {
		return cfg.err
	}
	switch pos[0] {
	case "list":
		if len(pos) > 1 {
			return fmt.Errorf("unexpected argument %q: list takes none\nusage: %s", pos[1], named(backupUsage))
		}
		list, err := app.ListBackups(cfg.Dir)
		if err != nil {
			return err
		}
		for _, b := range list {
			fmt.Fprintf(stdout, "%s\t%d\t%s\n", b.Key, b.Size, b.Modified.UTC().Format(time.RFC3339))
		}
		return nil
	case "create":
		name := ""
		if len(pos) > 1 {
			name = pos[1]
		}
		info, err := app.CreateBackup(ctx, cfg.Options, name, version)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, info.Key)
		return nil
	case "restore":
		if len(pos) < 2 {
			return fmt.Errorf("restore needs the KEY of an archive (see strongbox backup list)\nusage: %s", named(backupUsage))
		}
		return backupRestore(cfg.Options, pos[1], stdout, stderr)
	}
	return fmt.Errorf("unknown backup action %q (want list, create or restore)\nusage: %s", pos[0], named(backupUsage))
}

// backupRestore restores the archive key offline, on the data dir of a
// stopped server (see app.RestoreOffline), logging warnings and errors to
// stderr.
func backupRestore(opts app.Options, key string, stdout, stderr io.Writer) error {
	opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	start := time.Now()
	if err := app.RestoreOffline(opts, key); err != nil {
		return fmt.Errorf("restore %s: %w", key, err)
	}
	fmt.Fprintf(stdout, "Restored %s into %s in %s; the previous data is deleted.\n", key, opts.Dir, time.Since(start).Round(time.Millisecond))
	return nil
}
