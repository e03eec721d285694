package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"strongbox/authn"
	"strongbox/backup"
	"strongbox/backup/pbimport"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
	"strongbox/logstore/journal"
)

// Options says where a data dir is and how to open its stores.
type Options struct {
	Dir          string
	BcryptCost   int          // bcrypt cost of new passwords, such as authn.DefaultCost
	BcryptSlots  int          // concurrent bcrypt computations; 0 = one per CPU
	LogsMaxBytes int64        // cap on stored request logs; 0 = logstore's default
	Logger       *slog.Logger // the stores' log; nil = discard

	// Now is the stores' clock (log retention and creation times, token
	// and OTP expiry, settings probes); nil = time.Now. Tests that write
	// entries at a fixed date give that date's clock, so retention judges
	// them by it and not by the day the test runs.
	Now func() time.Time

	// ObjectStore makes the S3 client of the settings backups.s3 when
	// they are enabled (see s3.go); nil = the client of package
	// backup/s3 (newBucket), tests give a fake bucket. The server and the
	// backup CLI call it with the stored settings.
	ObjectStore func(settings.S3) (backup.ObjectStore, error)

	// eventLog, if set, is the log of the auth and settings stores
	// instead of Logger: a running Server's events (Server.log), which
	// the log store keeps too. The log store's own log is Logger.
	eventLog *slog.Logger

	// fs, if set, is the file system of the stores' journals and
	// segments instead of the operating system's: tests fill it.
	fs journal.FS
}

// Stores are the open stores of a data dir.
type Stores struct {
	Auth     *authn.Store
	Settings *settings.Store
	Logs     *logstore.Store // nil unless opened with logs

	dir    string           // the data dir, which Capture names files relative to
	lock   *journal.DirLock // nil when the caller holds the lock
	closed bool
}

// LockDir takes the data dir's lock, explaining a refusal.
func LockDir(dir string) (*journal.DirLock, error) {
	lock, err := journal.LockDir(dir)
	if errors.Is(err, journal.ErrLocked) {
		return nil, fmt.Errorf("data dir %s is in use by a running strongbox server: %w; stop it first (or use the API while it runs)", dir, err)
	}
	return lock, err
}

// Open locks the data dir and opens its auth and settings stores, and the
// log store too when withLogs is set. Close releases the lock. Like Run, it
// first finishes a restore that was interrupted or is pending confirmation
// (see restore.go): opening the stores confirms restored data, which is
// then committed, or rolls it back if it does not open.
func Open(opts Options, withLogs bool) (*Stores, error) {
	lock, err := LockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	st, err := openSettled(opts, withLogs, opts.Logger)
	if err != nil {
		return nil, errors.Join(err, lock.Unlock())
	}
	st.lock = lock
	return st, nil
}

// openSettled opens the stores of a data dir whose lock the caller holds
// after settling what a restore left there (openRecovered): a restore
// pending confirmation whose data opens is committed at once, so no
// restore remains in the dir.
func openSettled(opts Options, withLogs bool, log *slog.Logger) (*Stores, error) {
	st, pending, _, err := openRecovered(opts, withLogs, log)
	if err != nil {
		return nil, err
	}
	if pending.Pending {
		if err := backup.Commit(opts.Dir); err != nil {
			return nil, errors.Join(err, st.Close())
		}
	}
	return st, nil
}

// openStores opens the stores of a data dir whose lock the caller holds.
func openStores(opts Options, withLogs bool) (_ *Stores, err error) {
	st := &Stores{dir: opts.Dir}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	hasher, err := authn.NewHasher(opts.BcryptCost, opts.BcryptSlots)
	if err != nil {
		return nil, err
	}
	events := opts.Logger
	if opts.eventLog != nil {
		events = opts.eventLog
	}
	if st.Auth, err = authn.Open(filepath.Join(opts.Dir, "auth.journal"), authn.Options{Hasher: hasher, Logger: events, Now: opts.Now, FS: opts.fs}); err != nil {
		return nil, err
	}
	if st.Settings, err = settings.Open(filepath.Join(opts.Dir, "settings.journal"), settings.Options{Logger: events, Now: opts.Now, FS: opts.fs}); err != nil {
		return nil, err
	}
	if withLogs {
		ls := st.Settings.Get().Logs
		st.Logs, err = logstore.Open(filepath.Join(opts.Dir, "logs"), logstore.Options{
			Logger: opts.Logger, MaxDays: ls.MaxDays, MinLevel: ls.MinLevel, MaxBytes: opts.LogsMaxBytes, Now: opts.Now, FS: opts.fs,
		})
		if err != nil {
			return nil, err
		}
	}
	return st, nil
}

// ImportStores opens the auth and settings stores of a new data dir in
// dir for an import from PocketBase (pbimport.Options.OpenStores): dir is
// the import's temporary folder, whose lock the import holds. This is all
// the import takes from app: the data dir's layout, as openStores has it.
func ImportStores(dir string) (*pbimport.Stores, error) {
	st, err := openStores(Options{Dir: dir, BcryptCost: authn.DefaultCost}, false)
	if err != nil {
		return nil, err
	}
	return &pbimport.Stores{Auth: st.Auth, Settings: pbimport.StoreSettings(st.Settings), Close: st.Close}, nil
}

// logSettings is the log store's subscriber to the settings store (see
// subscribeSettings): it applies settings.logs (retention and minimum
// level) at start and on every change, before the change is acknowledged;
// maxDays 0 drops the stored logs. The store opens with the settings
// already applied (openStores). Retention needs no space, so on a full
// disk too the logs past it are gone (from the API and the disk) by the
// time the change is acknowledged. Only a segment file the file system
// refuses to delete (an I/O error) makes SetRetention fail: it is no
// longer listed, the failure is logged, and the store's retention passes
// try the file again; the change stays committed.
func logSettings(logs *logstore.Store, log *slog.Logger) func(settings.Settings) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(v settings.Settings) {
		if err := logs.SetRetention(v.Logs.MaxDays, v.Logs.MinLevel); err != nil {
			log.Error("apply the log settings", "err", err)
		}
	}
}

// Close flushes and closes every store, then releases the data dir if Open
// locked it. It may be called more than once.
func (s *Stores) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.Logs != nil {
		errs = append(errs, s.Logs.Close())
	}
	if s.Settings != nil {
		errs = append(errs, s.Settings.Close())
	}
	if s.Auth != nil {
		errs = append(errs, s.Auth.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Unlock())
	}
	return errors.Join(errs...)
}

// Login says how to log in as a superuser. Created is set when the server
// just created the account; Password only when it chose the password itself
// (one the operator set is never echoed back).
type Login struct {
	Email, Password string
	Created         bool
}

// DefaultSuperuserEmail is the email of the first superuser when
// Config.SuperuserEmail is empty.
const DefaultSuperuserEmail = "admin@localhost"

// ensureSuperuser creates the first superuser of a new data dir, with the
// given email and password or a random password, so that a plain
// `strongbox serve` is usable at once.
func ensureSuperuser(ctx context.Context, auth *authn.Store, email, password string) (Login, error) {
	su := auth.Superusers()
	if recs := auth.Records(su); len(recs) > 0 {
		return Login{Email: recs[0].Email}, nil
	}
	if email == "" {
		email = DefaultSuperuserEmail
	}
	login := Login{Email: email, Created: true}
	if password == "" {
		p, err := authn.NewRandom(nil).Password(20)
		if err != nil {
			return Login{}, err
		}
		password, login.Password = p, p
	}
	if _, err := auth.CreateSuperuser(ctx, email, password); err != nil {
		return Login{}, fmt.Errorf("create the first superuser %s: %w", email, err)
	}
	return login, nil
}
