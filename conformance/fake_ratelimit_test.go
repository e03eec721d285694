package conformance

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The fake's rate limiting: just enough of the rateLimits settings (exact
// labels and audiences, the "<collection>:auth" and "*:auth" tags of
// auth-with-password, fixed windows per rule and client) and of the login
// throttle (five failures per identity and client) for the suite's checks.

// fakeLimits is the fake's limiter state; a settings change resets it.
type fakeLimits struct {
	windows map[string]*fakeWindow // rule label+audience+client
	fails   map[string]int         // collection+identity+client → failed logins
}

type fakeWindow struct {
	start time.Time
	count int
}

func fakeDefaultRateLimits() map[string]any {
	rule := func(label string, max, secs float64) map[string]any {
		return map[string]any{"label": label, "audience": "", "duration": secs, "maxRequests": max}
	}
	return map[string]any{"rules": []any{rule("*:auth", 2, 3), rule("*:create", 20, 5), rule("/api/batch", 3, 1), rule("/api/", 300, 10)}, "enabled": false}
}

var fakeLabelRe = regexp.MustCompile(`^(\w+ /[\w/-]*|/[\w/-]*|\w+:\w+|\*:\w+|\w+)$`)

// patchRateLimits validates and applies a rateLimits patch.
func (f *fakeServer) patchRateLimits(rl map[string]any) error {
	cur := f.settings["rateLimits"].(map[string]any)
	enabled, _ := cur["enabled"].(bool)
	if e, ok := rl["enabled"].(bool); ok {
		enabled = e
	}
	rules, _ := cur["rules"].([]any)
	if r, ok := rl["rules"].([]any); ok {
		rules = r
	}
	fail := func(rulesErr any) error {
		return &fakeErr{status: 400, msg: msgSettingsSave, data: map[string]any{"rateLimits": map[string]any{"rules": rulesErr}}}
	}
	field := func(code, msg string) map[string]any { return map[string]any{"code": code, "message": msg} }
	if enabled && len(rules) == 0 && !f.bug("lax-rate-rules") {
		return fail(field(codeRequired, "Cannot be blank."))
	}
	seen := map[string]bool{}
	errs := map[string]any{}
	for i, v := range rules {
		rule, _ := v.(map[string]any)
		label, _ := rule["label"].(string)
		aud, _ := rule["audience"].(string)
		if seen[label+"@@"+aud] {
			return fail(map[string]any{fmt.Sprint(i): map[string]any{"label": field(codeRuleConflict, "Rate limit rule configuration with label "+label+" already exists or conflicts with another rule.")}})
		}
		seen[label+"@@"+aud] = true
		m := map[string]any{}
		if !fakeLabelRe.MatchString(label) {
			m["label"] = field(codeMatchInvalid, "Must be in a valid format.")
		}
		for _, k := range []string{"maxRequests", "duration"} {
			if n, _ := rule[k].(float64); n < 1 {
				m[k] = field(codeMinGreaterThan, "Must be no less than 1.")
			}
		}
		if aud != "" && aud != "@guest" && aud != "@auth" {
			m["audience"] = field(codeInInvalid, "Must be a valid value.")
		}
		if len(m) > 0 {
			errs[fmt.Sprint(i)] = m
		}
	}
	if len(errs) > 0 && !f.bug("lax-rate-rules") {
		return fail(errs)
	}
	f.settings["rateLimits"] = map[string]any{"rules": rules, "enabled": enabled}
	f.limits.windows = nil
	return nil
}

// fakeClient is the request's client address: the trusted header's value
// when one is configured and sent, else the connection's.
func (f *fakeServer) fakeClient(q *fakeReq) string {
	tp, _ := f.settings["trustedProxy"].(map[string]any)
	headers, _ := tp["headers"].([]any)
	for _, h := range headers {
		if v := q.r.Header.Get(fmt.Sprint(h)); v != "" {
			return v
		}
	}
	return q.r.RemoteAddr[:strings.LastIndex(q.r.RemoteAddr, ":")]
}

// rateLimited answers 429 for a request over an enabled rule's limit.
func (f *fakeServer) rateLimited(q *fakeReq) error {
	rl := f.settings["rateLimits"].(map[string]any)
	isSU := q.authColl != nil && q.authColl.name == "_superusers" && !f.bug("limit-superusers")
	if rl["enabled"] != true || isSU {
		return nil
	}
	labels := []string{q.r.Method + " " + q.r.URL.Path, q.r.URL.Path}
	if m := reAuthRoute.FindStringSubmatch(q.r.URL.Path); m != nil && m[2] == "auth-with-password" {
		own := []string{m[1] + ":auth", "*:auth"}
		if f.bug("wildcard-auth-first") {
			own[0], own[1] = own[1], own[0]
		}
		labels = append(own, labels...)
	}
	for _, label := range labels {
		for _, v := range rl["rules"].([]any) {
			rule := v.(map[string]any)
			aud := rule["audience"]
			if rule["label"] != label || (aud == "@guest" && q.auth != nil) || (aud == "@auth" && q.auth == nil) {
				continue
			}
			if f.limits.windows == nil {
				f.limits.windows = map[string]*fakeWindow{}
			}
			key := fmt.Sprint(label, aud, f.fakeClient(q))
			w := f.limits.windows[key]
			if w == nil || time.Since(w.start) >= time.Duration(rule["duration"].(float64))*time.Second {
				w = &fakeWindow{start: time.Now()}
				f.limits.windows[key] = w
			}
			if w.count >= int(rule["maxRequests"].(float64)) {
				return ferr(429, msgTooManyRequests)
			}
			w.count++
			return nil
		}
	}
	return nil
}

// loginThrottled refuses a login after five failures of its identity at
// its client (the fake never forgets them, but a login clears them).
func (f *fakeServer) loginThrottled(q *fakeReq, c *fakeCollection, identity string) (key string, err error) {
	key = c.id + "\x00" + strings.ToLower(identity) + "\x00" + f.fakeClient(q)
	if f.limits.fails[key] >= 5 && !f.bug("no-login-throttle") {
		return key, ferr(429, msgTooManyLogins)
	}
	return key, nil
}

func (f *fakeServer) loginDone(key string, ok bool) {
	if f.limits.fails == nil {
		f.limits.fails = map[string]int{}
	}
	if ok && !f.bug("count-logins") {
		delete(f.limits.fails, key)
	} else {
		f.limits.fails[key]++
	}
}
