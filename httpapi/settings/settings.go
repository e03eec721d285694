package settings

import "strongbox/authn/validation"

// Settings is the settings document: one section per subsystem it
// configures, each in a file of its own with its type, its defaults, its
// secrets and its validation (smtp.go, backups.go, s3.go, meta.go,
// ratelimits.go, trustedproxy.go, batch.go, logs.go). Secrets
// (smtp.password, the S3 secrets) are stored but never reported: see
// Public.
type Settings struct {
	SMTP         SMTP         `json:"smtp"`
	Backups      Backups      `json:"backups"`
	S3           S3           `json:"s3"`
	Meta         Meta         `json:"meta"`
	RateLimits   RateLimits   `json:"rateLimits"`
	TrustedProxy TrustedProxy `json:"trustedProxy"`
	Batch        Batch        `json:"batch"`
	Logs         Logs         `json:"logs"`
}

// Defaults returns the settings of a new data dir (PocketBase's defaults).
func Defaults() Settings {
	return Settings{
		SMTP:         defaultSMTP(),
		Backups:      defaultBackups(),
		Meta:         defaultMeta(),
		RateLimits:   DefaultRateLimits(),
		TrustedProxy: defaultTrustedProxy(),
		Batch:        defaultBatch(),
		Logs:         defaultLogs(),
	}
}

// Public returns s without secrets, with lists of its own.
func (v Settings) Public() Settings {
	v = v.clone()
	v.SMTP = v.SMTP.public()
	v.Backups = v.Backups.public()
	v.S3 = v.S3.public()
	return v
}

// clone returns v with lists of its own, never nil (the elements of the
// lists are shared).
func (v Settings) clone() Settings {
	v.TrustedProxy = v.TrustedProxy.clone()
	v.RateLimits = v.RateLimits.clone()
	return v
}

// keepSecrets keeps cur's secrets where v, an edit of cur, left them
// empty: the public view never shows them, so a client sends them back
// empty.
func (v *Settings) keepSecrets(cur Settings) {
	v.SMTP.keepSecret(cur.SMTP)
	v.Backups.keepSecret(cur.Backups)
	v.S3.keepSecret(cur.S3)
}

// validate checks the document and returns its failures, nested by
// section: each section validates itself.
func (v Settings) validate() validation.Errors {
	errs := validation.Errors{}
	for _, sec := range []struct {
		key  string
		errs validation.Errors
	}{
		{"meta", v.Meta.validate()},
		{"logs", v.Logs.validate()},
		{"batch", v.Batch.validate()},
		{"smtp", v.SMTP.validate()},
		{"backups", v.Backups.validate()},
		{"s3", v.S3.validate(msgS3FilesUnsupported)},
		{"trustedProxy", v.TrustedProxy.validate()},
		{"rateLimits", v.RateLimits.validate()},
	} {
		if len(sec.errs) > 0 {
			errs[sec.key] = sec.errs
		}
	}
	return errs
}

// The failures more than one section reports.
var (
	errRequired = validation.Required()
	errURL      = validation.IsURL()
)

func errMin(n int) *validation.Error { return validation.MinGreaterEqual(int64(n)) }
