// Package settings holds the application settings (PocketBase-shaped
// subsets: meta, logs, smtp, backups, s3, rateLimits, trustedProxy) and persists them
// crash-safely in a journal: every change appends the whole document, fsynced
// before it is acknowledged, and the last valid one wins at start. The
// subsystems the settings configure subscribe to them (Store.Subscribe) and
// apply their part themselves, at start and on every change.
package settings
