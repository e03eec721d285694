package settings

import (
	"fmt"
	"regexp"
	"strings"

	"strongbox/authn/validation"
)

// RateLimits is PocketBase's rateLimits section: rules that, when
// Enabled, limit the requests of each client (see package ratelimit).
// Keys are in PocketBase's order: rules, then enabled.
type RateLimits struct {
	Rules   []RateLimitRule `json:"rules"`
	Enabled bool            `json:"enabled"`
}

// RateLimitRule allows MaxRequests requests per Duration seconds to each
// client, for the requests Label matches: a tag ("users:auth",
// "*:create"), a path ("/api/batch"), a method and path ("POST
// /api/batch"), or a path prefix (a path ending in "/"). Audience narrows
// it to guests ("@guest") or authenticated requests ("@auth"); empty means
// both.
type RateLimitRule struct {
	Label       string `json:"label"`
	Audience    string `json:"audience"`
	Duration    int64  `json:"duration"`
	MaxRequests int    `json:"maxRequests"`
}

// DefaultRateLimits returns PocketBase's defaults: disabled, with the
// rules it proposes once enabled.
func DefaultRateLimits() RateLimits {
	return RateLimits{Rules: []RateLimitRule{
		{Label: "*:auth", Duration: 3, MaxRequests: 2},
		{Label: "*:create", Duration: 5, MaxRequests: 20},
		{Label: "/api/batch", Duration: 1, MaxRequests: 3},
		{Label: "/api/", Duration: 10, MaxRequests: 300},
	}}
}

// clone returns the section with a list of its own, never nil, holding
// the same rules (so that an edit may change a rule in place: the API's
// PATCH decodes a rule into the element at its index, as PocketBase's
// PATCH, which binds into a clone, does).
func (rl RateLimits) clone() RateLimits {
	rl.Rules = append([]RateLimitRule{}, rl.Rules...)
	return rl
}

// validate checks the section: its errors are those of the rules (see
// validateRules), under the "rules" key.
func (rl RateLimits) validate() validation.Errors {
	if e := rl.validateRules(); e != nil {
		return validation.Errors{"rules": e}
	}
	return nil
}

// rateLimitLabel is PocketBase's label format: "<METHOD> /path",
// "/path", "<collection>:<tag>", "*:<tag>" or a bare tag (\w is ASCII).
var rateLimitLabel = regexp.MustCompile(`^(\w+ /[\w/-]*|/[\w/-]*|\w+:\w+|\*:\w+|\w+)$`)

// validateRules checks the rules as PocketBase does (core/settings_model.go,
// with ozzo-validation's codes and messages) and returns the errors for
// the "rules" key, or nil. Its checks run in PocketBase's order, each
// stopping the ones after it: rules required when enabled; then no two
// rules conflicting (the first conflict reported, by index); then each
// rule's fields.
func (rl RateLimits) validateRules() error {
	if rl.Enabled && len(rl.Rules) == 0 {
		return errRequired
	}
	// Two rules conflict when label+"@@"+audience of one is a prefix of the
	// other's: the same label and audience, or the same label for everyone
	// ("") and for a group.
	var seen []string
	for i, r := range rl.Rules {
		k := r.Label + "@@" + r.Audience
		for _, s := range seen {
			if strings.HasPrefix(s, k) || strings.HasPrefix(k, s) {
				return validation.Errors{fmt.Sprint(i): validation.Errors{"label": &validation.Error{
					Code:    validation.CodeConflictingRateLimitRule,
					Message: "Rate limit rule configuration with label " + r.Label + " already exists or conflicts with another rule.",
					Params:  map[string]any{"label": r.Label},
				}}}
			}
		}
		seen = append(seen, k)
	}
	errs := validation.Errors{}
	for i, r := range rl.Rules {
		m := validation.Errors{}
		switch {
		case r.Label == "":
			m["label"] = errRequired
		case !rateLimitLabel.MatchString(r.Label):
			m["label"] = validation.MatchInvalid()
		}
		// ozzo's Required rejects the zero value before Min(1) is tried.
		switch {
		case r.MaxRequests == 0:
			m["maxRequests"] = errRequired
		case r.MaxRequests < 1:
			m["maxRequests"] = errMin(1)
		}
		switch {
		case r.Duration == 0:
			m["duration"] = errRequired
		case r.Duration < 1:
			m["duration"] = errMin(1)
		}
		switch r.Audience {
		case "", "@guest", "@auth":
		default:
			m["audience"] = validation.InInvalid(nil)
		}
		if len(m) > 0 {
			errs[fmt.Sprint(i)] = m
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}
