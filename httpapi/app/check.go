package app

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net/mail"
	"strings"
	"sync"
	"time"

	strongmail "strongbox/authn/mail"
	"strongbox/backup"
	"strongbox/backup/cron"
	"strongbox/httpapi/metrics"
	"strongbox/httpapi/settings"
)

// archiveCheck runs the check of the stored archives: on the schedule of
// settings.backups.checkCron (a cron.Scheduler, UTC minutes) and on demand
// (POST /api/backups/check), it reads every archive of the storage in
// force through once and verifies it as an upload or a restore would
// (backup.CheckAll with the server's limits, stores check included). At
// most one check runs at a time; it runs in the background, takes no lock
// (an archive deleted meanwhile is counted gone), and a stop cancels it.
// Each run's outcome is an event: info with the counts when all is good,
// error naming each bad archive and why, a mail to the superusers when
// one is bad, and the metrics strongbox_backup_check_*.
type archiveCheck struct {
	sched  *cron.Scheduler
	log    *slog.Logger
	now    func() time.Time
	store  func() backup.Storage
	limits backup.Limits
	alert  func(ctx context.Context, rep backup.CheckReport) // mails the superusers; nil = none

	ctx    context.Context // the runs' context; cancelled by stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	running  bool
	last     *backup.CheckReport // nil until a check ended
	failures int                 // checks that found a bad archive or did not finish
}

// newArchiveCheck returns the check of s, stopped.
func newArchiveCheck(s *Server) *archiveCheck {
	c := &archiveCheck{sched: cron.New(func() time.Time { return s.now() }), log: s.log, now: func() time.Time { return s.now() },
		store: func() backup.Storage { return s.storage().st }, limits: s.cfg.BackupLimits, alert: s.mailCheckFailure}
	c.sched.Logger = s.log
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// reload is the settings subscriber of the check's schedule.
func (c *archiveCheck) reload(v settings.Settings) {
	if err := c.sched.Set(v.Backups.CheckCron, func(time.Time) { c.run() }); err != nil {
		c.log.Error("backup check: schedule not changed", "checkCron", v.Backups.CheckCron, "err", err)
	}
}

// start starts the schedule; stop cancels a check under way and waits
// for it.
func (c *archiveCheck) start() { c.sched.Start(c.ctx) }
func (c *archiveCheck) stop() {
	c.cancel()
	c.sched.Stop()
	c.wg.Wait()
}

// Start starts a check now, in the background; false if one is running
// (or the server stops).
func (c *archiveCheck) Start() bool {
	if !c.begin() {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.check()
	}()
	return true
}

// State returns the last check that ended (nil if none since the process
// started) and whether one runs now.
func (c *archiveCheck) State() (*backup.CheckReport, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.running
}

// begin marks a check running, unless one is or the server stops.
func (c *archiveCheck) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running || c.ctx.Err() != nil {
		return false
	}
	c.running = true
	return true
}

// run is a due minute of the schedule.
func (c *archiveCheck) run() {
	if !c.begin() {
		c.log.Warn("backup check skipped: a check is already running")
		return
	}
	c.check()
}

// check runs one check (begin marked it running) and reports it.
func (c *archiveCheck) check() {
	rep := backup.CheckAll(c.ctx, c.store(), c.limits, c.now)
	defer func() {
		// Published once logged and mailed: a client that sees the check
		// ended finds its events.
		c.mu.Lock()
		c.running, c.last = false, &rep
		if !rep.OK() {
			c.failures++
		}
		c.mu.Unlock()
	}()
	took := rep.Ended.Sub(rep.Started).Round(time.Millisecond)
	for _, b := range rep.Bad {
		c.log.Error("backup check: archive failed", "key", b.Key, "unread", b.Unread, "reason", b.Reason)
	}
	switch {
	case rep.Err != "":
		c.log.Error("backup check did not finish", "checked", rep.Checked, "bad", len(rep.Bad), "err", rep.Err, "took", took)
	case len(rep.Bad) > 0:
		c.log.Error("backup check failed", "checked", rep.Checked, "bad", len(rep.Bad), "gone", rep.Gone, "bytes", rep.Bytes, "took", took)
	default:
		c.log.Info("backup check passed", "checked", rep.Checked, "gone", rep.Gone, "bytes", rep.Bytes, "took", took)
	}
	if len(rep.Bad) > 0 && c.alert != nil && c.ctx.Err() == nil {
		c.alert(c.ctx, rep)
	}
}

// gather writes the check's metrics.
func (c *archiveCheck) gather(w *metrics.Writer) {
	c.mu.Lock()
	last, failures, running := c.last, c.failures, c.running
	c.mu.Unlock()
	w.Counter("strongbox_backup_check_failures_total", "Checks of the stored archives that found a bad archive or did not finish, since the process started.", float64(failures))
	w.Gauge("strongbox_backup_check_running", "1 while a check of the stored archives runs.", boolGauge(running))
	if last == nil {
		return
	}
	w.Gauge("strongbox_backup_check_last_run_timestamp_seconds", "When the last check of the stored archives ended, in seconds since the epoch.", float64(last.Ended.UnixNano())/1e9)
	w.Gauge("strongbox_backup_check_last_duration_seconds", "How long the last check of the stored archives took.", last.Ended.Sub(last.Started).Seconds())
	w.Gauge("strongbox_backup_check_last_read_bytes", "Bytes of archive the last check read.", float64(last.Bytes))
	w.Gauge("strongbox_backup_archives_checked", "Archives the last check found good.", float64(last.Checked))
	w.Gauge("strongbox_backup_archives_bad", "Archives the last check found damaged or could not read.", float64(len(last.Bad)))
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// mailCheckFailure queues a mail to every superuser naming the archives
// rep found bad and why: keys and the reasons backup.CheckAll gives,
// which name entries of the archive or the key, never a server path or a
// secret. Nothing is sent while the stores are closed.
func (s *Server) mailCheckFailure(ctx context.Context, rep backup.CheckReport) {
	s.capMu.RLock()
	st := s.stores
	var to []mail.Address
	app := ""
	if st != nil {
		for _, r := range st.Auth.Records(st.Auth.Superusers()) {
			to = append(to, mail.Address{Address: r.Email})
		}
		app = st.Settings.Get().Meta.AppName
	}
	s.capMu.RUnlock()
	if s.mail == nil || len(to) == 0 {
		return
	}
	m := checkFailureMail(app, rep)
	for _, addr := range to {
		one := m
		one.To = []mail.Address{addr}
		if err := s.mail.Send(ctx, &one); err != nil {
			s.log.Error("backup check: mail to a superuser", "to", addr.Address, "err", err)
		}
	}
}

// checkFailureMail is the mail of a check that found bad archives.
func checkFailureMail(app string, rep backup.CheckReport) strongmail.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "<p>The check of the stored backups of %s that ended at %s found %d bad archive(s) of %d:</p><ul>",
		html.EscapeString(app), rep.Ended.UTC().Format("2006-01-02 15:04:05Z"), len(rep.Bad), rep.Checked+len(rep.Bad))
	for _, bad := range rep.Bad {
		what := "damaged"
		if bad.Unread {
			what = "could not be read"
		}
		fmt.Fprintf(&b, "<li><code>%s</code>: %s: %s</li>", html.EscapeString(bad.Key), what, html.EscapeString(bad.Reason))
	}
	b.WriteString("</ul><p>Do not rely on these archives for a restore; make a new backup and check the storage.</p>")
	subject := strings.ReplaceAll(strings.ReplaceAll(app, "\r", " "), "\n", " ") + ": backup check failed"
	return strongmail.Message{Subject: strings.TrimLeft(subject, " :"), HTML: b.String()}
}
