package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"strongbox/logstore"
)

// listLogs returns the items of GET /api/logs with the given filter, after
// flushing the store so that every request made so far is visible.
func (e *env) listLogs(filter string) []map[string]any {
	e.t.Helper()
	if err := e.logs.Flush(); err != nil {
		e.t.Fatal(err)
	}
	res := e.do("GET", "/api/logs?perPage=1000&filter="+url.QueryEscape(filter), e.su, nil)
	if res.Status != 200 {
		e.t.Fatalf("list logs %q: %d %s", filter, res.Status, res.Body)
	}
	var p struct{ Items []map[string]any }
	if err := json.Unmarshal(res.Body, &p); err != nil {
		e.t.Fatal(err)
	}
	return p.Items
}

func TestRequestLogEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	userTok := func() string {
		e.signUp("u@example.com", "password1")
		return e.login("users", "u@example.com", "password1")
	}()

	e.doRaw("GET", "/api/health?m=ok", e.su, "", nil)
	e.doRaw("GET", "/api/logs?m=guest", "", "", nil)
	e.doRaw("GET", "/api/logs?m=user", userTok, "", nil)
	e.doRaw("POST", "/api/nope?m=404", "", "", nil)
	e.doRaw("GET", "/api/logs?m=quiet", e.su, "", nil)
	e.doRaw("GET", "/api/logs?m=badfilter&filter=%28", e.su, "", nil)

	got := map[string]map[string]any{}
	for _, it := range e.listLogs(`data.url ~ "m="`) {
		data := it["data"].(map[string]any)
		u, _ := url.Parse(data["url"].(string))
		got[u.Query().Get("m")] = it
	}
	if _, ok := got["quiet"]; ok {
		t.Errorf("a successful GET /api/logs was logged")
	}
	tests := []struct {
		marker, message, auth string
		status, level         float64
		errMsg                string
	}{
		{"ok", "GET /api/health?m=ok", "_superusers", 200, 0, ""},
		{"guest", "GET /api/logs?m=guest", "", 401, 8, msgAuthRequired},
		{"user", "GET /api/logs?m=user", "users", 403, 8, msgNotAllowed},
		{"404", "POST /api/nope?m=404", "", 404, 8, msgNotFound},
		{"badfilter", "GET /api/logs?m=badfilter&filter=(", "_superusers", 400, 8, msgInvalidFilter},
	}
	for _, tt := range tests {
		it, ok := got[tt.marker]
		if !ok {
			t.Errorf("%s: no log entry", tt.marker)
			continue
		}
		data := it["data"].(map[string]any)
		if it["message"] != tt.message || it["level"] != tt.level || data["status"] != tt.status || data["auth"] != tt.auth {
			t.Errorf("%s: entry %v", tt.marker, it)
		}
		if data["type"] != "request" || data["remoteIP"] != "127.0.0.1" || data["userIP"] != "127.0.0.1" || data["userAgent"] != "Go-http-client/1.1" {
			t.Errorf("%s: data %v", tt.marker, data)
		}
		if et, ok := data["execTime"].(float64); !ok || et < 0 {
			t.Errorf("%s: execTime %v", tt.marker, data["execTime"])
		}
		if tt.errMsg != "" && data["error"] != tt.errMsg {
			t.Errorf("%s: error %v, want %q", tt.marker, data["error"], tt.errMsg)
		}
		if id, _ := it["id"].(string); len(id) != 15 {
			t.Errorf("%s: id %q", tt.marker, id)
		}
	}
}

// TestLogsNoSecrets: the token query parameter (file tokens on downloads)
// and passwords never reach the request log, nor does the Authorization
// header.
func TestLogsNoSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.doRaw("GET", "/api/health?token=SECRET1&m=x&password=SECRET2", e.su, "", nil)
	items := e.listLogs(`data.url ~ "m=x"`)
	if len(items) != 1 {
		t.Fatalf("got %d entries", len(items))
	}
	b, _ := json.Marshal(items[0])
	for _, secret := range []string{"SECRET1", "SECRET2", e.su} {
		if strings.Contains(string(b), secret) {
			t.Errorf("log entry contains a secret: %s", b)
		}
	}
	if data := items[0]["data"].(map[string]any); data["url"] != "/api/health?token=REDACTED&m=x&password=REDACTED" {
		t.Errorf("url = %v", data["url"])
	}
}

func TestLogsAPIErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("u@example.com", "password1")
	userTok := e.login("users", "u@example.com", "password1")
	tests := []struct {
		name, path, token string
		status            int
		msg               string
	}{
		{"list guest", "/api/logs", "", 401, msgAuthRequired},
		{"list user", "/api/logs", userTok, 403, msgNotAllowed},
		{"view guest", "/api/logs/abc", "", 401, msgAuthRequired},
		{"stats user", "/api/logs/stats", userTok, 403, msgNotAllowed},
		{"guest with bad filter", "/api/logs?filter=%28", "", 401, msgAuthRequired},
		{"bad sort", "/api/logs?sort=unknownfield", e.su, 400, msgBadRequest},
		{"bad page", "/api/logs?page=abc", e.su, 400, msgBadRequest},
		{"bad perPage", "/api/logs?perPage=1.5", e.su, 400, msgBadRequest},
		{"bad skipTotal", "/api/logs?skipTotal=maybe", e.su, 400, msgBadRequest},
		{"unknown id", "/api/logs/doesnotexist123", e.su, 404, msgNotFound},
		{"bad fields", "/api/logs?fields=message:excerpt(abc)", e.su, 400, msgBadRequest + " Invalid fields."},
		{"wrong method", "/api/logs", e.su, 404, msgNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := "GET"
			if tt.name == "wrong method" {
				method = "DELETE"
			}
			wantError(t, e.do(method, tt.path, tt.token, nil), tt.status, tt.msg)
		})
	}
}

// TestLogsFilterErrorData: a malformed filter (TestLogsAPIErrors has the
// other refusals) keeps §7's message exactly
// and says in data.filter what is wrong and at which byte of the filter,
// on the list and on stats alike.
func TestLogsFilterErrorData(t *testing.T) {
	e := newEnv(t)
	const env = `{"data":{"filter":{"code":"validation_invalid_filter","message":%q,"params":{"offset":%d}}},"message":"` + msgInvalidFilter + `","status":400}`
	tests := []struct {
		name, filter string
		message      string
		offset       int
	}{
		{"dangling operator", "level > ", "Invalid filter: expected operand, found end of input (at offset 8).", 8},
		{"unknown field", "status >= 400", `Invalid filter: unknown field "status" (at offset 0).`, 0},
		{"no such operator", "status===", `Invalid filter: invalid operator "===" (at offset 6).`, 6},
		{"comment only", "// x", "Invalid filter: empty filter: expected operand, found end of input (at offset 4).", 4},
		{"unclosed group", "(level = 0", `Invalid filter: expected ")" to close "(" at offset 0, found end of input (at offset 10).`, 10},
		// Offsets count bytes: "é" is two.
		{"after a multibyte string", `message = "é" &&`, "Invalid filter: expected operand, found end of input (at offset 17).", 17},
	}
	for _, tt := range tests {
		for _, path := range []string{"/api/logs", "/api/logs/stats"} {
			t.Run(tt.name+" "+path, func(t *testing.T) {
				res := e.do("GET", path+"?filter="+url.QueryEscape(tt.filter), e.su, nil)
				want := fmt.Sprintf(env, tt.message, tt.offset)
				if got := strings.TrimSpace(string(res.Body)); res.Status != 400 || got != want {
					t.Errorf("GET %s filter %q = %d %s, want 400 %s", path, tt.filter, res.Status, got, want)
				}
			})
		}
	}
}

func TestLogsListAndFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for range 3 {
		e.doRaw("GET", "/api/health?m=list", "", "", nil)
	}
	e.logs.Flush()
	res := e.do("GET", "/api/logs?filter="+url.QueryEscape(`data.url ~ "m=list"`)+"&fields=id,message:excerpt(5,true)&perPage=2&sort=-created", e.su, nil)
	var p map[string]any
	json.Unmarshal(res.Body, &p)
	if res.Status != 200 || p["totalItems"] != float64(3) || p["totalPages"] != float64(2) || p["perPage"] != float64(2) || p["page"] != float64(1) {
		t.Fatalf("list: %d %s", res.Status, res.Body)
	}
	for _, it := range p["items"].([]any) {
		m := it.(map[string]any)
		if len(m) != 2 || m["message"] != "GET /..." {
			t.Errorf("item %v, want only id and an excerpted message", m)
		}
	}
	res = e.do("GET", "/api/logs/stats?fields=total&filter="+url.QueryEscape(`data.url ~ "m=list"`), e.su, nil)
	if got := strings.TrimSpace(string(res.Body)); res.Status != 200 || got != `[{"total":3}]` {
		t.Errorf("stats: %d %s", res.Status, got)
	}
	id := p["items"].([]any)[0].(map[string]any)["id"].(string)
	res = e.do("GET", "/api/logs/"+id+"?fields=message", e.su, nil)
	if got := strings.TrimSpace(string(res.Body)); got != `{"message":"GET /api/health?m=list"}` {
		t.Errorf("view: %s", got)
	}
}

func TestSettingsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.do("GET", "/api/settings", e.su, nil)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"logs":{"maxDays":5,"minLevel":0,"logIP":true,"logAuthId":false}`) {
		t.Fatalf("settings: %d %s", res.Status, res.Body)
	}
	wantError(t, e.do("GET", "/api/settings", "", nil), 401, msgAuthRequired)

	res = e.do("PATCH", "/api/settings", e.su, `{"logs":{"maxDays":-1},"meta":{"senderAddress":"nope"}}`)
	want := `{"data":{"logs":{"maxDays":{"code":"validation_min_greater_equal_than_required","message":"Must be no less than 0.","params":{"threshold":0}}},"meta":{"senderAddress":{"code":"validation_is_email","message":"Must be a valid email address."}}},"message":"An error occurred while saving the new settings.","status":400}`
	if res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("invalid patch: %d %s", res.Status, res.Body)
	}
	res = e.do("PATCH", "/api/settings", e.su, `{"smtp":{"password":"hunter2"},"trustedProxy":{"headers":["X-Real-IP"]},"logs":{"logIP":true,"logAuthId":true}}`)
	if res.Status != 200 || strings.Contains(string(res.Body), "hunter2") {
		t.Errorf("patch: %d %s", res.Status, res.Body)
	}
	if got := e.settings.Get().SMTP.Password; got != "hunter2" {
		t.Errorf("stored smtp password = %q", got)
	}

	// The trusted proxy header decides userIP; logAuthId adds authId.
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/health?m=proxy", nil)
	req.Header.Set("Authorization", e.su)
	req.Header.Set("X-Real-IP", "203.0.113.7")
	if res, err := e.srv.Client().Do(req); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	items := e.listLogs(`data.url ~ "m=proxy"`)
	if len(items) != 1 {
		t.Fatalf("got %d entries", len(items))
	}
	data := items[0]["data"].(map[string]any)
	if data["authId"] == nil || data["userIP"] != "203.0.113.7" || data["remoteIP"] != "127.0.0.1" {
		t.Errorf("proxy/authId: %v", data)
	}

	// maxDays 0 turns logging off and drops the stored logs.
	res = e.do("PATCH", "/api/settings", e.su, `{"logs":{"maxDays":0}}`)
	if res.Status != 200 {
		t.Fatalf("maxDays 0: %d %s", res.Status, res.Body)
	}
	e.doRaw("GET", "/api/health?m=off", "", "", nil)
	if items := e.listLogs(`id != ""`); len(items) != 0 {
		t.Errorf("%d entries after maxDays 0", len(items))
	}
}

func TestLogsRedactionEscapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/health?m=esc&%74oken=SECRET1&passw%6Frd=SECRET2&Access_Token=SECRET4&token[]=SECRET5&code=SECRET7", nil)
	req.Header.Set("Referer", "https://u:SECRET6@app.example.com/download?token=SECRET3&x=1")
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	items := e.listLogs(`data.url ~ "m=esc"`)
	if len(items) != 1 {
		t.Fatalf("got %d entries", len(items))
	}
	b, _ := json.Marshal(items[0])
	for _, secret := range []string{"SECRET1", "SECRET2", "SECRET3", "SECRET4", "SECRET5", "SECRET6", "SECRET7"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("log entry contains %s: %s", secret, b)
		}
	}
	if ref := items[0]["data"].(map[string]any)["referer"]; ref != "https://REDACTED@app.example.com/download?token=REDACTED&x=1" {
		t.Errorf("referer = %v", ref)
	}
}

func TestLogsIPAndMinLevel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if res := e.do("PATCH", "/api/settings", e.su, `{"logs":{"logIP":false,"minLevel":4}}`); res.Status != 200 {
		t.Fatalf("patch: %d %s", res.Status, res.Body)
	}
	e.doRaw("GET", "/api/health?m=info", "", "", nil) // level 0: below minLevel
	e.doRaw("POST", "/api/nope?m=error", "", "", nil) // level 8: kept
	items := e.listLogs(`data.url ~ "m="`)
	if len(items) != 1 || items[0]["message"] != "POST /api/nope?m=error" {
		t.Fatalf("entries = %v, want only the failed request", items)
	}
	data := items[0]["data"].(map[string]any)
	if _, ok := data["remoteIP"]; ok {
		t.Errorf("remoteIP stored with logIP false: %v", data)
	}
	if _, ok := data["userIP"]; ok {
		t.Errorf("userIP stored with logIP false: %v", data)
	}
}

func TestLogText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":          "plain",
		"a\xf5\x1a\xb0^": "a\uFFFD\x1a\uFFFD^",
	} {
		if got := logText(in); got != want {
			t.Errorf("logText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := truncate("héllo", 2); got != "h..." {
		t.Errorf("truncate splits a character: %q", got)
	}
}

// TestRedaction: the documented rule (secretParam) catches every spelling
// of a secret name, wherever the URI carries parameters, and a Referer's
// userinfo is removed in whatever form it comes.
func TestRedaction(t *testing.T) {
	t.Parallel()
	uris := []struct{ in, want string }{
		{"/p?token=a&x=1", "/p?token=REDACTED&x=1"},
		{"/p?Token=a&TOKEN=b", "/p?Token=REDACTED&TOKEN=REDACTED"},
		{"/p?token%5B%5D=a&token[]=b", "/p?token%5B%5D=REDACTED&token[]=REDACTED"},
		{"/p?access_token=a&refresh_token=b&id_token=c", "/p?access_token=REDACTED&refresh_token=REDACTED&id_token=REDACTED"},
		{"/p?code=a&state=s", "/p?code=REDACTED&state=s"},
		{"/p?secret=a&client_secret=b&X-Api-Key=c", "/p?secret=REDACTED&client_secret=REDACTED&X-Api-Key=REDACTED"},
		{"/p?newPassword=a&oldPassword=b&passwordConfirm=c&password=d", "/p?newPassword=REDACTED&oldPassword=REDACTED&passwordConfirm=REDACTED&password=REDACTED"},
		{"/p?pass=a&pwd=b&pw=c&passphrase=d&jwt=e&sessionid=f&sid=g&privateKey=h&accessKey=i&authKey=j&bearer=k&hmac=l&code_verifier=m",
			"/p?pass=REDACTED&pwd=REDACTED&pw=REDACTED&passphrase=REDACTED&jwt=REDACTED&sessionid=REDACTED&sid=REDACTED&privateKey=REDACTED&accessKey=REDACTED&authKey=REDACTED&bearer=REDACTED&hmac=REDACTED&code_verifier=REDACTED"},
		{"/p?filter=a&perPage=5&page=1&sort=-created&fields=id&mfaId=x&otpId=y&skipTotal=1&expand=e", "/p?filter=a&perPage=5&page=1&sort=-created&fields=id&mfaId=x&otpId=y&skipTotal=1&expand=e"},
		{"/p?otp_code=a&auth_code=b&resetCode=c&x=1", "/p?otp_code=REDACTED&auth_code=REDACTED&resetCode=REDACTED&x=1"},
		{"/p?token=abc%23def&x=1", "/p?token=REDACTED&x=1"},
		{"/p?password=abc?def;ghi#jkl&x=1", "/p?password=REDACTED&x=1"},
		{"/p?x=1#access_token=abc;def", "/p?x=1#access_token=REDACTED"},
		{"/p?%74oken=a&passw%6Frd=b", "/p?%74oken=REDACTED&passw%6Frd=REDACTED"},
		{"/p?a=1;token=b", "/p?a=1;token=REDACTED"},
		{"/p?x=1#access_token=b&y=2", "/p?x=1#access_token=REDACTED&y=2"},
		{"/p#access_token=b", "/p#access_token=REDACTED"},
		{"/api/health%23access_token=b", "/api/health%23access_token=REDACTED"},
		{"/p?token", "/p?token"},
		{"/a=b/token=c", "/a=b/token=c"},
		{"/p", "/p"},
	}
	for _, tt := range uris {
		if got := redactParams(tt.in); got != tt.want {
			t.Errorf("redactParams(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	referers := []struct{ in, want string }{
		{"http://user:pass@host/", "http://REDACTED@host/"},
		{"https://user@host:8080/a/b?token=x&y=1", "https://REDACTED@host:8080/a/b?token=REDACTED&y=1"},
		{"https://a:b@host", "https://REDACTED@host"},
		{"//user:s3cret@host/", "//REDACTED@host/"},
		{"user:s3cret@host/", "user:REDACTED@host/"},
		{"http:\\\\user:s3cret@host/", "http:\\\\REDACTED@host/"},
		{"https://a:b@c@host/p", "https://REDACTED@host/p"},
		{"http://app.example/cb#access_token=x", "http://app.example/cb#access_token=REDACTED"},
		{"https://host/users/@me?x=1", "https://host/users/@me?x=1"},
		{"https://host/", "https://host/"},
		{"not a url @ all", "REDACTED@ all"},
		{"", ""},
	}
	for _, tt := range referers {
		if got := redactReferer(tt.in); got != tt.want {
			t.Errorf("redactReferer(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzRedact: redaction never panics, is idempotent, and leaves no value of
// a secret parameter it was given in clear.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"/p?token=a&x=1", "/p#access_token=b", "http://u:p@h/?code=c", "//u:p@h", "a%23token=b;c", "", "?", "%2", "http:\\\\u@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, redact := range map[string]func(string) string{"redactParams": redactParams, "redactReferer": redactReferer} {
			once := redact(s)
			if twice := redact(once); twice != once {
				t.Fatalf("%s not idempotent: %q -> %q -> %q", name, s, once, twice)
			}
		}
		const secret = "S3CR3TVALUE"
		probe := s + "?access_token=" + secret
		if got := redactParams(probe); strings.Contains(got, secret) {
			t.Fatalf("redactParams(%q) = %q keeps the secret", probe, got)
		}
	})
}

// TestLogMessageEscapes: a request log's message shows the URL unescaped,
// as PocketBase does, but for the characters that are not printable,
// which stay percent-encoded: a CR LF sent as %0d%0a cannot start a forged
// line in a plain-text view of the logs.
func TestLogMessageEscapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct{ path, message string }{
		{"/api/esc1/a%20b?m=1", "GET /api/esc1/a b?m=1"},
		{"/api/esc2/caf%C3%A9?m=1", "GET /api/esc2/café?m=1"},
		{"/api/esc3/zzcrlf%0d%0aX:%20y?m=1", "GET /api/esc3/zzcrlf%0D%0AX: y?m=1"},
		{"/api/esc4/a%00b%09c%7Fd%E2%80%A8e%C2%85f?m=1", "GET /api/esc4/a%00b%09c%7Fd%E2%80%A8e%C2%85f?m=1"},
		{"/api/esc5/x%0A?m=%zz", "GET /api/esc5/x%0A?m=%zz"}, // an invalid escape: the URL as it is
	}
	for _, tt := range tests {
		e.doRaw("GET", tt.path, "", "", nil)
	}
	for _, tt := range tests {
		seg := strings.Split(tt.path, "/")[2]
		items := e.listLogs(`data.url ~ "/api/` + seg + `/"`)
		if len(items) != 1 {
			t.Errorf("%s: %d entries", tt.path, len(items))
			continue
		}
		if got := items[0]["message"]; got != tt.message {
			t.Errorf("%s: message %q, want %q", tt.path, got, tt.message)
		}
	}
}

// TestMarshalPageAsEncoder checks that marshal, which writes a page of logs
// and an entry by their AppendJSON, gives the bytes of encoding/json's
// Encoder (HTML escaped, trailing newline) that it gives for other values.
func TestMarshalPageAsEncoder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.doRaw("GET", "/api/nope?q=<a>&b=\u2028\"", e.su, "", nil)
	e.doRaw("GET", "/api/health", "", "", nil)
	if err := e.logs.Flush(); err != nil {
		t.Fatal(err)
	}
	p, err := e.logs.List(logstore.Query{PerPage: 10})
	if err != nil || len(p.Items) < 2 {
		t.Fatal(err, len(p.Items))
	}
	for i, v := range []any{p, p.Items[0], p.Items[1], logstore.Page{}} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(v); err != nil {
			t.Fatal(err)
		}
		got, err := marshal(v)
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("value %d: marshal\n%s (%v), encoding/json\n%s", i, got, err, want.Bytes())
		}
	}
}
