package conformance

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Rate limiting. The interface document does not show it; two sources
// govern these checks:
//
//   - the rateLimits settings (RATE-…) follow PocketBase v0.31.0 (its
//     rate limiter and the default settings document it answers);
//   - the login throttle (LOGIN-THROTTLE-…) is a strongbox promise made by
//     issues 8 and 20 beyond PocketBase, which has no lockout: PocketBase
//     fails the checks of issue 8 (and passes those of issue 20, which
//     only require that the right password is not refused);
//   - the mail limit (RATE-MAIL-…) is one too, of issues 20 and 30: the
//     mail-sending routes are limited per client whatever rateLimits say,
//     and the 429 says when to ask again (mailwait.go).
//
// Checks that need the limiter on, or clients at several addresses, change
// the settings (rateLimits, or trustedProxy with a header of the suite's
// own so that each request can name its client address) and put back what
// they read first in a cleanup. Their rules and addresses are unique to
// the run, so that neither earlier runs nor other checks weigh on them,
// and the suite's own address never collects failed logins from them.

const (
	msgTooManyRequests = "Too Many Requests."
	msgTooManyLogins   = "Too many failed login attempts, please try again later."

	codeMatchInvalid   = "validation_match_invalid"
	codeInInvalid      = "validation_in_invalid"
	codeRuleConflict   = "validation_conflicting_rate_limit_rule"
	clientAddrHeader   = "X-Cf-Client-Addr"
	sectionRateLimits  = "§1 (settings: contract not shown); PocketBase v0.31.0 (its rateLimits settings, their defaults and its 429 answer)"
	sectionLoginThrott = "issue 8 (§2: password login is throttled per identity and per client by default; a strongbox promise beyond PocketBase)"
	sectionLoginRight  = "issue 20 (the login throttle never refuses the right password for others' failures or for concurrency; a strongbox promise beyond PocketBase)"
	sectionMailLimit   = "issue 20 (the mail-sending routes are limited per client whatever rateLimits say); issue 30 (their 429 says when to ask again, " +
		"so that a client such as this suite run twice in a row gets through); a strongbox promise beyond PocketBase"

	// mailFloodMax bounds the requests RATE-MAIL-001 sends for a 429.
	mailFloodMax = 100
	// maxRetryAfter is the longest Retry-After a mail route's 429 may ask
	// for: the limit's window of a minute.
	maxRetryAfter = 60
)

var rateLimitRequirements = []*Requirement{
	{
		ID:      "RATE-001",
		Source:  SourcePocketBase,
		Section: sectionRateLimits,
		Name:    "settings hold rateLimits",
		Text: "GET /api/settings as superuser answers 200 with rateLimits, an object of enabled (boolean) and " +
			"rules (array), each rule an object of label (string), audience (string), duration (number) and " +
			"maxRequests (number).",
		Run: func(ctx context.Context, c *Client) error {
			_, err := c.readRateLimits(ctx)
			return err
		},
	},
	{
		ID:      "RATE-002",
		Source:  SourcePocketBase,
		Section: sectionRateLimits,
		Name:    "invalid rate limit rule refused",
		Text: "PATCH /api/settings with the rule {label \"no spaces\", maxRequests -1, duration -1, audience " +
			"\"@everyone\"} answers 400 \"" + msgSettingsSave + "\" with data.rateLimits.rules.0 holding label {code \"" +
			codeMatchInvalid + "\"}, maxRequests and duration {code \"" + codeMinGreaterThan + "\"} and audience {code \"" +
			codeInInvalid + "\"}; rateLimits read afterwards are unchanged.",
		Run: func(ctx context.Context, c *Client) error {
			return c.refusedRateLimits(ctx, map[string]any{"rules": []any{
				map[string]any{"label": "no spaces", "maxRequests": -1, "duration": -1, "audience": "@everyone"},
			}}, func(r *response, rules map[string]any) error {
				rule, ok := getObject(rules, "0")
				if !ok {
					return Mismatch("data.rateLimits.rules.0 to be an object of field errors", r.String())
				}
				env := &envelope{data: rule}
				for code, fields := range map[string][]string{
					codeMatchInvalid: {"label"}, codeMinGreaterThan: {"maxRequests", "duration"}, codeInInvalid: {"audience"},
				} {
					if err := expectFieldCodes(r, env, code, fields...); err != nil {
						return fmt.Errorf("under data.rateLimits.rules.0: %w", err)
					}
				}
				return nil
			})
		},
	},
	{
		ID:      "RATE-003",
		Source:  SourcePocketBase,
		Section: sectionRateLimits,
		Name:    "enabled without rules, or with conflicting rules, refused",
		Text: "PATCH /api/settings with rateLimits {enabled true, rules []} answers 400 \"" + msgSettingsSave +
			"\" with data.rateLimits.rules {code \"" + codeRequired + "\"}; two rules with the same label and " +
			"audience answer 400 with data.rateLimits.rules.1.label {code \"" + codeRuleConflict + "\"}; rateLimits " +
			"read afterwards are unchanged.",
		Run: func(ctx context.Context, c *Client) error {
			err := c.refusedRateLimits(ctx, map[string]any{"enabled": true, "rules": []any{}},
				func(r *response, _ map[string]any) error {
					env, _ := parseEnvelope(r)
					rl, _ := getObject(env.data, "rateLimits")
					return expectFieldCodes(r, &envelope{data: rl}, codeRequired, "rules")
				})
			if err != nil {
				return err
			}
			rule := map[string]any{"label": "/api/", "maxRequests": 10, "duration": 10, "audience": ""}
			return c.refusedRateLimits(ctx, map[string]any{"rules": []any{rule, rule}},
				func(r *response, rules map[string]any) error {
					second, _ := getObject(rules, "1")
					return expectFieldCodes(r, &envelope{data: second}, codeRuleConflict, "label")
				})
		},
	},
	{
		ID:      "RATE-004",
		Source:  SourcePocketBase,
		Section: sectionRateLimits,
		Name:    "path rules per audience, never for superusers",
		Text: "With rateLimits enabled and the rules {label \"GET /api/cf_<random>\", audience \"@guest\", " +
			"maxRequests 2, duration 60} and {the same label, audience \"@auth\", maxRequests 1, duration 60}, the " +
			"third guest GET of that path answers 429 \"" + msgTooManyRequests + "\" in the error envelope, while " +
			"a regular user's GET after it, then a superuser's (whom the @auth rule would refuse: superusers are " +
			"never limited), do not answer 429.",
		Run: func(ctx context.Context, c *Client) error {
			_, userTok, err := c.newUserToken(ctx)
			if err != nil {
				return err
			}
			path := "/api/cf_" + newNonce(12)
			if err := c.enableRateLimits(ctx,
				map[string]any{"label": "GET " + path, "audience": "@guest", "maxRequests": 2, "duration": 60},
				map[string]any{"label": "GET " + path, "audience": "@auth", "maxRequests": 1, "duration": 60},
			); err != nil {
				return err
			}
			for i, who := range []string{"guest", "guest", "guest", "user", "superuser"} {
				r, err := c.get(ctx, path, map[string]string{"guest": "", "user": userTok, "superuser": c.su}[who])
				if err != nil {
					return err
				}
				if err := limitedOnlyAt(r, i, 2); err != nil {
					return fmt.Errorf("request %d (%s): %w", i+1, who, err)
				}
			}
			return nil
		},
	},
	{
		ID:      "RATE-005",
		Source:  SourcePocketBase,
		Section: sectionRateLimits,
		Name:    "a collection's own rule before the wildcard",
		Text: "With rateLimits enabled and the rules {label \"*:auth\", maxRequests 100, duration 60} and {label " +
			"\"<collection>:auth\", maxRequests 1, duration 60} for a new auth collection, the second guest POST " +
			"to that collection's auth-with-password answers 429 \"" + msgTooManyRequests + "\", and a guest " +
			"POST to users/auth-with-password then does not answer 429.",
		Run: withCollection("auth", func(ctx context.Context, c *Client, name string) error {
			if err := c.enableRateLimits(ctx,
				map[string]any{"label": "*:auth", "audience": "", "maxRequests": 100, "duration": 60},
				map[string]any{"label": name + ":auth", "audience": "", "maxRequests": 1, "duration": 60},
			); err != nil {
				return err
			}
			// Empty bodies: refused by validation, so no password is tried.
			for i, coll := range []string{name, name, "users"} {
				r, err := c.post(ctx, "/api/collections/"+coll+"/auth-with-password", "", map[string]any{})
				if err != nil {
					return err
				}
				if err := limitedOnlyAt(r, i, 1); err != nil {
					return fmt.Errorf("request %d (to %s): %w", i+1, coll, err)
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOGIN-THROTTLE-001",
		Source:  SourceStrongbox,
		Section: sectionLoginThrott,
		Name:    "failed logins throttle the identity at that client only",
		Text: "With rateLimits as they are (off by default) and clients told apart by a trusted proxy header, after " +
			"five wrong passwords for a new user from one client address, auth-with-password for that user from " +
			"that address answers 429 \"" + msgTooManyLogins + "\" even with the right password, while the right " +
			"password from another address answers 200.",
		Run: withThrottledUser(func(ctx context.Context, c *Client, u *user) error {
			attacker, owner := randomClientAddr(), randomClientAddr()
			for i := range 5 {
				r, err := c.loginFrom(ctx, attacker, u.email, "Wrong-"+newNonce(10))
				if err != nil {
					return err
				}
				if _, err := expectError(r, http.StatusBadRequest, msgFailedAuth); err != nil {
					return fmt.Errorf("wrong password %d: %w", i+1, err)
				}
			}
			r, err := c.loginFrom(ctx, attacker, u.email, u.password)
			if err != nil {
				return err
			}
			if _, err := expectError(r, http.StatusTooManyRequests, msgTooManyLogins); err != nil {
				return fmt.Errorf("right password after five wrong ones, same address: %w", err)
			}
			r, err = c.loginFrom(ctx, owner, u.email, u.password)
			if err != nil {
				return err
			}
			if err := checkAuthResult(r, "users", u.id, u.email); err != nil {
				return fmt.Errorf("right password from another address: %w", err)
			}
			return nil
		}),
	},
	{
		ID:      "LOGIN-THROTTLE-002",
		Source:  SourceStrongbox,
		Section: sectionLoginThrott,
		Name:    "only failures count, and a login clears them",
		Text: "From one client address (told apart by a trusted proxy header), four wrong passwords for a new user " +
			"then the right one, three times over, answer 400 \"" + msgFailedAuth + "\" for every wrong password and " +
			"200 for every right one: successful logins are not counted, and one clears the failures before it." + throttleAbsent,
		Run: withLoginThrottle(func(ctx context.Context, c *Client, u *user) error {
			addr := randomClientAddr()
			for round := 1; round <= 3; round++ {
				for i := range 4 {
					r, err := c.loginFrom(ctx, addr, u.email, "Wrong-"+newNonce(10))
					if err != nil {
						return err
					}
					if _, err := expectError(r, http.StatusBadRequest, msgFailedAuth); err != nil {
						return fmt.Errorf("round %d, wrong password %d: %w", round, i+1, err)
					}
				}
				r, err := c.loginFrom(ctx, addr, u.email, u.password)
				if err != nil {
					return err
				}
				if err := checkAuthResult(r, "users", u.id, u.email); err != nil {
					return fmt.Errorf("round %d, right password: %w", round, err)
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOGIN-THROTTLE-003",
		Source:  SourceStrongbox,
		Section: sectionLoginRight,
		Name:    "correct credentials under concurrency are not refused",
		Text: "Sixteen concurrent auth-with-password requests with the right password for a new user, all from one " +
			"client address (told apart by a trusted proxy header), each answer 200 with the user's auth result: " +
			"sign-ins still in progress do not count against the throttle." + throttleAbsent,
		Run: withLoginThrottle(func(ctx context.Context, c *Client, u *user) error {
			addr := randomClientAddr()
			errs := make([]error, 16)
			var wg sync.WaitGroup
			for i := range errs {
				wg.Go(func() {
					r, err := c.loginFrom(ctx, addr, u.email, u.password)
					if err == nil {
						err = checkAuthResult(r, "users", u.id, u.email)
					}
					if err != nil {
						errs[i] = fmt.Errorf("sign-in %d of 16: %w", i+1, err)
					}
				})
			}
			wg.Wait()
			return errors.Join(errs...)
		}),
	},
	{
		ID:      "LOGIN-THROTTLE-004",
		Source:  SourceStrongbox,
		Section: sectionLoginRight,
		Name:    "failures spread over addresses do not lock the owner out",
		Text: "After 25 wrong passwords for a new user from 5 client addresses (5 from each, told apart by a trusted " +
			"proxy header; each answers 400 \"" + msgFailedAuth + "\", possibly after a wait), the right password " +
			"from a sixth address answers 200: failures from other addresses slow an identity down, they do not " +
			"lock it." + throttleAbsent,
		Run: withLoginThrottle(func(ctx context.Context, c *Client, u *user) error {
			var addr string
			for i := range 25 {
				if i%5 == 0 {
					addr = randomClientAddr()
				}
				r, err := c.loginFrom(ctx, addr, u.email, "Wrong-"+newNonce(10))
				if err != nil {
					return err
				}
				if _, err := expectError(r, http.StatusBadRequest, msgFailedAuth); err != nil {
					return fmt.Errorf("wrong password %d (address %d): %w", i+1, i/5+1, err)
				}
			}
			r, err := c.loginFrom(ctx, randomClientAddr(), u.email, u.password)
			if err != nil {
				return err
			}
			if err := checkAuthResult(r, "users", u.id, u.email); err != nil {
				return fmt.Errorf("right password from a sixth address: %w", err)
			}
			return nil
		}),
	},
	{
		ID:      "RATE-MAIL-001",
		Source:  SourceStrongbox,
		Section: sectionMailLimit,
		Name:    "the mail limit's 429 says when to ask again",
		Text: fmt.Sprintf("With rateLimits as they are (off by default) and clients told apart by a trusted proxy header, "+
			"request-password-reset for emails no record has, sent from one new client address, answers 204 until, "+
			"within %d requests, one answers 429 \"%s\" with a single Retry-After header of delta-seconds "+
			"(RFC 9110 §10.2.3) from 1 to %d.", mailFloodMax, msgTooManyRequests, maxRetryAfter),
		Run: func(ctx context.Context, c *Client) error {
			if err := c.trustClientHeader(ctx); err != nil {
				return err
			}
			addr := randomClientAddr()
			for i := range mailFloodMax {
				r, err := c.doWith(ctx, http.MethodPost, "/api/collections/users/request-password-reset",
					http.Header{clientAddrHeader: {addr}}, map[string]string{"email": "cf-nobody-" + newNonce(10) + "@example.com"})
				if err != nil {
					return err
				}
				if r.status == http.StatusNoContent {
					continue
				}
				if _, err := expectError(r, http.StatusTooManyRequests, msgTooManyRequests); err != nil {
					return fmt.Errorf("request %d: %w", i+1, err)
				}
				return expectRetryAfter(r, maxRetryAfter)
			}
			return Mismatch(fmt.Sprintf("a 429 within %s from one client", plural(mailFloodMax, "request")),
				fmt.Sprintf("all %d answered 204", mailFloodMax))
		},
	},
}

// expectRetryAfter requires r to carry one Retry-After header of
// delta-seconds from 1 to max.
func expectRetryAfter(r *response, max int) error {
	v := r.header.Values("Retry-After")
	want := fmt.Sprintf("one Retry-After header of 1 to %d seconds on %s %s", max, r.method, r.path)
	if len(v) == 0 {
		return Mismatch(want, "no Retry-After header")
	}
	if len(v) > 1 {
		return Mismatch(want, fmt.Sprintf("%d Retry-After headers %q", len(v), v))
	}
	secs, err := strconv.Atoi(v[0])
	if err != nil || secs < 1 || secs > max || strings.Trim(v[0], "0123456789") != "" {
		return Mismatch(want, fmt.Sprintf("Retry-After %q", v[0]))
	}
	return nil
}

// readRateLimits requires GET /api/settings to hold a well-formed
// rateLimits object and returns it.
func (c *Client) readRateLimits(ctx context.Context) (map[string]any, error) {
	s, err := c.readSettings(ctx)
	if err != nil {
		return nil, err
	}
	rl, ok := getObject(s.all, "rateLimits")
	if !ok {
		return nil, Mismatch("settings.rateLimits to be an object", jsonText(s.all))
	}
	if _, ok := getBool(rl, "enabled"); !ok {
		return nil, Mismatch("rateLimits.enabled to be a boolean", jsonText(rl))
	}
	rules, ok := getArray(rl, "rules")
	if !ok {
		return nil, Mismatch("rateLimits.rules to be an array", jsonText(rl))
	}
	for i, v := range rules {
		rule, ok := v.(map[string]any)
		if !ok {
			return nil, Mismatch(fmt.Sprintf("rateLimits.rules[%d] to be an object", i), jsonText(v))
		}
		_, okL := getString(rule, "label")
		_, okA := getString(rule, "audience")
		_, okD := getNumber(rule, "duration")
		_, okM := getNumber(rule, "maxRequests")
		if !okL || !okA || !okD || !okM {
			return nil, fmt.Errorf("rateLimits.rules[%d]: %w", i, Mismatch(
				"label and audience (strings), duration and maxRequests (numbers)", jsonText(rule)))
		}
	}
	return rl, nil
}

// refusedRateLimits sends rateLimits patch, requires 400 msgSettingsSave,
// hands the response and its data.rateLimits.rules (if an object) to
// check, and requires rateLimits to be unchanged afterwards.
func (c *Client) refusedRateLimits(ctx context.Context, patch map[string]any, check func(*response, map[string]any) error) error {
	before, err := c.keepRateLimits(ctx)
	if err != nil {
		return err
	}
	r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su, map[string]any{"rateLimits": patch})
	if err != nil {
		return err
	}
	env, err := expectError(r, http.StatusBadRequest, msgSettingsSave)
	if err != nil {
		return err
	}
	rl, ok := getObject(env.data, "rateLimits")
	if !ok {
		return Mismatch("data.rateLimits to be an object of field errors", r.String())
	}
	rules, _ := getObject(rl, "rules")
	if err := check(r, rules); err != nil {
		return err
	}
	after, err := c.readRateLimits(ctx)
	if err != nil {
		return fmt.Errorf("reading the settings again: %w", err)
	}
	if !reflect.DeepEqual(before, after) {
		return fmt.Errorf("rateLimits after the refused PATCH: %w", Mismatch(jsonText(before)+" (unchanged)", jsonText(after)))
	}
	return nil
}

// enableRateLimits turns the limiter on with exactly rules, and restores
// the rateLimits read first when the check ends.
func (c *Client) enableRateLimits(ctx context.Context, rules ...any) error {
	if _, err := c.keepRateLimits(ctx); err != nil {
		return err
	}
	return c.patchSettings(ctx, map[string]any{"rateLimits": map[string]any{"enabled": true, "rules": rules}})
}

// keepRateLimits reads rateLimits and registers the cleanup that puts
// them back; it returns what it read.
func (c *Client) keepRateLimits(ctx context.Context) (map[string]any, error) {
	before, err := c.readRateLimits(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the settings first: %w", err)
	}
	c.restoreSettingOnCleanup("rateLimits", before)
	return before, nil
}

// withThrottledUser is the Run of a login throttle check: it creates a
// user (withUser), makes the server tell clients apart by
// clientAddrHeader (trustClientHeader), and runs f.
func withThrottledUser(f func(ctx context.Context, c *Client, u *user) error) func(context.Context, *Client) error {
	return withUser(func(ctx context.Context, c *Client, u *user) error {
		if err := c.trustClientHeader(ctx); err != nil {
			return err
		}
		return f(ctx, c, u)
	})
}

// throttleAbsent ends the texts of the checks withLoginThrottle runs.
const throttleAbsent = " On a server with no login throttle (five wrong passwords for a user of the probe's own, from " +
	"one address, then the right one, not answered 429) it is skipped as absent, with the probe's answer."

// withLoginThrottle is withThrottledUser for a check of how the login
// throttle behaves, which would pass vacuously on a server that has none:
// on such a server it is skipped as absent, with the probe's result
// (requireLoginThrottle).
func withLoginThrottle(f func(ctx context.Context, c *Client, u *user) error) func(context.Context, *Client) error {
	return withThrottledUser(func(ctx context.Context, c *Client, u *user) error {
		if err := c.requireLoginThrottle(ctx); err != nil {
			return err
		}
		return f(ctx, c, u)
	})
}

// requireLoginThrottle probes, once a run, whether the server throttles
// password logins: five wrong passwords for a user of its own from one
// client address, then the right one from there. A 429 says it does (nil);
// any other answer makes it a skip, "absent", that quotes that answer.
// It needs the client header trusted (trustClientHeader).
func (c *Client) requireLoginThrottle(ctx context.Context) error {
	s := c.shared
	s.throttleMu.Lock()
	defer s.throttleMu.Unlock()
	if s.throttleDone {
		return s.throttleErr
	}
	u, err := c.newUser(ctx)
	if err != nil {
		return fmt.Errorf("probing the login throttle: %w", err)
	}
	addr := randomClientAddr()
	for range 5 {
		if _, err := c.loginFrom(ctx, addr, u.email, "Wrong-"+newNonce(10)); err != nil {
			return fmt.Errorf("probing the login throttle: %w", err)
		}
	}
	r, err := c.loginFrom(ctx, addr, u.email, u.password)
	if err != nil {
		return fmt.Errorf("probing the login throttle: %w", err)
	}
	s.throttleDone = true
	if r.status != http.StatusTooManyRequests {
		answer := strconv.Itoa(r.status) // not the body: a 200 holds a token
		if msg := r.exchange().Message; msg != "" {
			answer += " " + strconv.Quote(msg)
		}
		s.throttleErr = Skipf("absent: the server has no login throttle (probe: after five wrong passwords for a new "+
			"user from one client address, the right one from there answered %s)", answer)
	}
	return s.throttleErr
}

// trustClientHeader makes the server take a request's client address from
// clientAddrHeader, and restores trustedProxy when the check ends.
func (c *Client) trustClientHeader(ctx context.Context) error {
	s, err := c.readSettings(ctx)
	if err != nil {
		return fmt.Errorf("reading the settings first: %w", err)
	}
	before, ok := getObject(s.all, "trustedProxy")
	if !ok {
		return Skipf("the server's settings have no trustedProxy object, so clients cannot be told apart: %s", jsonText(s.all))
	}
	c.restoreSettingOnCleanup("trustedProxy", before)
	return c.patchSettings(ctx, map[string]any{"trustedProxy": map[string]any{"headers": []string{clientAddrHeader}, "useLeftmostIP": false}})
}

func (c *Client) patchSettings(ctx context.Context, patch map[string]any) error {
	r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su, patch)
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return fmt.Errorf("fixture: PATCH /api/settings %s: expected 200, got %s", jsonText(patch), r)
	}
	return nil
}

// restoreSettingOnCleanup registers a cleanup that patches settings[key]
// back to want unless it already is.
func (c *Client) restoreSettingOnCleanup(key string, want map[string]any) {
	c.Cleanup("restore the "+key+" settings", func(ctx context.Context) error {
		if s, err := c.readSettings(ctx); err == nil && reflect.DeepEqual(s.all[key], want) {
			return nil
		}
		return c.patchSettings(ctx, map[string]any{key: want})
	})
}

// loginFrom tries a password login into users as a guest at client
// address addr (see trustClientHeader).
func (c *Client) loginFrom(ctx context.Context, addr, identity, password string) (*response, error) {
	return c.doWith(ctx, http.MethodPost, "/api/collections/users/auth-with-password",
		http.Header{clientAddrHeader: {addr}}, map[string]string{"identity": identity, "password": password})
}

// randomClientAddr returns an address in a random /64 of the IPv6
// documentation prefix 2001:db8::/32 (RFC 3849), so that no two runs share
// a client.
func randomClientAddr() string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("2001:db8:%x:%x::1", binary.BigEndian.Uint16(b[:2]), binary.BigEndian.Uint16(b[2:]))
}

// limitedOnlyAt checks request i of a sequence in which only request
// limited must be refused by a rate limit: that one with 429 and the
// message, any other with anything but 429.
func limitedOnlyAt(r *response, i, limited int) error {
	if i == limited {
		_, err := expectError(r, http.StatusTooManyRequests, msgTooManyRequests)
		return err
	}
	if r.status == http.StatusTooManyRequests {
		return Mismatch("no 429", r.String())
	}
	return nil
}
