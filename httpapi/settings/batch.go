package settings

import "strongbox/authn/validation"

// Batch is PocketBase's configuration of its batch endpoint (POST
// /api/batch). Strongbox has no such endpoint: the section is kept, with
// PocketBase's defaults and validation, so that clients reading or
// writing settings see the shape they know, and enabling it is refused.
type Batch struct {
	Enabled     bool  `json:"enabled"`
	MaxRequests int   `json:"maxRequests"`
	Timeout     int64 `json:"timeout"`
	MaxBodySize int64 `json:"maxBodySize"`
}

// defaultBatch is the section of a new data dir: disabled.
func defaultBatch() Batch { return Batch{MaxRequests: 50, Timeout: 3} }

// validate checks the section as PocketBase (BatchConfig.Validate) does:
// maxRequests and timeout required when enabled, Min(0); maxBodySize
// Min(0). A section that passes with enabled set is refused
// (validation_unsupported): accepting it would promise an endpoint that is
// not there.
func (b Batch) validate() validation.Errors {
	errs := validation.Errors{}
	switch {
	case b.MaxRequests < 0:
		errs["maxRequests"] = errMin(0)
	case b.MaxRequests == 0 && b.Enabled:
		errs["maxRequests"] = errRequired
	}
	switch {
	case b.Timeout < 0:
		errs["timeout"] = errMin(0)
	case b.Timeout == 0 && b.Enabled:
		errs["timeout"] = errRequired
	}
	if b.MaxBodySize < 0 {
		errs["maxBodySize"] = errMin(0)
	}
	if b.Enabled && len(errs) == 0 {
		errs["enabled"] = validation.New(validation.CodeUnsupported,
			"Batch requests are not supported: this server has no /api/batch endpoint.")
	}
	return errs
}
