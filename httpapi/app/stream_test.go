package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"strongbox/backup/backuptest"
	"strongbox/httpapi/settings"
)

// TestServerStream: enabling backups.continuous (with backups.s3) ships
// the stores to the bucket under stream/ at once, GET /api/backups/stream
// reports it to superusers only, GET /api/backups lists none of its
// objects, and disabling it stops the shipping.
func TestServerStream(t *testing.T) {
	t.Parallel()
	bucket := &backuptest.Bucket{}
	var last settings.S3
	ts := startServer(t, t.TempDir(), func(c *Config) { c.ObjectStore = bucketOf(bucket, &last) }, nil)
	token := ts.login(t)
	if code, body, _ := ts.do(t, "GET", "/api/backups/stream", token, ""); code != 200 || !strings.HasPrefix(string(body), `{"enabled":false,`) {
		t.Fatalf("state while off: %d %s", code, body)
	}
	if code, _, _ := ts.do(t, "GET", "/api/backups/stream", "", ""); code != 401 {
		t.Fatalf("state without a token: %d, want 401", code)
	}
	s3 := `"s3":{"enabled":true,"bucket":"b","region":"r","endpoint":"http://127.0.0.1:9","accessKey":"k","secret":"s"}`
	if code, body, _ := ts.do(t, "PATCH", "/api/settings", token, `{"backups":{`+s3+`,"continuous":{"enabled":true}}}`); code != 200 {
		t.Fatalf("enable: %d %s", code, body)
	}
	var st struct {
		Enabled                   bool
		LastShipped, RestorableTo string
		Objects                   int
	}
	for deadline := time.Now().Add(10 * time.Second); st.Objects == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, body, _ := ts.do(t, "GET", "/api/backups/stream", token, "")
		json.Unmarshal(body, &st)
	}
	if !st.Enabled || st.Objects == 0 || st.LastShipped == "" || st.RestorableTo != st.LastShipped {
		t.Fatalf("state while on: %+v", st)
	}
	var streamed int
	for _, k := range bucket.Keys() {
		if !strings.HasPrefix(k, "stream/") {
			t.Errorf("an object outside stream/: %s", k)
		}
		streamed++
	}
	if streamed < 2 {
		t.Fatalf("the bucket holds %v, want a marker and a base", bucket.Keys())
	}
	if code, body, _ := ts.do(t, "GET", "/api/backups", token, ""); code != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("GET /api/backups = %d %s, want no archive", code, body)
	}
	if code, body, _ := ts.do(t, "PATCH", "/api/settings", token, `{"backups":{"continuous":{"enabled":false}}}`); code != 200 {
		t.Fatalf("disable: %d %s", code, body)
	}
	if _, body, _ := ts.do(t, "GET", "/api/backups/stream", token, ""); !strings.HasPrefix(string(body), `{"enabled":false,`) {
		t.Fatalf("state after disabling: %s", body)
	}
}
