package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"strongbox/backup"
	"strongbox/httpapi/api"
	"strongbox/logstore/journal"
)

// Restoring a backup. The data dir's entries are swapped by the protocol
// of backup.Swap; this file runs it around the stores' lifecycle:
//
//   - backups.Restore (POST /api/backups/{key}/restore, after the handler
//     answered 204): close the gate and wait for the requests in flight,
//     close every store, extract the archive into the work folder, swap,
//     shut the http.Server down (closing the listener), and re-exec the
//     same executable with the same arguments and environment: same PID.
//     The listening socket is handed over to the new image (handover.go),
//     so the address stays and connections wait in its backlog meanwhile;
//     the dir lock's file is close-on-exec (Go opens every descriptor so),
//     so the new image locks afresh.
//   - At every start (Run, and Open for the commands that work offline):
//     backup.Recover undoes a swap a crash interrupted; a swap pending
//     confirmation is tried: if the stores open on the restored data it is
//     committed (the old data removed) once the server serves, else it is
//     rolled back and the stores open on the old data, with an error in
//     the log saying why.
//   - RestoreOffline (`strongbox backup restore KEY`): the same swap on a
//     stopped server's data dir, confirmed by opening the stores.

// restoreShutdownTimeout bounds how long a restore waits for the
// connections to go idle before it re-execs. No request is inside the API
// by then (the gate waited for them), so only responses being written and
// the 503s of held requests remain.
const restoreShutdownTimeout = 5 * time.Second

// CanRestore reports whether this process can restore a backup while it
// runs, which needs exec: not on Windows.
func (b backups) CanRestore() error { return b.srv.canRestore() }

// Restore replaces the data dir's contents with the fetched archive a and
// re-execs the process on it: see Server.restore. It closes a.
func (b backups) Restore(ctx context.Context, a *backup.Archive) error {
	defer a.Close()
	return b.srv.restore(ctx, a)
}

func (s *Server) canRestore() error {
	if s.cfg.NoExec != nil {
		return s.cfg.NoExec
	}
	if runtime.GOOS == "windows" && s.cfg.Exec == nil {
		return errors.New("Restoring a backup while the server runs is not supported on Windows, because the server cannot restart itself there. Stop the server and run `strongbox backup restore KEY` instead.")
	}
	return nil
}

// serving is the http.Server of a running Server and its listener, which
// a restore shuts down before it re-execs; resume is what Run serves on if
// the exec fails.
type serving struct {
	srv    *http.Server
	ln     net.Listener // ln wrapped by api.NewHTTPServer
	raw    net.Listener // the listener as bound or adopted
	kept   int          // a duplicate of raw's descriptor, kept through the exec (handover.go); -1 if none
	resume *serving
	execed bool // a test's Exec returned nil: the process "ended"
}

// set builds the http.Server over h and ln and records it.
func (sv *serving) set(h http.Handler, ln net.Listener, log *slog.Logger) (*http.Server, net.Listener) {
	srv, capped := api.NewHTTPServer(h, ln, api.HTTPConfig{Logger: log})
	sv.srv, sv.ln, sv.raw, sv.kept = srv, capped, ln, -1
	return srv, capped
}

// restore replaces the data dir's contents with the archive key and
// re-execs the process on it (same PID, same command line and
// environment). The caller holds the backup lock, has verified the archive
// and answered the request, and calls Restore from a goroutine with a
// context of its own (ErrInRequest otherwise). In order:
//
//  1. New requests wait at the gate; those in flight finish (bounded by
//     ctx: if it ends first, nothing has changed).
//  2. Every store is closed. The dir lock stays held.
//  3. The archive is extracted into <data dir>/.sb_restore/new (Extract
//     verifies it again and fsyncs every file) and swapped in
//     (backup.Swap). If either fails, the data dir holds the old data, the
//     stores reopen on it and Restore returns the error.
//  4. The held requests and any new one get the 503 envelope, a duplicate
//     of the listener's descriptor is kept, the http.Server shuts down
//     (closing its listener, not the socket) and the process execs itself,
//     handing the socket over (handover.go). The new image finds the swap
//     pending, opens the restored data, adopts the socket, serves (the
//     connections made meanwhile waited in the socket's backlog), and only
//     then deletes the old data.
//  5. If the exec fails, the swap is rolled back, the stores reopen on the
//     old data, the server serves again on the kept socket (or, if it could
//     not be kept, listens again on the same address), and Restore returns
//     the error: the old data is served again, nothing is lost.
//
// Every step is logged at info level with the key and its duration, every
// failure at error level.
func (s *Server) restore(ctx context.Context, a *backup.Archive) error {
	if err := s.canRestore(); err != nil {
		return err
	}
	release, err := s.takeLife(ctx, "restore")
	if err != nil {
		return err
	}
	defer release()
	log := s.log.With("key", a.Key())
	start := time.Now()
	log.Info("restore: waiting for the requests in flight")
	if err := s.gate.close(ctx); err != nil {
		log.Error("restore: the requests in flight did not finish; nothing changed", "err", err)
		return fmt.Errorf("app: restore: waiting for the requests in flight: %w", err)
	}
	if err := s.closeStores(); err != nil {
		err = fmt.Errorf("app: restore: close the stores: %w", err)
		log.Error("restore: a store did not close; reopening the old data", "err", err)
		return s.reopen(start, err)
	}
	log.Info("restore: stores closed", "took", time.Since(start))

	if err := swapIn(s.cfg.Dir, a, backups{s}.Limits(), log); err != nil {
		log.Error("restore failed; the data dir holds the old data", "err", err)
		if _, rerr := backup.Recover(s.cfg.Dir); rerr != nil {
			// Recover at the next start finishes it; opening the stores
			// now could open a mix.
			s.downErr = fmt.Errorf("app: restore: undo the swap: %w", rerr)
			s.gate.fail()
			log.Error("restore: could not undo the swap: answering 503; restart the server to finish the undo", "err", rerr)
			return errors.Join(err, s.downErr)
		}
		return s.reopen(start, err)
	}

	err = s.execSelf(log, start)
	if err == nil {
		s.state, s.serving.execed = stopped, true
		return nil
	}
	log.Error("restore: re-exec failed; rolling back to the old data", "err", err)
	if rerr := backup.Rollback(s.cfg.Dir); rerr != nil {
		s.downErr = fmt.Errorf("app: restore: roll back: %w", rerr)
		log.Error("restore: could not roll back: restart the server to finish it", "err", rerr)
		err = errors.Join(err, s.downErr)
		s.gate.fail()
	} else {
		log.Info("restore: rolled back", "took", time.Since(start))
		err = s.reopen(start, err)
	}
	if lerr := s.serveAgain(log); lerr != nil {
		err = errors.Join(err, lerr)
	}
	return err
}

// swapIn extracts the archive a, a local file, into the work folder and
// swaps it in. On failure the data dir holds the old data, or Recover
// restores it.
func swapIn(dataDir string, a *backup.Archive, limits backup.Limits, log *slog.Logger) error {
	t := time.Now()
	newDir, err := backup.Prepare(dataDir, a.Key())
	if err != nil {
		return fmt.Errorf("app: restore: %w", err)
	}
	if err := a.Extract(newDir, limits); err != nil {
		return fmt.Errorf("app: restore: %w", err)
	}
	log.Info("restore: extracted", "took", time.Since(t))
	t = time.Now()
	if err := backup.Swap(dataDir); err != nil {
		return fmt.Errorf("app: restore: %w", err)
	}
	log.Info("restore: swapped in, pending confirmation", "took", time.Since(t))
	return nil
}

// execSelf answers the held requests 503, keeps the listening socket,
// shuts the http.Server down and execs the executable, handing it the
// socket. It returns only if the exec fails (or a test's Exec returns
// nil).
func (s *Server) execSelf(log *slog.Logger, start time.Time) error {
	s.gate.stop()
	// The duplicate is taken before Shutdown closes the listener: the
	// socket never stops listening.
	kept, err := keepListener(s.serving.raw)
	if err != nil {
		kept = -1
		log.Warn("restore: cannot keep the listening socket; the new image binds its address again", "err", err)
	}
	s.serving.kept = kept
	ctx, cancel := context.WithTimeout(context.Background(), restoreShutdownTimeout)
	defer cancel()
	// Stop accepting (new connections wait in the kept socket's backlog)
	// and let the connections already accepted have their requests
	// answered, 503 by the stopped gate: Shutdown alone would cut, without
	// an answer, one whose request it reads after it began.
	if err := api.Drain(ctx, s.serving.ln); err != nil && !errors.Is(err, net.ErrClosed) {
		log.Warn("restore: connections still waiting for their request", "err", err)
	}
	if err := s.serving.srv.Shutdown(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
		log.Warn("restore: connections still busy, closing them", "err", err)
		s.serving.srv.Close()
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("app: restore: find the executable: %w", err)
	}
	exec := s.cfg.Exec
	if exec == nil {
		exec = syscall.Exec
	}
	log.Info("restore: restarting the process", "exe", exe, "took", time.Since(start))
	if err := execHandingOver(exec, s.cfg.Exec == nil, exe, kept, log); err != nil {
		return fmt.Errorf("app: restore: exec %s: %w", filepath.Base(exe), err)
	}
	return nil
}

// execHandingOver execs exe with this process's arguments and environment,
// and, if kept >= 0, the descriptor kept inheritable and named in the
// environment (handover.go). If the exec fails, kept is close-on-exec
// again. lockFork holds syscall.ForkLock meanwhile, so that no fork
// inherits the socket: only for the real exec, since a test's Exec may
// create descriptors, which takes ForkLock on some systems.
func execHandingOver(exec func(string, []string, []string) error, lockFork bool, exe string, kept int, log *slog.Logger) error {
	env := os.Environ()
	inheritable := false
	if kept >= 0 {
		if lockFork {
			syscall.ForkLock.Lock()
			defer syscall.ForkLock.Unlock()
		}
		if err := setInherit(kept, true); err != nil {
			log.Warn("restore: cannot hand the listening socket over; the new image binds its address again", "err", err)
		} else {
			env, inheritable = handoverEnv(env, kept), true
		}
	}
	err := exec(exe, os.Args, env)
	if err != nil && inheritable {
		if rerr := setInherit(kept, false); rerr != nil {
			log.Warn("restore: the kept listening socket stays inheritable", "err", rerr)
		}
	}
	return err
}

// serveAgain serves again after a failed exec, on the kept socket or else
// by listening again on the address the server was bound to, and hands Run
// the new http.Server.
func (s *Server) serveAgain(log *slog.Logger) error {
	addr := s.serving.ln.Addr()
	var ln net.Listener
	var err error
	if s.serving.kept >= 0 {
		// listenerOf closes the kept descriptor, whatever it returns.
		if ln, err = listenerOf(s.serving.kept); err != nil {
			log.Warn("restore: cannot serve on the kept socket; listening again", "err", err)
		}
		s.serving.kept = -1
	}
	if ln == nil {
		ln, err = net.Listen("tcp", addr.String())
	}
	if err != nil {
		err = fmt.Errorf("app: restore: listen again on %s: %w", addr, err)
		log.Error("restore: cannot serve again; stopping", "err", err)
		return err
	}
	next := &serving{}
	next.set(s.gate, ln, s.log)
	s.serving.srv, s.serving.ln, s.serving.raw, s.serving.resume = next.srv, next.ln, next.raw, next
	log.Info("restore: serving the old data again", "addr", ln.Addr())
	return nil
}

// openRecovered recovers a restore interrupted in the data dir (whose lock
// the caller holds) and opens the stores. If a restore is pending
// confirmation, it opens them on the restored data and returns the
// Recovery with Pending set: the caller commits it once it serves. If the
// restored data does not open, it rolls back, logs why at error level,
// and opens the old data; then notOpened is why the restored data did not
// open (Run logs it again once it serves, so that it reaches the log
// store).
func openRecovered(opts Options, withLogs bool, log *slog.Logger) (_ *Stores, _ backup.Recovery, notOpened, _ error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r, err := backup.Recover(opts.Dir)
	if err != nil {
		return nil, r, nil, fmt.Errorf("app: recover an interrupted restore: %w", err)
	}
	switch {
	case r.Phase != "" && !r.Pending:
		log.Warn("an interrupted restore was undone: the data dir holds the data it had before", "key", r.Key, "phase", r.Phase)
	case r.Pending:
		// Every store is tried, the log store too, whatever the caller
		// wants open: data that a later start could not open is no
		// restore.
		t := time.Now()
		st, err := openStores(opts, true)
		if err == nil && !withLogs {
			if err = st.Close(); err == nil {
				st, err = openStores(opts, false)
			}
		}
		if err == nil {
			log.Info("restore: the restored data opened", "key", r.Key, "took", time.Since(t))
			return st, r, nil, nil
		}
		log.Error("restore: the restored data does not open; rolling back to the old data", "key", r.Key, "err", err)
		if rerr := backup.Rollback(opts.Dir); rerr != nil {
			return nil, r, nil, fmt.Errorf("app: roll back the restore of %s: %w (after: %w)", r.Key, rerr, err)
		}
		log.Error("restore: rolled back; the data dir holds the data it had before the restore", "key", r.Key)
		r.Pending, notOpened = false, err
	}
	st, err := openStores(opts, withLogs)
	return st, r, notOpened, err
}

// reportNotRestored records, once the old data serves again, a restore
// whose data did not open when this process started on it (it answered
// 204 before it restarted, so no client was told): an error event, which
// reaches the log store, where a superuser sees it, and stderr. key is
// the archive's.
func (s *Server) reportNotRestored(key string) {
	if s.notRestored == nil {
		return
	}
	s.log.Error("restore failed: the restored data did not open, so the data dir was rolled back and serves the data it had before the restore",
		"key", key, "err", s.notRestored)
	s.notRestored = nil
}

// confirmRestore deletes the old data of a restore whose data now serves.
func (s *Server) confirmRestore(r backup.Recovery) {
	if err := backup.Commit(s.cfg.Dir); err != nil {
		s.log.Error("restore: could not delete the old data; the next start retries", "key", r.Key, "err", err)
		return
	}
	s.log.Info("restore: complete, serving the restored data; the old data is deleted", "key", r.Key)
}

// RestoreOffline restores the archive key into the data dir of a stopped
// server (`strongbox backup restore`): it takes the dir lock, verifies and
// extracts the archive, swaps it in, and opens the stores on it to confirm
// it. If they open, the old data is deleted; if not, the old data is put
// back and the error says why. It needs no exec, so it works everywhere.
func RestoreOffline(opts Options, key string) (err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("key", key)
	if fi, err := os.Stat(opts.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("data dir %s does not exist", opts.Dir)
	}
	lock, err := journal.LockDir(opts.Dir)
	if errors.Is(err, journal.ErrLocked) {
		return fmt.Errorf("data dir %s is in use by a running strongbox server (%w): restore through its API instead (POST /api/backups/%s/restore), or stop it first", opts.Dir, err, key)
	}
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, lock.Unlock()) }()
	// Finish whatever an earlier restore left, so that this one starts
	// from settled data.
	st, err := openSettled(opts, true, log)
	if err != nil {
		return err
	}
	bs := st.Settings.Get().Backups
	if err := st.Close(); err != nil {
		return err
	}
	dir, err := backup.OpenDir(filepath.Join(opts.Dir, "backups"))
	if err != nil {
		return err
	}
	defer dir.Close()
	// The archive is where the stored settings keep them; one on S3 is
	// downloaded into the backups folder first, and a failed download
	// changes nothing.
	ctx := context.Background()
	store := keyedStorage(opts, bs, dir).st
	if found, err := store.Exists(ctx, key); err != nil || !found {
		return cmp.Or(err, fmt.Errorf("%w: %s", backup.ErrNotFound, key))
	}
	limits := withStoresCheck(backup.Limits{}, opts.Dir)
	a, err := backup.FetchVerified(ctx, store, key, limits)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := swapIn(opts.Dir, a, limits, log); err != nil {
		if _, rerr := backup.Recover(opts.Dir); rerr != nil {
			return errors.Join(err, fmt.Errorf("undo the swap (run the command again, or start the server, to finish it): %w", rerr))
		}
		return err
	}
	st, err = openStores(opts, true)
	if err != nil {
		log.Error("restore: the restored data does not open; rolling back", "err", err)
		if rerr := backup.Rollback(opts.Dir); rerr != nil {
			return fmt.Errorf("the restored data does not open (%w), and rolling back failed: %w", err, rerr)
		}
		return fmt.Errorf("the data in %s does not open, so the data dir keeps its old data: %w", key, err)
	}
	if err := st.Close(); err != nil {
		return err
	}
	return backup.Commit(opts.Dir)
}
