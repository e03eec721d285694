package api

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// observed records what an Observer is told.
type observed struct {
	mu       sync.Mutex
	requests []string
	signIns  []string
	refusals []string
}

func (o *observed) Request(method, route string, status int, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d <= 0 {
		method = "non-positive duration " + method
	}
	o.requests = append(o.requests, fmt.Sprintf("%s %q %d", method, route, status))
}

func (o *observed) SignIn(method, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.signIns = append(o.signIns, method+" "+outcome)
}

func (o *observed) Refused(limit string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refusals = append(o.refusals, limit)
}

func TestObserver(t *testing.T) {
	o := &observed{}
	e := newEnvWith(t, Config{Metrics: o}, HTTPConfig{})
	o.mu.Lock()
	o.requests, o.signIns = nil, nil // the env's own superuser login
	o.mu.Unlock()

	e.do("GET", "/api/health", "", nil)
	e.do("GET", "/api/collections/users/records?x=1", e.su, nil)
	e.do("GET", "/no/such/path", "", nil)
	e.do("BREW", "/api/health", "", nil)
	e.do("GET", "/api//health", "", nil) // a redirect to the canonical path, before the mux
	body := map[string]any{"identity": suEmail, "password": "wrong"}
	for range 6 {
		e.do("POST", "/api/collections/_superusers/auth-with-password", "", body)
	}
	e.do("POST", "/api/collections/_superusers/auth-with-password", "", map[string]any{"identity": "other@example.com", "password": suPassword})

	o.mu.Lock()
	defer o.mu.Unlock()
	wantRequests := []string{
		`GET "/api/health" 200`,
		`GET "/api/collections/{collection}/records" 200`,
		`GET "" 404`,
		`BREW "" 404`,
		`GET "/api/health" 307`, // the route the redirect's target has
		`GET "/api/health" 200`,
	}
	for range 5 {
		wantRequests = append(wantRequests, `POST "/api/collections/{collection}/auth-with-password" 400`)
	}
	wantRequests = append(wantRequests, `POST "/api/collections/{collection}/auth-with-password" 429`,
		`POST "/api/collections/{collection}/auth-with-password" 400`)
	if !slices.Equal(o.requests, wantRequests) {
		t.Errorf("requests =\n%q\nwant\n%q", o.requests, wantRequests)
	}
	wantSignIns := []string{"password failure", "password failure", "password failure", "password failure", "password failure", "password throttled", "password failure"}
	if !slices.Equal(o.signIns, wantSignIns) {
		t.Errorf("sign-ins = %q, want %q", o.signIns, wantSignIns)
	}
	if want := []string{"login"}; !slices.Equal(o.refusals, want) {
		t.Errorf("refusals = %q, want %q", o.refusals, want)
	}
}

func TestSignInOutcome(t *testing.T) {
	tests := []struct {
		status int
		err    *Error
		want   string
	}{
		{http.StatusOK, nil, "success"},
		{http.StatusUnauthorized, newError(http.StatusUnauthorized, msgMFARequired, nil), "mfa_required"},
		{http.StatusUnauthorized, newError(http.StatusUnauthorized, "other", nil), "failure"},
		{http.StatusBadRequest, nil, "failure"},
		{http.StatusTooManyRequests, nil, "throttled"},
		{http.StatusInternalServerError, nil, "error"},
	}
	for _, tt := range tests {
		if got := signInOutcome(tt.status, tt.err); got != tt.want {
			t.Errorf("signInOutcome(%d, %v) = %q, want %q", tt.status, tt.err, got, tt.want)
		}
	}
}
