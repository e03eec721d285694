package app

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"strongbox/backup"
	"strongbox/backup/s3"
	"strongbox/backup/s3/s3test"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
)

// These tests run the backup routes against a real S3 server, versitygw,
// behind a loopback fault proxy (s3test starts both; the tests skip when
// STRONGBOX_S3_GATEWAY does not name the gateway's binary).

// gatewayBucket is an Options.ObjectStore: the S3 client of the settings
// with parts of 5 MiB (S3's least), so that a small data dir makes a
// multipart upload, a timeout of 2 s and one retry, so that a stalled
// answer fails fast.
func gatewayBucket(c settings.S3) (backup.ObjectStore, error) {
	cl, err := s3.New(s3.Config{Endpoint: c.Endpoint, Region: c.Region, Bucket: c.Bucket, AccessKey: c.AccessKey,
		Secret: c.Secret, ForcePathStyle: c.ForcePathStyle, PartSize: 5 << 20, Timeout: 2 * time.Second, MaxRetries: 1})
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// s3Settings is the PATCH /api/settings body that enables backups.s3 on
// g's bucket through endpoint, with edit applied to it (if not nil).
func s3Settings(t *testing.T, g s3test.Gateway, endpoint string, edit func(map[string]any)) string {
	t.Helper()
	c := map[string]any{"enabled": true, "bucket": g.Bucket, "region": g.Region, "endpoint": endpoint,
		"accessKey": g.AccessKey, "secret": g.Secret, "forcePathStyle": true}
	if edit != nil {
		edit(c)
	}
	b, err := json.Marshal(map[string]any{"backups": map[string]any{"s3": c}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// snapshot returns the SHA-256 of each regular file under dir, by path,
// outside the folders skip names.
func snapshot(t *testing.T, dir string, skip ...string) map[string][32]byte {
	t.Helper()
	files := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() && slices.Contains(skip, filepath.ToSlash(rel)) {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestS3FaultsThroughRoutes: each fault between the server and the bucket
// ends in a successful retry or in the route's error, never in a partial
// archive or a pending upload in the bucket, never in a changed data dir.
func TestS3FaultsThroughRoutes(t *testing.T) {
	t.Parallel()
	g := s3test.Start(t)
	proxy := s3test.StartProxy(t, g.Endpoint, nil)
	dir := t.TempDir()
	// Enough request logs for an archive of two parts, the second over
	// the 1 MiB after which the proxy cuts a body.
	if err := logstore.Seed(filepath.Join(dir, "logs"), 130_000, logstore.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir, func(c *Config) {
		c.ObjectStore = gatewayBucket
		c.Exec = func(string, []string, []string) error { return errors.New("a test server does not re-execute") }
	}, nil)
	token := ts.login(t)
	// do takes the test it runs in, a subtest's when in one, so that its
	// Fatal ends that subtest only.
	do := func(t *testing.T, method, path, body string) (int, string) {
		t.Helper()
		code, b, err := ts.do(t, method, path, token, body)
		if err != nil {
			t.Fatal(err)
		}
		return code, string(b)
	}
	if code, body := do(t, "PATCH", "/api/settings", s3Settings(t, g, proxy.URL, nil)); code != 200 {
		t.Fatalf("enable S3: %d %s", code, body)
	}

	creates := []struct {
		name string
		rule s3test.Rule
		code int
		body string // the exact answer when code is not 204
	}{
		{name: "connection cut mid-part every time", rule: s3test.On("PUT part 2", 99, s3test.CutMidBody), code: 400, body: failedCreate},
		{name: "500 on Complete every time", rule: s3test.On("POST complete", 99, s3test.Answer500), code: 400, body: failedCreate},
		{name: "connection cut mid-part once", rule: s3test.On("PUT part 2", 1, s3test.CutMidBody), code: 204},
		{name: "500 on a part once", rule: s3test.On("PUT part 2", 1, s3test.Answer500), code: 204},
		{name: "503 on a part once", rule: s3test.On("PUT part 1", 1, s3test.Answer503), code: 204},
		{name: "slow answer past the timeout once", rule: s3test.On("PUT part 2", 1, s3test.StallAnswer), code: 204},
		{name: "slow answer past the timeout every time", rule: s3test.On("PUT part 2", 99, s3test.StallAnswer), code: 400, body: failedCreate},
	}
	for i, tt := range creates {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("fault-%d.zip", i)
			before := snapshot(t, dir, "logs")
			proxy.SetRule(tt.rule)
			code, body := do(t, "POST", "/api/backups", fmt.Sprintf(`{"name":%q}`, key))
			if proxy.Faults() == 0 {
				t.Error("no fault was injected")
			}
			if code != tt.code || (code != 204 && body != tt.body) {
				t.Fatalf("create: %d %s, want %d %s", code, body, tt.code, tt.body)
			}
			proxy.SetRule(nil)
			if code != 204 {
				if got := g.Files(t); len(got) != 0 {
					t.Errorf("the bucket's folder holds %q after a failed create", got)
				}
				if after := snapshot(t, dir, "logs"); !maps.Equal(after, before) {
					t.Errorf("the data dir changed: %d files before, %d after", len(before), len(after))
				}
				return
			}
			// The archive is complete: the download is what the bucket
			// holds, and it verifies.
			stored, err := os.ReadFile(filepath.Join(g.Dir, g.Bucket, key))
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Files(t); !slices.Equal(got, []string{key}) {
				t.Errorf("the bucket's folder holds %q", got)
			}
			t.Logf("archive of %d bytes", len(stored))
			if len(stored) <= 6<<20 {
				t.Errorf("the archive has %d bytes: its second part is under 1 MiB", len(stored))
			}
			got := download(t, ts, token, key)
			if len(got) != len(stored) || sha256.Sum256(got) != sha256.Sum256(stored) {
				t.Errorf("the download (%d bytes) differs from the stored archive (%d bytes)", len(got), len(stored))
			}
			if _, err := backup.Verify(strings.NewReader(string(stored)), int64(len(stored)), backup.Limits{}); err != nil {
				t.Errorf("the archive: %v", err)
			}
			if code, body := do(t, "DELETE", "/api/backups/"+key, ""); code != 204 {
				t.Fatalf("delete: %d %s", code, body)
			}
		})
	}

	t.Run("restore with the download cut", func(t *testing.T) {
		proxy.SetRule(nil)
		if code, body := do(t, "POST", "/api/backups", `{"name":"keep.zip"}`); code != 204 {
			t.Fatalf("create: %d %s", code, body)
		}
		if code, body := do(t, "PATCH", "/api/settings", `{"meta":{"appName":"Changed"}}`); code != 200 {
			t.Fatalf("PATCH appName: %d %s", code, body)
		}
		// The log store takes the requests' logs meanwhile: it is left out.
		before := snapshot(t, dir, "logs")
		proxy.SetRule(s3test.On("GET /"+g.Bucket+"/keep.zip", 99, s3test.CutMidReply))
		code, body := do(t, "POST", "/api/backups/keep.zip/restore", "")
		if proxy.Faults() == 0 {
			t.Error("no fault was injected")
		}
		proxy.SetRule(nil)
		if want := `{"data":{},"message":"The backup file could not be read.","status":400}` + "\n"; code != 400 || body != want {
			t.Errorf("restore: %d %s, want 400 %s", code, body, want)
		}
		if after := snapshot(t, dir, "logs"); !maps.Equal(after, before) {
			t.Errorf("the data dir changed: %d files before, %d after", len(before), len(after))
		}
		noPending(t, dir)
		if got := ts.appName(t, token); got != "Changed" {
			t.Errorf("appName = %q after a failed restore, want Changed", got)
		}
	})

	misconfigured := []struct {
		name string
		edit func(map[string]any)
		test string // the exact answer of POST /api/settings/test/s3
	}{
		{name: "wrong secret", edit: func(c map[string]any) { c["secret"] = "wrong-secret-0123456789" },
			test: failedTest + `SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided. Check your key and signing method.","status":400}` + "\n"},
		{name: "missing bucket", edit: func(c map[string]any) { c["bucket"] = "no-such-bucket" },
			test: failedTest + `NoSuchBucket: The specified bucket does not exist.","status":400}` + "\n"},
	}
	for _, tt := range misconfigured {
		t.Run(tt.name, func(t *testing.T) {
			if code, body := do(t, "PATCH", "/api/settings", s3Settings(t, g, proxy.URL, tt.edit)); code != 200 {
				t.Fatalf("PATCH: %d %s", code, body)
			}
			code, body := do(t, "POST", "/api/settings/test/s3", `{"filesystem":"backups"}`)
			if code != 400 || body != tt.test {
				t.Errorf("test S3: %d %s, want 400 %s", code, body, tt.test)
			}
			if strings.Contains(body, "wrong-secret") || strings.Contains(body, g.Secret) {
				t.Errorf("the answer shows a secret: %s", body)
			}
			want := `{"data":{},"message":"Failed to load backups filesystem.","status":400}` + "\n"
			if code, body := do(t, "GET", "/api/backups", ""); code != 400 || body != want {
				t.Errorf("list: %d %s, want 400 %s", code, body, want)
			}
			if code, body := do(t, "POST", "/api/backups", `{"name":"x.zip"}`); code != 400 || body != failedCreate {
				t.Errorf("create: %d %s", code, body)
			}
			if got := g.Files(t); !slices.Equal(got, []string{"keep.zip"}) {
				t.Errorf("the bucket's folder holds %q, want keep.zip only", got)
			}
		})
	}
}

// The answers of a failed create and, less its end, of a failed test of
// the bucket.
const (
	failedCreate = `{"data":{},"message":"Failed to create backup.","status":400}` + "\n"
	failedTest   = `{"data":{},"message":"Failed to test the S3 filesystem. Raw error: \nfailed to list the bucket: `
)

// download returns the archive key through GET /api/backups/{key} with a
// file token.
func download(t *testing.T, ts *testServer, token, key string) []byte {
	t.Helper()
	code, body, err := ts.do(t, "POST", "/api/files/token", token, "")
	var v struct{ Token string }
	if err != nil || code != 200 || json.Unmarshal(body, &v) != nil {
		t.Fatalf("file token: %d %s %v", code, body, err)
	}
	res, err := ts.client.Get(ts.base + "/api/backups/" + key + "?token=" + v.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("download: %d %v", res.StatusCode, err)
	}
	return b
}
