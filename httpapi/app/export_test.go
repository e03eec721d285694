package app

import (
	"compress/gzip"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"strongbox/logstore"
	"strongbox/logstore/otlp"
)

// jsonReceiver is a fake OTLP/HTTP receiver of http/json: it keeps every
// record it takes, with its resource; hang makes it never answer.
type jsonReceiver struct {
	mu      sync.Mutex
	records []map[string]any
	res     []any
	hang    chan struct{}
}

func (rc *jsonReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rc.hang != nil {
		select {
		case <-rc.hang:
		case <-r.Context().Done():
		}
		return
	}
	zr, err := gzip.NewReader(r.Body)
	if err != nil || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Api-Key") != "k,1" {
		http.Error(w, "bad request", 400)
		return
	}
	var req struct {
		ResourceLogs []struct {
			Resource struct {
				Attributes []any `json:"attributes"`
			} `json:"resource"`
			ScopeLogs []struct {
				LogRecords []map[string]any `json:"logRecords"`
			} `json:"scopeLogs"`
		} `json:"resourceLogs"`
	}
	if err := json.NewDecoder(zr).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rl := range req.ResourceLogs {
		rc.res = rl.Resource.Attributes
		for _, sl := range rl.ScopeLogs {
			rc.records = append(rc.records, sl.LogRecords...)
		}
	}
	w.Write([]byte("{}"))
}

// find returns the first record whose attribute key has the string value v.
func (rc *jsonReceiver) find(key, v string) map[string]any {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, r := range rc.records {
		if a := attrsOf(r); a[key] == v {
			return r
		}
	}
	return nil
}

// attrsOf flattens a JSON record's attributes to key → the JSON value of
// its AnyValue's one member.
func attrsOf(r map[string]any) map[string]any {
	out := map[string]any{}
	list, _ := r["attributes"].([]any)
	for _, kv := range list {
		m := kv.(map[string]any)
		for _, v := range m["value"].(map[string]any) {
			out[m["key"].(string)] = v
		}
	}
	return out
}

// TestExportEndToEnd: a request's log and the server's events, stored,
// reach an OTLP receiver with the mapping of export.go, and
// GET /api/logs/export reports it, to superusers only, with no secret.
func TestExportEndToEnd(t *testing.T) {
	t.Parallel()
	rc := &jsonReceiver{}
	recv := httptest.NewServer(rc)
	defer recv.Close()
	ts := startServer(t, t.TempDir(), func(c *Config) {
		c.Version = "1.2.3"
		c.Export = &otlp.Config{Endpoint: "http://user:pw@" + strings.TrimPrefix(recv.URL, "http://") + "/v1/logs?token=q",
			Protocol: otlp.ProtoJSON, Timeout: 5 * time.Second, Headers: [][2]string{{"X-Api-Key", "k,1"}},
			Resource: []otlp.KeyValue{{Key: "deployment.environment", Value: "test"}}}
	}, nil)
	token := ts.login(t)
	if code, _, err := ts.do(t, "GET", "/api/health?x=1", "", ""); err != nil || code != 200 {
		t.Fatalf("health: %d %v", code, err)
	}
	var got map[string]any
	waitUntil(t, "the health request's log at the receiver", func() bool {
		got = rc.find("url.path", "/api/health")
		return got != nil
	})
	a := attrsOf(got)
	want := map[string]any{"http.request.method": "GET", "url.path": "/api/health", "url.query": "x=1",
		"http.response.status_code": "200", "client.address": "127.0.0.1", "network.peer.address": "127.0.0.1",
		"user_agent.original": "Go-http-client/1.1", "strongbox.type": "request"}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("attribute %s = %v, want %v (all: %v)", k, a[k], v, a)
		}
	}
	if got["severityNumber"] != 9.0 || got["severityText"] != "INFO" || got["body"].(map[string]any)["stringValue"] != "GET /api/health?x=1" {
		t.Errorf("record %v", got)
	}
	// log.record.uid is the id GET /api/logs gives.
	_, body, _ := ts.do(t, "GET", "/api/logs?filter="+urlQuery(`data.url="/api/health?x=1"`), token, "")
	var page struct{ Items []struct{ ID string } }
	json.Unmarshal(body, &page)
	if len(page.Items) != 1 || a["log.record.uid"] != page.Items[0].ID {
		t.Errorf("log.record.uid %v, the log's ids %s", a["log.record.uid"], body)
	}
	if ev := rc.find("version", "1.2.3"); ev == nil {
		t.Errorf("the server started event was not exported")
	}
	res := map[string]any{}
	for _, kv := range rc.res {
		m := kv.(map[string]any)
		res[m["key"].(string)] = m["value"].(map[string]any)["stringValue"]
	}
	if res["service.name"] != "Acme" || res["service.version"] != "1.2.3" || len(res["service.instance.id"].(string)) != 36 || res["deployment.environment"] != "test" {
		t.Errorf("resource %v", res)
	}

	code, body, _ := ts.do(t, "GET", "/api/logs/export", "", "")
	if code != 401 {
		t.Errorf("GET /api/logs/export as a guest: %d %s, want 401", code, body)
	}
	waitUntil(t, "the state to show success", func() bool {
		_, body, _ = ts.do(t, "GET", "/api/logs/export", token, "")
		return strings.Contains(string(body), `"lastSuccess":"20`)
	})
	var st map[string]any
	json.Unmarshal(body, &st)
	if st["enabled"] != true || st["endpoint"] != recv.URL+"/v1/logs" || st["protocol"] != "http/json" || st["exported"].(float64) < 2 || st["lastError"] != "" {
		t.Errorf("state %s", body)
	}
	for _, secret := range []string{"pw", "token=q", "k,1"} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the state shows %q: %s", secret, body)
		}
	}
}

// TestExportOffState: without Export the state says so.
func TestExportOffState(t *testing.T) {
	t.Parallel()
	ts := startServer(t, t.TempDir(), nil, nil)
	_, body, _ := ts.do(t, "GET", "/api/logs/export", ts.login(t), "")
	if !strings.HasPrefix(string(body), `{"enabled":false,"endpoint":""`) {
		t.Errorf("state without export: %s", body)
	}
}

// TestExportHangingReceiver: a receiver that never answers does not slow
// the requests.
func TestExportHangingReceiver(t *testing.T) {
	t.Parallel()
	rc := &jsonReceiver{hang: make(chan struct{})}
	recv := httptest.NewServer(rc)
	defer recv.Close()
	defer close(rc.hang)
	ts := startServer(t, t.TempDir(), func(c *Config) {
		c.Export = &otlp.Config{Endpoint: recv.URL, Protocol: otlp.ProtoJSON, Timeout: time.Hour}
	}, nil)
	start := time.Now()
	for range 50 {
		if code, _, err := ts.do(t, "GET", "/api/health", "", ""); err != nil || code != 200 {
			t.Fatalf("health: %d %v", code, err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("50 requests took %v with the receiver hanging", d)
	}
}

func TestExportRecord(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, tc := range []struct {
		e    logstore.Entry
		want []otlp.KeyValue
	}{
		{logstore.Entry{ID: "abc", Created: created, Level: 8, Message: "GET /a?token=REDACTED", Request: &logstore.Request{
			Method: "GET", URL: "/a?token=REDACTED", Status: 500, ExecTime: 1.5, UserIP: "10.0.0.1", RemoteIP: "127.0.0.1",
			UserAgent: "ua", Referer: "https://r/", Auth: "users", AuthID: "u1", Error: "boom", Details: map[string]any{"n": 2.0},
		}}, []otlp.KeyValue{
			{Key: "log.record.uid", Value: "abc"}, {Key: "http.request.method", Value: "GET"}, {Key: "url.path", Value: "/a"},
			{Key: "url.query", Value: "token=REDACTED"}, {Key: "http.response.status_code", Value: int64(500)},
			{Key: "client.address", Value: "10.0.0.1"}, {Key: "network.peer.address", Value: "127.0.0.1"},
			{Key: "user_agent.original", Value: "ua"}, {Key: "http.request.header.referer", Value: []any{"https://r/"}},
			{Key: "strongbox.exec_time", Value: 1.5}, {Key: "strongbox.auth_collection", Value: "users"},
			{Key: "strongbox.auth_id", Value: "u1"}, {Key: "strongbox.type", Value: "request"},
			{Key: "strongbox.error", Value: "boom"}, {Key: "strongbox.error_details", Value: map[string]any{"n": int64(2)}},
		}},
		{logstore.Entry{ID: "ev", Created: created, Level: 4, Message: "backup failed", Attrs: map[string]any{
			"name": "b.zip", "bytes": 12.0, "ratio": 0.5, "list": []any{1.0, "x"}, "empty": "",
		}}, []otlp.KeyValue{
			{Key: "log.record.uid", Value: "ev"}, {Key: "bytes", Value: int64(12)}, {Key: "list", Value: []any{int64(1), "x"}},
			{Key: "name", Value: "b.zip"}, {Key: "ratio", Value: 0.5},
		}},
	} {
		r := exportRecord(tc.e)
		if !r.Time.Equal(created) || r.Level != tc.e.Level || r.Body != tc.e.Message {
			t.Errorf("%s: record %+v", tc.e.ID, r)
		}
		if d := cmp.Diff(tc.want, r.Attrs); d != "" {
			t.Errorf("%s: attributes (-want +got)\n%s", tc.e.ID, d)
		}
	}
}

func urlQuery(s string) string {
	r := strings.NewReplacer(" ", "%20", `"`, "%22", "=", "%3D", "?", "%3F", "/", "%2F")
	return r.Replace(s)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
