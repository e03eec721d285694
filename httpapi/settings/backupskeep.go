package settings

import (
	"errors"

	"strongbox/authn/validation"
	"strongbox/backup/cron"
)

// BackupsKeep are strongbox's additions to the backups section (not in
// PocketBase): the grandfather-father-son retention of the automatic
// backups beside cronMaxKeep, and the schedule of the archives' check.
// Backups embeds it, so its fields sit flat in "backups".
type BackupsKeep struct {
	// CronKeepDaily, CronKeepWeekly and CronKeepMonthly keep, besides
	// the newest cronMaxKeep, the newest automatic backup of each of the
	// last N UTC days, ISO weeks and months that have one (restic's
	// forget --keep-daily/weekly/monthly; backup.Retention); 0 = not used.
	CronKeepDaily   int `json:"cronKeepDaily"`
	CronKeepWeekly  int `json:"cronKeepWeekly"`
	CronKeepMonthly int `json:"cronKeepMonthly"`
	// CheckCron is when every stored archive is read again and verified
	// (package strongbox/backup/cron syntax; "" = never).
	CheckCron string `json:"checkCron"`
}

// DefaultCheckCron is the check's schedule in a new data dir: weekly, on
// Sunday at 04:00 UTC. Once a week finds a damaged archive while older
// good ones still exist, at the cost of reading every archive (disk reads,
// or a bucket's GETs and egress) once a week; 04:00 is away from the
// midnight minute at which @daily backups and most other jobs run.
const DefaultCheckCron = "0 4 * * 0"

// defaultBackupsKeep: retention by count only, as in PocketBase, and the
// weekly check.
func defaultBackupsKeep() BackupsKeep { return BackupsKeep{CheckCron: DefaultCheckCron} }

// validate checks the keeps (each at least 0) and checkCron (a valid
// expression or empty), into errs.
func (k BackupsKeep) validate(errs validation.Errors) {
	for name, n := range map[string]int{"cronKeepDaily": k.CronKeepDaily, "cronKeepWeekly": k.CronKeepWeekly, "cronKeepMonthly": k.CronKeepMonthly} {
		if n < 0 {
			errs[name] = errMin(0)
		}
	}
	if e := cronError(k.CheckCron); e != nil {
		errs["checkCron"] = e
	}
}

// cronError is the failure of a cron expression that is not empty, with
// the parser's own text for the fault, as PocketBase words it; nil if it
// is valid.
func cronError(expr string) *validation.Error {
	if expr == "" {
		return nil
	}
	if _, err := cron.Parse(expr); err != nil {
		msg := cron.InvalidMessage
		if se, ok := errors.AsType[*cron.SyntaxError](err); ok {
			msg = se.Message()
		}
		return validation.New(validation.CodeInvalidCron, msg)
	}
	return nil
}
