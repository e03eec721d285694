// Package settings holds the application settings, the document GET and
// PATCH /api/settings serve (PocketBase-shaped sections: meta, logs, smtp,
// backups, s3, rateLimits, trustedProxy, batch), and persists them
// crash-safely in a journal (package logstore/journal): every change
// appends the whole document, fsynced before it is acknowledged, and the
// last valid one wins at start.
//
// Each section is a file of its own holding the section's type, its
// defaults, its secrets and its validation (smtp.go, backups.go, s3.go,
// meta.go, ratelimits.go, trustedproxy.go, batch.go, logs.go); settings.go
// puts them together and store.go keeps the document (Store).
//
// The subsystems the settings configure apply their part as subscribers
// (Store.Subscribe), at start and on every change; the server lifecycle,
// package httpapi/app, owns those subscriptions. The package knows nothing
// of HTTP.
//
// # Journal
//
// The payload of one frame of settings.journal is the whole settings
// document after a change, as JSON, secrets included, with its format
// version among its keys ("v":1), so that a later change of the format can
// tell old frames from new ones and migrate them (when replaying, and by
// compaction, which rewrites the document in the current version). A frame
// without "v" was written before the field existed, and is version 1. The
// store refuses a frame of a version newer than it reads, with the frame's
// offset, rather than misread it. Package logstore/journal documents the
// framing.
package settings
