package settings

import "strongbox/authn/validation"

// Logs configures request logging. MaxDays 0 turns logging off and drops the
// stored logs.
type Logs struct {
	MaxDays   int  `json:"maxDays"`
	MinLevel  int  `json:"minLevel"`
	LogIP     bool `json:"logIP"`
	LogAuthID bool `json:"logAuthId"`
}

// defaultLogs is the section of a new data dir: five days, IPs logged.
func defaultLogs() Logs { return Logs{MaxDays: 5, LogIP: true} }

// validate checks the section: maxDays Min(0).
func (l Logs) validate() validation.Errors {
	errs := validation.Errors{}
	if l.MaxDays < 0 {
		errs["maxDays"] = errMin(0)
	}
	return errs
}
