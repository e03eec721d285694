package api

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// noRedirect is a client that returns redirects instead of following them.
var noRedirect = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// TestOAuth2PopupFlow runs the SDK's all-in-one flow as authWithOAuth2
// performs it, with the provider's part played by the test: connect,
// subscribe to @oauth2, the provider's redirect with state = client id,
// the event, and the page the popup ends on.
// completePopup is the end of the popup flow for the stream c subscribed
// to @oauth2: the provider sends the popup back to the redirect route
// (state = c's id), the browser follows the redirect; c must get the
// @oauth2 event and the popup must end on the success route. It returns
// the last response and its page.
func completePopup(t *testing.T, e *env, c *sseClient) (*http.Response, []byte) {
	t.Helper()
	res, err := e.srv.Client().Get(e.srv.URL + "/api/oauth2-redirect?state=" + c.id + "&code=abc")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	ev, err := c.next()
	if err != nil {
		t.Fatal(err)
	}
	if want := (sseEvent{ID: c.id, Event: "@oauth2", Data: `{"state":"` + c.id + `","code":"abc"}`}); ev != want {
		t.Errorf("event = %+v, want %+v", ev, want)
	}
	if got, want := res.Request.URL.Path, "/api/oauth2-redirect-success"; got != want {
		t.Errorf("the popup ended on %s, want %s", got, want)
	}
	return res, page
}

func TestOAuth2PopupFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := openStream(t, e.srv.URL, "")
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"} {
		if got := c.res.Header.Get(k); got != want {
			t.Errorf("stream %s = %q, want %q", k, got, want)
		}
	}
	if len(c.id) != clientIDLength {
		t.Errorf("client id %q has %d characters, want %d", c.id, len(c.id), clientIDLength)
	}
	e.subscribe(c.id, "", "@oauth2")

	res, page := completePopup(t, e, c)
	if res.StatusCode != 200 || string(page) != string(oauth2Pages[oauth2SuccessLocation]) {
		t.Errorf("success page = %d %q", res.StatusCode, page)
	}
	if !strings.Contains(string(page), "You can close this window") {
		t.Errorf("success page %q does not tell to close the window", page)
	}

	// A second redirect with the same state finds no subscription: the
	// first one unsubscribed the client.
	res = get(t, noRedirect, e.srv.URL+"/api/oauth2-redirect?state="+c.id+"&code=again")
	if res.StatusCode != http.StatusTemporaryRedirect || res.Header.Get("Location") != "oauth2-redirect-failure" {
		t.Errorf("second redirect = %d to %q, want 307 to oauth2-redirect-failure", res.StatusCode, res.Header.Get("Location"))
	}
}

func get(t *testing.T, client *http.Client, u string) *http.Response {
	t.Helper()
	res, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// TestOAuth2Redirect: the redirect's status and target, and the event the
// client gets, for each way the provider may come back.
func TestOAuth2Redirect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const me = "\x00" // stands for the client id in the cases
	tests := []struct {
		name      string
		subscribe bool
		method    string
		query     string // with me for the client id
		ctype     string
		body      string
		status    int
		location  string
		event     string // the event's data, "" = none
	}{
		{"code", true, "GET", "state=" + me + "&code=abc", "", "", 307, "oauth2-redirect-success", `{"state":"` + me + `","code":"abc"}`},
		{"provider error", true, "GET", "state=" + me + "&error=access_denied", "", "", 307, "oauth2-redirect-failure", `{"state":"` + me + `","code":"","error":"access_denied"}`},
		{"no code", true, "GET", "state=" + me, "", "", 307, "oauth2-redirect-failure", `{"state":"` + me + `","code":""}`},
		{"code with html", true, "GET", "state=" + me + "&code=%3C%26%3E", "", "", 307, "oauth2-redirect-success", `{"state":"` + me + `","code":"\u003c\u0026\u003e"}`},
		{"not subscribed", false, "GET", "state=" + me + "&code=abc", "", "", 307, "oauth2-redirect-failure", ""},
		{"unknown state", true, "GET", "state=nobody&code=abc", "", "", 307, "oauth2-redirect-failure", ""},
		{"no state", true, "GET", "code=abc", "", "", 307, "oauth2-redirect-failure", ""},
		{"form_post", true, "POST", "", "application/x-www-form-urlencoded", "state=" + me + "&code=abc&user=%7B%7D", 303, "oauth2-redirect-success", `{"state":"` + me + `","code":"abc"}`},
		{"json post", true, "POST", "", "application/json", `{"state":"` + me + `","code":"abc"}`, 303, "oauth2-redirect-success", `{"state":"` + me + `","code":"abc"}`},
		{"post unreadable", true, "POST", "", "application/json", `{"state":`, 303, "oauth2-redirect-failure", ""},
		{"post of another type", true, "POST", "", "text/plain", "state=" + me, 303, "oauth2-redirect-failure", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := openStream(t, e.srv.URL, "")
			if tt.subscribe {
				e.subscribe(c.id, "", "users/*", "@oauth2")
			}
			fill := func(s string) string { return strings.ReplaceAll(s, me, c.id) }
			u := e.srv.URL + "/api/oauth2-redirect"
			if tt.query != "" {
				u += "?" + fill(tt.query)
			}
			req, err := http.NewRequest(tt.method, u, strings.NewReader(fill(tt.body)))
			if err != nil {
				t.Fatal(err)
			}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			res, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tt.status || res.Header.Get("Location") != tt.location {
				t.Errorf("%s = %d to %q, want %d to %q", tt.method, res.StatusCode, res.Header.Get("Location"), tt.status, tt.location)
			}
			if got := res.Header.Get("Referrer-Policy"); got != "no-referrer" {
				t.Errorf("Referrer-Policy = %q, want no-referrer", got)
			}
			// A last, good redirect: its event must be the next one
			// unless the case's came first.
			e.subscribe(c.id, "", "@oauth2")
			get(t, noRedirect, e.srv.URL+"/api/oauth2-redirect?state="+c.id+"&code=last")
			want := `{"state":"` + c.id + `","code":"last"}`
			if tt.event != "" {
				ev, err := c.next()
				if err != nil {
					t.Fatal(err)
				}
				if got := ev.Data; got != fill(tt.event) || ev.Event != "@oauth2" || ev.ID != c.id {
					t.Errorf("event = %+v, want data %s", ev, fill(tt.event))
				}
			}
			ev, err := c.next()
			if err != nil {
				t.Fatal(err)
			}
			if ev.Data != want {
				t.Errorf("next event data = %s, want %s (the case sent no event)", ev.Data, want)
			}
		})
	}
	// The redirect is not request-logged, whatever its outcome (its URL
	// holds the code).
	e.logs.Flush()
	res := e.do("GET", "/api/logs?filter="+url.QueryEscape(`data.url~"oauth2-redirect?"`), e.su, nil)
	if got := res.JSON(t)["totalItems"]; got != float64(0) {
		t.Errorf("logged redirects = %v, want 0", got)
	}
	// The same query finds the subscriptions, which are logged: the
	// filter is right.
	subscriptions := len(tests) // each case's last one
	for _, tt := range tests {
		if tt.subscribe {
			subscriptions++
		}
	}
	res = e.do("GET", "/api/logs?filter="+url.QueryEscape(`data.url~"/api/realtime"`), e.su, nil)
	if got := res.JSON(t)["totalItems"]; got != float64(subscriptions) {
		t.Errorf("logged subscriptions = %v, want %d", got, subscriptions)
	}
}

// TestOAuth2Pages: the pages the redirect ends on.
func TestOAuth2Pages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		path, text string
	}{
		{"/api/oauth2-redirect-success", "<title>Signed in</title>"},
		{"/api/oauth2-redirect-failure", "Failed to authenticate. You can close this window and go back to the app to try again."},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := e.do("GET", tt.path, "", nil)
			if res.Status != 200 || !strings.Contains(string(res.Body), tt.text) {
				t.Errorf("GET %s = %d %s, want 200 with %q", tt.path, res.Status, res.Body, tt.text)
			}
			for k, want := range map[string]string{
				"Content-Type":            "text/html; charset=utf-8",
				"Content-Security-Policy": "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
				"Cache-Control":           "no-store",
			} {
				if got := res.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if strings.Contains(string(res.Body), "http") || strings.Contains(string(res.Body), "<script") {
				t.Errorf("page loads or runs something: %s", res.Body)
			}
		})
	}
}
