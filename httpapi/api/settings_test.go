package api

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestSettingsInEffectAtOnce: a change PATCH /api/settings acknowledged is
// in effect for the very next request, in every subsystem: request logging
// (maxDays 0 logs nothing and drops what is stored, maxDays back on logs
// again), the trusted proxy and the rate limits. No waiting, no retries.
func TestSettingsInEffectAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	health := func(query, realIP string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/health?"+query, nil)
		if realIP != "" {
			req.Header.Set("X-Real-IP", realIP)
		}
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for i := range 10 {
		e.patchSettings(`{"logs":{"maxDays":0}}`)
		health(fmt.Sprintf("m=off%d", i), "")
		e.patchSettings(`{"logs":{"maxDays":5}}`)
		health(fmt.Sprintf("m=on%d", i), "")
		items := e.listLogs(`data.url ~ "m="`)
		if len(items) != 1 || items[0]["message"] != fmt.Sprintf("GET /api/health?m=on%d", i) {
			t.Fatalf("round %d: logged %v, want only the request made with maxDays 5", i, items)
		}

		ip := fmt.Sprintf("203.0.113.%d", i+1)
		e.patchSettings(`{"trustedProxy":{"headers":["X-Real-IP"]}}`)
		health(fmt.Sprintf("m=proxy%d", i), ip)
		e.patchSettings(`{"trustedProxy":{"headers":[]}}`)
		health(fmt.Sprintf("m=direct%d", i), ip)
		for _, tt := range []struct{ query, userIP string }{{"proxy", ip}, {"direct", "127.0.0.1"}} {
			items := e.listLogs(fmt.Sprintf(`data.url ~ "m=%s%d"`, tt.query, i))
			if len(items) != 1 || items[0]["data"].(map[string]any)["userIP"] != tt.userIP {
				t.Fatalf("round %d, m=%s: logged %v, want userIP %s", i, tt.query, items, tt.userIP)
			}
		}

		e.patchSettings(`{"rateLimits":{"enabled":true,"rules":[{"label":"/api/health","maxRequests":1,"duration":10}]}}`)
		if got := health("m=limited", ""); got != 200 {
			t.Fatalf("round %d: first request under the new limit = %d, want 200", i, got)
		}
		if got := health("m=limited", ""); got != 429 {
			t.Fatalf("round %d: second request under the new limit = %d, want 429", i, got)
		}
		e.patchSettings(`{"rateLimits":{"enabled":false}}`)
		if got := health("m=free", ""); got != 200 {
			t.Fatalf("round %d: request once limits are off = %d, want 200", i, got)
		}
	}
}

// TestSettingsChangesUnderLoad changes the settings while other requests
// run (for the race detector: the server's part is swapped whole, never
// written under a reader), and checks each change is in effect for the
// next request of the client that made it.
func TestSettingsChangesUnderLoad(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(done)
		wg.Wait()
	}()
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				req, _ := http.NewRequest("GET", e.srv.URL+"/api/health?m=load", nil)
				req.Header.Set("X-Real-IP", "198.51.100.1")
				res, err := e.srv.Client().Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
			}
		})
	}
	for range 10 {
		e.patchSettings(`{"rateLimits":{"enabled":true,"rules":[{"label":"/api/settings","maxRequests":1,"duration":10}]},"trustedProxy":{"headers":["X-Real-IP"]},"logs":{"logIP":true}}`)
		// The limit (guests only: superusers are exempt) applies to the
		// very next request: the first passes to the handler, the second
		// is refused.
		guest := func(want int) {
			t.Helper()
			if res := e.do("PATCH", "/api/settings", "", `{}`); res.Status != want {
				t.Fatalf("guest PATCH = %d %s, want %d", res.Status, res.Body, want)
			}
		}
		guest(401)
		guest(429)
		e.patchSettings(`{"rateLimits":{"enabled":false},"trustedProxy":{"headers":[]},"logs":{"logIP":false}}`)
		guest(401)
		guest(401)
	}
}

// TestSettingsPatchBody: a body that is not the settings' JSON is refused
// with the generic 400 and changes nothing; an empty body changes nothing
// and answers the settings.
func TestSettingsPatchBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := e.do("GET", "/api/settings", e.su, nil)
	for _, body := range []string{`{"logs":`, `{"logs":{"maxDays":"x"},"meta":{"appName":"Changed"}}`, `[1]`, `"x"`} {
		wantError(t, e.do("PATCH", "/api/settings", e.su, body), 400, msgLoadFailed)
		if after := e.do("GET", "/api/settings", e.su, nil); string(after.Body) != string(before.Body) {
			t.Errorf("PATCH %s changed the settings: %s\nwant %s", body, after.Body, before.Body)
		}
	}
	for _, body := range []string{"", " \n"} {
		res := e.doRaw("PATCH", "/api/settings", e.su, "application/json", strings.NewReader(body))
		if res.Status != 200 || string(res.Body) != string(before.Body) {
			t.Errorf("PATCH %q = %d %s\nwant 200 %s", body, res.Status, res.Body, before.Body)
		}
	}
}

// TestSettingsAppURL: meta.appURL must be an absolute http(s) URL of URL
// characters only; anything else answers 400 validation_is_url, as
// PocketBase v0.31.0 words it, and changes nothing.
func TestSettingsAppURL(t *testing.T) {
	t.Parallel()
	const refused = `{"data":{"meta":{"appURL":{"code":"validation_is_url","message":"Must be a valid URL."}}},` +
		`"message":"An error occurred while saving the new settings.","status":400}`
	const blank = `{"data":{"meta":{"appURL":{"code":"validation_required","message":"Cannot be blank."}}},` +
		`"message":"An error occurred while saving the new settings.","status":400}`
	tests := []struct {
		url      string
		wantBody string // "" = accepted
	}{
		{`https://ok.example.com/"><script>alert(1)</script>`, refused},
		{`https://ok.example.com/<b>`, refused},
		{`https://ok.example.com/a b`, refused},
		{"https://ok.example.com/\tx", refused},
		{"https://ok.example.com/`x`", refused},
		{`https://ok.example.com/{x}|y\z^`, refused},
		{`javascript:alert(1)`, refused},
		{`ftp://example.com`, refused},
		{`//example.com/x`, refused},
		{`example.com`, refused},
		{`https://`, refused},
		{``, blank},
		{`https://ok.example.com/app?a=1&b='2'#x`, ""},
		{`http://localhost:8090`, ""},
		{`https://bücher.example/`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			e := newEnv(t)
			before := e.do("GET", "/api/settings", e.su, nil)
			res := e.do("PATCH", "/api/settings", e.su, map[string]any{"meta": map[string]string{"appURL": tt.url}})
			if tt.wantBody == "" {
				if res.Status != 200 {
					t.Fatalf("PATCH appURL %q = %d %s, want 200", tt.url, res.Status, res.Body)
				}
				if got := res.JSON(t)["meta"].(map[string]any)["appURL"]; got != tt.url {
					t.Errorf("appURL = %v, want %q", got, tt.url)
				}
				return
			}
			wantBody(t, res, 400, tt.wantBody)
			if after := e.do("GET", "/api/settings", e.su, nil); string(after.Body) != string(before.Body) {
				t.Errorf("a refused appURL changed the settings: %s\nwant %s", after.Body, before.Body)
			}
		})
	}
}
