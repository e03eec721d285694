package conformance

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestMailRetry: the suite waits out the Retry-After of a mail route's
// 429 to a request from its own address, and sends the same request
// again, up to maxMailRetries times; any other 429 comes back at once: a
// request naming a client address of its own (the checks that expect a
// 429), a wait over maxMailWait or given as a date, no Retry-After (as
// PocketBase sends its 429s), another route, or a check without the time
// left to wait.
func TestMailRetry(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		hdr       http.Header
		retry     []string // the Retry-After of each 429 ("-" for none)
		refusals  int      // the first requests answered 429
		deadline  time.Duration
		wantWaits []time.Duration
		want      int // the status the caller gets
	}{
		{"waited out", "/api/collections/users/request-otp", nil, []string{"30"}, 1, 0, []time.Duration{30 * time.Second}, 200},
		{"twice", "/api/collections/cf_x/request-password-reset?x=1", nil, []string{"2", "65"}, 2, 0,
			[]time.Duration{2 * time.Second, 65 * time.Second}, 200},
		{"at most maxMailRetries", "/api/collections/users/request-verification", nil, []string{"1"}, 9, 0,
			[]time.Duration{time.Second, time.Second}, 429},
		{"a check's own client", "/api/collections/users/request-otp", http.Header{clientAddrHeader: {"2001:db8::1"}},
			[]string{"1"}, 1, 0, nil, 429},
		{"too long", "/api/collections/users/request-email-change", nil, []string{"66"}, 1, 0, nil, 429},
		{"a date", "/api/collections/users/request-otp", nil, []string{"Wed, 21 Oct 2015 07:28:00 GMT"}, 1, 0, nil, 429},
		{"no Retry-After", "/api/collections/users/request-otp", nil, []string{"-"}, 1, 0, nil, 429},
		{"negative", "/api/collections/users/request-otp", nil, []string{"-1"}, 1, 0, nil, 429},
		{"not a mail route", "/api/collections/users/auth-with-password", nil, []string{"1"}, 1, 0, nil, 429},
		{"no time left", "/api/collections/users/request-otp", nil, []string{"30"}, 1, 35 * time.Second, nil, 429},
		{"time left", "/api/collections/users/request-otp", nil, []string{"20"}, 1, 35 * time.Second, []time.Duration{20 * time.Second}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var bodies []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				n := len(bodies)
				bodies = append(bodies, string(b))
				mu.Unlock()
				if n < tt.refusals {
					if v := tt.retry[min(n, len(tt.retry)-1)]; v != "-" {
						w.Header().Set("Retry-After", v)
					}
					w.WriteHeader(http.StatusTooManyRequests)
					io.WriteString(w, `{"data":{},"message":"Too Many Requests.","status":429}`)
					return
				}
				io.WriteString(w, `{}`)
			}))
			defer srv.Close()
			c, err := newClient(Config{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			var waits []time.Duration
			c.sleep = func(_ context.Context, d time.Duration) error {
				waits = append(waits, d)
				return nil
			}
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			r, err := c.doWith(ctx, http.MethodPost, tt.path, tt.hdr, map[string]string{"email": "a@example.com"})
			if err != nil {
				t.Fatal(err)
			}
			if r.status != tt.want {
				t.Errorf("status %d, want %d", r.status, tt.want)
			}
			if !slices.Equal(waits, tt.wantWaits) {
				t.Errorf("waits %v, want %v", waits, tt.wantWaits)
			}
			if len(bodies) != len(tt.wantWaits)+1 {
				t.Errorf("%d requests sent, want %d", len(bodies), len(tt.wantWaits)+1)
			}
			for i, b := range bodies {
				if b != `{"email":"a@example.com"}` {
					t.Errorf("request %d sent the body %q", i+1, b)
				}
			}
		})
	}
}

// TestMailRetryCancelled: a wait ends with the check's context, and the
// 429 is what the check gets.
func TestMailRetryCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c, err := newClient(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	r, err := c.post(ctx, "/api/collections/users/request-otp", "", map[string]string{"email": "a@example.com"})
	if err != nil || r.status != http.StatusTooManyRequests {
		t.Fatalf("post = %v, %v; want the 429", r, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the cancelled wait took %v", d)
	}
}
