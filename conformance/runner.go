package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// Config says which server to check and how to reach it. Nothing about the
// server under test is compiled into the suite: a base URL and the
// credentials of an existing superuser are all it needs.
type Config struct {
	// BaseURL is the server's root, for example http://127.0.0.1:8090.
	// A trailing slash is ignored.
	BaseURL string
	// Email and Password are the credentials of an existing superuser
	// (a record of the _superusers collection).
	Email, Password string
	// Client sends every request. Nil means a client with a 10 s timeout.
	Client *http.Client
	// Only, when not empty, runs only the requirements whose ID starts with
	// it (for example "LOG-" or "AUTH-PW-003"). The others are left out of
	// the report entirely.
	Only string
	// Match, when not empty, is a regular expression (RE2, unanchored, as
	// go test -run) that an ID must match to run, for example
	// "^LOG-(FILTER|STATS)-" or "BKP-UPLOAD-00[1-3]". With Only, both must
	// select a requirement.
	Match string
	// Profile says whose rules are checked, named after the strictest
	// source it includes: SourceDocument (the default, when empty) runs the
	// interface document's requirements only; SourcePocketBase adds those
	// that follow PocketBase v0.31.0 where the document is silent or leaves
	// a choice open; SourceStrongbox adds strongbox's own promises. The
	// requirements outside the profile are left out of the report, as with
	// Only. Any other value is refused: every selected requirement is then
	// reported as Error (ParseProfile checks a name beforehand).
	Profile Source
	// Known names an implementation whose known deviations (known.go) turn
	// the failures of the requirements they list into Known outcomes, for
	// example "pocketbase-0.31.0", or the path of a file in the same format.
	// Empty means none.
	Known string
	// CheckTimeout bounds each check (its cleanups have a bound of their
	// own). Zero means DefaultCheckTimeout. The whole run is bounded by the
	// context given to Run.
	CheckTimeout time.Duration
	// Destructive allows the checks that replace the server's data: a full
	// backup restore (BKP-FULLRESTORE-001) restarts the server on an
	// archive it made a moment before, losing whatever else was written
	// meanwhile. Off by default; those checks are then skipped.
	Destructive bool
	// SMTPHost is the address the server under test uses to reach the
	// suite's SMTP sink (the mailbox of the checks that read mail: the
	// account flows, OTP and MFA). Empty means 127.0.0.1, which suits a
	// server on the same host. For a server elsewhere, give an address of
	// this host that the server can reach: an IP address makes the sink
	// listen on that address only, a host name makes it listen on every
	// interface (for the duration of each mail check).
	SMTPHost string
	// OAuth2Host is the address the server under test uses to reach the
	// suite's OAuth2 provider (oauth2provider.go) during the OAuth2
	// checks, with the same rules as SMTPHost. Empty means SMTPHost, and
	// when that is empty too 127.0.0.1.
	OAuth2Host string
	// RestartTimeout bounds the wait for a server restarting after a
	// restore to answer again with the restored data. Zero means
	// DefaultRestartTimeout.
	RestartTimeout time.Duration
	// WaitTimeout bounds the wait for the suite's requests to show in GET
	// /api/logs and for a mail the server must send to reach the suite's
	// SMTP sink. Zero means DefaultWaitTimeout.
	WaitTimeout time.Duration
}

// DefaultRestartTimeout is the default of Config.RestartTimeout.
const DefaultRestartTimeout = 60 * time.Second

// DefaultWaitTimeout is the default of Config.WaitTimeout.
const DefaultWaitTimeout = 10 * time.Second

// DefaultCheckTimeout is the default of Config.CheckTimeout: above the
// longest wait of any check (a full restore waits RestartTimeout for the
// server to come back).
const DefaultCheckTimeout = 3 * time.Minute

// Validate reports what makes cfg unusable before anything is sent: a
// Match that is not a regular expression, a Known implementation the suite
// has no list for (or a list file that cannot be read). Run reports the
// same error as Report.Err.
func (cfg Config) Validate() error {
	_, _, err := cfg.compile()
	return err
}

// compile returns cfg's Match as a regexp (nil when empty) and its known
// deviations (nil when Known is empty).
func (cfg Config) compile() (*regexp.Regexp, *KnownList, error) {
	var re *regexp.Regexp
	if cfg.Match != "" {
		var err error
		if re, err = regexp.Compile(cfg.Match); err != nil {
			return nil, nil, fmt.Errorf("conformance: run pattern %q: %w", cfg.Match, err)
		}
	}
	var known *KnownList
	if cfg.Known != "" {
		var err error
		if known, err = LoadKnown(cfg.Known); err != nil {
			return nil, nil, err
		}
	}
	return re, known, nil
}

// Outcome is the verdict on one requirement. The kinds are never merged: a
// server that violates the interface fails, a check that could not be
// carried out is an error, and a failure the implementation named by
// Config.Known is listed for is Known, not Fail.
type Outcome int

const (
	// Pass: the server behaved as the requirement says.
	Pass Outcome = iota
	// Fail: the server violated the requirement.
	Fail
	// Skip: the check could not apply to this server (an optional feature
	// is not configured); the detail says why.
	Skip
	// Error: the harness could not carry out the check (connectivity, a
	// fixture the server refused to create, a failing cleanup, a panic).
	Error
	// Known: the server violated the requirement, and the list of known
	// deviations of Config.Known names it (Result.KnownReason says why).
	// It does not make the run fail.
	Known
	// Changed: the server violated the requirement, the list of known
	// deviations names it, but the entry recorded another observation
	// than this run's (Result.KnownObserved against Result.Observed): the
	// way the server deviates changed, which makes the run fail until the
	// entry is recorded again.
	Changed
)

// String returns the label used in reports: PASS, FAIL, SKIP, ERROR,
// KNOWN or CHANGED.
func (o Outcome) String() string {
	switch o {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Skip:
		return "SKIP"
	case Error:
		return "ERROR"
	case Known:
		return "KNOWN"
	case Changed:
		return "CHANGED"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Result is the outcome of one requirement.
type Result struct {
	Req      *Requirement
	Outcome  Outcome
	Detail   string // why it failed, was skipped or errored; empty on Pass
	Duration time.Duration

	// Expected and Actual are set on a Fail reported with [Mismatch]: what
	// the requirement demands and what the server did instead, apart from
	// the prose of Detail (which holds both, and any context the check
	// added), as h2spec's TestError keeps them.
	Expected, Actual string

	// Exchange is the last request the check sent before it returned and
	// what came back (nil when it sent none); set on every outcome but
	// Pass.
	Exchange *Exchange
	// Repro is that request as commands to run in a POSIX shell (curl
	// and sed): the token steps, each explained by a # line, and the curl
	// command line that sends it again (repro.go). Set with Exchange, but
	// not on Skip.
	Repro string
	// KnownReason is the reason the list of Config.Known gives for this
	// requirement, whatever the outcome: on Known it explains the failure,
	// on Pass it flags a stale entry (Report.Notes).
	KnownReason string
	// Observed is what the check saw, reduced to what stays the same from
	// run to run (observe.go): set on Fail, Known and Changed; a
	// known-deviation entry records it. KnownObserved is the observation
	// the entry of Config.Known's list recorded ("" for none).
	Observed, KnownObserved string
}

// Requirement is one verifiable statement of the interface document,
// written in the project's own words with the exact status code and message
// it expects, and the check that verifies it.
type Requirement struct {
	// ID is stable and never renumbered, e.g. "AUTH-PW-003". New
	// requirements get new IDs; a removed ID is not reused.
	ID string
	// Source says whose rule the requirement is (see Source): the
	// interface document's, PocketBase v0.31.0's where the document is
	// silent, or strongbox's own promise beyond both.
	Source Source
	// Section cites the part of the interface document verified, e.g.
	// "§4.5 auth-with-password; §7 row 6".
	Section string
	// Name is a short title for report lines and test names.
	Name string
	// Text states the requirement, with the exact status and message.
	Text string
	// Run performs the check. It returns nil on success, an error made by
	// Failf when the server violated the requirement, one made by Skipf when
	// the check does not apply, and any other error when the harness could
	// not carry out the check.
	Run func(ctx context.Context, c *Client) error
}

// Source is whose rule a requirement is. A profile runs the requirements
// of its source and of those it includes: pocketbase includes document,
// strongbox includes both.
type Source string

// The sources, from the loosest profile to the strictest.
const (
	// SourceDocument: the interface document states it (Section cites
	// where).
	SourceDocument Source = "document"
	// SourcePocketBase: the document is silent, and the check follows
	// PocketBase v0.31.0 so that its clients work.
	SourcePocketBase Source = "pocketbase"
	// SourceStrongbox: strongbox's own promise beyond both (secrets
	// redacted from logs, strict fields, archive verification, …).
	SourceStrongbox Source = "strongbox"
)

// ParseProfile returns the profile named s: "document", "pocketbase" or
// "strongbox"; "" is the default, document.
func ParseProfile(s string) (Source, error) {
	switch p := Source(s); p {
	case "":
		return SourceDocument, nil
	case SourceDocument, SourcePocketBase, SourceStrongbox:
		return p, nil
	}
	return "", fmt.Errorf("unknown profile %q: want document, pocketbase or strongbox", s)
}

// includes reports whether the profile p runs the requirements of source
// s: each profile includes the looser ones. A requirement that names no
// source counts as the document's.
func (p Source) includes(s Source) bool { return s.rank() <= p.rank() }

// rank orders the sources from the loosest profile to the strictest.
func (s Source) rank() int {
	switch s {
	case "", SourceDocument:
		return 0
	case SourcePocketBase:
		return 1
	}
	return 2
}

// verdict is the error type behind Failf, Mismatch and Skipf.
type verdict struct {
	outcome          Outcome
	msg              string
	expected, actual string // set by Mismatch
}

func (v *verdict) Error() string { return v.msg }

// Failf reports that the server violated the requirement being checked, in
// prose. The suite's own checks use [Mismatch], which keeps what was
// expected and what was received apart; Failf remains for checks written
// elsewhere.
func Failf(format string, args ...any) error {
	return &verdict{outcome: Fail, msg: fmt.Sprintf(format, args...)}
}

// Mismatch reports that the server violated the requirement being checked,
// as a structured pair: expected states what the requirement demands (for
// example `404 "The requested resource wasn't found."`), actual what the
// server did (for example the status and body it answered). The error's
// text is "expected <expected>, got <actual>"; a check may wrap it with
// fmt.Errorf and %w to add context, and the report keeps the pair.
func Mismatch(expected, actual string) error {
	return &verdict{outcome: Fail, msg: "expected " + expected + ", got " + actual, expected: expected, actual: actual}
}

// Skipf reports that the requirement does not apply to the server under test.
func Skipf(format string, args ...any) error {
	return &verdict{outcome: Skip, msg: fmt.Sprintf(format, args...)}
}

// classify turns the error returned by a check into an outcome and a detail.
func classify(err error) (Outcome, string) {
	r := classifyResult(err)
	return r.Outcome, r.Detail
}

// classifyResult turns the error returned by a check into the outcome,
// detail, expected and actual of a Result.
func classifyResult(err error) Result {
	if err == nil {
		return Result{Outcome: Pass}
	}
	if v, ok := errors.AsType[*verdict](err); ok {
		// err.Error() keeps any context a helper wrapped around it.
		return Result{Outcome: v.outcome, Detail: err.Error(), Expected: v.expected, Actual: v.actual}
	}
	return Result{Outcome: Error, Detail: err.Error()}
}

// Run checks the server described by cfg against every requirement (or those
// selected by cfg.Only and cfg.Match), one after the other, and returns one
// result per requirement in table order. It logs in once as the configured
// superuser; when that fails every selected requirement is reported as
// Error. It then works as a throwaway superuser it creates for the run,
// and deletes at the end (throwaway.go). A cfg that Validate refuses runs
// nothing: the report holds only Err. Each check runs under ctx bounded by
// cfg.CheckTimeout; once ctx ends, the requirements not yet run are
// reported as Error ("not run").
//
// Typical use inside a test, in the style of testing/fstest.TestFS:
//
//	rep := conformance.Run(ctx, conformance.Config{BaseURL: url, Email: e, Password: p})
//	rep.Print(os.Stdout)
func Run(ctx context.Context, cfg Config) Report {
	return runRequirements(ctx, cfg, Requirements)
}

// runRequirements is Run over an explicit table, so that the runner itself
// can be tested with synthetic requirements.
func runRequirements(ctx context.Context, cfg Config, reqs []*Requirement) (rep Report) {
	re, known, err := cfg.compile()
	if err != nil {
		return Report{Err: err}
	}
	profile, perr := ParseProfile(string(cfg.Profile))
	var selected []*Requirement
	for _, r := range reqs {
		if strings.HasPrefix(r.ID, cfg.Only) && (re == nil || re.MatchString(r.ID)) && (perr != nil || profile.includes(r.Source)) {
			selected = append(selected, r)
		}
	}
	rep = Report{Results: make([]Result, 0, len(selected)), Known: cfg.Known}
	defer func() { rep.applyKnown(known, reqs) }()
	if len(selected) == 0 {
		return rep
	}
	timeout := cfg.CheckTimeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}

	base, err := newClient(cfg)
	if perr != nil {
		err = perr
	}
	if err == nil {
		err = base.loginSuperuser(ctx)
	}
	if err == nil {
		tw, terr := base.useThrowaway(ctx, time.Now())
		if terr != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the suite ran as the superuser %s, not as a throwaway of its own: %v",
				cfg.Email, terr))
		} else {
			defer func() {
				if err := base.dropThrowaway(ctx, tw); err != nil {
					rep.Notes = append(rep.Notes, err.Error()+" (a later run deletes it)")
				}
			}()
		}
	}
	if err != nil {
		detail := "not run: " + err.Error()
		for _, r := range selected {
			rep.Results = append(rep.Results, Result{Req: r, Outcome: Error, Detail: detail})
		}
		return rep
	}

	for _, r := range selected {
		if ctx.Err() != nil {
			rep.Results = append(rep.Results, Result{Req: r, Outcome: Error,
				Detail: "not run: " + context.Cause(ctx).Error()})
			continue
		}
		rep.Results = append(rep.Results, runOne(ctx, base, r, timeout))
	}
	return rep
}

// runOne runs a single check with its own Client (so that its cleanups are
// its own), recovers a panic in the check, and then runs the cleanups the
// check registered, newest first.
func runOne(ctx context.Context, base *Client, r *Requirement, timeout time.Duration) Result {
	c := base.forCheck()
	c.pocketbaseReadings = r.Source != SourceDocument
	start := time.Now()
	errTimeout := fmt.Errorf("the check ran out of its %s (Config.CheckTimeout)", timeout)
	err := func() (err error) {
		ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
		defer func() {
			if err != nil && errors.Is(context.Cause(ctx), errTimeout) && !errors.Is(err, errTimeout) {
				err = fmt.Errorf("%w (%v)", err, errTimeout)
			}
			cancel()
		}()
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("check panicked: %v\n%s", p, debug.Stack())
			}
		}()
		if r.Run == nil {
			return errors.New("requirement has no check")
		}
		return r.Run(ctx, c)
	}()
	res := classifyResult(err)
	outcome, detail := res.Outcome, res.Detail
	if outcome != Pass {
		res.Exchange = c.lastExchange() // before the cleanups send theirs
		if outcome != Skip {
			res.Repro = c.reproduction()
		}
	}

	if cerr := c.runCleanups(ctx); cerr != nil {
		switch outcome {
		case Pass, Skip:
			outcome = Error
			detail = strings.TrimSpace(detail + "\ncleanup failed: " + cerr.Error())
		default:
			detail += "\ncleanup also failed: " + cerr.Error()
		}
	}
	res.Req, res.Outcome, res.Detail, res.Duration = r, outcome, detail, time.Since(start)
	if outcome != Fail {
		res.Expected, res.Actual = "", ""
	} else {
		res.Observed = observation(res)
	}
	return res
}
