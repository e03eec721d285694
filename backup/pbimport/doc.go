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
package pbimport
