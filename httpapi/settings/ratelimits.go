package settings

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
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

// MaxRateLimitRules is the most rules the section may have. PocketBase
// has no such limit, but no PATCH /api/settings body can carry more, nor
// a series of them reach more: httpapi refuses a body of more than 10,000
// JSON values, and a body keeps each rule as 2 at least ("{}", which
// keeps the rule at its index, and a comma). It bounds what an import
// (whose settings come from a PocketBase's files, not through that body)
// may store.
const MaxRateLimitRules = 5000

// rateLimitLabel is PocketBase's label format: "<METHOD> /path",
// "/path", "<collection>:<tag>", "*:<tag>" or a bare tag (\w is ASCII).
var rateLimitLabel = regexp.MustCompile(`^(\w+ /[\w/-]*|/[\w/-]*|\w+:\w+|\*:\w+|\w+)$`)

// validateRules checks the rules as PocketBase does (core/settings_model.go,
// with ozzo-validation's codes and messages) and returns the errors for
// the "rules" key, or nil. Its checks run in PocketBase's order, each
// stopping the ones after it: rules required when enabled (and at most
// MaxRateLimitRules, strongbox's own check); then no two rules
// conflicting (the first conflict reported, by index); then each rule's
// fields.
func (rl RateLimits) validateRules() error {
	if rl.Enabled && len(rl.Rules) == 0 {
		return errRequired
	}
	if len(rl.Rules) > MaxRateLimitRules {
		return validation.LengthTooLong(MaxRateLimitRules)
	}
	// Two rules conflict when label+"@@"+audience of one is a prefix of the
	// other's: the same label and audience, or the same label for everyone
	// ("") and for a group.
	keys := make([]string, len(rl.Rules))
	for i, r := range rl.Rules {
		keys[i] = r.Label + "@@" + r.Audience
	}
	if i := firstConflict(keys); i >= 0 {
		r := rl.Rules[i]
		return validation.Errors{fmt.Sprint(i): validation.Errors{"label": &validation.Error{
			Code:    validation.CodeConflictingRateLimitRule,
			Message: "Rate limit rule configuration with label " + r.Label + " already exists or conflicts with another rule.",
			Params:  map[string]any{"label": r.Label},
		}}}
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

// firstConflict returns the least i such that keys[i] and a key before it
// are one a prefix of the other, or -1: what comparing each key with
// every one before it, in order, finds first, in O(n log n) comparisons
// instead of O(n²). Sorted, the keys a key is a prefix of come right
// after it; so, walking the sorted keys with a stack of those that are
// prefixes of the current one, the stack holds every key the current one
// conflicts with, and the pair whose later index is least is the first
// conflict in order.
func firstConflict(keys []string) int {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Or(strings.Compare(keys[a], keys[b]), a-b) })
	type prefix struct{ i, least int } // least: the least index in the stack up to this key
	var stack []prefix
	first := -1
	for _, i := range order {
		for len(stack) > 0 && !strings.HasPrefix(keys[i], keys[stack[len(stack)-1].i]) {
			stack = stack[:len(stack)-1]
		}
		least := i
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			if later := max(top.least, i); first < 0 || later < first {
				first = later
			}
			least = min(least, top.least)
		}
		stack = append(stack, prefix{i, least})
	}
	return first
}
