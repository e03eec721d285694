// Package conformance is a black-box test suite for servers implementing the
// strongbox interface (the PocketBase v0.31.0 compatible API for backups,
// request logs and record authentication). It talks to a server only over
// HTTP and imports nothing from the rest of the project, so the same suite
// runs against strongbox, against a real PocketBase, or against any other
// implementation.
//
// # Requirements
//
// [Requirements] is a table. Each [Requirement] has a stable ID (for example
// AUTH-PW-003 or LOG-FILTER-012), the section of the interface document it
// verifies, a statement in the project's own words that names the exact
// status code and message expected, and a check. Where the interface
// document and PocketBase disagree the document is followed; those
// requirements say so in their text (for example AUTH-TOKEN-001: password
// tokens of the users collection carry no exp claim; LOG-FILTER-030..034 and
// LOG-STATS-010..014: the message for a malformed filter). Areas the
// document names but leaves "not shown" (sign-up and records, collections,
// settings, security headers, the body limit) follow PocketBase v0.31.0
// and say so. A requirement an issue adds beyond both cites the issue instead of a section (LOG-SECRET-001:
// request logs never hold the token query parameter or the Authorization
// value; LOGIN-THROTTLE-001 and -002: failed password logins are throttled
// per identity and client by default; HTTP-PATH-001, HTTP-RAW-001 and -002:
// the error envelope even where net/http would answer by itself, checked on
// raw connections; HTTP-LIMIT-002: a 2 MiB body to an auth action is
// refused; LOG-EVENT-001..003: the server's own events in the log store,
// an audit entry for a settings change and no secret in any entry;
// LOG-TEXT-001: no CR LF in a request log's message; PocketBase fails
// them. Issue 20's LOGIN-THROTTLE-003 and -004:
// that throttle does not refuse the right password for logins in progress
// or for failures from other clients; PocketBase, with no throttle,
// passes them).
//
// # Profiles
//
// Each requirement names its [Source]: the interface document's rule
// ([SourceDocument]), PocketBase v0.31.0's where the document is silent or
// leaves a choice open ([SourcePocketBase]), or strongbox's own promise
// ([SourceStrongbox]). [Config.Profile] selects what runs: document (the
// default), pocketbase (which includes document) or strongbox (which
// includes both). Where the document leaves a choice open (the envelope's
// key order, a message §7 does not name, the Z of stats dates, totalPages
// in the list envelope), the check
// of a document requirement accepts every reading, and a pocketbase twin
// whose ID is the original's plus 500 (AUTH-PW-003 and AUTH-PW-503) runs
// the same check demanding PocketBase's.
//
// Every check is shown able to fail: the package's own tests put a mutator
// in front of the real strongbox server, one per deliberate violation (a
// wrong message or status, a dropped field, a misread filter operator…),
// and require the checks each violation names to fail; the few violations
// that need server state strongbox cannot be made to show (tokens signed
// with another key, a skipped signature check, OTP and OAuth2 answers) are
// committed by a small in-memory test double instead. A requirement that
// no violation makes fail, and that carries no written exemption, fails
// those tests. Requirements whose feature strongbox does not have yet are
// listed in testdata/pending_strongbox.txt: the tests against strongbox
// skip them, and those of PocketBase's own are shown able to fail by the
// same mutators in front of a PocketBase v0.31.0 instead.
//
// # Outcomes
//
// Every requirement ends as Pass, Fail (the server violated it), Skip (it
// does not apply), Error (the suite could not carry the check out:
// connectivity, a fixture the server refused to create, a cleanup that
// failed, the check's deadline) or Known (it failed, and the list of
// known deviations named by Config.Known records it; known.go). Outcomes
// are never merged. A check reports a failure with [Mismatch]: what the
// requirement expected and what the server did, kept as [Result.Expected]
// and [Result.Actual] beside the prose of [Result.Detail] (h2spec's
// TestError); [Result.Exchange] keeps the last request the check sent and
// what came back. [Report.Print] writes one line per requirement
// ("OUTCOME ID SOURCE SECTION: NAME"), the expectation, what was received
// and the request under every failure, and ends with the line "N passed,
// N failed, N skipped" (", N known" and ", N errored" follow when there
// are any). [Report.WriteJSON] and [Report.WriteJUnit] render the same
// data for machines, and [Report.OK] is false when anything failed or
// errored. REQUIREMENTS.md, generated from the table by a test, lists
// every requirement.
//
// # Fixtures
//
// The suite logs in once with the superuser credentials it is given. Checks
// create what they need through the API under unique random names (users
// signed up as cf-<random>@example.com, collections named cf_<random>) and
// delete them when they finish, so the suite can run against a server that
// already holds data. The checks of API rules (RULE-…) create auth
// collections of their own with the rules under test, and records in
// them, all deleted afterwards. The logs checks make a few requests marked with a random
// nonce (for example GET /api/health?cf=<nonce>&k=guest), wait up to 10 s for
// them to be logged, and then examine only those entries. The suite leaves
// those few log entries behind, as any client would. When the server's
// settings say request logging is off (logs.maxDays 0, read once from GET
// /api/settings), the checks that need logged requests are skipped with that
// reason. The settings checks change nothing: their PATCHes must be
// refused, and a cleanup restores the settings read before them if the
// server applied them anyway. The rate limit and login throttle checks do
// change settings for their duration (rateLimits, to turn the limiter on
// with rules unique to the run; trustedProxy, to name a header through
// which each request states a random client address), and a cleanup puts
// back what they read first.
//
// The checks that read mail (the account flows end to end, OTP, MFA) each
// start an SMTP sink of their own on 127.0.0.1 (or Config.SMTPHost, the
// address the server reaches this host at), point the server's smtp
// settings at it, turn on otp.enabled (and mfa.enabled) of the users
// collection, read the codes and tokens from the mails received, and put
// the smtp object and both options back as they were read, also when the
// check fails. A server that refuses those PATCHes, or whose smtp settings
// hold a username (its password, never returned, could not be put back),
// gets those checks skipped with that reason.
//
// The OAuth2 checks (AUTH-OAUTH2-…) each start an OAuth2/OpenID Connect
// provider of their own (oauth2provider.go) on 127.0.0.1 (or
// Config.OAuth2Host), configure it on the users collection as the
// provider "oidc" (its authURL, tokenURL and userInfoURL, a client id and
// secret made for the run, PKCE on) through PATCH /api/collections/users,
// play the browser between auth-methods and the provider's redirect, and
// put the oauth2 object back as it was read, also when the check fails;
// the users they sign up are deleted. GET never shows a provider's
// clientSecret, so a users collection that already has OAuth2 providers
// could not be put back: those checks are then skipped with that reason,
// as they are when the server refuses the PATCH.
//
// # Running it
//
// From Go:
//
//	rep := conformance.Run(ctx, conformance.Config{
//		BaseURL:  "http://127.0.0.1:8090",
//		Email:    "admin@example.com",
//		Password: "…",
//	})
//	rep.Print(os.Stdout)
//	if !rep.OK() {
//		os.Exit(1)
//	}
//
// With go test, against a server that is already running:
//
//	CONFORMANCE_BASE_URL=http://127.0.0.1:8090 \
//	CONFORMANCE_EMAIL=admin@example.com CONFORMANCE_PASSWORD=… \
//	go test ./conformance -run TestAgainstServer -v
//
// (or -args -base-url=http://127.0.0.1:8090). Each requirement becomes a
// subtest named after its ID, so -run 'TestAgainstServer/LOG-' selects an
// area; Config.Only (an ID prefix) and Config.Match (a regular expression
// on IDs) do the same for Run. Without CONFORMANCE_BASE_URL the
// test is skipped.
//
// The strongbox binary wraps the same function: strongbox conformance --url
// URL --email E --password P [--profile P] [--run REGEXP] [--known NAME]
// [--json FILE] [--junit FILE] [--timeout D] [--smtp-host ADDR]
// [--oauth2-host ADDR].
package conformance
