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
// package httpapi/app, owns those subscriptions. A change is in effect
// everywhere by the time PATCH /api/settings answers. The package knows
// nothing of HTTP.
//
// # Sections
//
// The sections and what their validation refuses, as PocketBase's codes
// (each error under the section and key):
//
//   - meta: appName (required, at most 255 bytes), appURL, senderName
//     (required), senderAddress (required, an email address), hideControls;
//     appName and appURL fill mail templates, senderName and senderAddress
//     are every mail's From. appURL must be an
//     absolute http or https URL free of the characters a URL cannot hold
//     (space, controls, "<>\^`{|} and the double quote), else
//     validation_is_url "Must be a valid URL." as PocketBase words it (it
//     accepts https://ok.example.com/"><script>…, which a mail template
//     would insert into HTML).
//   - logs: maxDays (5; retention in days; 0 turns request logging off and
//     deletes every stored log, as PocketBase does), minLevel (0: entries
//     below it are not stored, from the change on), logIP (true: store
//     remoteIP and userIP), logAuthId (false: also store authId). The size
//     cap on top of maxDays is no setting but STRONGBOX_LOGS_MAX_MB
//     (package strongbox/logstore).
//   - smtp: enabled, host, port (587), username, password, authMethod,
//     tls, localName; how package strongbox/authn/mail uses them is
//     documented there. An authMethod other than PLAIN, LOGIN or empty is
//     validation_in_invalid; a host or localName that is neither an IP
//     address nor a DNS name is validation_is_host. The password is
//     write-only: never returned, and kept when a PATCH omits it.
//   - backups: cron (empty: off; a 5-field cron expression or a macro such
//     as @daily, package strongbox/backup/cron, else
//     validation_invalid_cron), cronMaxKeep (required, at least 1, when
//     cron is set), strongbox's cronKeepDaily, cronKeepWeekly and
//     cronKeepMonthly (0, not used; at least 0; the retention of
//     automatic backups, backup.Retention) and checkCron (DefaultCheckCron,
//     weekly; "" = off; the schedule of the check that reads every
//     archive again, package strongbox/httpapi/app), and s3 {enabled, bucket, region, endpoint, accessKey,
//     secret, forcePathStyle}: the S3-compatible bucket (AWS, MinIO, Ceph,
//     Backblaze, Cloudflare R2, Wasabi …) the archives live in when
//     enabled. Then bucket, region, endpoint, accessKey and secret are
//     required (validation_required) and endpoint must be an http or https
//     URL (validation_is_url). forcePathStyle asks for path-style
//     addressing (endpoint/bucket/key), which MinIO and most self-hosted
//     servers want; an endpoint that is an IP address or localhost is
//     always addressed path-style, since no bucket name can prefix it. The
//     secret is write-only, as the SMTP password is.
//   - s3: PocketBase's file storage. enabled: true is refused with
//     validation_unsupported on enabled: this server stores no uploaded
//     files, so a bucket for them would never be used.
//   - rateLimits: enabled (false) and rules (package
//     strongbox/httpapi/ratelimit has the defaults and how they match).
//   - trustedProxy: headers (valid HTTP header names, else
//     validation_invalid_header) whose address is the client's, and
//     useLeftmostIP (false: the rightmost address).
//   - batch: PocketBase's section is kept (defaults maxRequests 50, timeout
//     3, maxBodySize 0, validated as PocketBase does), but this server has
//     no POST /api/batch, so enabled: true is refused
//     (validation_unsupported) rather than promised.
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
