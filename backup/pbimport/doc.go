// Package pbimport converts a PocketBase v0.23 to v0.31 data dir or
// backup archive, as package backup/pocketbase reads it, into a new
// strongbox data dir, and reports what it imported and what it skipped,
// and why (Report.Text, one fact a line).
//
// It knows nothing of HTTP and imports nothing of the server: the caller
// opens the auth and settings stores of the new data dir in the folder
// the import names (Options.OpenStores; the command uses app.ImportStores,
// which lays the dir out as the server does), and the settings store is
// reached through the Settings interface (StoreSettings adapts
// strongbox's), so that every section keeps the validation of an update
// through the API: a section the store refuses keeps strongbox's
// defaults and is reported. The log store it opens itself.
//
// An import never leaves a half-written data dir: it converts in a
// temporary folder .NAME.import-RANDOM beside the target, holding its
// lock, where an archive is extracted too; it closes and fsyncs the
// stores, renames the folder onto the target and fsyncs the parent. The
// next import into the same target removes the folders a crash left (see
// Import and ImportFrom).
//
// # Importing from PocketBase
//
// Import (strongbox import pocketbase) turns the data of
// PocketBase v0.23 to v0.31, read by package strongbox/backup/pocketbase
// from a stopped PocketBase's pb_data or from a backup archive PocketBase
// made, into a new data dir. Then strongbox serve serves it: every account
// signs in with the password it had, OAuth2 links resolve to the same
// records, and the tokens PocketBase issued stay valid (strongbox signs
// tokens with the record's tokenKey and the collection's secret, as
// PocketBase does, and both are imported).
//
// What is imported:
//
//   - _superusers and every auth collection: id, name, dates, API rules,
//     the options (password auth and identity fields, OTP, MFA and its
//     rule, OAuth2 providers with client ids and secrets and mapped
//     fields, token durations and secrets, mail templates, authAlert) and
//     the fields of the types strongbox stores (text, number, bool, email,
//     url).
//   - Their records: ids, emails, emailVisibility, verified, the bcrypt
//     password hashes as they are (never re-hashed), tokenKey, dates and
//     field values. A record strongbox would refuse (no email, a value its
//     field refuses, an id, email or tokenKey taken twice) is skipped and
//     counted with the reason; nothing is imported in part.
//   - _externalAuths (OAuth2 links) and _authOrigins of the records
//     imported.
//   - The settings sections meta, smtp (the password too, kept secret),
//     backups (cron, cronMaxKeep, S3), logs, rateLimits, trustedProxy and
//     batch, each validated as PATCH /api/settings validates it: a section
//     strongbox refuses keeps strongbox's default and is reported (so is a
//     rateLimits section of more than 5,000 rules, more than any settings
//     body can carry).
//     An smtp section that is enabled stays enabled, so the first serve
//     sends mail through it: the report says so (Report.Mail), and
//     Options.NoMail (the command's --no-mail) turns it off instead.
//   - Every log of auxiliary.db with its id, time, level, message and data
//     exactly, so the logs API answers the same lists and hourly stats.
//     Logs older than settings.logs.maxDays go with retention, as they
//     would have in PocketBase; the report counts them.
//
// What is skipped, each named in the report with its reason: base and
// view collections (strongbox stores no base records), file fields (no
// file storage) and fields of other types (select, json, relation, date,
// editor, geoPoint), the indexes strongbox does not keep (it has the
// unique email and tokenKey indexes, and identity fields stay unique), API
// rules strongbox cannot compile (joins such as @collection.*: stored as
// null, which lets only superusers in; an mfa.rule as "", which asks every
// record for MFA), OAuth2 providers strongbox has no preset for, the
// custom fields of _superusers, _mfas and _otps rows (sign-in state that
// lasts minutes: counted), and settings strongbox has no use for (file
// storage on S3, the superuser IP list). Every auth collection is stored
// without its rules first, then whole, so that a rule naming
// @request.auth.F of a field only a later collection has is kept.
//
// The import writes into a temporary folder beside the target
// (.NAME.import-RANDOM) through the normal stores, fsyncs it and renames
// it onto the target at the end: a crash or a kill during the import
// leaves no target (or the empty one there was), never a half-imported
// one, and the next import removes the leftover folder (its report says
// so). The target must not exist or be empty: an import never merges into
// existing data. From an archive, the database files are first extracted
// into that temporary folder, which needs room for them; they are removed
// before the folder becomes the target. A dry run (ImportOptions.DryRun)
// converts in a temporary folder beside the target (in $TMPDIR when its
// parent does not exist) that is removed, and counts the logs instead of
// writing them.
//
// The report has one line per fact, each starting with what it is about,
// so that the lines can be searched (a name from PocketBase's files that
// is not made of letters, digits and _ only is printed quoted, as are
// index and rule texts, so a crafted data.db cannot forge lines or send
// terminal escapes):
//
//	collection users records: 2 imported, 3 skipped
//	  skipped 1 record: email: Cannot be blank.
//	external auths: 1 imported, 1 skipped
//	settings: imported meta, smtp, backups, logs, rateLimits, trustedProxy
//	logs: 3 imported
//	mail: SMTP is on (smtp.example.com:465): the first serve sends mail through it; import with --no-mail to turn it off
//	skipped field users.avatar (file): no file storage (strongbox stores no files)
//	skipped collection posts (base): strongbox stores no base records
//
// Any error stops the import and leaves nothing behind: a PocketBase
// version it does not know, a database still open by a running
// PocketBase, or written to while the import read it (stop it, or import
// a backup archive), a damaged file. A PocketBase idle for minutes may
// have closed its files, and then nothing shows that it runs: its files
// are read as they stand (the last few seconds of its logs may still be in
// its memory), and the import stops if it writes meanwhile. Stop
// PocketBase first.
package pbimport
