package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"

	"strongbox/httpapi/app"
	"strongbox/httpapi/app/throwaway"
	"strongbox/logstore/otlp"
)

// serve runs `strongbox serve`. ready, if not nil, is called with the
// server's base URL once it serves (tests and the throwaway server of
// `conformance` learn the address so); such a server runs inside another
// command and refuses a restore, which would re-execute the process.
func (c cli) serve(ctx context.Context, args []string, ready func(base string)) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg := baseConfig(fs, c.getenv)
	addr := fs.String("http", envOr(c.getenv, "STRONGBOX_HTTP", defaultHTTP), "address to listen on (env STRONGBOX_HTTP)")
	metricsAddr := fs.String("metrics", c.getenv("STRONGBOX_METRICS_ADDR"), "address to serve GET /metrics on, off if empty (env STRONGBOX_METRICS_ADDR)")
	if _, done, err := c.parseArgs(fs, args, serveUsage, 0, 0); done || err != nil {
		if done {
			printEnvironment(c.stdout)
		}
		return err
	}
	if cfg.err != nil {
		return cfg.err
	}
	maxUpload, err := envMiB(c.getenv, "STRONGBOX_BACKUP_MAX_UPLOAD_MB")
	if err != nil {
		return err
	}
	allowPrivate, err := envBool(c.getenv, "STRONGBOX_OAUTH2_ALLOW_PRIVATE")
	if err != nil {
		return err
	}
	export, err := otlp.FromEnv(c.getenv)
	if err != nil {
		return fmt.Errorf("log export: %w", err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(c.stderr, nil))
	cfg.BcryptSlots = reserveScheduler(c.getenv)
	var noExec error
	if ready != nil {
		noExec = throwaway.ErrNoExec
	}
	srv := app.New(app.Config{
		Options:           cfg.Options,
		Version:           version,
		MaxUpload:         maxUpload,
		Addr:              *addr,
		MetricsAddr:       *metricsAddr,
		SuperuserEmail:    c.getenv("STRONGBOX_SUPERUSER_EMAIL"),
		SuperuserPassword: c.getenv("STRONGBOX_SUPERUSER_PASSWORD"),
		NoExec:            noExec,
		// Provider URLs are a superuser's input: by default they may
		// not lead into the server's own network.
		OAuth2AllowPrivate: allowPrivate,
		Export:             export,
		MemoryLimit:        ready == nil, // a process of its own
		OnReady: func(r app.Ready) {
			base := "http://" + r.Addr.String()
			if err := c.printLogin(c.stdout, base, cfg.Dir, r.Login); err != nil && r.Login.Password != "" {
				// A password shown nowhere would be lost: say it on
				// stderr when stdout cannot take it.
				c.printLogin(c.stderr, base, cfg.Dir, r.Login)
			}
			fmt.Fprintln(c.stdout, throwaway.ReadyLine(version, base, cfg.Dir))
			if r.Metrics != nil {
				fmt.Fprintf(c.stdout, "metrics for Prometheus at http://%s/metrics\n", r.Metrics)
			}
			if ready != nil {
				ready(base)
			}
		},
	})
	return srv.Run(ctx)
}

// reserveScheduler gives Go's scheduler two slots (Ps) more than there are
// CPUs, unless the user set GOMAXPROCS, and returns the CPU count: the
// number of concurrent bcrypt computations. Logins then can never occupy
// every P, so cheap requests keep Ps of their own while bcrypt runs on all
// CPUs at a lower OS priority (see authn.Hasher). Two spare Ps rather than
// one: a P whose low-priority thread the kernel has set aside would stall
// the goroutines queued on it; with two, the other P runs them. Measured on
// 2 cores: /api/health p99 during a login flood 10-12 ms with one spare P,
// 5-6 ms with two, at the same login throughput. It starts from the
// runtime's default each time, so that calling it again (each server a
// test starts) sets the same value; two servers starting at the same
// instant in one process (tests only) may count each other's spare Ps.
func reserveScheduler(getenv func(string) string) int {
	if getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	runtime.SetDefaultGOMAXPROCS()
	cpus := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(cpus + 2)
	return cpus
}

// printLogin tells where the dashboard is and how to log in, with the
// first superuser's credentials when they were just created; it reports a
// failed write.
func (c cli) printLogin(w io.Writer, base, dir string, l app.Login) error {
	var b strings.Builder
	pw, reset := "PASSWORD", "Forgot the password? Stop the server and run"
	switch {
	case l.Password != "":
		fmt.Fprintf(&b, "\nCreated the first superuser (shown only this once):\n  email:    %s\n  password: %s\n", l.Email, l.Password)
		pw, reset = l.Password, "Change the password with the server stopped"
	case l.Created:
		fmt.Fprintf(&b, "\nCreated the first superuser %s with the password set in STRONGBOX_SUPERUSER_PASSWORD.\n", l.Email)
	}
	fmt.Fprintf(&b, "\nDashboard: %s/_/\n", base)
	fmt.Fprintf(&b, "\nLog in as %s:\n  curl -X POST %s/api/collections/_superusers/auth-with-password \\\n    -H 'Content-Type: application/json' -d '{\"identity\":\"%s\",\"password\":\"%s\"}'\n", l.Email, base, l.Email, pw)
	fmt.Fprintf(&b, "%s: %s superuser update %s NEWPASSWORD --dir %s\n\n", reset, c.self, l.Email, dir)
	_, err := io.WriteString(w, b.String())
	return err
}
