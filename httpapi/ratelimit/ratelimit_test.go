package ratelimit

import (
	"fmt"
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

// TestLimiterWait: a refused request is told the time left in its
// window, which closes Duration after the window's first request, not
// after the refusal; once it has, the client is counted afresh.
func TestLimiterWait(t *testing.T) {
	tests := []struct {
		name  string
		steps []string // "+<duration>" moves the clock; "a" is a request, answered "ok" or the wait it is told
	}{
		{"refused at once", []string{"a=ok", "a=ok", "a=3s"}},
		{"the wait shrinks with the window", []string{"a=ok", "+1s", "a=ok", "+500ms", "a=1.5s", "+1499ms", "a=1ms"}},
		{"refusals do not extend the window", []string{"a=ok", "a=ok", "+1s", "a=2s", "+1s", "a=1s", "+1s", "a=ok"}},
		{"a new window after the wait", []string{"a=ok", "a=ok", "+2s", "a=1s", "+1s", "a=ok", "+1s", "a=ok", "a=2s"}},
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
				ok, wait := l.Take("bucket", s[:1], r)
				got := wait.String()
				if ok {
					got = "ok"
					if wait != 0 {
						got = fmt.Sprintf("ok with a wait of %v", wait)
					}
				}
				if want := s[2:]; got != want {
					t.Fatalf("step %d: Take(%s) = %s, want %s", i, s[:1], got, want)
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
