package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"strongbox/httpapi/ratelimit"
)

func ExampleFind() {
	rules := []ratelimit.Rule{
		{Label: "/api/", MaxRequests: 300, Duration: 10 * time.Second},
		{Label: "*:auth", MaxRequests: 2, Duration: 3 * time.Second},
	}
	labels := ratelimit.CollectionLabels("users", []string{"authWithPassword", "auth"},
		"POST", "/api/collections/users/auth-with-password")
	r, _ := ratelimit.Find(rules, labels, false)
	fmt.Println(r.Label)
	r, _ = ratelimit.Find(rules, ratelimit.PathLabels("GET", "/api/health"), false)
	fmt.Println(r.Label)
	// Output:
	// *:auth
	// /api/
}

func ExampleLimiter_Allow() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := ratelimit.NewLimiter(0, func() time.Time { return now })
	r := ratelimit.Rule{Label: "/api/", MaxRequests: 2, Duration: 10 * time.Second}
	fmt.Println(l.Allow("/api/", "203.0.113.7", r), l.Allow("/api/", "203.0.113.7", r), l.Allow("/api/", "203.0.113.7", r))
	now = now.Add(10 * time.Second)
	fmt.Println(l.Allow("/api/", "203.0.113.7", r))
	// Output:
	// true true false
	// true
}

func ExampleLimiter_Take() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := ratelimit.NewLimiter(0, func() time.Time { return now })
	r := ratelimit.Rule{Label: "mail per client", MaxRequests: 1, Duration: time.Minute}
	fmt.Println(l.Take("mail", "203.0.113.7", r))
	now = now.Add(45 * time.Second)
	fmt.Println(l.Take("mail", "203.0.113.7", r))
	// Output:
	// true 0s
	// false 15s
}

func ExampleGuard() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := ratelimit.NewGuard(ratelimit.DefaultPolicy, func() time.Time { return now })
	ctx := context.Background()
	for range 5 {
		a, _ := g.Begin(ctx, "users", "ann@example.com", "198.51.100.7")
		// … the password was wrong:
		a.Failed()
	}
	a, no := g.Begin(ctx, "users", "ann@example.com", "198.51.100.7")
	fmt.Println(a != nil, no.Locked, no.RetryAfter)
	a, _ = g.Begin(ctx, "users", "ann@example.com", "203.0.113.9")
	fmt.Println(a != nil)
	a.Succeeded()
	// Output:
	// false true 15m0s
	// true
}
