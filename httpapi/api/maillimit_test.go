package api

import (
	"fmt"
	"testing"
	"time"
)

// TestMailLimitRetryAfter: the 429s of the mail limits say when to come
// back (issue 30), in the header only, the body staying PocketBase's: the
// per-client limit the time left in the client's window, rounded up to a
// second, which every mail route shares; the per-target limit its whole
// window. A client that waits that long is served again.
func TestMailLimitRetryAfter(t *testing.T) {
	t.Parallel()
	e, _, _ := otpEnv(t, false)
	e.trustProxy()
	n := 0
	mail := func(ip, route, email string) *response {
		t.Helper()
		if email == "" {
			n++
			email = fmt.Sprintf("nobody%d@example.com", n)
		}
		return e.doFrom(ip, "POST", "/api/collections/users/"+route, "", map[string]string{"email": email})
	}
	const ip = "198.51.100.7"
	for i := range DefaultMailPerClient.MaxRequests {
		if res := mail(ip, "request-password-reset", ""); res.Status != 204 {
			t.Fatalf("reset %d: %d %s, want 204", i+1, res.Status, res.Body)
		}
	}
	tests := []struct {
		name    string
		advance time.Duration // the clock moves first
		ip      string
		route   string
		email   string // "" for a new one
		status  int
		retry   string // the Retry-After wanted ("" for none)
	}{
		{"the client's window full", 20 * time.Second, ip, "request-password-reset", "", 429, "40"},
		{"shared by request-verification", 0, ip, "request-verification", "", 429, "40"},
		{"shared by request-otp", 0, ip, "request-otp", "", 429, "40"},
		{"rounded up", 39500 * time.Millisecond, ip, "request-otp", "", 429, "1"},
		{"the window freed", 500 * time.Millisecond, ip, "request-password-reset", "", 204, ""},
		{"target 1", 0, "203.0.113.1", "request-otp", "ann.target@example.com", 200, ""},
		{"target 2", 0, "203.0.113.2", "request-otp", "ann.target@example.com", 200, ""},
		{"target 3", 0, "203.0.113.3", "request-otp", "ann.target@example.com", 200, ""},
		{"target 4", 0, "203.0.113.4", "request-otp", "ann.target@example.com", 200, ""},
		{"target 5", 0, "203.0.113.5", "request-otp", "ANN.target@example.com", 200, ""},
		{"the target's window full", 10 * time.Second, "203.0.113.6", "request-otp", "ann.target@example.com", 429, "60"},
	}
	for _, tt := range tests {
		e.clock.Add(tt.advance)
		res := mail(tt.ip, tt.route, tt.email)
		if tt.status == 429 {
			wantError(t, res, 429, msgTooManyRequests)
		} else if res.Status != tt.status {
			t.Fatalf("%s: %s = %d %s, want %d", tt.name, tt.route, res.Status, res.Body, tt.status)
		}
		if got := res.Header.Get("Retry-After"); got != tt.retry {
			t.Errorf("%s: Retry-After %q, want %q", tt.name, got, tt.retry)
		}
	}
}
