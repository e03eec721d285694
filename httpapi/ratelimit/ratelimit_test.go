package ratelimit

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time      { return c.t }
func (c *fakeClock) Add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *fakeClock               { return &fakeClock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)} }
func rule(label, aud string, n, s int) Rule {
	return Rule{label, aud, n, time.Duration(s) * time.Second}
}

// defaultRules are PocketBase's default rules.
var defaultRules = []Rule{
	rule("*:auth", "", 2, 3),
	rule("*:create", "", 20, 5),
	rule("/api/batch", "", 3, 1),
	rule("/api/", "", 300, 10),
}

func TestFind(t *testing.T) {
	pw := CollectionLabels("users", []string{"authWithPassword", "auth"}, "POST", "/api/collections/users/auth-with-password")
	tests := []struct {
		name   string
		rules  []Rule
		labels []string
		authed bool
		want   string // label of the rule found, "" for none
	}{
		{"wildcard tag before path prefix", defaultRules, pw, false, "*:auth"},
		{"collection tag before wildcard", append([]Rule{rule("users:auth", "", 9, 9)}, defaultRules...), pw, false, "users:auth"},
		{"first tag before second", []Rule{rule("*:auth", "", 1, 1), rule("users:authWithPassword", "", 1, 1)}, pw, false, "users:authWithPassword"},
		{"other collection's rule ignored", []Rule{rule("posts:auth", "", 1, 1), rule("/api/", "", 1, 1)}, pw, false, "/api/"},
		{"method and path before path", []Rule{rule("/api/health", "", 1, 1), rule("GET /api/health", "", 1, 1)}, PathLabels("GET", "/api/health"), false, "GET /api/health"},
		{"exact path before prefix", defaultRules, PathLabels("POST", "/api/batch"), false, "/api/batch"},
		{"prefix", defaultRules, PathLabels("GET", "/api/health"), false, "/api/"},
		{"prefix matches the bare path", []Rule{rule("/api/health/", "", 1, 1)}, PathLabels("GET", "/api/health"), false, "/api/health/"},
		{"prefix needs a segment boundary", []Rule{rule("/api/he/", "", 1, 1)}, PathLabels("GET", "/api/health"), false, ""},
		{"method prefix", []Rule{rule("GET /api/", "", 1, 1), rule("/api/health", "", 1, 1)}, PathLabels("GET", "/api/health"), false, "GET /api/"},
		{"nothing matches", defaultRules, PathLabels("GET", "/_/"), false, ""},
		{"guest rule skipped for auth", []Rule{rule("*:auth", "@guest", 1, 1), rule("/api/", "@auth", 1, 1)}, pw, true, "/api/"},
		{"auth rule skipped for guest", []Rule{rule("*:auth", "@auth", 1, 1), rule("*:auth", "@guest", 2, 1)}, pw, false, "*:auth"},
		{"all fits both", []Rule{rule("*:auth", "", 1, 1)}, pw, true, "*:auth"},
		{"unknown audience fits none", []Rule{rule("*:auth", "@nobody", 1, 1)}, pw, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := Find(tt.rules, tt.labels, tt.authed)
			if got := map[bool]string{true: r.Label}[ok]; got != tt.want {
				t.Errorf("Find(%v, authed %v) = %q, want %q", tt.labels, tt.authed, got, tt.want)
			}
			if tt.name == "auth rule skipped for guest" && r.Audience != AudienceGuest {
				t.Errorf("Find picked audience %q, want @guest", r.Audience)
			}
		})
	}
}

func TestLimiterWindow(t *testing.T) {
	tests := []struct {
		name  string
		steps []string // "+<duration>" moves the clock, "a"/"b" is a request from that client, expected result after "="
	}{
		{"two per window then refused", []string{"a=true", "a=true", "a=false", "a=false"}},
		{"clients counted apart", []string{"a=true", "a=true", "b=true", "a=false", "b=true", "b=false"}},
		{"window reopens after duration", []string{"a=true", "a=true", "+2999ms", "a=false", "+1ms", "a=true", "a=true", "a=false"}},
		{"window opens at first request", []string{"a=true", "+2s", "a=true", "+1s", "a=true", "+1s", "a=true", "a=false"}},
	}
	r := rule("*:auth", "", 2, 3)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			l := NewLimiter(10, clk.Now)
			for i, s := range tt.steps {
				if s[0] == '+' {
					d, _ := time.ParseDuration(s[1:])
					clk.Add(d)
					continue
				}
				want := s[2:] == "true"
				if got := l.Allow("bucket", s[:1], r); got != want {
					t.Fatalf("step %d: Allow(%s) = %v, want %v", i, s[:1], got, want)
				}
			}
		})
	}
}

func TestLimiterBuckets(t *testing.T) {
	l := NewLimiter(10, newClock().Now)
	r := rule("/api/", "", 1, 10)
	if !l.Allow("one", "c", r) || !l.Allow("two", "c", r) {
		t.Fatal("first request of each bucket refused")
	}
	if l.Allow("one", "c", r) {
		t.Error("second request in bucket one allowed")
	}
}

func TestLimiterBound(t *testing.T) {
	clk := newClock()
	l := NewLimiter(100, clk.Now)
	r := rule("/api/", "", 1, 60)
	if !l.Allow("b", "victim", r) || l.Allow("b", "victim", r) {
		t.Fatal("victim's window not set up")
	}
	for i := range 1000 {
		l.Allow("b", fmt.Sprint("client", i), r)
		if n := l.Len(); n > 100 {
			t.Fatalf("after %d clients Len() = %d, want at most 100", i+1, n)
		}
	}
	// The oldest window was evicted: the victim starts afresh.
	if !l.Allow("b", "victim", r) {
		t.Error("victim's window survived 1000 newer clients in a table of 100")
	}
}

func TestClientKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"203.0.113.7", "203.0.113.7"},
		{"::ffff:203.0.113.7", "203.0.113.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::9", "2001:db8:1:2::/64"},
		{"not-an-ip", "not-an-ip"},
	} {
		if got := ClientKey(tt.in); got != tt.want {
			t.Errorf("ClientKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// testPolicy is DefaultPolicy with small numbers.
var testPolicy = Policy{Window: 15 * time.Minute, PerPair: 3, PerIdentity: 5, PerClient: 8, KnownFor: time.Hour, MaxKeys: 1000}

func TestGuard(t *testing.T) {
	type step struct {
		op             string // "fail", "ok" (a successful login), "check", "+" (advance the clock by d)
		identity, from string
		d              time.Duration
		allowed        bool // for check
	}
	fail := func(id, from string) step { return step{op: "fail", identity: id, from: from} }
	ok := func(id, from string) step { return step{op: "ok", identity: id, from: from} }
	allowed := func(id, from string) step { return step{op: "check", identity: id, from: from, allowed: true} }
	refused := func(id, from string) step { return step{op: "check", identity: id, from: from} }
	wait := func(d time.Duration) step { return step{op: "+", d: d} }
	repeat := func(n int, s step) []step {
		out := make([]step, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	cat := func(parts ...any) []step {
		var out []step
		for _, p := range parts {
			switch p := p.(type) {
			case step:
				out = append(out, p)
			case []step:
				out = append(out, p...)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"pair blocked at PerPair", cat(repeat(2, fail("u", "A")), allowed("u", "A"), fail("u", "A"), refused("u", "A"))},
		{"identity case folded", cat(repeat(3, fail("U@x.io", "A")), refused("u@X.IO", "A"))},
		{"other client unaffected", cat(repeat(3, fail("u", "A")), refused("u", "A"), allowed("u", "B"))},
		{"other identity from the same client unaffected", cat(repeat(3, fail("u", "A")), allowed("v", "A"))},
		{"window passes", cat(repeat(3, fail("u", "A")), wait(15*time.Minute-time.Second), refused("u", "A"), wait(time.Second), allowed("u", "A"))},
		{"success clears the pair", cat(repeat(2, fail("u", "A")), ok("u", "A"), repeat(2, fail("u", "A")), allowed("u", "A"))},
		{"identity cap across clients", cat(fail("u", "A"), fail("u", "B"), fail("u", "C"), fail("u", "D"), fail("u", "E"), refused("u", "F"))},
		{"identity cap spares a known client", cat(ok("u", "K"), fail("u", "A"), fail("u", "B"), fail("u", "C"), fail("u", "D"), fail("u", "E"), refused("u", "F"), allowed("u", "K"))},
		{"known client still has its pair limit", cat(ok("u", "K"), repeat(3, fail("u", "K")), refused("u", "K"))},
		{"known lapses", cat(ok("u", "K"), wait(time.Hour), fail("u", "A"), fail("u", "B"), fail("u", "C"), fail("u", "D"), fail("u", "E"), refused("u", "K"))},
		{"client cap across identities", cat(fail("a", "A"), fail("b", "A"), fail("c", "A"), fail("d", "A"), fail("e", "A"), fail("f", "A"), fail("g", "A"), allowed("h", "A"), fail("h", "A"), refused("i", "A"), allowed("i", "B"))},
		{"client cap spares a known pair", cat(ok("me", "A"), fail("a", "A"), fail("b", "A"), fail("c", "A"), fail("d", "A"), fail("e", "A"), fail("f", "A"), fail("g", "A"), fail("h", "A"), refused("x", "A"), allowed("me", "A"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			g := NewGuard(testPolicy, clk.Now)
			for i, s := range tt.steps {
				switch s.op {
				case "fail":
					attempt(t, g, "users", s.identity, s.from).Failed()
				case "ok":
					attempt(t, g, "users", s.identity, s.from).Succeeded()
				case "+":
					clk.Add(s.d)
				case "check":
					a, wait := g.Begin("users", s.identity, s.from)
					got := a != nil
					if got {
						a.Abandon()
					}
					if got != s.allowed {
						t.Fatalf("step %d: Check(%s from %s) = %v, want %v", i, s.identity, s.from, got, s.allowed)
					}
					if !got && (wait <= 0 || wait > testPolicy.Window) {
						t.Errorf("step %d: wait = %v, want within (0, %v]", i, wait, testPolicy.Window)
					}
				}
			}
		})
	}
}

// attempt begins an attempt the guard must let through.
func attempt(t *testing.T, g *Guard, collection, identity, client string) *Attempt {
	t.Helper()
	a, wait := g.Begin(collection, identity, client)
	if a == nil {
		t.Fatalf("Begin(%s, %s, %s) refused (wait %v), want it let through", collection, identity, client, wait)
	}
	return a
}

func TestGuardCollectionsApart(t *testing.T) {
	g := NewGuard(testPolicy, newClock().Now)
	for range 3 {
		attempt(t, g, "users", "u", "A").Failed()
	}
	attempt(t, g, "_superusers", "u", "A").Abandon()
}

// TestGuardInFlight checks that attempts in flight count against the
// limits: concurrent requests cannot try more passwords than PerPair while
// earlier ones are being checked.
func TestGuardInFlight(t *testing.T) {
	g := NewGuard(testPolicy, newClock().Now)
	var inFlight []*Attempt
	for range 3 {
		inFlight = append(inFlight, attempt(t, g, "users", "u", "A"))
	}
	if a, wait := g.Begin("users", "u", "A"); a != nil || wait != inFlightWait {
		t.Fatalf("Begin with %d in flight = %v, %v; want refused for %v", len(inFlight), a != nil, wait, inFlightWait)
	}
	// Abandoned attempts free their place; ending one twice changes nothing.
	inFlight[0].Abandon()
	inFlight[0].Failed()
	inFlight[1].Abandon()
	inFlight[2].Failed()
	attempt(t, g, "users", "u", "A").Failed()
	attempt(t, g, "users", "u", "A").Failed()
	if a, wait := g.Begin("users", "u", "A"); a != nil || wait != testPolicy.Window {
		t.Errorf("Begin after 3 failures = %v, %v; want refused for %v", a != nil, wait, testPolicy.Window)
	}
	if n := len(g.pending); n != 0 {
		t.Errorf("%d counters still hold attempts in flight, want 0", n)
	}
}

func TestGuardWaitReported(t *testing.T) {
	clk := newClock()
	g := NewGuard(testPolicy, clk.Now)
	for range 3 {
		attempt(t, g, "users", "u", "A").Failed()
	}
	clk.Add(5 * time.Minute)
	if a, wait := g.Begin("users", "u", "A"); a != nil || wait != 10*time.Minute {
		t.Errorf("Begin = %v, %v; want refused for 10m0s", a != nil, wait)
	}
}

// TestGuardBound fills the guard with far more keys than its bound and
// checks that it stays within it, then measures the memory a full guard
// holds, so that DefaultPolicy's stated bound stays honest.
func TestGuardBound(t *testing.T) {
	const max = 20_000
	p := testPolicy
	p.MaxKeys = max
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g := NewGuard(p, newClock().Now)
	for i := range 3 * max {
		id := fmt.Sprint("user", i)
		attempt(t, g, "users", id, fmt.Sprint("client", i)).Failed()
		attempt(t, g, "users", id, fmt.Sprint("client", i)).Succeeded()
		if c, k := g.Len(); c > max || k > max {
			t.Fatalf("after %d logins: %d counters, %d known; want at most %d each", i+1, c, k, max)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perKey := float64(after.HeapAlloc-before.HeapAlloc) / (2 * max)
	t.Logf("full guard: %.0f bytes per key", perKey)
	if perKey > 200 {
		t.Errorf("a full guard holds %.0f bytes per key, want at most 200 (DefaultPolicy's stated bound)", perKey)
	}
	runtime.KeepAlive(g)
}
