package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/mail"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	strongmail "strongbox/authn/mail"
	"strongbox/conformance/smtpsink"
)

// TestMailFlood is the flood of issue 20 scaled down: after 12 throwaway
// sign-ups, 120 request-otp calls from one address, then 120 more spread
// over 40 addresses, while the mail queue (32 mails, its worker held on a
// first mail) is slower than the flood; then one real password reset for
// another user. The per-client and per-target limits refuse most of the
// flood with PocketBase's 429, the queue keeps each flooded address in
// its own bounded lane, and the real mail reaches the loopback SMTP sink.
func TestMailFlood(t *testing.T) {
	t.Parallel()
	sink := smtpsink.Start(t, smtpsink.Options{})
	release := make(chan struct{})
	var held atomic.Bool
	q := strongmail.NewQueue(strongmail.QueueConfig{
		Transport: func() strongmail.Transport {
			if held.CompareAndSwap(false, true) {
				<-release // the worker's first delivery waits for the flood
			}
			return strongmail.Transport{SMTPEnabled: true,
				SMTP: strongmail.SMTPConfig{Host: sink.Host, Port: sink.Port, StepTimeout: 10 * time.Second},
				From: mail.Address{Address: "support@example.com"}}
		},
		Outbox: &strongmail.Outbox{Dir: filepath.Join(t.TempDir(), "mail")},
		Logger: slog.New(slog.DiscardHandler),
		Size:   32,
	})
	t.Cleanup(func() { close(release); q.Close(t.Context()) })
	e := newEnvWith(t, Config{Mail: q}, HTTPConfig{})
	e.trustProxy()
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"otp":{"enabled":true}}`); res.Status != 200 {
		t.Fatalf("enable OTP: %d %s", res.Status, res.Body)
	}
	e.signUp("real@example.com", "password1")
	const throwaway = 12
	for i := range throwaway {
		e.signUp(fmt.Sprintf("bot%d@example.com", i), "password1")
	}
	otp := func(ip string, i int) int {
		return e.doFrom(ip, "POST", "/api/collections/users/request-otp", "", map[string]string{"email": fmt.Sprintf("bot%d@example.com", i%throwaway)}).Status
	}
	tests := []struct {
		name  string
		addrs int // client addresses, each sending 120/addrs requests
		want  int // requests answered 200
	}{
		// The client's limit: 30 answered, spread over the 12 targets.
		{"one address", 1, DefaultMailPerClient.MaxRequests},
		// 3 requests per address fit, but each target takes 5 a minute
		// in all, the first phase's included.
		{"40 addresses", 40, throwaway*DefaultMailPerTarget.MaxRequests - DefaultMailPerClient.MaxRequests},
	}
	n := 0
	for _, tt := range tests {
		ok := 0
		for i := range 120 {
			status := otp(fmt.Sprintf("198.51.%d.%d", n, i%tt.addrs+1), i)
			switch status {
			case 200:
				ok++
			case 429:
			default:
				t.Fatalf("%s: request-otp = %d", tt.name, status)
			}
		}
		if ok != tt.want {
			t.Errorf("%s: %d requests answered 200, want %d", tt.name, ok, tt.want)
		}
		n++
	}
	res := e.doFrom("203.0.113.7", "POST", "/api/collections/users/request-password-reset", "", map[string]string{"email": "real@example.com"})
	if res.Status != 204 {
		t.Fatalf("the real reset: %d %s", res.Status, res.Body)
	}
	close(release)
	release = make(chan struct{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := q.Close(ctx); err != nil {
		t.Fatalf("queue close: %v", err)
	}
	real := 0
	for range sink.Pending() {
		if m := sink.Next(t); m.SentTo("real@example.com") {
			real++
		}
	}
	if real != 1 {
		t.Errorf("the real user got %d reset mails, want 1", real)
	}
}
