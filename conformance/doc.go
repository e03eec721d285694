// Package conformance is a black-box test suite for servers implementing the
// strongbox interface (the PocketBase v0.31.0 compatible API for backups,
// request logs and record authentication). It talks to a server only over
// HTTP and imports nothing from the rest of the project but its SMTP sink
// and OAuth2 provider (packages smtpsink and oauth2provider, stdlib only),
// so the same suite runs against strongbox, against a real PocketBase, or
// against any other implementation. It needs only a base URL and the
// credentials of an existing superuser (a record of _superusers).
//
// # Requirements
//
// [Requirements] is a table. Each [Requirement] has a stable ID (for example
// AUTH-PW-003 or LOG-FILTER-012), the section of the interface document it
// verifies, a statement in the project's own words that names the exact
// status code and message expected, and a check. REQUIREMENTS.md,
// generated from the table by a test (go test ./conformance -run
// TestRequirementsDoc -update regenerates it; the test fails when it is
// stale), lists every requirement with its source and section, and counts
// them per source and section.
//
// # Profiles
//
// Each requirement names its [Source], whose rule it is:
//
//   - [SourceDocument]: the interface document states it; its section
//     (§4.3, §7 row 6, …) is cited. Where the document and PocketBase
//     disagree the document is followed, and the requirement says so (for
//     example AUTH-TOKEN-001: password tokens of the users collection
//     carry no exp claim; LOG-FILTER-030..034 and LOG-STATS-010..014: the
//     message for a malformed filter).
//   - [SourcePocketBase]: the document is silent, or leaves a choice open,
//     and the check follows PocketBase v0.31.0 so that its clients work;
//     the section says so ("PocketBase v0.31.0 (request-otp and
//     auth-with-otp, its OTP options)", "PocketBase v0.31.0 (the document
//     is silent on …)"). Sign-up and records, collections, settings, rate
//     limits, the account flows, security headers, the body limit,
//     validation codes and the messages §7 does not name are PocketBase's.
//   - [SourceStrongbox]: our own promise beyond both, citing its issue
//     instead of a section: for example secrets redacted from request logs
//     (LOG-SECRET-001, -002), the login throttle (LOGIN-THROTTLE-001 …
//     -004), the envelope even where net/http would answer by itself and
//     small body limits on auth routes (HTTP-PATH-001, HTTP-RAW-001, -002,
//     HTTP-LIMIT-002), no server path in the delete error (BKP-DEL-002), no
//     mfa.rule that reads the password (MFA-009), the server's own events
//     in the log store, an audit entry for a settings change and no secret
//     in any entry (LOG-EVENT-001..003), no CR LF in a request log's
//     message (LOG-TEXT-001).
//
// A check of how a feature behaves that would pass vacuously on a server
// without the feature first probes for it, and on such a server is a
// skip, "absent", quoting the probe's answer: LOGIN-THROTTLE-002..004 (five
// wrong passwords, then the right one, not answered 429), while the check
// of the feature itself, LOGIN-THROTTLE-001, fails there; LOG-EVENT-002
// and -003 (a restore of a missing archive, then no entry without
// data.type), while LOG-EVENT-001 fails. A check whose
// fixture cannot be made on a server (BKP-UPLOAD-008 on an archive not in
// strongbox's layout) is a skip with the reason, not an error.
//
// [Config.Profile] (CONFORMANCE_PROFILE for go test, --profile for
// strongbox conformance) selects what runs: document (the default) runs
// the document's requirements only, pocketbase adds PocketBase's,
// strongbox adds ours; the others are left out of the report. An unknown
// profile runs nothing: every requirement is reported as an error naming
// it ([ParseProfile] checks a name beforehand).
//
// Where the document leaves a choice open, the document profile accepts
// every reading it allows, and a pocketbase twin, whose ID is the
// original's plus 500, runs the same check demanding PocketBase's choice
// (stricterReadings in requirements.go):
//
//	left open by the document                          document accepts                                   pocketbase twin demands
//	key order of the error envelope (§2.5)             any order (ERR-001)                                data, message, status (ERR-501)
//	a message §7 does not name                         any message, with the status and envelope shape    PocketBase's message (AUTH-PW-503 …, AUTH-OAUTH2-509)
//	                                                   (AUTH-PW-003, -004, -008, OTP-003, -004, -005,
//	                                                   -007, MFA-003, AUTH-OAUTH2-004, -006, -009)
//	totalPages in the list envelope (§2.4)             with or without it (LOG-LIST-001, -009,            present and right (LOG-LIST-501, -509,
//	                                                   LOG-FIELDS-001)                                    LOG-FIELDS-501)
//	further keys of the auth-methods descriptor (§2.7) password.identityFields and otp absent, or well    both present (AUTH-METHODS-501)
//	                                                   typed (AUTH-METHODS-001, -002)
//	order of the backup list (§4.2)                    any order (BKP-LIST-001)                           ascending by key (BKP-LIST-501)
//	case of the Bearer scheme (§5.1 names none)        any case; other schemes refused                    "Bearer " only (AUTH-REFRESH-509)
//	                                                   (AUTH-REFRESH-009)
//	headers of a backup download (§4.2)                any, with the archive's bytes (BKP-DL-001)         application/zip and an attachment (BKP-DL-501)
//	body of an MFA challenge (§5.6)                    mfaId beside other keys, no token (MFA-001, -002,  exactly {"mfaId"} (MFA-501)
//	                                                   -006)
//	collectionId and collectionName in an auth         absent, or right (AUTH-PW-001, -002 and every      present and right (AUTH-PW-501, -502)
//	result (§2.6)                                      sign-in)
//	the form of log ids (§2.2)                         any non-empty string (LOG-ENTRY-001)               15 characters [a-z0-9] (LOG-ENTRY-501)
//	the form of :excerpt (§4.1)                        at most the first maxLength characters, an         PocketBase's exact form, trimmed, ...
//	                                                   ellipsis (... or …) when asked for and cut         (LOG-VIEW-504, LOG-FIELDS-502, -503)
//	                                                   (LOG-VIEW-004, LOG-FIELDS-002, -003)
//	validation codes §7 does not name, the words of    any {code, message} under data.file; for           PocketBase's codes and message
//	the MIME error (§4.2, §7 row 3)                    validation_invalid_mime_type a message naming      (BKP-UPLOAD-501, -502, -503)
//	                                                   application/zip (BKP-UPLOAD-001, -002, -003)
//	stats dates (§2.3: YYYY-MM-DD HH:00:00.000)        with or without a trailing Z (LOG-STATS-001)       with the Z (LOG-STATS-501)
//	the success of a backup create, upload or delete   204 with no body, or 200 with null (BKP-CREATE-001, 204 with no body (BKP-CREATE-501, -502,
//	(§4.2: "body is null")                             -002, BKP-UPLOAD-004, BKP-DEL-001)                 BKP-UPLOAD-504, BKP-DEL-501)
//
// A requirement whose source is pocketbase or strongbox always demands
// PocketBase's readings. Where a PocketBase requirement fixes a code or a
// status the document leaves open, a looser document requirement checks
// what the document does fix: a backup name outside [a-z0-9_-].zip is
// refused with 400 and a data.name error of any code (BKP-CREATE-010;
// BKP-CREATE-003, -004 demand PocketBase's codes), an upload that is not
// multipart is refused with data.file (BKP-UPLOAD-007), and a download
// without a superuser file token answers a 4xx error, never the file
// (BKP-DL-008; BKP-DL-002 to -006 demand PocketBase's 403 and message).
// go test ./conformance -run TestProfileCounts -v prints the count of
// requirements per profile and per section.
//
// # Every check can fail, every case has a check
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
// same mutators in front of a PocketBase v0.31.0 instead. A server that
// takes the other readings the document allows (the test double, and the
// real strongbox behind a mutator that rewrites its answers) passes the
// document profile and fails the pocketbase one on the twins only, and a
// document requirement whose check would demand more under PocketBase's
// reading without a twin fails a test.
//
// go test ./conformance -run TestCoverage -v walks a list of every case
// the interface document names (documentCases in coverage_test.go): each
// §2 shape, each §3 rule, each (endpoint, status, message) of §4 and §7,
// each fields form of §4.1, each filter field, stats filter field and sort
// field of §4.3 (updated and rowid included), each operand kind and
// operator of §4.4 (@random, // comments, both quotes, integers and
// fractions, null, true, false, % in ~), each rule of §5 and limit of §8.
// A case with no requirement fails the test. Today: 167 cases, 160
// checked, 7 pending with their reason: three need a create or restore
// that overlaps another request, which no request can guarantee, two a
// failing backup storage, which no request can cause, and two (§3 "tokens
// are not stored", §5.2 "no logout endpoint") cannot be seen from outside.
//
// Beyond the suite's reach, too: the Prometheus metrics (issue 32), served
// on a listener of their own (STRONGBOX_METRICS_ADDR), off by default and
// never on the API's address, which is all the suite knows of a server.
// REQUIREMENTS.md says so; strongbox's own tests check them
// (strongbox/httpapi/metrics, strongbox/httpapi/app).
//
// # Outcomes
//
// Every requirement ends as Pass, Fail (the server violated it), Skip (it
// does not apply: an optional feature is off, --destructive not given),
// Error (the suite could not carry the check out: connectivity, a fixture
// the server refused to create, a cleanup that failed, the check's
// deadline: a finding about the run, not the server), Known (it failed,
// and the list of known deviations named by Config.Known records it, as it
// was observed) or Changed (it failed, the list names it, but what the run
// observed is not what the entry recorded). Outcomes are never merged. A check reports a failure with [Mismatch]:
// what the requirement expected and what the server did, kept as
// [Result.Expected] and [Result.Actual] beside the prose of [Result.Detail]
// (h2spec's TestError); [Result.Exchange] keeps the last request the check
// sent and what came back, and [Result.Repro] the commands that send it
// again. [Report.OK] is false when anything failed, errored or changed:
// SKIP and KNOWN do not fail a run.
//
// [Report.Print] writes one line per requirement, in the order the suite
// runs them: the outcome, the ID, the source, the section of the interface
// document it verifies and its short name. Under a FAIL (and a KNOWN, and
// an ERROR) come the requirement in words, what it expected and what the
// server did, the last request the check sent with what came back
// (method, path with its query, status, the error envelope's message, and
// the first 300 bytes of the body; never a header, and a token query
// parameter and the token of an answer show as REDACTED), and that request as commands for a POSIX
// shell with curl and sed ([Result.Repro], repro.go). For example:
//
//	FAIL  LOG-LIST-006        pocketbase §4.3 GET /api/logs (page is a number); …: non-numeric page refused
//	      requirement: GET /api/logs?page=abc answers 400 "Something went wrong while processing your request.".
//	      expected: 400 "Something went wrong while processing your request."
//	      actual:   200 {"items":[…],"page":1,"perPage":30,…} (GET /api/logs?page=abc)
//	      request:  GET /api/logs?page=abc → 200 {"items":[…],"page":1,"perPage":30,…}
//	      reproduce (sh, curl, sed):
//	        # PASSWORD: the password of the superuser admin@example.com (set it first, …)
//	        # TOKEN: POST /api/collections/_superusers/auth-with-password as admin@example.com → .token
//	        TOKEN=$(curl -sS --globoff --path-as-is -X POST http://127.0.0.1:8090/api/collections/_superusers/auth-with-password -H 'Content-Type: application/json' -A strongbox-conformance/1 --data-raw '{"identity":"admin@example.com","password":"'"$PASSWORD"'"}' | sed -n 's/.*"token" *: *"\([^"]*\)".*/\1/p')
//	        curl -sS -i --globoff --path-as-is 'http://127.0.0.1:8090/api/logs?page=abc' -H 'Authorization: '"$TOKEN"
//	0 passed, 1 failed, 0 skipped
//
// Read it from the bottom: the reproduction sends the request again (copy
// its lines into a shell), actual against expected is the difference, and
// the requirement and its section say which rule decides. No token and no
// superuser password is shown: each token is a variable, set by the request
// whose answer carried it, sent again (the superuser's login, as the
// superuser the suite was given, with $PASSWORD; a user's login, after the
// sign-up of that user, whom the check deleted afterwards; a file token);
// a token query parameter no recorded answer carried is a variable to set.
// The passwords of the users a check makes are shown: they are the
// run's own. A multipart upload is -F with a file the reproduction writes
// with printf (over 512 bytes, described: a zip archive of so many bytes),
// a streamed body a shell command that writes it, a body that is not text
// a printf (over 512 bytes, described), a text body over 16 KiB described. Tokens a
// check made itself (forged, signed with another key) and the codes and
// tokens of mails are shown as sent. A raw request (HTTP-RAW-…) has no
// reproduction of its own. The last line counts the outcomes, "N passed, N
// failed, N skipped", followed by ", N known", ", N changed" and ", N
// errored" when there are any; note: lines before it concern the known
// deviations.
//
// [Report.WriteJSON] writes the same data as one object: summary (the
// count of each outcome), results (per requirement: id, source, section,
// name, text, outcome, durationMs, and where they apply detail, expected,
// actual, knownReason, observed, recorded, stale, request with method,
// path, status, message and body, and repro, the reproduction), and
// known, notes and error when set. [Report.WriteJUnit] writes JUnit XML
// that CI systems render: one testsuite per section of the interface
// document (§4.3, §4.5, issue 8…), one testcase per requirement (classname
// the section, name "ID name"), with a failure or error element whose
// message is "expected …, got …" and whose text holds the requirement, its
// full section, expected, actual, the request and its reproduction; a SKIP
// is skipped with its reason, a KNOWN is skipped with the deviation's
// reason (the failure in system-out), since it does not fail the run, a
// CHANGED is a failure of type CHANGED ("recorded …, observed …"), and a
// PASS whose entry is stale says so in system-out. Both files are written
// whole or not at all (a temporary file renamed into place), also when the
// run fails.
//
// # Known deviations
//
// A known deviation is data, not code: known/NAME.tsv lists, for the
// implementation NAME, the requirements it is known to fail, one per line
// as ID<TAB>reason<TAB>observation (# starts a comment). The reason is
// written by hand; the observation is what the suite saw when the entry
// was recorded, reduced to what stays the same from run to run
// ([Result.Observed]): the status, the message and the codes under data of
// an error answer (400 "Invalid filter format."), the status and keys of
// another JSON answer (200 {record, token}), or the check's own words with
// tokens, times, ids and fixture names made placeholders (AUTH-TOKEN-001:
// an exp claim, expiring in 168h (7 days)). The files are embedded;
// Config.Known (--known NAME) selects one (an unknown name is an error that
// lists the names there are), and --known path/to/file.tsv reads a file of
// your own in the same format, for an implementation the suite does not
// carry. With it, a listed requirement that fails as recorded is reported
// KNOWN with the reason, and does not fail the run; one that fails with
// another observation is reported CHANGED with both (recorded:, observed:)
// and fails the run, since the way the server deviates changed; one that
// passes is reported as a note: (the entry is stale: the implementation
// changed, or the entry was wrong), as is an entry naming no requirement.
// A line of two columns (an older list's) matches by ID alone; an
// observation of "sometimes" marks a deviation that shows in some runs
// only (a race in the server): any failure of it is KNOWN, and a pass is no
// stale entry ([Intermittent]). An unlisted
// failure is still a FAIL, and an ERROR stays an error. Lists are not typed
// by hand: [RecordKnown] rewrites one from reports (observations refreshed,
// reasons and comments kept, passing entries dropped, new failures
// appended with a placeholder reason to replace): strongbox conformance
// --record-known FILE does so from its run (FILE's current entries kept,
// none when it does not exist yet), and TestAgainstPocketBase -update for
// the lists of PocketBase. go
// test ./conformance checks that every embedded list parses, names only
// existing IDs, records an observation on each entry and holds no
// placeholder reason.
//
// known/pocketbase-0.31.0.tsv holds the deviations of PocketBase v0.31.0
// from the interface document, each with its reason: the message of a
// non-superuser's backup list (BKP-LIST-004), of a malformed filter on the
// log list and stats (LOG-FILTER-030..034, LOG-STATS-010..014), of a
// backup upload's validation failure (BKP-UPLOAD-001..003, -007, and the
// twins BKP-UPLOAD-501..503, which repeat the message); users' password
// tokens that expire (AUTH-TOKEN-001); rowid refused in the stats filter
// (LOG-STATS-005), updated refused in the stats filter (LOG-STATS-007),
// and rowid and updated refused in the list's sort and updated in its
// filter (LOG-SORT-008, -009, LOG-FILTER-025): 21 requirements of the
// document profile, and the 3 twins in the pocketbase one (with the list
// applied: document 119 passed, 21 known; pocketbase 289 passed, 24
// known; 362 requirements in the table; TestPocketBaseFigures checks these
// figures against the table and the list). BKP-CREATE-007 is listed as
// sometimes: PocketBase checks and takes its backup lock in two steps, so
// in some runs two concurrent creates both succeed and leave one archive
// (KNOWN then; a PASS otherwise, and no stale entry). known/pocketbase-0.39.11.tsv
// holds those of PocketBase v0.39.11: the same, AUTH-TOKEN-001 with 5 days
// for 7, and two pocketbase twins that hold v0.31.0's reading where v0.39
// changed it (AUTH-REFRESH-509: any case of Bearer; AUTH-OAUTH2-008: no
// redirectURL required); the README's table, generated from the two lists
// (TestREADMEPocketBase), says what differs. Our own promises (the
// strongbox profile) fail there, as they may: they are ours, not the
// document's; or, for a feature PocketBase lacks, are skipped with the
// probe that showed it (authenticator apps, passkeys, backup encryption,
// the login throttle's behaviour, an archive in strongbox's layout).
// TestAgainstPocketBase keeps the
// lists true: against each PocketBase whose executable a variable names
// (STRONGBOX_POCKETBASE for v0.31.0, STRONGBOX_POCKETBASE_0_39 for
// v0.39.11) it runs the document and pocketbase profiles, with the full
// restore and the version's list applied, and fails when anything fails,
// errors, changes or is skipped, when a listed requirement passes (a stale
// entry) or when one the list names is not reported KNOWN; it runs the
// strongbox profile too, and fails there only on an ERROR (a feature
// PocketBase lacks is a skip, "absent", quoting the probe). .ci/run builds
// both from the Go module proxy into temporary dirs (they are not modules
// of this project); without the variables the test is skipped:
//
//	GOBIN=/tmp/pb go install github.com/pocketbase/pocketbase/examples/base@v0.31.0
//	GOBIN=/tmp/pb39 go install github.com/pocketbase/pocketbase/examples/base@v0.39.11
//	STRONGBOX_POCKETBASE=/tmp/pb/base STRONGBOX_POCKETBASE_0_39=/tmp/pb39/base \
//	    go test ./conformance -run TestAgainstPocketBase -v
//
// (add -update to record the lists' observations from those runs).
//
// # Fixtures
//
// The suite logs in once with the superuser credentials it is given, and
// with that token creates a throwaway superuser for the run
// (cf-su-<expiry>-<random>@conformance.invalid, a random password never
// shown), signs it in and works as it; at the end of the run (also when
// the run's context ends early) it deletes it with the given superuser's
// token. A run killed before that leaves it behind: each run deletes the
// throwaways whose expiry (an hour after the end of their run's deadline)
// has passed, and keeps those of runs still going. A server that refuses
// the throwaway is checked as the given superuser, and a note says so. The
// sign-ins the checks make as a superuser (AUTH-PW-001, …) are thus the
// throwaway's: on PocketBase, and on strongbox, a record's first sign-in
// mails no new-login alert, nor does one from a device it has used, and
// .invalid (RFC 2606) reaches no mailbox. What a run mails the given
// superuser is the new-login alert of its one sign-in, when that comes from
// a device (client address and User-Agent) the superuser has not used
// before (PocketBase remembers a record's five latest): the first run from
// a host, and none after it
// (TestRunMailsTheSuperuserOnce); a reproduction's login (see Report.Print)
// sends the suite's User-Agent, so that it mails nothing either. Checks
// create what they need through the API under unique random names (users
// signed up as cf-<random>@example.com, collections named cf_<random>,
// backups named cf_…) and delete them when they finish, so the suite can
// run against a server that already holds data. The checks of API rules
// (RULE-…) create auth collections of their own with the rules under test,
// and records in them, all deleted afterwards. The logs checks make a few
// requests marked with a random nonce (for example GET
// /api/health?cf=<nonce>&k=guest), wait up to 10 s for them to be logged,
// and then examine only those entries. The suite leaves those few log
// entries behind, as any client would. When the server's settings say
// request logging is off (logs.maxDays 0, read once from GET
// /api/settings), the checks that need logged requests are skipped with
// that reason. The backup checks are skipped on a server whose backups
// folder cannot be loaded. The settings checks change nothing: their
// PATCHes must be refused, and a cleanup restores the settings read before
// them if the server applied them anyway. The rate limit and login
// throttle checks do change settings for their duration (rateLimits, to
// turn the limiter on with rules unique to the run; trustedProxy, to name
// a header through which each request states a random client address),
// and a cleanup puts back what they read first.
//
// One check replaces the server's data, a full restore
// (BKP-FULLRESTORE-001: create a record, back up, create another, restore,
// wait up to 60 s for the server to answer again with the first record and
// without the second): it runs only with [Config.Destructive]
// (--destructive), and is skipped otherwise.
//
// # Mail checks
//
// The checks that read mail (FLOW-MAIL-001..004: verification, password
// reset and email change end to end, and no mail for an unknown email;
// OTP-001..006 and MFA-002, -005, -006: codes read from the OTP mail) each
// start an SMTP sink of the suite's own (package smtpsink): a listener on
// 127.0.0.1, a free port, speaking plain ESMTP (AUTH PLAIN and LOGIN
// accepted with any credentials; no STARTTLS offered), with bounded lines,
// messages, recipients, sessions and read deadlines; a check waits at most
// 10 s for the mail of its recipient (2 s more to see that a mail that must
// not come does not). For its duration, such a check changes the server:
//
//   - PATCH /api/settings smtp {enabled: true, host, port, tls: false}
//     pointing at the sink (username, password and the rest untouched);
//   - PATCH /api/collections/users otp.enabled (and mfa.enabled for the
//     MFA checks; OTP-007 turns both off), the rest of both objects kept;
//   - users cf-<random>@example.com, created by sign-up.
//
// Cleanups put back the smtp object and the otp and mfa objects as they
// were read first (and read them again to confirm), delete the users, and
// close the sink, also when the check fails or panics; a restore that fails
// makes the check an error. A server that refuses the smtp or collection
// PATCH, or whose smtp settings hold a username (the password is never
// returned, so the suite could not put it back), gets those checks skipped
// with the reason. A server on another host must be able to reach the
// sink: [Config.SMTPHost] (--smtp-host ADDR) names this host's address as
// the server sees it; an IP address makes the sink listen on that address
// only, a host name on every interface, for the duration of each mail
// check. Mail goes in clear: strongbox sends no credentials there (none
// are configured), and the sink is only ever up for one check.
//
// MFA-007 sets mfa.rule on users to email = "<one user's email>" and
// requires that user's password sign-in to answer 401 with an mfaId and
// another user's 200 with a token; MFA-008 and MFA-009 require a malformed
// rule, and one naming the password, to be refused with
// validation_invalid_rule and to change nothing. They need no mail.
//
// # Passkey checks
//
// PSK-001..008 (strongbox's own: PocketBase has no passkeys) play the
// browser and a software authenticator of the suite's own (passkeys.go):
// an ES256 key of crypto/ecdsa, attestation "none", the CBOR and the
// WebAuthn Level 3 JSON forms written by hand. For their duration they
// turn passkey.enabled on for users (put back afterwards; a server whose
// users collection shows no passkey object gets them skipped) and, when
// meta.appURL has no domain for a host (an IP address, or none), set it to
// https://cf-passkey.example.com (put back afterwards): the relying party
// is that host, and the origin the checks sign for is the app URL's.
//
// # OAuth2 checks
//
// The OAuth2 checks (AUTH-OAUTH2-001..011: §4.5 auth-methods and
// auth-with-oauth2, §2.6 meta.isNew, §2.7, §5 rules 4, 5 and 11; 010 and
// 011 sign in with the verified email of an existing user, unverified and
// verified: the same record comes back with isNew false, and the password
// chosen at sign-up survives only on the verified account) each start an
// OAuth2/OpenID Connect provider of the suite's own (package
// oauth2provider, stdlib only): a listener on 127.0.0.1, a free port, with these
// endpoints:
//
//   - GET /authorize checks client_id, response_type=code, a redirect_uri,
//     a state and, with a code_challenge, the method S256, then redirects
//     (302) to the redirect_uri with a fresh code and the state; the user
//     it signs in is the one the check announced for that state;
//   - POST /token checks the client (HTTP Basic or the body), the code
//     (issued, single use), that redirect_uri is the authorization's and
//     that base64url(SHA-256(code_verifier)) is the challenge, and answers
//     a Bearer access token, or 400 invalid_grant / 401 invalid_client
//     (the reason goes into the check's failure detail);
//   - GET /userinfo answers {sub, email, email_verified, name, picture}
//     for that token (or 500, for AUTH-OAUTH2-005);
//   - GET /avatar.png, the users' picture (a 1×1 PNG), so that a server
//     that downloads avatars, as PocketBase does, never leaves for another
//     host.
//
// A check plays the browser: it reads auth-methods, announces a new
// identity (cf-sub-<random>, a verified cf-<random>@example.com) for the
// state handed out, opens the authURL completed with <base
// URL>/api/oauth2-redirect, takes the code from the provider's redirect
// and posts it to auth-with-oauth2 with the codeVerifier. For its
// duration, such a check changes the server:
//
//   - PATCH /api/collections/users oauth2 {enabled, providers, …}: the
//     object as read, with enabled (false for AUTH-OAUTH2-006) and one
//     provider {name: "oidc", displayName: "Conformance OIDC", clientId,
//     clientSecret, authURL, tokenURL, userInfoURL, pkce: true} pointing at
//     the suite's provider (client id and secret made for the run);
//   - AUTH-OAUTH2-009 sends the same provider to _superusers (a server
//     refuses it or turns it off on save, and must never list it);
//   - the users that OAuth2 sign-in creates.
//
// Cleanups delete those users (as superuser), put the oauth2 object of
// each collection changed back as it was read (and read it again to
// confirm), and stop the provider, also when the check fails. GET never
// returns a provider's clientSecret, so the suite could not put back
// providers already configured: on a users collection that has any, the
// OAuth2 checks are skipped with that reason, as they are when the server
// refuses the PATCH. A server on another host must be able to reach the
// provider: [Config.OAuth2Host] (--oauth2-host ADDR; default the SMTP host,
// else 127.0.0.1) names this host's address as the server sees it, with
// the same rules as the SMTP host; the suite itself opens the authURL on
// the provider's listening address. The provider speaks plain HTTP and is
// only ever up for one check. A server that refuses provider URLs on
// loopback and private addresses cannot reach it: strongbox refuses them
// unless started with STRONGBOX_OAUTH2_ALLOW_PRIVATE=1, so run your own
// strongbox with it when you run the suite against it (the throwaway
// server has it). Without it the sign-ins fail with 400 "Failed to fetch
// OAuth2 token.", and the failure says so.
//
// # Running it
//
// The strongbox binary wraps [Run]: strongbox conformance. Its flags:
//
//	--url URL                  the server's base URL (default $CONFORMANCE_BASE_URL); without either, a throwaway strongbox
//	--email, --password        the superuser the suite logs in as, once (default $CONFORMANCE_EMAIL, $CONFORMANCE_PASSWORD:
//	                           the variable keeps the password off the command line and out of ps)
//	--profile P                document (default), pocketbase or strongbox
//	--run REGEXP               only the requirements whose ID matches (RE2, unanchored, as go test -run)
//	--only PREFIX              only the requirements whose ID starts with PREFIX (with --run, both must match)
//	--destructive              also the checks that replace the server's data (the full restore)
//	--known NAME|FILE          report the known deviations of an implementation as KNOWN
//	--record-known FILE        write FILE, a list of known deviations, from the run (RecordKnown)
//	--json FILE, --junit FILE  also write the report as JSON, or as JUnit XML
//	--timeout DURATION         bound on the whole run (default 10m); each check is also bounded (3 min)
//	--smtp-host, --oauth2-host the address the server reaches this host at, for the SMTP sink and the OAuth2 provider
//
// For example:
//
//	strongbox conformance --url https://pb.example.com --email admin@example.com --password '…' \
//	    --json report.json --junit report.xml
//	strongbox conformance --url http://127.0.0.1:8090 --email … --password … --run '^LOG-(FILTER|STATS)-'
//	strongbox conformance --url http://127.0.0.1:8090 --email … --password … --known pocketbase-0.31.0
//	strongbox conformance --destructive --only BKP-    # backups, full restore included, on a throwaway
//	strongbox conformance --destructive --url http://127.0.0.1:8090 --email … --password …   # replaces that server's data
//	strongbox conformance --url http://10.0.0.5:8090 --email … --password … --smtp-host 10.0.0.7
//
// The exit status is 0 only when nothing failed and nothing errored.
//
// Without --url, strongbox conformance checks a throwaway strongbox on a
// new temporary data dir, with the superuser conformance@localhost and a
// password generated for the run; it stops the server and deletes the dir
// at the end (also on Ctrl-C). Without --destructive the throwaway runs
// inside the conformance process: it starts fastest, and nothing in the
// suite restarts it. With --destructive it runs as a child process: the
// same executable (the temporary binary of go run included) running serve
// --http 127.0.0.1:0 --dir TEMP, the password passed in
// STRONGBOX_SUPERUSER_PASSWORD (never on the command line), its log on
// conformance's stderr. A restore then re-executes that child for real,
// under the same PID and on the same socket, so its port stays at the
// restart. conformance learns that the child serves from the ready line
// every start of serve prints on stdout, "strongbox VERSION listening on
// http://ADDR (data dir DIR)"; the child prints it again after the
// restart. To stop it, conformance sends SIGTERM and kills it 10 s later
// if it is still running. A conformance killed with SIGKILL cannot stop
// its child: end that serve (its --dir is a strongbox-conformance-…
// temporary dir) by its PID. On Windows the full restore cannot pass (no
// exec).
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
// on IDs) do the same for Run. Without CONFORMANCE_BASE_URL the test is
// skipped.
//
// go test ./... in the module's root runs the whole suite against an
// in-process strongbox once per profile (TestConformance, the full restore
// skipped there), and the destructive checks against a real one:
// TestConformanceDestructive builds the binary once, starts serve as a
// child on a temporary data dir, runs every BKP- requirement with
// Destructive in the strongbox profile and requires each to pass (none
// skipped, the full restore included), then checks that the restore
// re-executed the child (a second ready line, on the same address although
// it asked for port 0) under the same PID and that it never exited;
// TestConformanceCommandDestructive runs strongbox conformance
// --destructive --only BKP-FULLRESTORE- and checks that it passes and
// leaves no temporary dir behind. Both are skipped with -short and on
// Windows, and bounded by a 2-minute deadline.
//
// TestConformanceTwice (only with STRONGBOX_CONFORMANCE_TWICE=1, which
// .ci/run sets: about 90 s) runs the strongbox profile twice in a row
// against one server and requires the same outcomes, none failed. A run
// asks for some 26 mails (OTPs, verification, reset and email-change
// links) from the suite's own address, so a run within a minute of the
// last meets strongbox's mail limit: a mail route's 429 to the suite's own
// request is waited out for its Retry-After (at most 65 s, twice per
// request) and the request sent again, so a second run reports what the
// first did. The checks that expect a 429 send from client addresses of
// their own and never wait; a 429 without Retry-After (PocketBase) is not
// retried.
//
// Measured against our own server, without --destructive (the throwaway
// inside the process; 2 CPUs), when the suite had 313 requirements:
// /usr/bin/time strongbox conformance --profile P took 2.7 s of wall time
// for document, 9.8 s for pocketbase and 9.4 s for strongbox, under 2 s
// of CPU each (one run each); with --destructive (a child server, the full
// restore re-executing it), strongbox took 10.3 s. Against PocketBase
// v0.31.0 on the same machine the document profile took 13.4 s and
// pocketbase 27.7 s.
package conformance
