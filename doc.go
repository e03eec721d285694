// Command strongbox serves an application backend's backups, request logs
// and record authentication over an HTTP JSON API compatible with
// PocketBase v0.31, and runs the black-box conformance suite against any
// such server.
//
//	strongbox serve [--http 127.0.0.1:8090] [--dir ./sb_data] [--metrics ADDR]
//	strongbox superuser upsert|create|update|delete|otp EMAIL [PASSWORD] [--dir ./sb_data]
//	strongbox conformance [--url URL --email EMAIL --password PASSWORD] [--profile document|pocketbase|strongbox] [--run REGEXP] [--only ID-PREFIX] [--destructive] [--known NAME|FILE] [--record-known FILE] [--json FILE] [--junit FILE] [--timeout DURATION] [--smtp-host HOST] [--oauth2-host HOST]
//	strongbox logs seed [--n 1000000] [--dir ./sb_data]
//	strongbox backup list|create [NAME]|restore KEY [--dir ./sb_data]
//	strongbox restore s3://BUCKET[/PREFIX] --endpoint URL [--region R] --dir NEW [--at "YYYY-MM-DD HH:MM:SS.mmmZ"] [--list] [--identity-file FILE]
//	strongbox import pocketbase PATH [--dir ./sb_data] [--dry-run] [--no-mail] [--encryption-env NAME]
//	strongbox version
//
// Every command takes --help (it prints its usage and flags and exits 0);
// flags may come before or after the arguments; an unexpected argument or
// an unknown flag is an error that prints the usage. strongbox help (or
// --help) prints the lines above. serve --help also lists the environment
// variables (STRONGBOX_HTTP, STRONGBOX_DIR, STRONGBOX_METRICS_ADDR, STRONGBOX_SUPERUSER_EMAIL,
// STRONGBOX_SUPERUSER_PASSWORD, STRONGBOX_BCRYPT_COST,
// STRONGBOX_LOGS_MAX_MB, STRONGBOX_BACKUP_MAX_UPLOAD_MB,
// STRONGBOX_OAUTH2_ALLOW_PRIVATE); a flag given overrides its variable.
//
// The commands that work on existing data (superuser update|delete|otp,
// backup list|create|restore) refuse a --dir that does not exist or holds
// no strongbox data, naming the path, instead of creating an empty one.
// serve, superuser upsert|create and logs seed create a new data dir when
// there is none.
//
// # serve
//
// serve runs the server on the data dir (package strongbox/httpapi/app).
// With --metrics ADDR (STRONGBOX_METRICS_ADDR) it also serves GET
// /metrics, in the Prometheus text format, on a listener of its own at
// ADDR (package strongbox/httpapi/metrics): off by default, so that the
// metrics are never exposed with the API by accident; an address that
// cannot be bound fails the start before the data dir is touched.
// The first start on an empty data dir creates a superuser
// (STRONGBOX_SUPERUSER_EMAIL, admin@localhost by default, with
// STRONGBOX_SUPERUSER_PASSWORD or a random password) once it is
// listening, and prints the credentials once, the dashboard's address and
// a curl line that logs in; a start that cannot bind creates nothing, and
// a password set by the operator is never printed back. Later starts
// print how to log in and how to reset the password. The commands printed
// are the ones that work for how the program was started ("go run .
// superuser update …" under go run). Every start, and the restart a
// restore makes, ends with the line
//
//	strongbox VERSION listening on http://ADDR (data dir DIR)
//
// on stdout. serve stops gracefully on SIGINT and SIGTERM: requests in
// flight finish, every store is flushed and closed.
//
// # superuser
//
// superuser upsert, create, update and delete change the superusers of a
// stopped server's data dir (authn.ApplySuperuserAction has the rules of
// each). While a server runs on the dir, they refuse with an "in use"
// error naming the server's pid: use the API instead (POST
// /api/collections/_superusers/records).
//
// superuser otp EMAIL prints a fresh one-time password for that superuser
// (its otpId, the code and how many seconds it is valid) and sends no
// mail: recovery when mail is broken. It needs OTP enabled on _superusers
// (else "OTP auth is not enabled for the _superusers collection"), as
// PocketBase does: there OTP is only ever a second factor, so the printed
// code is useless without it and still needs the superuser's password.
// Using it never marks the record verified.
//
// # conformance
//
// conformance runs the conformance suite (package strongbox/conformance,
// whose doc has the flags, the profiles and how to read the report) and
// exits non-zero on any failure. Without --url it checks a throwaway
// strongbox on a new temporary data dir (package
// strongbox/httpapi/app/throwaway), removed at the end.
//
// # logs seed
//
// logs seed adds N synthetic, realistic request logs (spread over the
// last 24 hours; a mix of methods, paths, statuses and clients) to a
// stopped server's data dir, for benchmarks and demos:
//
//	go run . logs seed --n 1000000 && go run . serve
//
// # backup
//
// backup list prints the archives of the data dir, ascending by key, one
// per line: key, size in bytes and modification time in UTC (RFC 3339),
// separated by tabs; nothing for none. It only reads, so it also works
// while a server runs.
//
// backup create [NAME] backs up a stopped server's data dir and prints the
// key. NAME follows the rules of POST /api/backups (the interface
// document's §4.2), with the same messages: 1 to 150 characters matching
// [a-z0-9_-]+\.zip, not already taken; without it the name is
// sb_backup_YYYYMMDDHHMMSS.zip (UTC, with _2, _3… if taken).
//
// backup restore KEY restores the archive KEY into a stopped server's data
// dir, with no restart: it takes the dir lock, verifies the archive,
// extracts and swaps it in, opens the stores on the restored data, and
// deletes the old data if they open or puts it back (and exits non-zero)
// if they do not. It needs no exec, so it also works on Windows.
//
// While a server runs on the dir, create and restore refuse with an "in
// use" error: use the API instead. All three read the stored settings and
// work on the S3 bucket when backups.s3 is enabled; list needs the data
// dir's lock to read them, so while a server runs it lists the local
// folder (use GET /api/backups for the bucket then).
//
// # restore s3://
//
// restore s3://BUCKET[/PREFIX] rebuilds a data dir from the continuous
// backup a server ships while backups.continuous is on (package
// backup/stream), from the bucket alone: the keys under PREFIX/stream/
// (stream/ without PREFIX). The credentials are AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY; --region and --endpoint default to AWS_REGION
// (else us-east-1) and AWS_ENDPOINT_URL; --path-style (default true)
// addresses the bucket as a path segment. --dir must be new or empty: the
// dir is built beside it and renamed into place once complete. Without
// --at it restores the latest state; with --at (UTC, "YYYY-MM-DD
// HH:MM:SS.mmmZ" or RFC 3339) exactly the state at that instant. A missing
// or altered object stops the restore at the last consistent point, with a
// warning on stderr (with --at past that point it refuses). --list prints
// each generation's range and the whole restorable range. An encrypted
// stream is opened with the age identity of --identity-file or
// STRONGBOX_AGE_IDENTITY.
//
// # import pocketbase
//
// import pocketbase PATH makes a new data dir (--dir, which must not exist
// or be empty) from the data of PocketBase v0.23 to v0.31: PATH is the
// pb_data folder of a PocketBase that is stopped, or a .zip backup archive
// PocketBase made. It prints one line per fact imported or skipped; what
// is imported, what is skipped and why, and how a crash is survived are in
// package strongbox/httpapi/app ("Importing from PocketBase"). It ends
// with the command to run next (strongbox serve --dir DIR) and, when the
// imported SMTP settings are enabled, a line saying so: the first serve
// sends mail through that server.
//
//   - --dry-run prints the same report and writes nothing to --dir.
//   - --no-mail turns imported SMTP settings that are enabled off: mails
//     go to the outbox (mail/ in the data dir) until SMTP is turned on
//     again in the dashboard's mail settings.
//   - --encryption-env NAME: PocketBase started with --encryptionEnv keeps
//     its settings encrypted with the key in that variable. Give the name
//     of the variable that holds the same key; an import of encrypted
//     settings without it, or with an empty variable, stops with a
//     message.
//   - Any error stops the import with a message and a non-zero exit
//     status, and leaves nothing behind.
//
// # Tests
//
// go test ./... needs nothing but Go. The tests of this package drive the
// built binary: TestConformance runs the whole suite against an in-process
// server once per profile, TestConformanceDestructive the backup checks,
// the full restore included, against a child serve process that the
// restore re-executes, and TestRestoreReexec a restore's restart on a real
// socket (see package strongbox/httpapi/app).
//
// TestOfficialJSSDK drives a throwaway strongbox through PocketBase's
// official JavaScript SDK (npm pocketbase 0.26.9; testdata/sdk/check.mjs)
// as an application would: superuser and user sign-in and refresh,
// impersonation with its duration, records, API rules, logs with view and
// stats, backups created, listed, downloaded with a file token, uploaded
// and deleted, the account mails, and the errors the SDK raises; it checks
// each answer. Without STRONGBOX_JS_SDK (and node) it is skipped:
//
//	npm install --prefix /tmp/sdk pocketbase@0.26.9
//	STRONGBOX_JS_SDK=/tmp/sdk/node_modules/pocketbase go test -run TestOfficialJSSDK -v .
//
// The dashboard's browser tests (TestDashboard…) are described in package
// strongbox/httpapi/dashboard. .ci/run installs every counterpart and runs
// everything.
package main
