package settings

import "strongbox/authn/validation"

// Backups configures automatic backups and their storage.
type Backups struct {
	Cron        string `json:"cron"`
	CronMaxKeep int    `json:"cronMaxKeep"`
	BackupsKeep
	S3         S3         `json:"s3"`
	Encryption Encryption `json:"encryption"`
}

// defaultBackups is the section of a new data dir: no schedule.
func defaultBackups() Backups {
	return Backups{CronMaxKeep: 3, BackupsKeep: defaultBackupsKeep(), Encryption: Encryption{Recipients: []string{}}}
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
	return errs
}
