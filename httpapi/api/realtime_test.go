package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// streamDeadline bounds every realtime stream a test opens: a stream the
// server never ends fails the test instead of hanging it. It is long
// enough for a loaded machine: TestRealtimeFloodSignIn opens 1,024
// streams one after another, and with the conformance tests and three
// busy loops beside it the first ones reached a 10-s deadline (and
// closed) before the last opened.
const streamDeadline = time.Minute

// sseEvent is one server-sent event as a client parses it.
type sseEvent struct{ ID, Event, Data string }

// sseClient is a real client of GET /api/realtime over loopback.
type sseClient struct {
	t      *testing.T
	res    *http.Response
	rd     *bufio.Reader
	cancel context.CancelFunc
	id     string // the client id of PB_CONNECT
}

// openStream connects to base+"/api/realtime" from localIP (a loopback
// address; "" = the system's choice) and reads PB_CONNECT.
func openStream(t *testing.T, base, localIP string) *sseClient {
	t.Helper()
	c, res := dialStream(t, base, localIP)
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET /api/realtime = %d %s, want 200", res.StatusCode, b)
	}
	ev, err := c.next()
	if err != nil {
		t.Fatalf("reading PB_CONNECT: %v", err)
	}
	var data struct{ ClientID string }
	if err := json.Unmarshal([]byte(ev.Data), &data); err != nil {
		t.Fatalf("PB_CONNECT data %q: %v", ev.Data, err)
	}
	if ev.Event != "PB_CONNECT" || ev.ID == "" || data.ClientID != ev.ID || ev.Data != `{"clientId":"`+ev.ID+`"}` {
		t.Fatalf("first event = %+v, want PB_CONNECT with the client id as id and data", ev)
	}
	c.id = ev.ID
	return c
}

// dialStream sends GET /api/realtime and returns the response unread.
func dialStream(t *testing.T, base, localIP string) (*sseClient, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), streamDeadline)
	d := &net.Dialer{}
	if localIP != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(localIP)}
	}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/realtime", nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := &sseClient{t: t, res: res, rd: bufio.NewReader(res.Body), cancel: cancel}
	t.Cleanup(c.close)
	return c, res
}

// next reads the next event, or the error that ended the stream (io.EOF
// when the server ended it).
func (c *sseClient) next() (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := c.rd.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return ev, nil
		}
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "id":
			ev.ID = v
		case "event":
			ev.Event = v
		case "data":
			ev.Data = v
		default:
			return ev, fmt.Errorf("unexpected line %q", line)
		}
	}
}

// wantEnd asserts that the server ends the stream within within.
func (c *sseClient) wantEnd(within time.Duration) {
	c.t.Helper()
	start := time.Now()
	ev, err := c.next()
	if !errors.Is(err, io.EOF) {
		c.t.Fatalf("next() = %+v, %v; want the stream to end (EOF)", ev, err)
	}
	if took := time.Since(start); took > within {
		c.t.Errorf("the stream ended after %v, want within %v", took, within)
	}
}

func (c *sseClient) close() {
	c.cancel()
	c.res.Body.Close()
}

// subscribe subscribes the client id to topics and asserts 204.
func (e *env) subscribe(id, token string, topics ...string) {
	e.t.Helper()
	if topics == nil {
		topics = []string{}
	}
	res := e.do("POST", "/api/realtime", token, map[string]any{"clientId": id, "subscriptions": topics})
	if res.Status != http.StatusNoContent || len(res.Body) != 0 {
		e.t.Fatalf("POST /api/realtime = %d %s, want 204", res.Status, res.Body)
	}
}

// TestRealtimeSubscribe: the answers of POST /api/realtime.
func TestRealtimeSubscribe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("u1@example.com", "password1")
	e.signUp("u2@example.com", "password2")
	tok1 := e.login("users", "u1@example.com", "password1")
	tok2 := e.login("users", "u2@example.com", "password2")
	c := openStream(t, e.srv.URL, "")
	const me = "\x00"
	long := strings.Repeat("t", maxTopicLength+1)
	many := make([]string, maxSubscriptions+1)
	for i := range many {
		many[i] = "@oauth2"
	}
	manyJSON, _ := json.Marshal(many)
	const generic = `"message":"Something went wrong while processing your request.","status":400}`
	tests := []struct {
		name   string
		token  string
		ctype  string
		body   string
		status int
		want   string // the body, with me for the client id
	}{
		{"empty body", "", "application/json", ``, 400, `{"data":{"clientId":{"code":"validation_required","message":"Cannot be blank."}},` + generic},
		{"no client", "", "application/json", `{"subscriptions":["@oauth2"]}`, 400, `{"data":{"clientId":{"code":"validation_required","message":"Cannot be blank."}},` + generic},
		{"client id too long", "", "application/json", `{"clientId":"` + strings.Repeat("x", 256) + `"}`, 400,
			`{"data":{"clientId":{"code":"validation_length_out_of_range","message":"The length must be between 1 and 255.","params":{"max":255,"min":1}}},` + generic},
		{"too many topics", "", "application/json", `{"clientId":"` + me + `","subscriptions":` + string(manyJSON) + `}`, 400,
			`{"data":{"subscriptions":{"code":"validation_length_too_long","message":"The length must be no more than 1000."}},` + generic},
		{"topic too long", "", "application/json", `{"clientId":"` + me + `","subscriptions":["@oauth2","` + long + `"]}`, 400,
			`{"data":{"subscriptions":{"1":{"code":"validation_length_too_long","message":"The length must be no more than 2500."}}},` + generic},
		{"client id not a string", "", "application/json", `{"clientId":1}`, 400, `{"data":{},` + generic},
		{"topic not a string", "", "application/json", `{"clientId":"` + me + `","subscriptions":[1]}`, 400, `{"data":{},` + generic},
		{"malformed", "", "application/json", `{"clientId":`, 400, `{"data":{},` + generic},
		{"unknown client", "", "application/json", `{"clientId":"nobody","subscriptions":["@oauth2"]}`, 404, `{"data":{},"message":"Missing or invalid client id.","status":404}`},
		{"guest", "", "application/json", `{"clientId":"` + me + `","subscriptions":["@oauth2"]}`, 204, ``},
		{"form", "", "application/x-www-form-urlencoded", `clientId=` + me + `&subscriptions=a&subscriptions=%40oauth2`, 204, ``},
		{"key case", "", "application/json", `{"ClientID":"` + me + `","Subscriptions":["@oauth2"]}`, 204, ``},
		{"guest to user", tok1, "application/json", `{"clientId":"` + me + `","subscriptions":[]}`, 204, ``},
		{"same user", tok1, "application/json", `{"clientId":"` + me + `","subscriptions":["@oauth2"]}`, 204, ``},
		{"another user", tok2, "application/json", `{"clientId":"` + me + `","subscriptions":["@oauth2"]}`, 403,
			`{"data":{},"message":"The current and the previous request authorization don't match.","status":403}`},
		{"user to guest", "", "application/json", `{"clientId":"` + me + `","subscriptions":["@oauth2"]}`, 403,
			`{"data":{},"message":"The current and the previous request authorization don't match.","status":403}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fill := func(s string) string { return strings.ReplaceAll(s, me, c.id) }
			res := e.doRaw("POST", "/api/realtime", tt.token, tt.ctype, strings.NewReader(fill(tt.body)))
			if got := strings.TrimSpace(string(res.Body)); res.Status != tt.status || got != fill(tt.want) {
				t.Errorf("POST /api/realtime = %d %s\nwant %d %s", res.Status, got, tt.status, fill(tt.want))
			}
		})
	}
}

// TestRealtimeIdle: a stream that sends nothing for the idle time ends.
func TestRealtimeIdle(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, Config{RealtimeIdle: 200 * time.Millisecond}, HTTPConfig{})
	c := openStream(t, e.srv.URL, "")
	e.subscribe(c.id, "", "@oauth2")
	c.wantEnd(5 * time.Second)
	waitOpen(t, e.api, 0)
	// Its id is gone with it.
	res := e.do("POST", "/api/realtime", "", map[string]any{"clientId": c.id, "subscriptions": []string{"@oauth2"}})
	wantError(t, res, 404, msgRealtimeClient)
}

// waitOpen waits until the server has n streams open.
func waitOpen(t *testing.T, s *Server, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d streams open", n), func() bool { return s.realtime.open() == n })
}

// TestRealtimeCap: the streams are bounded in all, per client address
// and per group of addresses (here loopback addresses, all in one /24,
// so a full hub gives no slot away), and a closed stream frees its slot.
// (Per group is new with issue 20: each case sets the group cap.)
func TestRealtimeCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                     string
		max, perClient, perGroup int
		open                     []string // addresses whose streams open
		refused                  string   // the address refused next
	}{
		{"in all", 2, 2, 2, []string{"127.0.0.1", "127.0.0.1"}, "127.0.0.2"},
		{"per client", 4, 1, 4, []string{"127.0.0.1", "127.0.0.2"}, "127.0.0.1"},
		{"per group", 4, 2, 2, []string{"127.0.0.1", "127.0.0.2"}, "127.0.0.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvWith(t, Config{MaxRealtime: tt.max, MaxRealtimePerClient: tt.perClient, MaxRealtimePerGroup: tt.perGroup}, HTTPConfig{})
			var streams []*sseClient
			for _, ip := range tt.open {
				streams = append(streams, openStream(t, e.srv.URL, ip))
			}
			wantFull(t, e.srv.URL, tt.refused)
			// Closing a stream of the same group frees the slot.
			streams[0].close()
			waitOpen(t, e.api, len(tt.open)-1)
			openStream(t, e.srv.URL, tt.refused)
		})
	}
}

// wantFull asserts that a stream from localIP is refused with 503.
func wantFull(t *testing.T, base, localIP string) {
	t.Helper()
	c, res := dialStream(t, base, localIP)
	body, _ := io.ReadAll(res.Body)
	c.close()
	want := `{"data":{},"message":"Too many realtime connections, try again later.","status":503}`
	if got := strings.TrimSpace(string(body)); res.StatusCode != 503 || got != want {
		t.Errorf("stream from %s over the cap = %d %s, want 503 %s", localIP, res.StatusCode, got, want)
	}
}

// TestRealtimeEvict: a full hub gives a client of another group the slot
// of the oldest stream that never subscribed, or else of the oldest
// stream of the group that holds the most; never a slot of the client's
// own group, nor one of a group no larger than its own.
func TestRealtimeEvict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		open       []string // addresses whose streams open, in order
		subscribed []bool   // whether each subscribes to a topic
		newcomer   string
		ended      int // the index of the stream that ends; -1 = 503
	}{
		{"oldest idle", []string{"127.0.1.1", "127.0.1.2", "127.0.2.1"}, []bool{true, false, false}, "127.0.3.1", 1},
		{"not its own group", []string{"127.0.1.1", "127.0.2.1", "127.0.2.2"}, []bool{true, false, true}, "127.0.1.9", 1},
		{"own group only", []string{"127.0.1.1", "127.0.1.2", "127.0.1.3"}, []bool{false, false, false}, "127.0.1.9", -1},
		{"largest group", []string{"127.0.1.1", "127.0.2.1", "127.0.2.2"}, []bool{true, true, true}, "127.0.3.1", 1},
		{"no larger group", []string{"127.0.1.1", "127.0.2.1", "127.0.3.1"}, []bool{true, true, true}, "127.0.4.1", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvWith(t, Config{MaxRealtime: len(tt.open), MaxRealtimePerClient: 4, MaxRealtimePerGroup: 4}, HTTPConfig{})
			var streams []*sseClient
			for i, ip := range tt.open {
				c := openStream(t, e.srv.URL, ip)
				if tt.subscribed[i] {
					e.subscribe(c.id, "", "topic")
				}
				streams = append(streams, c)
			}
			if tt.ended < 0 {
				wantFull(t, e.srv.URL, tt.newcomer)
				return
			}
			openStream(t, e.srv.URL, tt.newcomer)
			streams[tt.ended].wantEnd(5 * time.Second)
			if got := e.api.realtime.open(); got != len(tt.open) {
				t.Errorf("%d streams open, want %d", got, len(tt.open))
			}
		})
	}
}

// TestRealtimeFloodSignIn: streams from a few addresses in a few /24s
// fill every slot, idle or subscribed, and a new client still opens its
// stream, subscribes to @oauth2 and completes the popup flow, while the
// flood goes on (issue 20).
func TestRealtimeFloodSignIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                           string
		groups, addrsPerGroup, perAddr int
		defaults                       bool     // the default caps of 1,024 slots; else caps that fit the flood
		topics                         []string // what each flood stream subscribes to; nil = nothing
	}{
		{"idle flood", 3, 2, 8, false, nil},
		{"subscribed flood", 3, 2, 8, false, []string{"@oauth2"}},
		// The default caps: 1,024 slots, 16 per address, 64 per /24.
		{"subscribed flood of every default slot", 16, 4, 16, true, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total := tt.groups * tt.addrsPerGroup * tt.perAddr
			cfg := Config{MaxRealtime: total, MaxRealtimePerClient: tt.perAddr, MaxRealtimePerGroup: tt.addrsPerGroup * tt.perAddr}
			if tt.defaults {
				cfg = Config{MaxRealtime: total}
			}
			e := newEnvWith(t, cfg, HTTPConfig{})
			if h := e.api.realtime; tt.defaults && (h.maxPerAddr != tt.perAddr || h.maxPerGroup != tt.addrsPerGroup*tt.perAddr) {
				t.Fatalf("default caps %d per address, %d per group; the flood assumes %d and %d", h.maxPerAddr, h.maxPerGroup, tt.perAddr, tt.addrsPerGroup*tt.perAddr)
			}
			var flood []string
			for g := range tt.groups {
				for a := range tt.addrsPerGroup {
					flood = append(flood, fmt.Sprintf("127.0.%d.%d", g+1, a+1))
				}
			}
			for _, ip := range flood {
				for range tt.perAddr {
					c := openStream(t, e.srv.URL, ip)
					if tt.topics != nil {
						e.subscribe(c.id, "", tt.topics...)
					}
				}
			}
			waitOpen(t, e.api, total)
			// The flood's addresses are at their share: no more of theirs.
			for _, ip := range flood {
				wantFull(t, e.srv.URL, ip)
			}

			start := time.Now()
			c := openStream(t, e.srv.URL, "127.0.100.1")
			e.subscribe(c.id, "", "@oauth2")
			t.Logf("%s of %d streams: the new client's stream and subscription took %v", tt.name, total, time.Since(start))

			// More of the flood, from a new /24, while the popup is open.
			openStream(t, e.srv.URL, "127.0.200.1")
			completePopup(t, e, c)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the sign-in took %v during the flood, want under 5s", took)
			}
			if got := e.api.realtime.open(); got != total {
				t.Errorf("%d streams open, want %d", got, total)
			}
		})
	}
}

// TestRealtimeHead: HEAD /api/realtime answers the headers at once and
// holds no stream.
func TestRealtimeHead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.doRaw("HEAD", "/api/realtime", "", "", nil)
	if res.Status != 200 || len(res.Body) != 0 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("HEAD /api/realtime = %d %q %v, want 200, no body, text/event-stream", res.Status, res.Body, res.Header)
	}
	waitOpen(t, e.api, 0)
}

// TestRealtimeShutdown: http.Server.Shutdown ends the streams at once
// instead of waiting for their clients, and EndStreams ends them too.
func TestRealtimeShutdown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, capped := NewHTTPServer(e.api, ln, HTTPConfig{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(capped) }()
	base := "http://" + ln.Addr().String()
	c1 := openStream(t, base, "")
	c2 := openStream(t, base, "")

	ctx, cancel := context.WithTimeout(t.Context(), streamDeadline)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Shutdown took %v with streams open, want under 2s", took)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve = %v, want ErrServerClosed", err)
	}
	c1.wantEnd(time.Second)
	c2.wantEnd(time.Second)

	// EndStreams (a restart's) ends the streams of the env's server too,
	// and new ones may open after it.
	c3 := openStream(t, e.srv.URL, "")
	e.api.EndStreams()
	c3.wantEnd(2 * time.Second)
	openStream(t, e.srv.URL, "")
}

// TestClientGroup: the groups of client addresses as ratelimit.ClientKey
// yields them.
func TestClientGroup(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, want string }{
		{"203.0.113.7", "203.0.113.0/24"},
		{"203.0.114.7", "203.0.114.0/24"},
		{"2001:db8:1:2::/64", "2001:db8:1::/48"},
		{"2001:db8:1:ffff::/64", "2001:db8:1::/48"},
		{"not an address", "not an address"},
	}
	for _, tt := range tests {
		if got := clientGroup(tt.addr); got != tt.want {
			t.Errorf("clientGroup(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}
