package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"strongbox/conformance"
	"strongbox/httpapi/app/throwaway"
)

// conformance runs the conformance suite against --url, or against a
// throwaway strongbox when no --url is given, prints one line per
// requirement, writes the --json and --junit reports, and fails when any
// requirement failed or errored, or a known deviation changed (one that
// matches its entry does not).
func (c cli) conformance(ctx context.Context, args []string) error {
	f, done, err := c.conformanceFlags(args)
	if done || err != nil {
		return err
	}
	cfg, timeout := f.Config, f.timeout
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("the run's --timeout of %s elapsed", timeout))
	defer cancel()
	if cfg.BaseURL == "" {
		tw, err := c.startThrowaway(ctx, cfg.Destructive)
		if err != nil {
			return err
		}
		defer tw.Stop()
		cfg.BaseURL, cfg.Email, cfg.Password = tw.Base, throwaway.Email, tw.Password
	}
	report := conformance.Run(ctx, cfg)
	report.Print(c.stdout)
	var errs []error
	if f.jsonFile != "" {
		errs = append(errs, conformance.WriteFile(f.jsonFile, report.WriteJSON))
	}
	if f.junitFile != "" {
		errs = append(errs, conformance.WriteFile(f.junitFile, report.WriteJUnit))
	}
	if f.recordFile != "" && report.Err == nil {
		errs = append(errs, recordKnown(f.recordFile, report))
	}
	if report.Err != nil {
		errs = append(errs, report.Err)
	} else if t := report.Tally(); !report.OK() {
		errs = append(errs, fmt.Errorf("conformance: %d failed, %d changed, %d errored", t.Failed, t.Changed, t.Errored))
	}
	return errors.Join(errs...)
}

// conformanceFlags are the flags of `strongbox conformance`.
type conformanceFlags struct {
	conformance.Config
	jsonFile, junitFile string        // where to write the reports, if anywhere
	recordFile          string        // the list of known deviations to write from the run, if any
	timeout             time.Duration // bound on the whole run
}

// conformanceFlags parses the flags of `strongbox conformance`, with the
// environment of go test ./conformance standing in for a flag not given.
func (c cli) conformanceFlags(args []string) (f conformanceFlags, done bool, err error) {
	cfg := &f.Config
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	url := fs.String("url", "", "base URL of the server to check (default: $CONFORMANCE_BASE_URL, else start a throwaway strongbox)")
	email := fs.String("email", "", "superuser email (default: $CONFORMANCE_EMAIL)")
	password := fs.String("password", "", "superuser password (default: $CONFORMANCE_PASSWORD, which keeps it off the command line)")
	profile := fs.String("profile", "document", "whose rules to check: document, pocketbase (includes document) or strongbox (includes both)")
	fs.StringVar(&cfg.Match, "run", "", "run only requirements whose ID matches this regular expression (as go test -run)")
	fs.StringVar(&cfg.Only, "only", "", "run only requirements whose ID starts with this")
	fs.BoolVar(&cfg.Destructive, "destructive", false, "also run the checks that replace the server's data (a full backup restore, which restarts it)")
	fs.StringVar(&cfg.Known, "known", "", "report the known deviations of this implementation as KNOWN, not FAIL: "+
		strings.Join(conformance.KnownImplementations(), ", ")+", or the path of a .tsv file (ID<TAB>reason lines)")
	fs.StringVar(&f.jsonFile, "json", "", "also write the report as JSON to this file")
	fs.StringVar(&f.junitFile, "junit", "", "also write the report as JUnit XML to this file")
	fs.StringVar(&f.recordFile, "record-known", "", "write this .tsv list of known deviations from the run: the file's entries kept with this run's "+
		"observations, those that passed dropped, new failures added with a reason to write")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "bound on the whole run (each check is also bounded, by "+
		conformance.DefaultCheckTimeout.String()+")")
	fs.StringVar(&cfg.SMTPHost, "smtp-host", "", "address of this host the server under test can reach the suite's SMTP sink at (default 127.0.0.1)")
	fs.StringVar(&cfg.OAuth2Host, "oauth2-host", "", "address of this host the server under test can reach the suite's OAuth2 provider at (default: --smtp-host, else 127.0.0.1)")
	if _, done, err = c.parseArgs(fs, args, conformanceUsage, 0, 0); done || err != nil {
		return f, done, err
	}
	// A CI job sets the server and its credentials once, for go test
	// ./conformance and this command alike.
	for _, f := range []struct {
		v   *string
		env string
	}{{url, "CONFORMANCE_BASE_URL"}, {email, "CONFORMANCE_EMAIL"}, {password, "CONFORMANCE_PASSWORD"}} {
		if *f.v == "" {
			*f.v = c.getenv(f.env)
		}
	}
	cfg.BaseURL, cfg.Email, cfg.Password = *url, *email, *password
	if cfg.Profile, err = conformance.ParseProfile(*profile); err != nil {
		return f, false, fmt.Errorf("conformance: --profile: %w", err)
	}
	if f.timeout <= 0 {
		return f, false, fmt.Errorf("conformance: --timeout %s: want a positive duration", f.timeout)
	}
	return f, false, cfg.Validate()
}

// recordKnown rewrites the known-deviations file path from report
// (conformance.RecordKnown), starting from what it holds, if it exists.
func recordKnown(path string, report conformance.Report) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("conformance: --record-known: %w", err)
	}
	return conformance.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(conformance.RecordKnown(old, report))
		return err
	})
}

// startThrowaway starts the throwaway server of a run given no --url:
// inside this process, or, for the destructive checks, as a child process
// of its own, because a full restore re-executes the server, which would
// replace this process.
func (c cli) startThrowaway(ctx context.Context, destructive bool) (*throwaway.Server, error) {
	if destructive {
		return throwaway.Child(ctx, c.getenv, c.stderr)
	}
	return throwaway.InProcess(ctx, c.getenv, func(ctx context.Context, args []string, getenv func(string) string, ready func(string)) error {
		return cli{self: c.self, getenv: getenv, stdout: io.Discard, stderr: c.stderr}.serve(ctx, args, ready)
	})
}
