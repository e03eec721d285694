package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// The violations of the rate limits and the login throttle (ratelimits.go),
// committed by mutations in front of the real strongbox.

// noLoginThrottle makes the server one without a login throttle: its 429s
// to a password login become the 400 of a wrong password.
var noLoginThrottle = edit(loginRoute, func(_ *http.Request, res *answered) {
	if res.status == 429 {
		*res = *envelopeAnswer(400, msgFailedAuth)
	}
})

var (
	settingsGet   = route(http.MethodGet, "/api/settings")
	settingsPatch = route(http.MethodPatch, "/api/settings")
)

func loginRoute(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/auth-with-password")
}

// throttledLogin selects the logins of the throttle checks: users'
// password logins that name their client address (loginFrom).
func throttledLogin(r *http.Request) bool {
	return route(http.MethodPost, "/api/collections/users/auth-with-password")(r) && r.Header.Get(clientAddrHeader) != ""
}

// loginIdentity returns the identity a password login names.
func loginIdentity(r *http.Request) string {
	id, _ := bodyJSON(r)["identity"].(string)
	return id
}

// refuseConcurrentLogins is a throttle that counts the logins of an
// identity in flight as failures, as strongbox's did before issue 20:
// a login arriving while another of the same identity is in flight answers
// 429. So that the logins of a check overlap however the front schedules
// them, a login waits (up to a second) for the next one of its identity
// before it goes on.
func refuseConcurrentLogins() mutation {
	var mu sync.Mutex
	inFlight := map[string]int{}
	arrived := map[string]chan struct{}{}
	return when(throttledLogin, func(x *front, w http.ResponseWriter, r *http.Request) {
		id := loginIdentity(r)
		mu.Lock()
		if inFlight[id] > 0 {
			if ch := arrived[id]; ch != nil {
				close(ch)
				delete(arrived, id)
			}
			mu.Unlock()
			envelopeAnswer(http.StatusTooManyRequests, msgTooManyLogins).write(w)
			return
		}
		inFlight[id]++
		next := make(chan struct{})
		arrived[id] = next
		mu.Unlock()
		timer := time.NewTimer(time.Second)
		select {
		case <-next:
		case <-timer.C:
		}
		timer.Stop()
		res := x.forward(r)
		mu.Lock()
		inFlight[id]--
		if arrived[id] == next {
			delete(arrived, id)
		}
		mu.Unlock()
		res.write(w)
	})
}

// lockIdentityAfter is a throttle that locks an identity out of every
// address after n failed logins, as strongbox's did before issue 20 (n
// 20): later logins of it answer 429 without being tried.
func lockIdentityAfter(n int) mutation {
	var mu sync.Mutex
	failed := map[string]int{}
	return when(throttledLogin, func(x *front, w http.ResponseWriter, r *http.Request) {
		id := loginIdentity(r)
		mu.Lock()
		locked := failed[id] >= n
		mu.Unlock()
		if locked {
			envelopeAnswer(http.StatusTooManyRequests, msgTooManyLogins).write(w)
			return
		}
		res := x.forward(r)
		if res.status == http.StatusBadRequest {
			mu.Lock()
			failed[id]++
			mu.Unlock()
		}
		res.write(w)
	})
}

// superuserToken reports whether r carries a token of _superusers (by the
// collectionId of its claims, which are not checked here).
func superuserToken(r *http.Request) bool {
	parts := strings.Split(r.Header.Get("Authorization"), ".")
	if len(parts) != 3 {
		return false
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct{ CollectionID string }
	json.Unmarshal(payload, &claims)
	return claims.CollectionID == "pbc_3142635823"
}

var rateLimitsMutators = []mutator{
	{"rate-rules-without-audience", []string{"RATE-001"}, editObject(settingsGet, func(_ *http.Request, m map[string]any) {
		rl, _ := m["rateLimits"].(map[string]any)
		rules, _ := rl["rules"].([]any)
		for _, rule := range rules {
			delete(rule.(map[string]any), "audience")
		}
	})},
	{"lax-rate-rules", []string{"RATE-002", "RATE-003"}, edit(settingsPatch, func(_ *http.Request, res *answered) {
		if res.status == 400 && bytes.Contains(res.body, []byte(`"rateLimits"`)) {
			*res = answered{status: 200, header: http.Header{}}
			res.setJSON(map[string]any{})
		}
	})},
	// A superuser is limited as a guest is.
	{"limit-superusers", []string{"RATE-004"}, when(superuserToken, func(x *front, w http.ResponseWriter, r *http.Request) {
		if res := x.forwardAs(r, ""); res.status == 429 {
			res.write(w)
			return
		}
		x.pass(w, r)
	})},
	// The wildcard "*:auth" wins over a collection's own rule, as if that
	// rule were not there.
	{"wildcard-auth-first", []string{"RATE-005"}, rewrite(settingsPatch, func(r *http.Request) {
		m := bodyJSON(r)
		rl, _ := m["rateLimits"].(map[string]any)
		rules, _ := rl["rules"].([]any)
		var kept []any
		for _, rule := range rules {
			label, _ := rule.(map[string]any)["label"].(string)
			if !strings.HasSuffix(label, ":auth") || label == "*:auth" {
				kept = append(kept, rule)
			}
		}
		if len(kept) < len(rules) {
			rl["rules"] = kept
			setBody(r, m)
		}
	})},
	// The OTP attempt cap is per client, as in PocketBase: a new address's
	// right code is not refused (answered here as a wrong one would be).
	{"otp-attempts-per-client", []string{"OTP-ATTEMPTS-001"}, edit(route(http.MethodPost, "/api/collections/users/auth-with-otp"), func(r *http.Request, res *answered) {
		if res.status == 429 && r.Header.Get(clientAddrHeader) != "" {
			*res = *envelopeAnswer(400, msgOTPInvalid)
		}
	})},
	{"no-login-throttle", []string{"LOGIN-THROTTLE-001"}, noLoginThrottle},
	// A successful login counts as a failure too.
	{"count-logins", []string{"LOGIN-THROTTLE-002"}, when(loginRoute, func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		if res.status == 200 {
			m := bodyJSON(r)
			m["password"] = "Wrong-" + newNonce(10)
			setBody(r, m)
			x.forward(r)
		}
		res.write(w)
	})},
	{"refuse-concurrent-logins", []string{"LOGIN-THROTTLE-003"}, refuseConcurrentLogins()},
	{"lock-identity-after-20", []string{"LOGIN-THROTTLE-004"}, lockIdentityAfter(20)},
	// The mail limit's 429 as PocketBase's rate limiter sends one: no
	// Retry-After; one asking for an hour; none at all, every mail sent.
	{"mail-429-without-retry-after", []string{"RATE-MAIL-001"}, edit(mailRouteRequest, func(_ *http.Request, res *answered) {
		if res.status == 429 {
			res.header.Del("Retry-After")
		}
	})},
	{"mail-retry-after-an-hour", []string{"RATE-MAIL-001"}, edit(mailRouteRequest, func(_ *http.Request, res *answered) {
		if res.status == 429 {
			res.header.Set("Retry-After", "3600")
		}
	})},
	{"no-mail-limit", []string{"RATE-MAIL-001"}, edit(mailRouteRequest, func(_ *http.Request, res *answered) {
		if res.status == 429 {
			*res = answered{status: 204, header: http.Header{}}
		}
	})},
}

// mailRouteRequest selects the requests to the mail-sending routes.
func mailRouteRequest(r *http.Request) bool { return isMailRoute(r.Method, r.URL.Path) }

// TestLoginThrottleAbsent: on a server with no login throttle, the check
// of the throttle itself fails, and the checks of how it behaves, which
// would pass there vacuously, are skipped as absent with the probe's answer.
func TestLoginThrottleAbsent(t *testing.T) {
	if testing.Short() {
		t.Skip("signs in some forty times")
	}
	t.Parallel() // the throttle's spaced checks wait some 15 s: not alone
	for _, tt := range []struct {
		name string
		m    mutation
		want map[string]Outcome
	}{
		{"present", nil, map[string]Outcome{"LOGIN-THROTTLE-001": Pass, "LOGIN-THROTTLE-002": Pass,
			"LOGIN-THROTTLE-003": Pass, "LOGIN-THROTTLE-004": Pass}},
		{"absent", noLoginThrottle, map[string]Outcome{"LOGIN-THROTTLE-001": Fail, "LOGIN-THROTTLE-002": Skip,
			"LOGIN-THROTTLE-003": Skip, "LOGIN-THROTTLE-004": Skip}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := startStrongbox(t)
			if tt.m != nil {
				base = startFront(t, base, tt.m)
			}
			rep := Run(t.Context(), Config{BaseURL: base, Email: testEmail, Password: testPassword,
				Profile: SourceStrongbox, Only: "LOGIN-THROTTLE-"})
			if len(rep.Results) != len(tt.want) {
				t.Fatalf("%d results, want %d", len(rep.Results), len(tt.want))
			}
			for _, res := range rep.Results {
				if res.Outcome != tt.want[res.Req.ID] {
					t.Errorf("%s: %s (%s), want %s", res.Req.ID, res.Outcome, res.Detail, tt.want[res.Req.ID])
				}
				if res.Outcome == Skip && (!strings.Contains(res.Detail, "absent: the server has no login throttle") ||
					!strings.Contains(res.Detail, "answered 400 "+quote(msgFailedAuth)+")")) {
					t.Errorf("%s: skipped without the probe's answer: %s", res.Req.ID, res.Detail)
				}
			}
		})
	}
}
