// Package app runs strongbox's server over a data dir: it opens the stores,
// binds, serves the API, restarts in place and shuts down gracefully.
//
// It is the one package besides main that imports both the stores and
// httpapi; no other package imports it. main turns flags and environment
// into a Config and calls Run.
//
// # Starting
//
// Run locks the data dir, opens the auth, settings and log stores, binds
// the address, and only then creates the first superuser of a new data dir,
// so that a start that cannot bind leaves no account whose password nobody
// saw. Once it serves, it calls Config.OnReady with the bound address and
// how to log in: callers learn the address from there, never from output.
//
// # Metrics
//
// With Config.MetricsAddr set (STRONGBOX_METRICS_ADDR, serve --metrics),
// Run binds a second listener, right after the API's and before the data
// dir is touched (an address that cannot be bound fails the start, naming
// the setting), and serves GET /metrics there (package
// strongbox/httpapi/metrics) until it stops; Ready.Metrics is its
// address. The listener has its own timeouts (10 s to read a request, 30
// s to write the answer, 2 min idle) and answers nothing but /metrics. A
// restore's exec closes it with every other descriptor, and the new image
// binds it again. Without MetricsAddr nothing listens and the API records
// nothing (its Observer is nil).
//
// The metrics outlive the stores: the API's histogram, sign-ins and
// refusals are recorded in one metrics.API across restarts, and every
// backup created (manual or automatic) in one backup.Stats; each scrape
// reads the open stores' counters (logstore.Store.Counters), the mail
// queue's (mail.Queue.Stats) and the realtime streams of the API serving
// now. Server.Metrics returns the registry, for a component with metrics
// of its own to Register a gather function on.
//
// # Data dir
//
// Everything the server owns lives in the data dir:
//
//	.lock              held (flock) by the process using the dir; holds its pid
//	auth.journal       auth collections (options, per-token-type signing secrets, OAuth2 client
//	                   secrets) and their records (bcrypt hashes, token keys), one-time passwords
//	                   (salted hashes, never the codes), MFA sessions and OAuth2 links (record,
//	                   provider, the user's id there), as an append-only journal
//	settings.journal   the settings document (GET/PATCH /api/settings); each change appends the
//	                   whole document
//	.sb_restore/       a restore's work folder (new/, old/, state); exists only while a restore
//	                   runs or awaits confirmation, never archived
//	logs/*.seg         request logs: append-only segments (package strongbox/logstore)
//	logs/*.idx         their index sidecars: the index of a segment that no longer grows, so a
//	                   start need not decode it; a cache, never archived, rebuilt when missing
//	export.cursor      where the OTLP log export stands (package strongbox/logstore/otlp): the log
//	                   directory's id key and the last sequence number the receiver acknowledged;
//	                   only with an OTLP endpoint set; never archived, moved away by a restore
//	mail/              the outbox: mails sent while SMTP is disabled, one .eml file each, at most
//	                   1000 (package strongbox/authn/mail); not a store: never archived, and
//	                   moved away with the rest of the dir by a restore
//	backups/           backup archives (zip, with a manifest.json); .tmp-* files there are
//	                   creates in progress, removed at start if a crash left them; never
//	                   archived, never replaced by a restore
//
// The journals use the framed format of package strongbox/logstore/journal:
// each change is one length-prefixed, CRC-32C-checksummed frame, fsynced
// before the change is acknowledged. At start the journal is replayed; a
// torn last frame (a crash mid-write) is truncated, damage in the middle
// is refused with its offset. The journal is compacted (rewritten with the
// live state into a new file, then renamed over the old one) when it grows
// to four times its live data. Each record of auth.journal and
// settings.journal carries its format version ("v":1); a strongbox refuses
// to open a data dir holding a newer version than it reads.
//
// A full or failing disk costs no acknowledged change and needs no
// restart. A write the disk refuses changes nothing (package httpapi/api
// answers 507 or 503), and the journal is cut back to its last good frame
// so that the next write simply tries again. Meanwhile GET /api/health
// answers 503 naming the degraded stores (auth, settings, logs); it checks
// the disk at most once a second and is back to 200 as soon as space is
// freed. The request log loses only the batches the disk refused, creates
// no files while it cannot write, and logs the failure when it starts,
// once a minute while it lasts, and when it ends. Deleting needs no space:
// log retention (maxDays, maxDays 0, the size cap) deletes on a full disk
// too, and a server started on a full disk serves, reads included, losing
// only new log entries until there is room. A settings change the full
// disk refuses that lowers logs.maxDays first deletes the logs it would
// drop, then saves again (if that still fails, it answers 507 but those
// logs stay deleted). Every fsync slower than 200 ms (the window within
// which a logged entry is promised durable) is logged as a warning.
//
// Memory: most of a busy server's live heap is the log store's index
// (about 28 bytes per request log; package strongbox/logstore, "Index"),
// so with Config.MemoryLimit (strongbox serve sets it) the server sets
// the Go runtime's soft memory limit to 32 MiB plus 1.25 times the index,
// followed as it grows; a GOMEMLIMIT the operator set wins. Measured with
// wrk -t2 -c16 on /api/health for 20 s on top of seeded logs
// (testdata/wrk/logs-load.sh): 77 MB resident with 1.7 million logs, 323
// MB with 10.6 million, so a retention costs about 30 MB plus 30 bytes per
// stored log: 100 requests a second kept 5 days (43 million logs) need
// about 1.3 GB of memory and 9.5 GB of disk. The disk cap
// (STRONGBOX_LOGS_MAX_MB) bounds both: the default 1 GiB of segments
// (about 4.9 million logs) keeps the server at about 180 MB.
//
// # Log export
//
// With Config.Export set (main sets it from the OTel environment
// variables), the server ships every stored log, requests and its own
// events, to an OTLP/HTTP receiver (package strongbox/logstore/otlp, at
// least once from export.cursor). The export starts once the server
// serves, on a goroutine of its own, and stops before the stores close;
// across a restart it waits while no log store is open, then goes on in
// the reopened one. A log becomes a record with log.record.uid = its id;
// a request log's data becomes the HTTP semantic-convention attributes
// http.request.method, url.path, url.query (redacted as stored),
// http.response.status_code, client.address (userIP),
// network.peer.address (remoteIP), user_agent.original and
// http.request.header.referer (a string array, as the convention has
// it), plus strongbox.exec_time (ms), strongbox.auth_collection,
// strongbox.auth_id, strongbox.type ("request") and, for a failed
// request, strongbox.error and strongbox.error_details; an event's data
// keys are its attributes (integral numbers as integers). The resource is
// service.name (OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES', else
// the settings' meta.appName), service.version, service.instance.id (a
// UUID drawn at each start) and the other OTEL_RESOURCE_ATTRIBUTES.
//
// # Restarting
//
// Server.Restart restarts in place, in the same process; it does not
// re-exec. The listener and the http.Server stay up throughout, so a client
// never sees a refused or reset connection. In order:
//
//  1. New requests stop reaching the API and wait at a gate.
//  2. Restart waits for the requests in flight to finish (bounded by its
//     ctx; the routes' own deadlines bound them too). If ctx ends first,
//     the gate reopens on the stores still open and nothing has changed.
//  3. Every store is closed and flushed. The data dir's lock stays held,
//     so no other strongbox takes the dir in the meantime: the step must
//     swap the entries of the dir (auth.journal, settings.journal, logs/)
//     and leave its .lock file alone.
//  4. The step runs over the data dir, while nothing is open.
//  5. The stores are reopened from what is on disk, a new API is built on
//     them (the in-memory rate-limit windows and login throttle start
//     afresh) and the waiting requests go on to it.
//
// A request that waits at the gate longer than Config.RestartHold (or
// whose client gives up) is answered 503 with the error envelope. So a
// request sent during a restart sees the old data, the new data or a 503
// envelope, never a hang or a reset.
//
// If the step fails, the stores are still reopened, on whatever the step
// left on disk, and Restart returns the step's error: undoing a half-done
// step is the caller's job, for instance by a second Restart whose step
// rolls back. If the reopen fails, the server stays up but answers every
// request 503 (and says so in its log) until a later Restart reopens the
// stores; Restart returns the reopen error, and Run returns it too if the
// server stops in that state.
//
// A handler is given the Server as an api.Restarter. Since Restart
// waits for every request in flight, a handler answers first and then
// restarts from a goroutine with a context of its own, as PocketBase's
// backup restore does (context.Background with a timeout). Restart refuses
// a context derived from a request's with ErrInRequest, at once, so that a
// handler calling it in line fails instead of waiting for itself, and one
// calling it from a goroutine with its request's context fails every time
// rather than only when the goroutine wins the race with the response.
//
// # Backups
//
// The Server is the API's api.Backups (interface §4.2). Run opens
// <data dir>/backups once, and removes the temporary files of a create
// that crashed, before anything can start a backup; the folder and the
// one-operation lock (backup.Lock) last as long as the process serves,
// across restarts.
//
// A backup captures every store at one instant (Stores.Capture): it takes
// each store's writer lock, in a fixed order (settings, logs, auth) and
// all at once, reads the length each file has committed (fsynced), opens a
// read descriptor for it, and releases the locks. Only that is done with
// writers paused; the copy and the compression (backup.Dir.Create) read
// the descriptors afterwards, up to the captured lengths, while writers
// run. A frame half-written at the instant of the capture is not copied,
// and a compaction or a retention pass that replaces or deletes a file
// afterwards does not change what is copied. A capture is taken under the
// same lock a restart closes and reopens the stores under, so it never
// sees closed stores: during a restart it fails with ErrNotOpen. Archive
// entries are named relative to the data dir (auth.journal,
// settings.journal, logs/<segment>); backups/, the lock file and anything
// else in the dir are not copied. So a backup holds, for every store,
// exactly what was acknowledged at that instant: nothing half-written,
// and nothing later. Sign-ups wait only while the auth
// store's own journal is noted (it is taken last). Measured pause (go test
// ./httpapi/app -run '^$' -bench CapturePause, 2-core EPYC, 100
// superusers): about 16 µs with one log segment, 0.13 ms with 30
// segments, 1.8 ms on average (15 ms at worst) with 365 segments; it grows
// with the number of log segments (one per UTC day of retained logs at
// least).
//
// Upload and restore verify an archive before they keep or restore it
// (backup.Verify, whose Limits.Check is verify.go): besides its structure,
// its manifest and every file's size and SHA-256, its stores are opened as
// a start on the restored data would open them. auth.journal and
// settings.journal must be there (without them the data dir would be a
// new, empty one, with a new first superuser) and are replayed by their
// stores, and every log segment's header is read (a segment whose header
// is damaged would be set aside); the log records are not replayed. The
// stores are opened on scratch copies in backups/ (.tmp-verify-…, removed
// at once, or at the next start after a crash). On an archive of 1,000,000
// request logs (230 MB of files, 60 MB zipped) verification takes about 1
// s, of which opening the stores is 10 to 25 ms.
//
// go test -tags loadfault -run TestBackupFigures -v -count=1 -timeout 15m .
// (package main) builds the binary, seeds a data dir with 1,000,000
// request logs (220 MB of segments) and measures (2-core EPYC, figures of
// one run):
//
//   - strongbox backup create (offline), /usr/bin/time -v: 2.1 s wall,
//     archive 57 MiB, peak RSS 102 MiB (most of it the log index the
//     command loads);
//   - POST /api/backups on the running server: 2.2 s; server RSS +12.5 MiB
//     at its peak;
//   - sign-ups (20/s) and GET /api/health (100/s), open loop, during that
//     backup: longest sign-up 38 ms, longest health 7.6 ms, no error
//     (without a backup: 10 ms and 13 ms);
//   - POST /api/backups/{key}/restore of that archive: 3.2 s from the 204
//     until the server answers on the restored data; RSS +36 MiB over
//     before the backup.
//
// The auto-backup schedule follows settings.backups, as in PocketBase:
// while cron is set (package strongbox/backup/cron has the syntax), each
// due UTC minute creates @auto_sb_backup_YYYYMMDDHHMMSS.zip (skipped, with
// a warning, while another backup or a restore runs: one operation at a
// time, §3), and after a successful create only, deletes the automatic
// backups its retention does not keep (backup.Retention, restic's forget
// rule, by modification time in UTC): the newest cronMaxKeep, plus the
// newest of each of the last cronKeepDaily days, cronKeepWeekly ISO weeks
// and cronKeepMonthly months that have one. With those three 0 (the
// default) this is PocketBase's rule, the newest cronMaxKeep. Archives
// created through the API or strongbox backup create, and uploaded ones,
// are never pruned; a failed automatic backup deletes nothing. Each run's
// outcome is logged.
//
// The check of the stored archives (check.go) is restic's check
// --read-data for them: on the schedule of backups.checkCron (weekly,
// Sundays 04:00 UTC, by default; "" turns it off) and on POST
// /api/backups/check, it reads every archive of the storage in force (the
// folder, or the bucket streamed by ranged GETs: backup.VerifyStored) and
// verifies it as an upload or a restore does (manifest, sizes, SHA-256,
// the stores opened on scratch copies). It runs in the background, one at
// a time, takes no backup lock (an archive deleted meanwhile is counted
// gone) and a stop cancels it. Each run is an event: info "backup check
// passed" with the counts, or error "backup check: archive failed" per
// bad archive with its key and reason, then "backup check failed"; a bad
// archive also mails every superuser (keys and reasons, no path or
// secret). The metrics are strongbox_backup_check_failures_total,
// _check_running, _check_last_run_timestamp_seconds,
// _check_last_duration_seconds, _check_last_read_bytes and
// strongbox_backup_archives_checked and _archives_bad; GET
// /api/backups/check reports the last run (kept in memory: a restart of
// the process forgets it). Read speed (STRONGBOX_S3_GATEWAY=… go test
// ./backup -run '^$' -bench VerifyStored -benchtime 5x, 2-core EPYC
// shared with other jobs, archives of incompressible files): 410 to 560
// MB/s from the folder (16 MiB), 410 to 540 MB/s from an in-memory bucket,
// 432 MB/s from versitygw on loopback (64 MiB): the check is bound by
// SHA-256 and inflate, not by the bucket's GETs.
//
// With settings.backups.s3 enabled, every backup operation works on the
// bucket instead of the folder (package strongbox/backup, "Storage"), and
// automatic backups are created in the bucket and pruned there, among the
// bucket's @auto_ archives only; a pruning that the bucket stalls gives
// up within 2 minutes and frees the backup lock. Switching backups.s3 on or off takes
// effect for the next operation and moves no archive, as in PocketBase:
// archives made before stay where they were (the local folder, or the
// bucket) and are listed again once the setting points there; copy them
// yourself if you want them in the new place. A restore brings back the
// archive's settings, backups.s3 included.
//
// Outgoing mail (mail.go) goes through one strongbox/authn/mail Queue that
// lives as long as the process serves, across restarts: the API's Sender.
// Its transport follows settings.smtp and the sender of settings.meta
// through a subscription made anew whenever the stores open; while SMTP
// is disabled, mails are written to <data dir>/mail/ (MailDir). A graceful
// stop delivers the queued mails for at most Config.MailDrain
// (DefaultMailDrain) before the stores close; a restore's exec loses
// them. mail/ is no store: a backup does not copy it, and a restore's
// swap moves it aside with the old data.
//
// # Restoring a backup
//
// A restore (backups.Restore, restore.go; its route's checks are in
// package strongbox/httpapi/api) is the one operation that leaves the
// process. Once the route has verified the archive, taken the backup lock
// and answered 204:
//
//  1. new requests wait at the gate (or get the 503 envelope "The server
//     is restarting, try again later."), those in flight finish, and every
//     store is closed, as Restart does;
//  2. the archive is verified again while it is extracted into
//     .sb_restore/new/ inside the data dir (same file system), every file
//     fsynced;
//  3. the entries of the data dir (not the dir itself, which may be a
//     mount point; never backups/, .lock, .sb_restore/ or lost+found/) are
//     moved into .sb_restore/old/ and the restored entries moved in, each
//     phase recorded in .sb_restore/state (written to a temporary file,
//     fsynced, renamed, the folder fsynced) before it starts
//     (backup.Swap);
//  4. the server stops accepting connections, without closing its
//     listening socket, and re-executes itself (Config.Exec, syscall.Exec
//     by default): same executable, arguments, environment and PID. The
//     data dir lock is released by the exec and taken again by the new
//     image; the listening socket is handed over to it (below);
//  5. the new image opens the restored data and serves it, on the socket
//     it was handed; only then is .sb_restore/old/ deleted.
//
// Nothing fails silently, and the server is never left down by a restore:
//
//   - extraction or the swap fails: the data dir keeps (or gets back) its
//     old data, the stores reopen on it, the error is logged;
//   - the exec fails: the swap is rolled back, the old data is served
//     again on the same socket (the duplicate descriptor is closed), the
//     error is logged;
//   - the restored data does not open at the restart (a journal the server
//     cannot read, which verification should have refused): the old data
//     is put back and served, and once it serves an error event (level 8)
//     says why, in the log store, where a superuser sees it (GET
//     /api/logs, filter level = 8), and on stderr;
//   - a crash (or power loss) at any point: the next start finds
//     .sb_restore/state and either undoes the swap (before it completed)
//     or tries the restored data as above. The data dir ends holding all
//     of the old data or all of the restored data, never a mix.
//
// Every start (Run, and Open for the offline commands) first runs
// backup.Recover: an interrupted swap is undone; a swap pending
// confirmation is tried, committed once the server serves (or, offline,
// once the stores opened) and rolled back, with an error in the log, if
// the stores do not open on it. Each step of a restore is logged at info
// level with the key and its duration. The restored data includes the
// archive's superusers, users, tokens' signing secrets and settings: log
// in again with the archive's credentials. A server that runs inside
// another command (Config.NoExec: the throwaway server of strongbox
// conformance without --destructive, whose restart would replace that
// command) refuses a restore with a 400 saying so; restore through a
// strongbox serve. RestoreOffline is the same
// swap for a stopped server's data dir, with no exec: it works on every
// system (strongbox backup restore).
//
// The listening socket survives the exec (handover.go), as systemd hands
// sockets to the services it starts: before the http.Server closes its
// listener, the old image keeps a duplicate of the descriptor and makes it
// inheritable (every other descriptor the server opened is close-on-exec,
// so besides the socket the new image gets only what the process was
// started with: stdin, stdout, stderr and whatever else its parent left
// open), and names it in STRONGBOX_LISTEN_FD, with STRONGBOX_LISTEN_PID,
// added to the exec's environment only. At start, Run adopts that
// descriptor instead of binding Config.Addr if STRONGBOX_LISTEN_PID is its
// own PID and the descriptor was inherited and is a listening TCP socket
// (else it logs a warning and binds), and removes both variables from its
// environment either way, so a later restore or a child process never
// sees a stale one. So:
//
//   - the address never changes, even for a serve --http 127.0.0.1:0: the
//     restarted server prints its ready line again with the same address;
//   - a connection made during the restart is not refused: the kernel
//     accepts it into the socket's backlog, and the new image answers it
//     once its stores are open (which takes seconds with a million request
//     logs). The backlog holds up to net.core.somaxconn connections on
//     Linux (4096 by default); past it the kernel drops new attempts,
//     which clients retry, rather than refusing them. A request that
//     reached the old image after the 204 but was not served before it
//     stopped gets the 503 envelope.
//
// The handover needs Unix; where the descriptor cannot be kept or made
// inheritable, the server logs a warning and the new image binds the
// address on its command line again (port 0 then picks another port). On
// Windows a running server refuses a restore (no exec).
//
// TestRestoreReexec (package main, Unix only) checks this on a real serve
// child started on port 0: after the restore it listens on the same
// address with the same socket; every request sent during the restart is
// answered, one of them sent while the process is held stopped (SIGSTOP)
// after the old image stopped serving and before the new one serves; and,
// on Linux, the new image holds no inheritable descriptor beyond those its
// parent gave it.
package app
