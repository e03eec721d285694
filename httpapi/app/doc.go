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
// else in the dir are not copied.
//
// The auto-backup schedule follows settings.backups, as in PocketBase:
// while cron is set, each due UTC minute creates
// @auto_sb_backup_YYYYMMDDHHMMSS.zip (skipped, with a warning, while
// another backup or a restore runs), and after a successful create only,
// deletes the automatic backups beyond the newest cronMaxKeep. Manual and
// uploaded archives are never pruned.
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
// A restore (backups.Restore, restore.go) is the one operation that
// leaves the process: it closes the gate and every store as Restart does,
// extracts the archive into the data dir's work folder and swaps it in
// (backup.Swap), then shuts the http.Server down and re-execs the same
// executable with the same arguments and environment (Config.Exec,
// syscall.Exec by default), so the PID stays. If the extraction or the
// swap fails, the stores reopen on the untouched data; if the exec fails,
// the swap is rolled back, the stores reopen and the server serves again
// on the same socket.
//
// The listening socket survives the exec (handover.go), as systemd hands
// sockets to the services it starts: before the http.Server closes its
// listener, the old image keeps a duplicate of the descriptor, makes it
// inheritable (every other descriptor is close-on-exec) and names it in
// STRONGBOX_LISTEN_FD, with STRONGBOX_LISTEN_PID, added to the exec's
// environment only. At start, Run adopts that descriptor instead of
// binding Config.Addr if the PID is its own and the descriptor was
// inherited and is a listening TCP socket (else it warns and binds), and
// removes both variables from the environment. So the address never
// changes (port 0 included), and a connection made while the process
// restarts waits in the socket's backlog until the new image, once its
// stores are open, accepts it: it is answered, never refused. Requests
// that reach the old image once it has stopped get the 503 envelope.
//
// Every start (Run, and Open for the offline commands) first runs
// backup.Recover: an interrupted swap is undone; a swap pending
// confirmation is tried, committed once the server serves (or, offline,
// once the stores opened) and rolled back, with an error in the log, if
// the stores do not open on it. RestoreOffline is the same swap for a
// stopped server's data dir, with no exec: it works on every system.
package app
