package settings

import (
	"time"

	"strongbox/authn/validation"
)

// Backups configures automatic backups and their storage.
type Backups struct {
	Cron        string `json:"cron"`
	CronMaxKeep int    `json:"cronMaxKeep"`
	BackupsKeep
	S3         S3         `json:"s3"`
	Encryption Encryption `json:"encryption"`
	Continuous Continuous `json:"continuous"`
}

// Continuous configures the continuous backup of the stores to the
// bucket of backups.s3 (package backup/stream), a strongbox extension:
// while enabled, every committed change is shipped within a second, and
// a restore can rebuild the data dir at any instant of the last
// RetentionDays days (0 means DefaultRetentionDays).
type Continuous struct {
	Enabled       bool `json:"enabled"`
	RetentionDays int  `json:"retentionDays"`
}

// DefaultRetentionDays is the retention window of a new data dir's
// continuous backup, and of retentionDays 0.
const DefaultRetentionDays = 7

// maxRetentionDays bounds retentionDays: ten years.
const maxRetentionDays = 3650

// Retention returns the retention window, RetentionDays or its default.
func (c Continuous) Retention() time.Duration {
	d := c.RetentionDays
	if d == 0 {
		d = DefaultRetentionDays
	}
	return time.Duration(d) * 24 * time.Hour
}

// msgContinuousNeedsS3 is the field error of continuous backup enabled
// without the bucket it ships to.
const msgContinuousNeedsS3 = "Continuous backup needs backups.s3 enabled."

// validate checks the section: enabled only with the bucket, and
// retentionDays in 0..3650.
func (c Continuous) validate(s3 S3) validation.Errors {
	errs := validation.Errors{}
	if c.Enabled && !s3.Enabled {
		errs["enabled"] = validation.New(validation.CodeRequired, msgContinuousNeedsS3)
	}
	switch {
	case c.RetentionDays < 0:
		errs["retentionDays"] = errMin(0)
	case c.RetentionDays > maxRetentionDays:
		errs["retentionDays"] = validation.MaxLessEqual(maxRetentionDays)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// defaultBackups is the section of a new data dir: no schedule.
func defaultBackups() Backups {
	return Backups{CronMaxKeep: 3, BackupsKeep: defaultBackupsKeep(), Encryption: Encryption{Recipients: []string{}},
		Continuous: Continuous{RetentionDays: DefaultRetentionDays}}
}

// public returns the section without the secret of its bucket.
func (b Backups) public() Backups {
	b.S3 = b.S3.public()
	b.Encryption = b.Encryption.public()
	return b
}

// keepSecret keeps the stored secret of the bucket when an update leaves
// it empty.
func (b *Backups) keepSecret(cur Backups) {
	b.S3.keepSecret(cur.S3)
	b.Encryption.keepSecret(cur.Encryption)
}

// validate checks the section: cron a valid expression (answered with the
// parser's own text for the fault, as PocketBase does), cronMaxKeep as
// PocketBase's When(cron != "", Required), Min(1), strongbox's keeps
// and checkCron (BackupsKeep), and the bucket (S3).
func (b Backups) validate() validation.Errors {
	errs := validation.Errors{}
	if e := cronError(b.Cron); e != nil {
		errs["cron"] = e
	}
	// Min skips the empty value, so 0 is refused only when cron is set
	// ("Cannot be blank."), and a negative value always, by Min.
	switch {
	case b.CronMaxKeep < 0:
		errs["cronMaxKeep"] = errMin(1)
	case b.CronMaxKeep == 0 && b.Cron != "":
		errs["cronMaxKeep"] = errRequired
	}
	b.BackupsKeep.validate(errs)
	if e := b.S3.validate(""); len(e) > 0 {
		errs["s3"] = e
	}
	if e := b.Encryption.validate(); len(e) > 0 {
		errs["encryption"] = e
	}
	if e := b.Continuous.validate(b.S3); len(e) > 0 {
		errs["continuous"] = e
	}
	return errs
}
