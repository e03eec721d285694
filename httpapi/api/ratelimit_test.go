package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// doFrom sends a JSON request as if from client address ip, which the
// server believes once trustProxy has been called.
func (e *env) doFrom(ip, method, path, token string, body any) *response {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	req.Header.Set("X-Real-IP", ip)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return &response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// trustProxy makes the server take the client's address from X-Real-IP.
func (e *env) trustProxy() {
	e.t.Helper()
	e.patchSettings(`{"trustedProxy":{"headers":["X-Real-IP"]}}`)
}

func (e *env) patchSettings(body string) {
	e.t.Helper()
	if res := e.do("PATCH", "/api/settings", e.su, body); res.Status != 200 {
		e.t.Fatalf("PATCH /api/settings %s: %d %s", body, res.Status, res.Body)
	}
}

func TestRateLimitsSettingsShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.do("GET", "/api/settings", e.su, nil)
	// PocketBase's document: rateLimits between meta and trustedProxy,
	// its rules and their keys in its order.
	want := `"hideControls":false},"rateLimits":{"rules":[{"label":"*:auth","audience":"","duration":3,"maxRequests":2},{"label":"*:create","audience":"","duration":5,"maxRequests":20},{"label":"/api/batch","audience":"","duration":1,"maxRequests":3},{"label":"/api/","audience":"","duration":10,"maxRequests":300}],"enabled":false},"trustedProxy":`
	if res.Status != 200 || !strings.Contains(string(res.Body), want) {
		t.Errorf("GET /api/settings = %d %s\nwant it to contain %s", res.Status, res.Body, want)
	}
}

func TestRateLimitsPatchErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name, body, want string
	}{
		{"enabled without rules", `{"rateLimits":{"enabled":true,"rules":[]}}`,
			`{"data":{"rateLimits":{"rules":{"code":"validation_required","message":"Cannot be blank."}}},"message":"An error occurred while saving the new settings.","status":400}`},
		{"bad fields", `{"rateLimits":{"rules":[{"label":"no spaces here","maxRequests":0,"duration":-1,"audience":"guest"}]}}`,
			`{"data":{"rateLimits":{"rules":{"0":{"audience":{"code":"validation_in_invalid","message":"Must be a valid value."},"duration":{"code":"validation_min_greater_equal_than_required","message":"Must be no less than 1.","params":{"threshold":1}},"label":{"code":"validation_match_invalid","message":"Must be in a valid format."},"maxRequests":{"code":"validation_required","message":"Cannot be blank."}}}}},"message":"An error occurred while saving the new settings.","status":400}`},
		{"conflict", `{"rateLimits":{"rules":[{"label":"/api/","maxRequests":1,"duration":1},{"label":"/api/","maxRequests":2,"duration":2}]}}`,
			`{"data":{"rateLimits":{"rules":{"1":{"label":{"code":"validation_conflicting_rate_limit_rule","message":"Rate limit rule configuration with label /api/ already exists or conflicts with another rule.","params":{"label":"/api/"}}}}}},"message":"An error occurred while saving the new settings.","status":400}`},
		{"wrong type", `{"rateLimits":{"rules":[{"label":"/api/","maxRequests":"1","duration":1}]}}`,
			`{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("PATCH", "/api/settings", e.su, tt.body)
			if res.Status != 400 || strings.TrimSpace(string(res.Body)) != tt.want {
				t.Errorf("PATCH %s = %d %s\nwant 400 %s", tt.body, res.Status, res.Body, tt.want)
			}
		})
	}
}

func TestRateLimitsEnforced(t *testing.T) {
	t.Parallel()
	type req struct {
		method, path, who string // who: "guest", "user", "su"
		body              any
		want              int // status; 429 is checked byte for byte
	}
	health := func(who string, want int) req { return req{"GET", "/api/health", who, nil, want} }
	login := func(coll string, want int) req {
		return req{"POST", "/api/collections/" + coll + "/auth-with-password", "guest", map[string]any{}, want}
	}
	create := func(want int) req {
		return req{"POST", "/api/collections/users/records", "guest", map[string]any{"email": "bad"}, want}
	}
	tests := []struct {
		name  string
		rules string
		reqs  []req
	}{
		{"method and path label, guests only", `[{"label":"GET /api/health","audience":"@guest","maxRequests":2,"duration":60}]`,
			[]req{health("guest", 200), health("guest", 200), health("guest", 429), health("user", 200), health("su", 200), health("guest", 429)}},
		{"authenticated only", `[{"label":"/api/health","audience":"@auth","maxRequests":1,"duration":60}]`,
			[]req{health("user", 200), health("user", 429), health("guest", 200), health("guest", 200), health("su", 200)}},
		{"superusers never limited", `[{"label":"/api/","maxRequests":1,"duration":60}]`,
			[]req{health("su", 200), health("su", 200), health("su", 200), health("guest", 200), health("guest", 429)}},
		{"collection tag before wildcard and prefix", `[{"label":"/api/","maxRequests":100,"duration":60},{"label":"*:auth","maxRequests":3,"duration":60},{"label":"users:auth","maxRequests":1,"duration":60}]`,
			[]req{login("users", 400), login("users", 429), login("_superusers", 400), login("_superusers", 400), login("_superusers", 400), login("_superusers", 429)}},
		{"auth routes skip the path rule", `[{"label":"/api/","maxRequests":1,"duration":60}]`,
			[]req{login("users", 400), login("users", 429), health("guest", 200), health("guest", 429)}},
		{"records routes count both", `[{"label":"/api/","maxRequests":2,"duration":60},{"label":"*:create","maxRequests":5,"duration":60}]`,
			[]req{create(400), create(400), create(429), health("guest", 429)}},
		{"create tag", `[{"label":"/api/","maxRequests":100,"duration":60},{"label":"users:create","maxRequests":1,"duration":60}]`,
			[]req{create(400), create(429), health("guest", 200)}},
		{"unknown collection left to the handler", `[{"label":"*:auth","maxRequests":1,"duration":60}]`,
			[]req{login("nope", 404), login("nope", 404)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.signUp("u1@example.com", "password1")
			user := e.login("users", "u1@example.com", "password1")
			e.patchSettings(`{"rateLimits":{"enabled":true,"rules":` + tt.rules + `}}`)
			for i, rq := range tt.reqs {
				tok := map[string]string{"guest": "", "user": user, "su": e.su}[rq.who]
				res := e.do(rq.method, rq.path, tok, rq.body)
				if res.Status != rq.want {
					t.Fatalf("request %d (%s %s as %s) = %d %s, want %d", i, rq.method, rq.path, rq.who, res.Status, res.Body, rq.want)
				}
				if rq.want == 429 {
					wantError(t, res, 429, "Too Many Requests.")
				}
			}
		})
	}
}

func TestRateLimitsWindowAndChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.patchSettings(`{"rateLimits":{"enabled":true,"rules":[{"label":"/api/health","maxRequests":1,"duration":10}]}}`)
	step := func(want int) *response {
		t.Helper()
		res := e.do("GET", "/api/health", "", nil)
		if res.Status != want {
			t.Fatalf("GET /api/health = %d %s, want %d", res.Status, res.Body, want)
		}
		return res
	}
	// A 429 says when the window ends, in whole seconds rounded up
	// (PocketBase sends no Retry-After; the body is its own).
	retryAfter := func(res *response, want string) {
		t.Helper()
		if got := res.Header.Get("Retry-After"); got != want {
			t.Errorf("Retry-After = %q, want %q", got, want)
		}
	}
	retryAfter(step(200), "")
	retryAfter(step(429), "10")
	e.clock.Add(8500 * time.Millisecond)
	retryAfter(step(429), "2")
	e.clock.Add(500 * time.Millisecond)
	retryAfter(step(429), "1")
	e.clock.Add(time.Second)
	step(200) // a new window
	step(429)
	// A change applies at once, without a restart: here, a higher limit
	// with fresh counters...
	e.patchSettings(`{"rateLimits":{"rules":[{"label":"/api/health","maxRequests":2,"duration":10}]}}`)
	step(200)
	step(200)
	step(429)
	// ...turning the limiter off...
	e.patchSettings(`{"rateLimits":{"enabled":false}}`)
	step(200)
	step(200)
	// ...and on again with the same rules: fresh counters.
	e.patchSettings(`{"rateLimits":{"enabled":true}}`)
	step(200)
	step(200)
	step(429)
}

// TestCollectionRoutesRegistered keeps the tag table in step with routes.go.
func TestCollectionRoutesRegistered(t *testing.T) {
	t.Parallel()
	s := newEnv(t).srv.Config.Handler.(*Server)
	for pattern := range collectionRoutes {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.NewReplacer("{collection}", "users", "{id}", "abc").Replace(path)
		req, _ := http.NewRequest(method, "http://x"+path, nil)
		if _, got := s.mux.Handler(req); got != pattern {
			t.Errorf("%s %s routes to %q, want %q", method, path, got, pattern)
		}
	}
}

const tooManyLoginsBody = `{"data":{},"message":"Too many failed login attempts, please try again later.","status":429}`

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("u1@example.com", "password1")
	e.trustProxy()
	const path = "/api/collections/users/auth-with-password"
	try := func(ip, identity, password string, want int) *response {
		t.Helper()
		res := e.doFrom(ip, "POST", path, "", map[string]string{"identity": identity, "password": password})
		if res.Status != want {
			t.Fatalf("login %s from %s = %d %s, want %d", identity, ip, res.Status, res.Body, want)
		}
		if want == 429 {
			if got := strings.TrimSpace(string(res.Body)); got != tooManyLoginsBody {
				t.Errorf("429 body = %s, want %s", got, tooManyLoginsBody)
			}
		}
		return res
	}
	const attacker, user, other = "198.51.100.7", "203.0.113.9", "192.0.2.44"

	// The user logs in from their own address first.
	try(user, "u1@example.com", "password1", 200)
	// Five wrong passwords from the attacker's address, in any case...
	for i := range 5 {
		try(attacker, []string{"u1@example.com", "U1@EXAMPLE.COM"}[i%2], "wrong-password", 400)
	}
	// ...and even the right password is refused there, before any bcrypt
	// work (a refused attempt cannot tell right from wrong), with the time
	// left in the window.
	res := try(attacker, "u1@example.com", "password1", 429)
	if got := res.Header.Get("Retry-After"); got != "900" {
		t.Errorf("Retry-After = %q, want 900", got)
	}
	// The user's own address, and another, still log in.
	try(user, "u1@example.com", "password1", 200)
	try(other, "u1@example.com", "password1", 200)
	// Other identities from the attacker's address are not blocked.
	try(attacker, "nobody@example.com", "wrong-password", 400)
	// The window passes.
	e.clock.Add(14 * time.Minute)
	try(attacker, "u1@example.com", "password1", 429)
	e.clock.Add(time.Minute)
	try(attacker, "u1@example.com", "password1", 200)
}

func TestLoginThrottleResetAndCaps(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("u1@example.com", "password1")
	e.trustProxy()
	const path = "/api/collections/users/auth-with-password"
	login := func(ip, password string) int {
		t.Helper()
		return e.doFrom(ip, "POST", path, "", map[string]string{"identity": "u1@example.com", "password": password}).Status
	}
	// A successful login clears its address's failures.
	for round := range 3 {
		for range 4 {
			if got := login("198.51.100.1", "wrong-password"); got != 400 {
				t.Fatalf("round %d: wrong password = %d, want 400", round, got)
			}
		}
		if got := login("198.51.100.1", "password1"); got != 200 {
			t.Fatalf("round %d: right password = %d, want 200", round, got)
		}
	}
	// Those failures still count towards the identity's: start afresh.
	e.clock.Add(15 * time.Minute)
	// Twenty-five failures spread over five addresses slow the identity
	// down (a check a second: the clock moves a second before each), but do
	// not lock the right password out of a new address.
	fails := 0
	failFrom := func(n int) {
		t.Helper()
		for range n {
			e.clock.Add(time.Second)
			ip := fmt.Sprintf("192.0.2.%d", 1+fails/5)
			if got := login(ip, "wrong-password"); got != 400 {
				t.Fatalf("failure %d from %s = %d, want 400", fails+1, ip, got)
			}
			fails++
		}
	}
	failFrom(25)
	e.clock.Add(time.Second)
	if got := login("192.0.2.98", "password1"); got != 200 {
		t.Errorf("login from a new address after 25 failures over 5 addresses = %d, want 200", got)
	}
	// A hundred lock it there, but not at its known addresses.
	failFrom(75)
	if res := e.doFrom("192.0.2.99", "POST", path, "", map[string]string{"identity": "u1@example.com", "password": "password1"}); strings.TrimSpace(string(res.Body)) != tooManyLoginsBody {
		t.Errorf("login from a new address after 100 failures = %d %s, want 429 %s", res.Status, res.Body, tooManyLoginsBody)
	}
	for _, ip := range []string{"198.51.100.1", "192.0.2.98"} {
		if got := login(ip, "password1"); got != 200 {
			t.Errorf("login from the user's known address %s = %d, want 200", ip, got)
		}
	}
	// The throttle is on with rateLimits disabled (the default) and does not
	// depend on them: superusers log in as usual.
	if got := e.settings.Get().RateLimits.Enabled; got {
		t.Errorf("rateLimits enabled by default")
	}
	e.login("_superusers", suEmail, suPassword)
}

// loginsAtOnce sends n password logins of identity at once, each on a
// connection of its own, and returns their answers.
func (e *env) loginsAtOnce(n int, identity, password string) []*response {
	body, _ := json.Marshal(map[string]string{"identity": identity, "password": password})
	answers := make([]*response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			answers[i] = e.do("POST", "/api/collections/users/auth-with-password", "", string(body))
		})
	}
	wg.Wait()
	return answers
}

// TestLoginThrottleConcurrent sends 100 wrong passwords at once: however
// they interleave, no more than the pair's limit are checked, since
// attempts in flight hold their place until they end; the others wait,
// then are refused as failed too often.
func TestLoginThrottleConcurrent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("u1@example.com", "password1")
	const n = 100
	before := e.hasher.Checks()
	count := map[int]int{}
	for _, res := range e.loginsAtOnce(n, "u1@example.com", "wrong-password") {
		count[res.Status]++
		if res.Status == 429 && strings.TrimSpace(string(res.Body)) != tooManyLoginsBody {
			t.Errorf("429 body = %s, want %s", res.Body, tooManyLoginsBody)
		}
	}
	checks := e.hasher.Checks() - before
	t.Logf("%d wrong passwords at once: %d checked, statuses %v", n, checks, count)
	if checks > 5 || count[400] != int(checks) || count[400]+count[429] != n {
		t.Errorf("%d checks, statuses %v: want at most 5 checks, as many 400 and the rest 429", checks, count)
	}
}

// TestLoginThrottleConcurrentRight: sixteen clients at one address signing
// one user in over and over with the right password are never refused,
// however many are in flight.
func TestLoginThrottleConcurrentRight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("u1@example.com", "password1")
	const clients, rounds = 16, 5
	count := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range rounds {
				res := e.do("POST", "/api/collections/users/auth-with-password", "",
					map[string]string{"identity": "u1@example.com", "password": "password1"})
				mu.Lock()
				count[res.Status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if count[200] != clients*rounds {
		t.Errorf("statuses %v, want %d × 200", count, clients*rounds)
	}
}

// TestLoginThrottleClientCap: fifty failures from one address, each for a
// different identity, block that address for identities that never logged
// in from it, not for one that did.
func TestLoginThrottleClientCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("u1@example.com", "password1")
	e.trustProxy()
	const path, nat = "/api/collections/users/auth-with-password", "198.51.100.50"
	login := func(identity, password string) *response {
		return e.doFrom(nat, "POST", path, "", map[string]string{"identity": identity, "password": password})
	}
	if res := login("u1@example.com", "password1"); res.Status != 200 {
		t.Fatalf("first login = %d %s", res.Status, res.Body)
	}
	for i := range 50 {
		if res := login(fmt.Sprintf("guess%d@example.com", i), "wrong-password"); res.Status != 400 {
			t.Fatalf("failure %d = %d %s, want 400", i, res.Status, res.Body)
		}
	}
	if res := login("another@example.com", "wrong-password"); res.Status != 429 || strings.TrimSpace(string(res.Body)) != tooManyLoginsBody {
		t.Errorf("51st identity = %d %s, want 429 %s", res.Status, res.Body, tooManyLoginsBody)
	}
	if res := login("u1@example.com", "password1"); res.Status != 200 {
		t.Errorf("login of the known user from the same address = %d %s, want 200", res.Status, res.Body)
	}
}

// TestLoginThrottleHalfClose: a client that half-closes its side of the
// connection once its body is sent (net/http then cancels the request's
// context) still has each failed check counted, so it cannot guess past
// the throttle.
func TestLoginThrottleHalfClose(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("u1@example.com", "password1")
	body := `{"identity":"u1@example.com","password":"wrong-password"}`
	req := "POST /api/collections/users/auth-with-password HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	for i := range 6 {
		c := e.dial()
		io.WriteString(c, req)
		c.(*net.TCPConn).CloseWrite()
		res := readRaw(t, bufio.NewReader(c), "POST")
		c.Close()
		want := 400
		if i == 5 {
			want = 429
		}
		if res.Status != want {
			t.Fatalf("half-closed wrong login %d = %d %s, want %d", i+1, res.Status, res.Body, want)
		}
	}
}
