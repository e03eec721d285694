// Package api is strongbox's HTTP JSON API: the routes of the interface
// document, the PocketBase error envelope and status codes, token loading,
// request logging and the `fields` projection. Lower packages know nothing
// of HTTP; this one translates between them and the wire.
//
// This comment is the reference of what a client sees: every route, its
// answers and its limits. The interface document is cited by section (§N);
// where it is silent, the answers are PocketBase v0.31.0's, so that its
// clients work. What the lower packages decide is documented there:
// tokens, rules, passwords, OTP and MFA in package strongbox/authn, the
// log store in strongbox/logstore, archives in strongbox/backup, the
// settings in strongbox/httpapi/settings.
//
// # Routes
//
//   - GET /api/health
//   - POST /api/collections/{c}/auth-with-password, auth-refresh,
//     impersonate/{id}, GET …/auth-methods, POST /api/files/token (§4.5)
//   - POST /api/collections/{c}/request-verification, confirm-verification,
//     request-password-reset, confirm-password-reset, request-email-change,
//     confirm-email-change (see "Account flows")
//   - POST /api/collections/{c}/request-otp, auth-with-otp (§4.5, §5; see
//     "One-time passwords and MFA")
//   - POST /api/collections/{c}/auth-with-totp, GET …/totp, POST
//     …/totp/setup, …/totp/confirm, …/totp/disable (strongbox's own; see
//     "Authenticator apps (TOTP)")
//   - POST /api/collections/{c}/auth-with-oauth2; the OAuth2 links as GET
//     /api/collections/_externalAuths/records, GET|DELETE
//     …/_externalAuths/records/{id} (§4.5; see "OAuth2 sign-in")
//   - POST /api/collections/{c}/passkeys/register/options,
//     passkeys/register, GET …/passkeys, DELETE …/passkeys/{id}, POST
//     …/auth-with-passkey/options, auth-with-passkey (strongbox's own; see
//     "Passkeys")
//   - GET|POST /api/collections, GET|PATCH|DELETE /api/collections/{c}
//     (superusers; auth collections, PocketBase's option names)
//   - GET|POST /api/collections/{c}/records, GET|PATCH|DELETE
//     …/records/{id} (auth collections: sign-up, owner or superuser
//     access; filter, sort, page, perPage, skipTotal on the lists)
//   - GET /api/logs, GET /api/logs/{id}, GET /api/logs/stats (§4.3,
//     superusers; see "Request logs"); GET /api/logs/export (superusers,
//     strongbox's own: the state of the OTLP log export, see "Request
//     logs")
//   - GET|PATCH /api/settings, POST /api/settings/test/email, POST
//     /api/settings/test/s3 (superusers)
//   - GET|POST /api/backups, POST /api/backups/upload, GET|DELETE
//     /api/backups/{key}, POST /api/backups/{key}/restore (§4.2,
//     superusers; see "Backups"); GET|POST /api/backups/check
//     (superusers, strongbox's own: the check of the stored archives, see
//     "Backups"); GET /api/backups/stream (superusers,
//     strongbox's own: the state of the continuous backup of package
//     strongbox/backup/stream, while backups.continuous is on:
//     {enabled, generation, lastShipped, lagMs, behind, restorableFrom,
//     restorableTo, lastError, lastErrorAt, objects, bytes}; dates as the
//     logs' are written, "" for none; lagMs is how long changes not yet
//     shipped have waited, 0 when none wait; "stream" is no archive key,
//     since every key ends in .zip)
//   - GET|POST /api/realtime, GET|POST /api/oauth2-redirect and its two
//     pages (see "Realtime and the OAuth2 popup flow")
//   - GET /_/… the dashboard's files (package strongbox/httpapi/dashboard;
//     /_ redirects to /_/)
//
// # Errors
//
// Every error is the envelope {"data":{},"message":"…","status":N}.
// Unknown routes and wrong methods are a JSON 404. ?fields= prunes any
// JSON response (§4.1); a malformed fields value is a 400, not
// PocketBase's empty 200. A query string Go's URL parser cannot read whole
// (a raw ";", a "%" not followed by two hex digits, over 10,000 pairs) is
// a 400 on every route, naming the parameter but never its value.
//
// A write the disk refuses answers 507 "Storage is full: the change was
// not saved." (ENOSPC, EDQUOT) or 503 "Storage is failing: the change was
// not saved." (any other I/O error) and changes nothing; meanwhile GET
// /api/health answers 503 "API is degraded: storage is full." (or "… is
// failing.") with data.degraded naming the stores (auth, settings, logs),
// and 200 "API is healthy." again as soon as the disk takes writes (see
// package strongbox/httpapi/app, "Data dir").
//
// # Collections and records
//
// PocketBase's auth system collections _mfas (MFA sessions), _otps
// (one-time passwords), _externalAuths (OAuth2 links) and _authOrigins
// (sign-in origins: each completed sign-in from a new device,
// PocketBase's fingerprint of client IP and user agent, while the
// collection's authAlert is enabled; at most five per record, gone with a
// password change) are listed by GET /api/collections with PocketBase's
// ids, fields and rules (fixed: no change, no delete), and served by GET
// /api/collections/{c}/records (with filter, sort, fields) and GET|DELETE
// …/records/{id} as PocketBase answers them. Superusers see and delete
// every row; a record sees its own rows and deletes its own links and
// origins; nobody else gets any (403 to delete an _mfas or _otps row, 404
// otherwise); nobody creates or changes one (PocketBase lets a superuser
// write them; strongbox writes them from its sign-in flows only).
// Deleting an MFA session or OTP ends it: signing in with it fails. An
// OTP's password is always "" (strongbox keeps only a salted hash of the
// code, never shown) and cannot be filtered by; the address it went to
// (sentTo) is shown to superusers only.
//
// A custom field marked hidden is set by, shown to and selectable with
// fields by superusers only (an auth answer shows it when the signed-in
// record is a superuser); anyone else's value for it, in a sign-up, an
// update or OAuth2's createData, is dropped without an error, as
// PocketBase v0.31.0 drops it, and the rules read the body without it.
//
// Updates never answer 200 and drop a key: every key of a collection or
// record PATCH is applied (the next GET reports it as sent) or refused
// with a 400 and a code under that key. As PocketBase does, a system
// collection (_superusers) keeps its name and API rules
// (validation_collection_system_name_change,
// validation_collection_system_rule_change; strongbox also freezes its
// authRule and manageRule), no collection changes type or id, and a
// record keeps its id (validation_pk_change). Where PocketBase would
// silently reset a value, strongbox refuses it with its own code:
// _superusers keeps OAuth2 off (validation_superusers_oauth2), password
// sign-in on (validation_superusers_password_auth) and its members
// verified (validation_superusers_verified); keys a collection or record
// does not have are validation_unknown_field, read-only ones
// validation_read_only, values it cannot store as sent
// validation_unsupported_value. Every token duration of every collection
// is 10..94670856 s (PocketBase's validation_required,
// …_min_greater_equal_than_required, …_max_less_equal_than_required),
// except that the users authToken may be 0 (static, §5.9). A data dir
// whose _superusers an older version let be opened up is put right (and
// logged) at start.
//
// Nothing sent is silently dropped either. A record create or update
// carrying a multipart file part is refused under the part's name with
// validation_file_unsupported (strongbox stores no files), a form key sent
// twice with validation_unsupported_value. Creating a base or view
// collection is a 400 under type (validation_unsupported_value):
// strongbox stores auth collections and their records only. A data dir
// that already holds base collections opens as before, and their records
// answer 404.
//
// # Rules
//
// The API rules (listRule … deleteRule, authRule, manageRule; their
// operands and their checks at save are in package strongbox/authn) are
// applied as PocketBase v0.31.0 applies them: a list shows the records its
// rule lets through, a view, update or delete it refuses is 404, a create
// it refuses is 400 "Failed to create record.", an authRule that refuses a
// sign-in (password, OTP, OAuth2, refresh) is 403 before MFA, and a
// signed-in record that manageRule matches may change another record's
// email, password and verified without oldPassword. Superusers bypass
// every rule. A rule refused at save is a 400 with validation_invalid_rule
// under the rule's key. In a list's filter, anyone but a superuser sees
// every comparison naming email fail for a record whose emailVisibility
// is false, its owner included (as in PocketBase), and sort=email orders
// such emails as empty; hidden fields are filterable and sortable by
// superusers only (a 400 for anyone else).
//
// # Backups
//
// The backup routes (§4.2) keep zip archives in <data dir>/backups/, or
// in an S3 bucket when the settings' backups.s3 is enabled (package
// strongbox/backup has the format and the storage). Every one is for
// superusers: a guest gets 401 "The request requires valid record
// authorization token.", another record 403 "Only superusers can perform
// this action." on the list (§7 row 7) and 403 "The authorized record is
// not allowed to perform this action." everywhere else (§7 row 8). One
// create or restore runs at a time (§3, §8); list, download and upload
// never wait for it. Every route answers the same on the bucket.
//
//   - GET /api/backups answers a JSON array ([] when empty) of
//     {"modified":"2026-11-22 09:40:39.508Z","key":"….zip","size":221188}
//     (§2.1; modified in UTC to the millisecond, size in bytes), ascending
//     by key; ?fields= applies to each entry. If the backups folder cannot
//     be read: 400 "Failed to load backups filesystem." (§7 row 1).
//   - POST /api/backups takes an optional name (JSON, urlencoded or
//     multipart; no body is fine). The checks, in order: another create
//     or restore running → 400 "Try again later - another backup/restore
//     process has already been started." (§7 row 2); a body that cannot be
//     read → 400 "An error occurred while loading the submitted data."; a
//     bad name → 400 "An error occurred while validating the submitted
//     data." with data.name one of validation_length_out_of_range (1..150
//     characters, with params), validation_match_invalid
//     ([a-z0-9_-]+.zip, §8), validation_backup_name_exists. Without a name
//     one is generated, sb_backup_YYYYMMDDHHMMSS.zip in UTC, with _2, _3…
//     when a backup of the same second exists: nothing is ever
//     overwritten. The create runs to its end before the answer (204), and
//     a client that disconnects does not cancel it (it is bounded by an
//     hour). A failure is 400 "Failed to create backup.", its cause in the
//     server's log. A server without a backups folder answers that same
//     400.
//   - POST /api/backups/upload takes multipart/form-data only, the first
//     file of field file, and streams it to disk: it is never held in
//     memory and counts 64 KiB against the body budget, whatever its size.
//     Refusals are 400 "Something went wrong while processing your
//     request." (§7 row 3) with data.file: no file → validation_required;
//     content that is not a zip by its first bytes (whatever its name or
//     declared type) → validation_invalid_mime_type, "\"<name>\" mime type
//     must be one of: application/zip."; a file name that is not a valid
//     archive name (the create rule; PocketBase takes any name) →
//     validation_match_invalid; an existing name →
//     validation_backup_name_exists, "Backup file with the specified name
//     already exists."; larger than the maximum upload size
//     (STRONGBOX_BACKUP_MAX_UPLOAD_MB) → validation_file_size_limit (before
//     reading, when the declared length says so); a zip that is not a
//     strongbox archive (no or wrong manifest.json, a size or checksum
//     that does not match, an unsafe entry, zip-bomb limits, or stores the
//     server could not open: package strongbox/backup, "Verification") →
//     validation_invalid_backup with the reason, which names entries of
//     the archive, never a path on the server. A PocketBase archive is
//     refused so, with a message that names strongbox import pocketbase. A
//     refused or interrupted upload leaves nothing behind. Success is 204.
//     The upload does not wait for a running create or restore.
//   - DELETE /api/backups/{key}: the archive a create or restore is using
//     → 400 "The backup is currently being used and cannot be deleted."
//     (§3 rule 2); any other archive while a create or restore runs → 400
//     "Try again later - another backup/restore process has already been
//     started." (§3, §7; PocketBase lets it go); no such archive (a folder
//     or link by that name is none, and is left alone) → 400 "Invalid or
//     already deleted backup file." (without PocketBase's raw error, which
//     shows the server's path); 204. Without a backups folder: 400 "Failed
//     to load backups filesystem." (PocketBase answers 500; §4.2 names only
//     400 for this route).
//   - GET /api/backups/{key}?token=… (and HEAD) takes a superuser file
//     token (POST /api/files/token) in the query only (§5.10): no token,
//     an Authorization header alone, an auth token, a user's file token,
//     an expired or altered one → 403 "Insufficient permissions to access
//     the resource."; no backups folder → 400 "Filesystem initialization
//     failure." (§7 row 5); unknown key → 404 "The requested resource
//     wasn't found.". The archive is served as application/zip,
//     Content-Disposition: attachment; filename=<key>, Cache-Control:
//     no-store, with ranges and conditional requests; the token never
//     reaches the request log (token=REDACTED).
//   - GET /api/health reports canBackup: false to superusers while a
//     create or restore runs.
//
// Create, upload and download have an hour to send or receive their
// bodies, and a restore an hour to verify its archive before it answers
// (see "Limits"). Every call to an S3 bucket has a deadline of its own, as
// a whole, and a listing an end (package strongbox/backup/s3, "Bounds"),
// so a bucket that answers slowly, or whose listing never ends, gets the
// route's error before the route's deadline (GET /api/backups: 400 "Failed
// to load backups filesystem." within 28 s).
//
// POST /api/backups/{key}/restore (§4.2) replaces the data with the
// archive's and restarts the process on it (package strongbox/httpapi/app,
// "Restoring a backup", has what follows the answer). Checks, in order: a
// guest gets 401, another record 403 "The authorized record is not
// allowed to perform this action."; no backups folder, 400 "Failed to load
// backups filesystem." (PocketBase answers 500 here, but §7 lists this
// message only as a 400); another backup or restore running, 400 "Try
// again later - another backup/restore process has already been
// started."; no archive by that key (any stored key, an automatic
// backup's @auto_… too; a folder or link by that name is none), 400
// "Missing or invalid backup file."; on Windows, 400 saying to stop the
// server and use strongbox backup restore (a running server cannot
// restart itself there); a server that runs inside another command (the
// throwaway server of strongbox conformance without --url and without
// --destructive), a 400 saying so; an archive that fails verification, 400
// "The backup file is not a valid strongbox backup: …" naming what is
// wrong in the archive's own terms. The lock is taken before the answer,
// not a second after it as PocketBase does, so a create, delete or second
// restore sent right after the 204 is refused. From an S3 bucket, the
// archive is first downloaded into a temporary file in backups/ (on the
// data dir's file system) and verified in full before the answer; a
// failed download answers 400 and changes nothing. Then it answers 204. A
// request that reaches the server while it restarts waits, or gets the 503
// envelope "The server is restarting, try again later.".
//
// POST /api/settings/test/s3 with {"filesystem":"backups"} tests the
// stored bucket as PocketBase does: it lists the bucket, puts a small
// probe object under sb_settings_test_…/test.txt and deletes it. 204 when
// all three work; otherwise 400 "Failed to test the S3 filesystem. Raw
// error: ", a line break, the step that failed and the S3 error code and
// message (AccessDenied: Access Denied, NoSuchBucket: …,
// SignatureDoesNotMatch: …) or the connection error; never the secret.
// With S3 backups disabled, 400 "… Raw error: \nS3 storage filesystem is
// not enabled." as in PocketBase; {"filesystem":"storage"} always answers
// that 400 (this server stores no files); a body without filesystem, or
// with another value, 400 "Failed to test the S3 filesystem." with
// data.filesystem validation_required or validation_in_invalid.
//
// GET /api/backups/check and POST /api/backups/check (superusers; neither
// the document nor PocketBase has them) report and start the check of the
// stored archives (package strongbox/httpapi/app, "Backups"). POST starts
// one in the background and answers 204 at once, or 400 "Try again later
// - a check of the backups is already running."; GET answers
//
//	{"running":false,"last":{"started":"2026-11-29 04:00:00.000Z","ended":"2026-11-29 04:00:03.120Z",
//	 "checked":6,"gone":0,"bytes":361820160,"error":"",
//	 "bad":[{"key":"b.zip","reason":"entry \"auth.journal\": SHA-256 mismatch","unread":false}]}}
//
// with last null until a check ended since the process started; unread
// marks an archive that could not be read (a bucket unreachable) rather
// than one found damaged; error says why a check stopped before the end.
//
// # Request logs
//
// Every request is logged except successful reads of /api/logs* and the
// dashboard's files (an error under /_/ is logged): message "METHOD URL"
// (the URL unescaped, as PocketBase writes it, but for the characters that
// are not printable: a CR or LF sent as %0d%0a, any other control
// character, line separator or format character stays a %XX escape, so
// that a message is always one line; data.url is the URL as sent), level
// 0 on success and 8 with data.error when the request failed, and data
// holding auth (the caller's auth collection name), execTime (ms), method,
// url, status, referer, userAgent, remoteIP and userIP (and authId with
// the settings' logs.logAuthId; without logs.logIP, no addresses).
// userIP honours the proxy headers listed in trustedProxy.headers (the
// rightmost address, or the leftmost with trustedProxy.useLeftmostIP);
// without them it equals remoteIP.
//
// Secrets never reach the log, by one rule: in the URL and in the
// Referer, everything from the first "?" or "#" is cut at "?", "&", ";",
// "#" (and an escaped %23) into name=value pieces; a piece whose name,
// decoded, lower-cased and stripped of everything but letters and digits,
// contains token, pass, pwd, secret, apikey, signature, jwt, session,
// bearer, hmac, verifier or credential, or ends with code, otp, key, sig,
// sid, pw, auth or authorization, has its value, up to the next "&",
// replaced with REDACTED (so token, TOKEN, token[], %74oken, access_token,
// refresh_token, newPassword, client_secret, privateKey, code_verifier,
// auth_code and a fragment's #access_token= all are, and a password
// holding "#" or "?" is hidden whole); a Referer's userinfo
// (http://user:pass@host/, also without a scheme or with backslashes)
// becomes REDACTED. No other header is logged (never Authorization), and
// text that is not valid UTF-8 is stored with U+FFFD in place of the
// invalid bytes.
//
// Logging never makes a request wait for the disk, and a request shows up
// in /api/logs within about 200 ms (package strongbox/logstore,
// "Writing"). A settings change is in effect everywhere (request logging,
// retention, trustedProxy, rateLimits) by the time PATCH /api/settings
// answers, so the next request already follows it.
//
// Queries (§4.3): filter and sort over id, created, updated, level,
// message, data.* (and rowid, @random), page, perPage (default 30, at most
// 1000), skipTotal, fields with :excerpt. A malformed filter is 400
// "Something went wrong while processing your request. Invalid filter."
// (§7), the message exactly, on the list and on stats; beyond PocketBase
// (whose data is {}), data.filter says what is wrong and where:
// {"code": "validation_invalid_filter", "message": "Invalid filter:
// expected operand, found end of input (at offset 8).", "params":
// {"offset": 8}}, the offset counted in bytes of the filter (UTF-8) from
// 0. The dashboard shows it with a caret under the filter.
//
// A page of logs and a single entry are written by their AppendJSON
// (marshal's jsonAppender): the bytes of encoding/json's Encoder
// (TestMarshalPageAsEncoder), without its second pass over what a
// MarshalJSON method returns; sort=-created&perPage=50 over a million
// logs takes 0.64 ms over HTTP (BenchmarkLogsList1M and the figures in
// package strongbox/logstore, "Queries").
//
// GET /api/logs/export (superusers; neither the document nor PocketBase
// has it) reports the OTLP log export of package strongbox/logstore/otlp,
// which the OTel environment variables turn on:
//
//	{"enabled":true,"endpoint":"http://collector:4318/v1/logs","protocol":"http/protobuf",
//	 "behind":0,"exported":1520,"failed":0,"lost":0,
//	 "lastSuccess":"2026-05-06 07:08:09.123Z","lastError":"","lastErrorAt":""}
//
// endpoint is scheme, host and path only (no user info, no query), and no
// header the export sends is ever shown; behind counts the stored logs not
// yet acknowledged, exported those acknowledged since the start, failed
// those the receiver refused (400, skipped), lost those retention deleted
// before they were exported; the dates are "" until the first success or
// error. With no export it is {"enabled":false,…} with the other fields
// empty. Like the other reads of /api/logs*, it is not logged.
//
// # Account flows
//
// Email verification, password reset and email change, as the official
// SDKs call them. The interface document does not list these routes (§4.5
// names the authentication endpoints, §5 the token rules); they answer as
// PocketBase v0.31.0 does. Each is a request, which mails a link with a
// token, and a confirm, which takes the token back. Every success is 204
// with an empty body.
//
//	route                   body                                 auth                          mail
//	request-verification    email                                none                          verification template, to the record's email
//	confirm-verification    token                                none                          —
//	request-password-reset  email                                none                          reset-password template, to the record's email
//	confirm-password-reset  token, password, passwordConfirm     none                          —
//	request-email-change    newEmail                             the record's own auth token   confirm-email-change template, to the new address
//	confirm-email-change    token, password (the current one)    none                          —
//
// No enumeration: a request for an email no record of the collection has
// (lookups are exact, case included) answers the same 204 as for a known
// one, after the same work (the token is signed and the mail rendered),
// and nothing is sent. So do a verification request for a record already
// verified and a request within two minutes of the last mail to that
// record (verification: of the last attempt; password reset: of the last
// mail the transport accepted). A failed send is logged, never reported:
// only request-email-change, whose caller has proved who they are,
// answers 400 "Failed to request email change." when the mail transport
// refuses the message. With SMTP off (a fresh install), the mails are
// written to <data dir>/mail/ as .eml files (package strongbox/authn/mail).
//
// The tokens (verification, passwordReset, emailChange) are described in
// package strongbox/authn, "Tokens": each type has its own secret and
// duration, always expires, and a confirmed password reset or email
// change rotates the record's token key, which makes every token of the
// record single-use. Confirming a verification twice is fine (204 again).
// What each confirm does, once its checks pass (each change is written
// and fsynced to the auth journal before the answer):
//
//   - confirm-verification: marks the record verified.
//   - confirm-password-reset: sets the password; marks the record verified
//     when the token was mailed to the email it still has.
//   - confirm-email-change: sets the email to the token's newEmail and
//     marks the record verified.
//
// Errors, each a 400 unless stated. Checks of one body field stop at its
// first failure; the fields are all checked, and their failures reported
// together under data, with "An error occurred while validating the
// submitted data.":
//
//   - all routes: unknown collection / not an auth collection → 404
//     "Missing or invalid collection context." / 404 "Missing or invalid
//     auth collection context."; a body not JSON or a form →
//     "Unsupported Content-Type." (confirm-password-reset: "An error
//     occurred while loading the submitted data."); a field of the wrong
//     JSON type → "An error occurred while loading the submitted data.".
//   - verification routes on _superusers → "All superusers are verified
//     by default."; email-change routes on _superusers → "All superusers
//     can change their emails directly.".
//   - request-password-reset with password auth disabled → "The
//     collection is not configured to allow password authentication."
//     (400, where login answers 403).
//   - request-verification, request-password-reset, email:
//     validation_required, validation_length_out_of_range (1..255),
//     validation_is_email.
//   - confirm-verification, token: validation_required;
//     validation_invalid_token_claims "Missing email token claim." (also
//     a token that does not parse); validation_invalid_token "Invalid or
//     expired token."; validation_token_collection_mismatch;
//     validation_token_email_mismatch (the record's email changed).
//   - confirm-password-reset: token validation_required,
//     validation_invalid_token, validation_token_collection_mismatch;
//     password validation_required, validation_length_out_of_range (the
//     password field's min, default 8, to 255 bytes); passwordConfirm
//     validation_required, validation_values_mismatch. The password
//     field's own rule, the one of every path that sets a password (8 to
//     71 characters; over 72 bytes, bcrypt's limit, first) → "Failed to
//     set new password." with data.password (validation_min_text_constraint,
//     validation_max_text_constraint; validation_invalid_value over 72
//     bytes).
//   - request-email-change: no token / another collection's → 401 "The
//     request requires valid record authorization token." / 403 "The
//     request requires auth record from <its collection> collection.";
//     newEmail validation_required, validation_length_out_of_range,
//     validation_is_email; the current email validation_not_in_invalid;
//     another record's validation_invalid_new_email.
//   - confirm-email-change: token validation_required,
//     validation_invalid_token_payload (no newEmail),
//     validation_existing_token_email "The new email address is already
//     registered: <email>.", validation_invalid_token,
//     validation_token_collection_mismatch; password validation_required,
//     validation_length_out_of_range (1..100), validation_invalid_password
//     (wrong, or the token names no record; checked with the same bcrypt
//     work either way).
//   - the confirms, when the record changed between the check and the
//     write: "Invalid or expired verification token.", "Invalid or
//     expired password reset token.", "Failed to confirm email change.".
//
// The mails: From is the settings' meta.senderName and meta.senderAddress;
// subject and body are the collection's verificationTemplate,
// resetPasswordTemplate and confirmEmailChangeTemplate, whose defaults
// link to {APP_URL}/_/#/auth/confirm-verification/{TOKEN} (and
// confirm-password-reset, confirm-email-change), pages the dashboard
// serves. Placeholders and escaping are package strongbox/authn/mail's;
// {RECORD:<field>} is filled for any field the record shows its owner
// (hidden fields such as tokenKey are not).
//
// The routes carry PocketBase's rate-limit tags requestVerification,
// confirmVerification, requestPasswordReset, confirmPasswordReset,
// requestEmailChange and confirmEmailChange, for rateLimits rules such as
// users:requestPasswordReset or *:requestVerification (see "Rate
// limits"). Their bodies are limited to 64 KiB. The conformance suite
// checks what a client sees without a mailbox (FLOW-001 to FLOW-005: the
// 204 for an unknown email, the validation errors, the token
// request-email-change needs, and confirms refusing an auth token), and
// each flow end to end with the mails read from its own SMTP sink
// (FLOW-MAIL-001 to -004).
//
// # Mail
//
// Record auth sends mail (§4.5, §5): one-time passwords, verification,
// password-reset and email-change links, new-location login alerts,
// through the queue of package strongbox/authn/mail: a request that sends
// mail only queues it and answers, so its status and its timing say
// nothing of whether a mail went out or to whom.
//
// Beyond PocketBase, the mail-sending requests are limited whatever
// rateLimits says: 30 a minute per client address (request-otp,
// request-password-reset, request-verification, request-email-change
// together, counted whether or not the email has a record) and 5 mails a
// minute per target address, across collections. Over either, request-otp
// and request-email-change answer 429 "Too Many Requests." with
// Retry-After (the seconds left in the client's window, or the target's
// whole minute);
// request-password-reset and request-verification still answer 204 and
// send nothing for a target over its limit, since a 429 only for existing
// records would tell which emails have one.
//
// New-location alert: while an auth collection's authAlert.enabled is on
// (the default), a completed sign-in by any method (password, OTP, OAuth2,
// or the second factor of MFA; not an auth-refresh, not an MFA first
// factor) from a device the record has not signed in from before (client
// IP and user agent, kept as an _authOrigins entry) queues the
// collection's authAlert.emailTemplate to the record's email, as
// PocketBase v0.31.0 does. The record's first sign-in alerts nobody, nor
// does a record without email; the sign-in never waits for the mail.
//
// POST /api/settings/test/email (superusers: a guest gets 401, another
// record 403) with {"email": "…", "template": "verification" |
// "password-reset" | "email-change" | "otp" | "login-alert", "collection":
// "…"} (collection optional, _superusers by default) renders that
// template of the collection for a made-up record (its visible fields hold
// __pb_test_<field>__, its email the one given; the OTP is 123456, the
// links carry a token that is not valid) and sends it at once, through
// the transport of the moment, waiting for the outcome:
//
//   - sent: 204; written to the outbox instead (smtp.enabled off): 204
//     with the header Strongbox-Outbox-File naming the file in
//     <data dir>/mail/ (its name only, never a server path), which a
//     PocketBase SDK ignores and the dashboard shows ("not sent: written
//     to the outbox, mail/<name>");
//   - bad body: 400 "Failed to send the test email." with data.email
//     (validation_required, validation_is_email,
//     validation_length_out_of_range), data.template (validation_required,
//     validation_in_invalid), data.collection
//     (validation_invalid_auth_collection, not an auth collection);
//   - the transport failed: 400 "Failed to send the test email:
//     <reason>.", e.g. "…: mail: smtp auth: 535 5.7.8 authentication
//     credentials invalid." or "…: mail: smtp dial: … connection refused."
//     (PocketBase says only "Failed to send the test email.").
//
// # One-time passwords and MFA
//
// OTP sign-in (§4.5, §5 rule 5) and multi-factor sign-in (§5 rule 6),
// turned on per auth collection with the options otp {enabled, duration,
// length, emailTemplate} and mfa {enabled, duration, rule} (PATCH
// /api/collections/{c}). How codes and sessions are made, stored and who
// needs a second factor (mfa.rule) are in package strongbox/authn.
//
// POST /api/collections/{c}/request-otp {"email": "…"}:
//
//   - 200 {"otpId":"<15 characters>"} (§2.8), for an address no record of
//     the collection has too: same shape, same timing, nothing stored,
//     nothing sent, so the answer never tells whether an account exists. A
//     record holds at most 10 unexpired OTPs: an 11th request answers the
//     newest one's id again and sends nothing; an unknown address answers
//     the same way (its ids are remembered in memory for otp.duration, for
//     up to 10,000 addresses), or a repeated id would tell that an account
//     exists.
//   - 403 "The collection is not configured to allow OTP authentication."
//     when otp.enabled is off; 404 "Missing or invalid collection
//     context." for no such collection.
//   - 400 "An error occurred while validating the submitted data." with
//     data.email validation_required, validation_length_out_of_range (over
//     255 bytes) or validation_is_email; a non-string email is the loading
//     error.
//   - The code is mailed to the record's email with the collection's
//     otp.emailTemplate, from the settings' meta.senderName
//     <meta.senderAddress>. The answer does not wait for the disk: the
//     OTP is written and fsynced right after it, and its mail is handed to
//     the mail sender only once the OTP is durable, so no code is ever sent
//     that a crash could lose. (If the write fails, nothing is sent; if the
//     mail cannot be handed over, the OTP is deleted.) An unknown email
//     does the same work, a background fsynced write included, so that not
//     even a request sent right behind it can tell the two apart.
//
// POST /api/collections/{c}/auth-with-otp {"otpId": "…", "password": "<the
// code>"} (the code travels in password, as in PocketBase's SDK; mfaId
// optional, query or body):
//
//   - 200 the §2.6 result {"record":{…},"token":"…"}; the OTP is consumed,
//     and the record becomes verified when the code went to its current
//     email.
//   - 400 "Invalid or expired OTP.": unknown id, another collection's,
//     expired, its record deleted, or the wrong code (a wrong code leaves
//     the OTP usable).
//   - 429 "Too many attempts, please try again later with a new OTP." (§5):
//     at most 5 codes per 180 s for one record from one client address,
//     counted before the code is compared, so the 6th is refused even when
//     right (Retry-After: the rest of the 180 s). The count is per record, not per OTP, so asking for new OTPs
//     does not refill it; it applies whatever the rateLimits settings say
//     and to everyone. Beyond PocketBase, each OTP also counts its wrong
//     codes from all client addresses together: after 5 it is dead, and
//     every later attempt, with the right code too, gets this 429 until it
//     expires; request a new one.
//   - 403 when OTP is off, 400 validation errors (otpId, password:
//     required; at most 255 and 71 bytes).
//
// MFA (§5 rule 6). With mfa.enabled, a login method that succeeds
// (password, OTP, OAuth2) does not return a token: it answers 401 with the
// body exactly {"mfaId":"<15 characters>"}. The client then signs in with
// a different method and passes mfaId in the query (?mfaId=) or the body:
//
//   - 400 "A different authentication method is required." for the same
//     method again (the session stays usable);
//   - 400 "Invalid or expired MFA session." for an unknown id or one older
//     than mfa.duration seconds (default 1800);
//   - 400 "Invalid MFA session." for another record's session;
//   - otherwise the session is consumed (single use) and the 200 result
//     follows. The first factor's effects stand (an OTP used as first
//     factor is consumed).
//
// MFA needs two methods enabled (validation_mfa_not_enough_auths), and it
// is not applied to auth-refresh or impersonate. A malformed mfa.rule is
// refused at save with 400, validation_invalid_rule on data.mfa.rule and
// the message "Invalid rule. Raw error: offset N: …." (PocketBase's code
// and message shape), and so is a change of fields that would break the
// saved rule. Should a stored rule still fail to compile (a data dir
// written otherwise), the sign-in answers 400 "Failed to authenticate."
// (PocketBase's answer to a rule error) instead of skipping the second
// factor. _superusers may enable OTP and MFA as in PocketBase, but OTP
// there is only a second factor: enabling OTP enables MFA, and turning MFA
// off while OTP stays on is refused (validation_superusers_otp_mfa). A
// mailed code alone never yields a superuser token. Enable it only with
// mail working (or strongbox superuser otp at hand): every superuser login
// then needs the code.
//
// Measured (go test ./httpapi/api -run XXX -bench OTP -benchtime 3000x, 2
// vCPU, loopback HTTP, fsync on the local disk): request-otp medians of
// 280–325 µs over four runs, an existing and an unknown email differing by
// 3–12 µs in each run, against an interquartile range of about 100 µs on
// each side; OTP login end to end (request, code read from the mail, auth)
// about 1,000 per second sequentially; password then OTP on an MFA
// collection: 1.5 ms (bcrypt, cost 4 in the benchmark) and 0.6 ms medians.
//
// # Authenticator apps (TOTP)
//
// Beyond PocketBase: an auth collection's option totp {enabled} (off by
// default, _superusers too) lets its records enrol an authenticator app
// as a second factor; auth-methods reports it as totp.enabled. The codes,
// the sealing of the secret, the caps and what needs a second factor are
// package strongbox/authn's ("Authenticator apps (TOTP)"). A PocketBase
// SDK calls these routes with pb.send and stores the result of
// auth-with-totp with pb.authStore.save(token, record).
//
//   - GET /api/collections/{c}/totp (the record's own token): 200
//     {"enabled","pending","recoveryCodes"} (unused recovery codes, a
//     count). 401 without a token, 403 for a token of another collection,
//     404 for no such auth collection, as auth-refresh answers them.
//   - POST …/totp/setup (own token): 200 {"secret": BASE32, "uri":
//     "otpauth://totp/APP:EMAIL?secret=…&issuer=APP"} (APP: the settings'
//     meta.appName), pending until confirmed; the only answer that ever
//     holds the secret. A new setup replaces a pending one. 403 "The
//     collection is not configured to allow TOTP authentication." when
//     totp is off; 400 "TOTP is already enabled for this account." once
//     confirmed.
//   - POST …/totp/confirm {"code"} (own token): 200 {"recoveryCodes":
//     [10 × "xxxx-xxxx-xxxx"]}, shown this once; 400 "Invalid TOTP code.",
//     400 "There is no TOTP setup to confirm.", data.code
//     validation_required or validation_length_out_of_range (over 71
//     bytes).
//   - POST …/totp/disable {"code"} (own token; a current code or a
//     recovery code, none for a pending setup) or, by a superuser,
//     {"recordId"} (no code: the way back for a record that lost its
//     authenticator and its recovery codes): 204; 400 "TOTP is not enabled
//     for this account.", 400 "Invalid TOTP code."; 403 "Only superusers
//     can perform this action." for recordId from anyone else; 404 for no
//     such record.
//   - POST …/auth-with-totp {"code"} with mfaId (query or body, required):
//     the second factor of the MFA sign-in that a record with a confirmed
//     TOTP is always asked for after any first factor (password, OTP,
//     OAuth2: 401 {"mfaId"}), even with mfa off. 200 the §2.6 result;
//     "Invalid or expired MFA session." and "Invalid MFA session." (a
//     session of another collection) as the other second factors; 400
//     "Invalid TOTP code." (wrong, already used, or a used recovery code);
//     400 "TOTP is not enabled for this account."; 403 when totp is off.
//     With mfa on, such a record cannot complete with an emailed OTP or
//     another method that is not its own: 400 "A different authentication
//     method is required.", the session staying usable for the code.
//   - 429 "Too many attempts, please try again later." (throttle "totp"):
//     an MFA session after 5 wrong codes (sign in again), a record after
//     10 within an hour from anywhere (Retry-After: the rest of the hour),
//     counted before the code is compared; confirm and disable count too.
//
// Events: "totp enabled", "totp disabled", "totp disabled by a
// superuser" (with the superuser's id and email) and "sign-in from a new
// location: alert mailed" (with the methods, e.g. password+totp) are info
// events; "totp recovery code used" (with the codes left) and "totp: too
// many wrong codes" (with the client's address) warnings. The metrics
// count auth-with-totp as the sign-in method totp.
//
// # Passkeys
//
// strongbox's own (PocketBase has none; the SDK calls them with pb.send),
// on an auth collection with passkey {enabled}; auth-methods reports
// passkey.enabled. The relying party is the host of the settings'
// meta.appURL, the only origin accepted its scheme, host and port; an app
// URL whose host is an IP address (browsers refuse one) answers 400
// "Passkeys need the setting meta.appURL to be …". Byte strings are
// unpadded base64url, the WebAuthn Level 3 JSON forms, which a browser's
// PublicKeyCredential.parseCreationOptionsFromJSON, parseRequestOptionsFromJSON
// and toJSON() read and write as they are. With the record's own token:
//
//   - POST /passkeys/register/options → 200 {"challengeId", "publicKey":
//     PublicKeyCredentialCreationOptionsJSON} (resident key and user
//     verification preferred, ES256, EdDSA, RS256, attestation "none", the
//     record's passkeys excluded; 400 "The record has too many passkeys."
//     at 20);
//   - POST /passkeys/register {"challengeId", "credential":
//     RegistrationResponseJSON, "name"} → 200 {"id", "name", "created"};
//     400 "Invalid or expired passkey challenge.", "Invalid passkey." (any
//     check failed), "The passkey is already registered.", or validation
//     errors (challengeId, credential, name of at most 100 bytes);
//   - GET /passkeys → 200 [{"id", "name", "created", "lastUsed", "alg",
//     "transports"}], oldest first; DELETE /passkeys/{id} → 204, 404 when
//     the record has no such passkey.
//
// And for anyone:
//
//   - POST /auth-with-passkey/options {"identity"?} → 200 {"challengeId",
//     "publicKey": PublicKeyCredentialRequestOptionsJSON}: no
//     allowCredentials without identity (usernameless), the same shape
//     whether the identity has an account or not;
//   - POST /auth-with-passkey?mfaId= {"challengeId", "credential":
//     AuthenticationResponseJSON} → the §2.6 result, 401 {"mfaId"} when MFA
//     asks for another method, 400 "Invalid or expired passkey challenge."
//     or "Invalid passkey." (unknown credential, another identity's,
//     signature, origin, RP ID hash, counter: one answer, the log says
//     which), 403 when passkeys are off.
//
// All under the auth limits (64 KiB bodies). Measured (go test
// ./authn/webauthn -bench VerifyAssertion): see the package doc of
// strongbox/authn/webauthn.
//
// # OAuth2 sign-in
//
// Sign-in with an OAuth2 or OpenID Connect provider (§4.5, §5 rules 4, 5,
// 11), turned on per auth collection with the option oauth2 {enabled,
// providers, mappedFields} (PATCH /api/collections/{c}); never on
// _superusers. Each entry of oauth2.providers is {name, clientId,
// clientSecret, authURL, tokenURL, userInfoURL, displayName, pkce, extra},
// checked when the collection is saved (package strongbox/authn), each
// error under oauth2.providers.<index>.<key>. clientSecret is never
// reported; a PATCH that sends a provider back without it (as GET shows
// it) keeps the stored secret of the provider of that name, as PATCH
// /api/settings keeps the SMTP password. The providers themselves, what
// they are trusted for and how an exchange is bounded are in package
// strongbox/authn/oauth2.
//
// GET /api/collections/{c}/auth-methods lists each enabled provider as
// {name, displayName, state, authURL, authUrl, codeVerifier, codeChallenge,
// codeChallengeMethod}: a fresh 30-character state, with PKCE a fresh
// 43-character verifier and its S256 challenge, and the authorization URL
// ready to open, ending in &redirect_uri= for the client to complete. None
// of it is stored: the client keeps the verifier and checks the state (§5
// rule 11).
//
// POST /api/collections/{c}/auth-with-oauth2 {provider, code,
// codeVerifier, redirectURL (or redirectUrl), createData, mfaId}, checked
// in this order:
//
//  1. 404 for no such auth collection; 403 "The collection is not
//     configured to allow OAuth2 authentication." when oauth2.enabled is
//     off.
//  2. 400 "An error occurred while loading the submitted data." for a
//     body that does not bind, and also (as PocketBase) for invalid
//     fields, with data: provider required, at most 100 bytes, and
//     configured on the collection (validation_invalid_provider "Provider
//     with name X is missing or is not enabled."), code and redirectURL
//     required.
//  3. The code is exchanged at the provider (the verifier sent only when
//     the provider uses PKCE; 30 s in all), then the user fetched: 400
//     "Failed to fetch OAuth2 token." or 400 "Failed to fetch OAuth2
//     user.". A provider on a private address (see
//     STRONGBOX_OAUTH2_ALLOW_PRIVATE) fails so too, and the server's log
//     says why.
//  4. The record, first match wins (authn.Store.SignInOAuth2): the record
//     already linked to this provider identity; else the record the
//     request is signed in as, if it belongs to this collection (linking a
//     provider to one's account); else the record with the provider's
//     email, only if the provider says the email is verified; else a new
//     record, through the collection's createRule (null → 403 "Only
//     superusers can perform this action.") and the normal record
//     validation (400 "Failed to create record." with the field errors):
//     createData, the provider's verified email unless createData has one,
//     and the mappedFields (id, name, username only when free and valid,
//     avatarURL into a text or url field; strongbox stores no files, so an
//     avatar is never downloaded), with a random 30-character password;
//     it is verified when its email is the provider's.
//  5. The link is stored (unique per provider identity, and per record and
//     provider: a second account of the same provider for one record is
//     400 "Failed to authenticate."), in one journal commit with the
//     record's changes or creation.
//  6. The collection's authRule, then MFA (OAuth2 is one factor; a record
//     created or linked stays so when the answer is the 401 {"mfaId"}),
//     then 200 {meta, record, token}.
//
// meta has exactly the keys accessToken, avatarURL, avatarUrl, email,
// expiry (the access token's, "" when none), id (the user's id at the
// provider), isNew (true when this call created the record), name,
// rawUser (the provider's user object), refreshToken, username. An
// unverified provider email is never trusted: it matches no record, is not
// stored on a new one and meta.email is "". With no verified email and
// none in createData, sign-up fails on the required email. Neither tokens
// nor client secrets are logged.
//
// The links are PocketBase's _externalAuths records, as a v0.31 SDK reads
// them: GET /api/collections/_externalAuths/records (filter, sort, paging
// on id, collectionRef, recordRef, provider, providerId, created, updated)
// lists the caller's own (a superuser sees all; a guest none), GET|DELETE
// …/_externalAuths/records/{id} views or removes one of them (404
// otherwise). That is what pb.collection("users").listExternalAuths(id)
// and unlinkExternalAuth(id, provider) call. Deleting a record deletes its
// links; a later sign-in with that identity starts over (email match or
// sign-up).
//
// TestOAuth2EndToEnd runs the SDK's authWithOAuth2({provider}) as the JS
// SDK performs it, against the real client (oauth2.NewClient) and the
// loopback provider of package strongbox/conformance/oauth2provider
// configured as oidc through PATCH /api/collections/users: auth-methods,
// the realtime stream and its client id, the @oauth2 subscription, the
// provider's URL with that id as state and
// redirect_uri=<base>/api/oauth2-redirect opened in a "popup" that follows
// the redirects (provider, then /api/oauth2-redirect, then the success
// page), the event's code, and auth-with-oauth2: a new account (meta.isNew
// true, the verified email), the same account again (isNew false), a
// verifier or redirectURL that is not the code's (400 "Failed to fetch
// OAuth2 token."), and the user refusing at the provider (the event
// carries error, the popup ends on the failure page).
//
// Measured (go test ./httpapi/api -run - -bench AuthWithOAuth2 -benchtime 2s
// -count 3, 2 vCPU shared with other work, load average 4 to 6; bcrypt at
// the production cost 10, the request log on, the real client with its
// defaults). One auth-with-oauth2 is two provider requests (token with
// PKCE, then user info), which the loopback provider answers in 10–13 µs
// each serially (20–50 µs under the parallel load):
//
//	path                                       serial                                            parallel (2 clients)
//	linked account (the usual sign-in)         2,200–3,200/s, p50 0.22–0.24 ms, p99 1.6–4.4 ms   1,200–2,000/s, p50 0.26–0.30 ms, p99 11–29 ms
//	new account (record, password hash, link)  10–12/s, p50 73–103 ms, p99 150–180 ms           8–12/s, p50 160–230 ms, p99 270–470 ms
//
// A new account costs one bcrypt hash of its random password, which is
// nearly all of its time. The provider's share is about a tenth of a
// linked sign-in (two answers of about 10 µs in 0.24 ms) and well under 1%
// of a new account.
//
// # Realtime and the OAuth2 popup flow
//
// Most PocketBase apps sign in with the SDK's authWithOAuth2({provider}):
// it opens the provider in a popup and waits for the code on the server's
// realtime channel. strongbox serves what that flow needs, and nothing
// more:
//
//  1. GET /api/realtime opens a stream of server-sent events
//     (Content-Type: text/event-stream, Cache-Control: no-store,
//     X-Accel-Buffering: no so that nginx does not buffer it). Its first
//     event gives the client a new random id (40 characters of
//     [A-Za-z0-9]), as both the event's id and its data (the PB_CONNECT
//     event below).
//  2. POST /api/realtime with
//     {"clientId":"3fTq…","subscriptions":["@oauth2"]} sets that client's
//     topics: 204. Checked as PocketBase checks it, with its answers:
//     clientId is required and at most 255 bytes, at most 1000 topics of
//     at most 2500 bytes each (a 400 "Something went wrong while
//     processing your request." with the field under data; an unreadable
//     body is the same 400 with data: {}); an unknown or ended client is
//     404 "Missing or invalid client id.". A client first subscribed by a
//     signed-in record cannot then be subscribed by another record or a
//     guest (403 "The current and the previous request authorization
//     don't match."); a guest's client may be taken over by a signed-in
//     request. Any topic is accepted, as PocketBase accepts it, but only
//     @oauth2 is ever sent anything: strongbox broadcasts no record
//     changes.
//  3. The SDK puts the client id in the provider's URL as state, with
//     redirect_uri = <base>/api/oauth2-redirect. The provider sends the
//     popup back there with state, code and error, in the query of a GET
//     or the form (or JSON) body of a POST (Apple's form_post). If state
//     is the id of a client subscribed to @oauth2, that client gets the
//     @oauth2 event below ("error" added to its data when the provider
//     sent one) and is unsubscribed from the
//     topic, so one redirect is answered once. The SDK checks the state
//     itself and calls auth-with-oauth2 with the code.
//  4. The popup is redirected, 307 for a GET and 303 for a POST, to
//     oauth2-redirect-success (relative, so
//     /api/oauth2-redirect-success, and still right behind a proxy that
//     mounts the API under a prefix), or to oauth2-redirect-failure when
//     no subscribed client had that state, or the provider sent an error
//     or no code. PocketBase redirects to its admin UI
//     (../_/#/auth/oauth2-redirect-success), a page strongbox's dashboard
//     does not have; instead it serves these two pages itself: a few lines
//     of HTML that say the sign-in is done (or failed) and the window may
//     be closed, with no script, no style and nothing loaded from
//     elsewhere (Content-Security-Policy: default-src 'none'; …). The SDK
//     closes the popup by itself once the message has come; the page is
//     for when it cannot. The redirect is not written to the request log,
//     whatever its outcome (its URL holds the code), and any response to
//     it carries Referrer-Policy: no-referrer.
//
// The two events, as sent:
//
//	id:3fTq…
//	event:PB_CONNECT
//	data:{"clientId":"3fTq…"}
//
//	id:3fTq…
//	event:@oauth2
//	data:{"state":"3fTq…","code":"…"}
//
// A stream holds its connection for as long as it is open, and the
// connection cap never gives away the slot of a busy connection, so
// streams have caps of their own, below it ([Config] sets RealtimeIdle,
// MaxRealtime, MaxRealtimePerClient and MaxRealtimePerGroup):
//
//   - streams open at once: a quarter of the connection cap (1024 with the
//     default 4096, fewer when the descriptor limit is lower). Past it, a
//     new client of another address group takes the slot of the oldest
//     stream that never subscribed to anything, or else of the oldest
//     stream of the group holding the most (if it then still holds more
//     than the newcomer's); with none, 503 "Too many realtime
//     connections, try again later."; one warning line per 10 s for each.
//   - streams of one client address (as trustedProxy yields it; IPv6: per
//     /64): a 64th of the above (16), then 503 as above.
//   - streams of one address group (IPv4: per /24; IPv6: per /48): a 16th
//     of the above (64), then 503 as above.
//   - a stream without an event: 5 minutes, as PocketBase (the SDK
//     reconnects, with a new id), then the stream ends.
//   - writing one event: the route's write deadline (30 s), from the
//     moment it is written; none between events. Past it the stream ends.
//   - messages waiting for one stream: 4; past them the redirect goes to
//     the failure page.
//   - body of POST /api/realtime: 1 MiB (PocketBase's limits allow 2.5 MB
//     of topics), else 413; body of POST /api/oauth2-redirect: 64 KiB,
//     else the failure page.
//
// A client keeps a few bytes whatever it subscribes to: strongbox
// remembers only whether @oauth2 is one of its topics. Streams end at once
// when the server stops (http.Server.Shutdown) or restarts (a restore),
// instead of holding the stop for its whole timeout; their clients
// reconnect, and wait for the restart like any request.
//
// Not served: record subscriptions, and the Apple user field of a
// form_post (PocketBase keeps the name in it for a minute for
// auth-with-oauth2). A stream idle for 5 minutes ends: a person who takes
// longer than that in the popup comes back to a client id that no longer
// exists, and gets the failure page, as with PocketBase.
//
// # Metrics
//
// Config.Metrics, an Observer, is told how each request ended once it is
// answered (observe.go): its method, the pattern of the route the mux
// chose (without the method; for a request answered before the mux, such
// as a rate limit's 429 or a redirect to the canonical path, the route it
// would have chosen; "" for the catch-all 404), the status and the time
// from arrival. A sign-in route's answer is also a sign-in by method
// (password, otp, oauth2) and outcome (200 success, 401 with an mfaId
// mfa_required, 429 throttled, 5xx error, any other failure), and every
// 429 a refusal by the limit that answered it (rate_limit, login, otp,
// mail, busy). strongbox/httpapi/app passes strongbox/httpapi/metrics's
// API when metrics are on, and nil otherwise.
//
// # Rate limits
//
// Password login is throttled by default, whatever the settings say
// (PocketBase v0.31.0 has no lockout; package strongbox/httpapi/ratelimit
// has the counters): a locked attempt gets 429 "Too many failed login
// attempts, please try again later." with Retry-After (the rest of the
// window), before any bcrypt work, so even the right password is refused
// there; a login whose turn does not come within 5 seconds (or whose
// client goes away) gets PocketBase's rate-limit answer, 429 "Too Many
// Requests.", with Retry-After. Clients are the address trustedProxy
// yields (IPv6 addresses by their /64).
//
// The settings' rateLimits are PocketBase's (package
// strongbox/httpapi/ratelimit has how rules match): when enabled, a client
// over a rule's maxRequests gets 429 "Too Many Requests." with Retry-After
// (the rest of the window; PocketBase sends none). The routes
// carry PocketBase's tags: listAuthMethods (auth-methods), authRefresh,
// authWithPassword and auth (auth-with-password), requestOTP
// (request-otp), authWithOTP and auth (auth-with-otp, whose own attempt
// limit, above, applies besides), authWithOAuth2 and auth
// (auth-with-oauth2), authWithTOTP and auth (auth-with-totp), totp (the
// totp routes), the account flows' (see "Account flows"), and list,
// create, view, update and delete on the records routes. Superusers are never limited. A change applies at once, with
// fresh counters.
//
// # Limits
//
// Every input is bounded, and every answer is the JSON envelope, including
// the ones Go's HTTP server would otherwise write as plain text by itself
// (a malformed request line, headers over the limit, an unsupported
// transfer encoding or protocol, a failed Expect):
//
//   - request line and headers: 32 KiB, received within 10 s; past it the
//     431 envelope, or the connection is closed.
//   - body of the auth actions (auth-with-password, auth-refresh,
//     impersonate, files/token, request-otp, auth-with-otp,
//     auth-with-oauth2, the account flows, oauth2-redirect): 64 KiB, read
//     within 10 s; 413 (declared or once passed), 408 for a stalled body.
//   - body of every other route: 1 MiB, read within 10 s; 413 / 408.
//   - writing a response: 30 s (backup create, download and restore: 1
//     h); then the connection is closed.
//   - body of a backup upload: the server's maximum upload size plus 1 MiB
//     for the other parts, streamed to disk, received within 1 h; past it
//     400 with data.file validation_file_size_limit.
//   - all bodies being read and decoded at once (their bytes received,
//     plus 128 B per JSON value, form pair or multipart line): 32 MiB in
//     total, a quarter of it per client address (IPv6: per /64); past it
//     503 "The server is busy, try again later." and closed.
//   - shape of a JSON body (every route that decodes one, @jsonPayload
//     included): 10,000 values ("{", "[" and "," outside strings), 64
//     levels of nesting; past it 400 "An error occurred while loading the
//     submitted data.".
//   - open connections: 4096 (fewer if the descriptor limit is lower: it
//     minus 256). Past it the connection that has waited longest without a
//     request (idle keep-alive, or sent nothing yet) is closed to make
//     room; when every connection is busy with a request, 503 "Too many
//     open connections, try again later." and closed, one warning line per
//     10 s.
//   - open connections of one client (an IPv4 address or an IPv6 /64): an
//     eighth of the above (512); past it the same, among that client's own
//     connections.
//   - an idle keep-alive connection: 60 s, then closed.
//
// Form bodies are parsed in memory (never into temporary files) and any
// parsed form is removed when the request ends, whatever its outcome. A
// path that is not canonical (//, /./, /../) gets a 307 envelope whose
// Location is the cleaned path.
//
// The memory bound. A body is charged as its bytes arrive, not for the
// length it declares: a client that sends headers and no body holds
// nothing of the budget, one that stalls holds only what it sent, and one
// address can never hold more than a quarter, so others' logins keep being
// read. (The address is the client's as trustedProxy yields it, as for the
// rate limits, so behind a configured proxy each client has its own
// share. The connection cap cannot see headers: it counts the
// connection's address, so behind a proxy raise its share or let the
// proxy limit connections. A body whose charge alone exceeds a share can
// never fit and gets 413.) Decoding is charged before it happens, since a
// body of {},{},… would otherwise decode to a map for every three bytes
// (30 such 1 MiB bodies took an earlier build to 849 MB). What a body
// holds, its buffer (grown with the bytes received) and its decoded value,
// is at most 2.1 times its charge (TestDecodedBodyMemory, on the worst
// shapes the limits allow), so request bodies hold at most about 2.1 × 32
// MiB + 512 B per connection reading one, some 70 MiB live, which the
// garbage collector lets the heap double.
//
// bcrypt work is bounded too (package strongbox/authn, "Passwords"): at
// most one computation per CPU and 64 per CPU waiting; beyond that a login
// gets 429 at once, so a login flood does not slow other requests.
//
// The load-and-fault tests of package main measure all of this against
// the built binary (go test -tags loadfault -run 'TestLoadFault|TestBodyMemory'
// -v .): stalled bodies, 6,000 idle connections, bodies declared and never
// sent, slow readers, 31 MiB and multipart bodies, 1 MiB bodies of {}, and
// a failed-login flood for 30 s, all at once, while a client from another
// address polls /api/health and posts small bodies, which must all be
// read.
package api
