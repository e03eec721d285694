package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"strongbox/backup"
	"strongbox/backup/cron"
	"strongbox/httpapi/api"
	"strongbox/httpapi/settings"
)

// autoBackups runs the auto-backup schedule of settings.backups, as
// PocketBase v0.31.0 does: a cron.Scheduler, in UTC minutes, whose
// schedule follows the settings. Each due minute it creates, in the
// storage in force (the backups folder or the bucket of backups.s3),
// @auto_sb_backup_YYYYMMDDHHMMSS.zip and, only if that succeeded, deletes
// the automatic backups the retention of the settings does not keep
// (backup.Retention: the newest cronMaxKeep, and the newest of each of
// the last cronKeepDaily days, cronKeepWeekly weeks, cronKeepMonthly
// months). Manual and uploaded archives are never pruned.
type autoBackups struct {
	sched  *cron.Scheduler
	log    *slog.Logger
	now    func() time.Time
	store  func() backup.Storage
	lock   *backup.Lock
	create func(ctx context.Context, key string) (backup.Info, error)

	ctx    context.Context // the runs' context; cancelled by stop
	cancel context.CancelFunc
	// createTimeout bounds a run's naming and create, pruneTimeout its
	// pruning, both under the backup lock: a bucket that never answers
	// cannot hold the lock (and the schedule) past them.
	createTimeout, pruneTimeout time.Duration

	mu   sync.Mutex
	keep backup.Retention // of the settings in force
}

// newAutoBackups returns the schedule of s, stopped and empty.
func newAutoBackups(s *Server) *autoBackups {
	return newSchedule(s.log, func() time.Time { return s.now() }, func() backup.Storage { return s.storage().st }, &s.block, s.createBackup)
}

func newSchedule(log *slog.Logger, now func() time.Time, store func() backup.Storage, lock *backup.Lock, create func(context.Context, string) (backup.Info, error)) *autoBackups {
	a := &autoBackups{sched: cron.New(now), log: log, now: now, store: store, lock: lock, create: create,
		createTimeout: api.BackupTimeout, pruneTimeout: pruneTimeout}
	a.sched.Logger = log
	a.ctx, a.cancel = context.WithCancel(context.Background())
	return a
}

// reload applies settings v: it is a settings subscriber, called at every
// change with the settings lock held, so it only swaps the schedule (a run
// under way finishes undisturbed). An empty cron turns the schedule off.
func (a *autoBackups) reload(v settings.Settings) {
	a.mu.Lock()
	a.keep = retention(v.Backups)
	a.mu.Unlock()
	// The settings store validated the expression; a failure here would
	// leave the previous schedule in force, so it is logged.
	if err := a.sched.Set(v.Backups.Cron, a.run); err != nil {
		a.log.Error("auto backup: schedule not changed", "cron", v.Backups.Cron, "err", err)
	}
}

// start starts the scheduler; stop cancels a run under way and waits for it.
func (a *autoBackups) start() { a.sched.Start(a.ctx) }
func (a *autoBackups) stop() {
	a.cancel()
	a.sched.Stop()
}

// pruneTimeout bounds the pruning of a run, which holds the backup lock:
// a listing and a delete of each archive beyond cronMaxKeep, seconds on
// any bucket; a bucket that trickles or lists without end holds the lock
// no longer than this.
const pruneTimeout = 2 * time.Minute

// run is one due minute of the schedule. Every step has a deadline
// (createTimeout for the name and the create, then pruneTimeout), so the
// lock it holds is always released.
func (a *autoBackups) run(time.Time) {
	start := time.Now()
	st := a.store()
	ctx, cancel := context.WithTimeout(a.ctx, a.createTimeout)
	defer cancel()
	key := backup.NewAutoName(a.now(), func(k string) bool { ok, _ := st.Exists(ctx, k); return ok })
	release, ok := a.lock.TryLock(backup.KindCreate, key)
	if !ok {
		kind, _, _ := a.lock.Held()
		a.log.Warn("auto backup skipped: another backup operation is running", "key", key, "running", kind.String())
		return
	}
	defer release()
	info, err := a.create(ctx, key)
	if err != nil {
		// Nothing is pruned: the newest good backups stay
		// (PocketBase prunes even after a failure).
		a.log.Error("auto backup failed", "key", key, "took", elapsed(start), "err", err)
		return
	}
	a.log.Info("auto backup created", "key", info.Key, "size", info.Size, "took", elapsed(start))
	a.mu.Lock()
	keep := a.keep
	a.mu.Unlock()
	a.prune(st, keep)
}

// retention is the rule of the settings b: cronMaxKeep is restic's
// keep-last, so with no other keep set the newest cronMaxKeep stay, as in
// PocketBase.
func retention(b settings.Backups) backup.Retention {
	return backup.Retention{Last: b.CronMaxKeep, Daily: b.CronKeepDaily, Weekly: b.CronKeepWeekly, Monthly: b.CronKeepMonthly}
}

// prune deletes the automatic backups keep does not keep
// (backup.Retention.Prune: by modification time in UTC, ties broken by
// key). A keep of zeros prunes nothing.
func (a *autoBackups) prune(st backup.Storage, keep backup.Retention) {
	if keep == (backup.Retention{}) {
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, a.pruneTimeout)
	defer cancel()
	list, err := st.List(ctx)
	if err != nil {
		a.log.Error("auto backup: prune: list the backups", "err", err)
		return
	}
	drop, _ := keep.Prune(list)
	for _, old := range drop {
		if ctx.Err() != nil {
			a.log.Error("auto backup: prune: out of time", "key", old.Key, "err", context.Cause(ctx))
			return
		}
		if err := st.Delete(ctx, old.Key); err != nil {
			a.log.Error("auto backup: prune", "key", old.Key, "err", err)
			continue
		}
		a.log.Info("auto backup pruned", "key", old.Key, "keep", keep.Last, "keepDaily", keep.Daily, "keepWeekly", keep.Weekly, "keepMonthly", keep.Monthly)
	}
}
