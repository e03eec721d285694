package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"strongbox/backup"
	"strongbox/backup/backuptest"
)

// s3Backups is a fakeBackups whose archives are in an in-memory bucket
// (backup.NewS3Storage over backuptest.Bucket), the backups folder being
// its staging folder only.
type s3Backups struct {
	*fakeBackups
	bucket   *backuptest.Bucket
	restored chan []string // the files of each archive Restore was given
	probeErr error         // TestS3's answer when set
}

func newS3Backups(t *testing.T) *s3Backups {
	t.Helper()
	clock := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	return &s3Backups{
		fakeBackups: newFakeBackups(t),
		bucket:      &backuptest.Bucket{Now: func() time.Time { return clock }},
		restored:    make(chan []string, 1),
	}
}

func (f *s3Backups) Storage() backup.Storage { return backup.NewS3Storage(f.bucket, f.dir) }

func (f *s3Backups) Create(ctx context.Context, key string) (backup.Info, error) {
	return f.Storage().Create(ctx, key, memSource("data.txt", []byte("hello")), backup.Meta{Version: "test"})
}

func (f *s3Backups) Restore(ctx context.Context, a *backup.Archive) error {
	defer a.Close()
	m, err := a.Verify(backup.Limits{})
	if err != nil {
		return err
	}
	var names []string
	for _, file := range m.Files {
		names = append(names, file.Name)
	}
	f.restored <- append(names, a.Key())
	return errors.New("fake: restored nothing")
}

func (f *s3Backups) TestS3(ctx context.Context) error {
	if f.probeErr != nil {
		return f.probeErr
	}
	return backup.ProbeBucket(ctx, f.bucket)
}

// staged is what the staging folder holds (nothing between requests).
func (f *s3Backups) staged(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(f.path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func newS3Env(t *testing.T, fb *s3Backups, log *syncLog) *env {
	t.Helper()
	cfg := Config{Backups: fb}
	if log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	return newEnvWith(t, cfg, HTTPConfig{})
}

// TestBackupRoutesOnS3: every backup route on a bucket, with the shapes
// and messages of the folder.
func TestBackupRoutesOnS3(t *testing.T) {
	t.Parallel()
	fb := newS3Backups(t)
	e := newS3Env(t, fb, nil)

	if res := e.do("POST", "/api/backups", e.su, map[string]any{"name": "one.zip"}); res.Status != 204 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	archive, ok := fb.bucket.Data("one.zip")
	if !ok {
		t.Fatal("the created archive is not in the bucket")
	}
	res := e.do("POST", "/api/backups", e.su, map[string]any{"name": "one.zip"})
	if res.Status != 400 || !strings.Contains(string(res.Body), "validation_backup_name_exists") {
		t.Errorf("create of a taken name: %d %s", res.Status, res.Body)
	}
	fb.bucket.Set("not-an-archive/x.zip", []byte("x"))

	res = e.do("GET", "/api/backups", e.su, nil)
	want := fmt.Sprintf(`[{"modified":"2026-11-27 10:00:00.000Z","key":"one.zip","size":%d}]`, len(archive))
	if res.Status != 200 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("list: %d %s, want %s", res.Status, res.Body, want)
	}

	ft := e.fileToken(e.su)
	for _, tt := range []struct {
		name, method, rng string
		status            int
		body              []byte
		length            string
	}{
		{"whole", "GET", "", 200, archive, fmt.Sprint(len(archive))},
		{"range", "GET", "bytes=4-9", 206, archive[4:10], "6"},
		{"suffix", "GET", "bytes=-5", 206, archive[len(archive)-5:], "5"},
		{"head", "HEAD", "", 200, nil, fmt.Sprint(len(archive))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, e.srv.URL+"/api/backups/one.zip?token="+ft, nil)
			if tt.rng != "" {
				req.Header.Set("Range", tt.rng)
			}
			r, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != tt.status || !bytes.Equal(body, tt.body) {
				t.Errorf("got %d with %d bytes, want %d with %d", r.StatusCode, len(body), tt.status, len(tt.body))
			}
			for k, v := range map[string]string{
				"Content-Type":        "application/zip",
				"Content-Disposition": "attachment; filename=one.zip",
				"Content-Length":      tt.length,
				"Cache-Control":       "no-store",
				"Last-Modified":       "Fri, 27 Nov 2026 10:00:00 GMT",
			} {
				if got := r.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
	wantError(t, e.do("GET", "/api/backups/missing.zip?token="+ft, "", nil), 404, msgNotFound)

	// Restore: downloaded, verified, handed over; the copy removed after.
	if res := e.do("POST", "/api/backups/one.zip/restore", e.su, nil); res.Status != 204 {
		t.Fatalf("restore: %d %s", res.Status, res.Body)
	}
	select {
	case got := <-fb.restored:
		if strings.Join(got, " ") != "data.txt one.zip" {
			t.Errorf("restored %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Restore was not called")
	}
	waitFor(t, "the lock released after the restore", func() bool { _, _, held := fb.lock.Held(); return !held })
	wantError(t, e.do("POST", "/api/backups/missing.zip/restore", e.su, nil), 400, msgRestoreMissing)

	if res := e.do("DELETE", "/api/backups/one.zip", e.su, nil); res.Status != 204 {
		t.Errorf("delete: %d %s", res.Status, res.Body)
	}
	wantError(t, e.do("DELETE", "/api/backups/one.zip", e.su, nil), 400, msgBackupDeleteMissing)
	wantError(t, e.do("DELETE", "/api/backups/..%2Fnot-an-archive%2Fx.zip", e.su, nil), 400, msgBackupDeleteMissing)
	if keys := fb.bucket.Keys(); strings.Join(keys, " ") != "not-an-archive/x.zip" {
		t.Errorf("bucket holds %q", keys)
	}
	if got := fb.staged(t); len(got) != 0 {
		t.Errorf("staging folder holds %q", got)
	}
}

// TestBackupUploadOnS3: an upload reaches the bucket only once verified;
// a refused one leaves nothing there.
func TestBackupUploadOnS3(t *testing.T) {
	t.Parallel()
	fb := newS3Backups(t)
	e := newS3Env(t, fb, nil)
	good := archiveBytes(t, []byte("hello"))
	for _, tt := range []struct {
		name, file string
		content    []byte
		status     int
		code       string
	}{
		{"not an archive", "bad.zip", []byte("PK\x03\x04garbage"), 400, "validation_invalid_backup"},
		{"good", "good.zip", good, 204, ""},
		{"taken", "good.zip", good, 400, "validation_backup_name_exists"},
	} {
		res := e.upload(tt.file, tt.content)
		if res.Status != tt.status || !strings.Contains(string(res.Body), tt.code) {
			t.Errorf("%s: %d %s", tt.name, res.Status, res.Body)
		}
	}
	if keys := fb.bucket.Keys(); strings.Join(keys, " ") != "good.zip" {
		t.Errorf("bucket holds %q, want the good upload only", keys)
	}
	if got, _ := fb.bucket.Data("good.zip"); !bytes.Equal(got, good) {
		t.Error("the stored upload differs from the one sent")
	}
	if got := fb.staged(t); len(got) != 0 {
		t.Errorf("staging folder holds %q", got)
	}
}

// TestBackupRestoreOnS3DownloadFails: a restore whose download fails is
// refused before its answer, and nothing is restored nor left behind.
func TestBackupRestoreOnS3DownloadFails(t *testing.T) {
	t.Parallel()
	fb := newS3Backups(t)
	e := newS3Env(t, fb, nil)
	fb.bucket.Set("r.zip", archiveBytes(t, []byte("x")))
	fb.bucket.Fail = func(op, key string) error {
		if op == "get" {
			return errors.New("connection reset by peer")
		}
		return nil
	}
	wantError(t, e.do("POST", "/api/backups/r.zip/restore", e.su, nil), 400, msgRestoreUnread)
	select {
	case got := <-fb.restored:
		t.Errorf("Restore was called with %q", got)
	default:
	}
	if _, _, held := fb.lock.Held(); held {
		t.Error("the lock is still held")
	}
	if got := fb.staged(t); len(got) != 0 {
		t.Errorf("staging folder holds %q", got)
	}
}

// s3Err is the S3 client's typed error as the test route reads it.
type s3Err struct{ code, msg string }

func (e *s3Err) Error() string                  { return "s3: " + e.code + ": " + e.msg + " (request id 42)" }
func (e *s3Err) S3Code() (code, message string) { return e.code, e.msg }

// TestSettingsTestS3: POST /api/settings/test/s3, PocketBase's shapes: the
// body's validation, "not enabled", the file storage strongbox does not
// have, a probe that succeeds, and one that fails with the S3 error code
// and message or the connection error, never the secret.
func TestSettingsTestS3(t *testing.T) {
	t.Parallel()
	fb := newS3Backups(t)
	var log syncLog
	e := newS3Env(t, fb, &log)
	const secret = "very-secret-key-123"
	raw := msgTestS3Raw
	for _, tt := range []struct {
		name, body, enable string
		probe              error
		status             int
		want               string // the whole answer
	}{
		{name: "no filesystem", body: `{}`, status: 400, want: `{"data":{"filesystem":{"code":"validation_required","message":"Cannot be blank."}},"message":"Failed to test the S3 filesystem.","status":400}`},
		{name: "bad filesystem", body: `{"filesystem":"x"}`, status: 400, want: `{"data":{"filesystem":{"code":"validation_in_invalid","message":"Must be a valid value."}},"message":"Failed to test the S3 filesystem.","status":400}`},
		{name: "storage", body: `{"filesystem":"storage"}`, status: 400, want: errJSON(400, raw+msgS3StorageNoFS)},
		{name: "not enabled", body: `{"filesystem":"backups"}`, status: 400, want: errJSON(400, raw+msgS3NotEnabled)},
		{name: "ok", body: `{"filesystem":"backups"}`, enable: "true", status: 204},
		{name: "access denied", body: `{"filesystem":"backups"}`, probe: &backup.ProbeError{Step: "failed to upload a test file", Err: &s3Err{"AccessDenied", "Access Denied"}}, status: 400,
			want: errJSON(400, raw+"failed to upload a test file: AccessDenied: Access Denied")},
		{name: "no such bucket", body: `{"filesystem":"backups"}`, probe: &backup.ProbeError{Step: "failed to list the bucket", Err: fmt.Errorf("list: %w", &s3Err{"NoSuchBucket", "The specified bucket does not exist"})}, status: 400,
			want: errJSON(400, raw+"failed to list the bucket: NoSuchBucket: The specified bucket does not exist")},
		{name: "bad signature", body: `{"filesystem":"backups"}`, probe: &backup.ProbeError{Step: "failed to list the bucket", Err: &s3Err{"SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided."}}, status: 400,
			want: errJSON(400, raw+"failed to list the bucket: SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided.")},
		{name: "connection error", body: `{"filesystem":"backups"}`, probe: &backup.ProbeError{Step: "failed to list the bucket", Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused (key " + secret + ")")}, status: 400,
			want: errJSON(400, raw+"failed to list the bucket: dial tcp 127.0.0.1:1: connect: connection refused (key ***)")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.enable != "" || tt.probe != nil {
				patch := `{"backups":{"s3":{"enabled":true,"bucket":"b","region":"us-east-1","endpoint":"http://127.0.0.1:9000","accessKey":"k","secret":"` + secret + `"}}}`
				if res := e.doRaw("PATCH", "/api/settings", e.su, "application/json", strings.NewReader(patch)); res.Status != 200 {
					t.Fatalf("enable: %d %s", res.Status, res.Body)
				}
			}
			fb.probeErr = tt.probe
			res := e.doRaw("POST", "/api/settings/test/s3", e.su, "application/json", strings.NewReader(tt.body))
			if res.Status != tt.status || strings.TrimSpace(string(res.Body)) != tt.want {
				t.Errorf("got %d %s\nwant %d %s", res.Status, res.Body, tt.status, tt.want)
			}
		})
	}
	if keys := fb.bucket.Keys(); len(keys) != 0 {
		t.Errorf("the probe left %q in the bucket", keys)
	}
	if strings.Contains(log.String(), secret) {
		t.Error("the secret reached the log")
	}
	user := e.userToken()
	wantError(t, e.do("POST", "/api/settings/test/s3", user, map[string]any{"filesystem": "backups"}), 403, msgNotAllowed)
	wantError(t, e.do("POST", "/api/settings/test/s3", "", map[string]any{"filesystem": "backups"}), 401, msgAuthRequired)
}

// errJSON is the body of an error answer without field errors.
func errJSON(status int, msg string) string {
	b, _ := json.Marshal(envelope{Data: map[string]any{}, Message: msg, Status: status})
	return string(b)
}

// TestS3ErrorTextMask: the test connection's error masks a secret of a
// real length wherever it occurs, and a short one only where it stands
// alone, never inside the words of the message.
func TestS3ErrorTextMask(t *testing.T) {
	t.Parallel()
	const long = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	access := &backup.ProbeError{Step: "failed to upload a test file", Err: &s3Err{"AccessDenied", "Access Denied"}}
	tests := []struct {
		name, secret string
		err          error
		want         string
	}{
		{"no secret", "", access, "failed to upload a test file: AccessDenied: Access Denied"},
		{"one letter, inside words", "e", access, "failed to upload a test file: AccessDenied: Access Denied"},
		{"one letter, alone", "e", errors.New("signing with e failed (key=e)"), "signing with *** failed (key=***)"},
		{"short, at the ends", "ab1", errors.New("ab1 is ab1"), "*** is ***"},
		{"short, glued to a word", "ab1", errors.New("xab1 ab1_ ab12"), "xab1 ab1_ ab12"},
		{"real length, alone", long, errors.New("dial tcp 127.0.0.1:1: connection refused (key " + long + ")"), "dial tcp 127.0.0.1:1: connection refused (key ***)"},
		{"real length, inside a word", long, errors.New("sig=x" + long + "y"), "sig=x***y"},
		{"real length, S3 message", long, &backup.ProbeError{Step: "failed to list the bucket", Err: &s3Err{"InvalidSecret", "bad secret " + long}}, "failed to list the bucket: InvalidSecret: bad secret ***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s3ErrorText(tt.err, tt.secret); got != tt.want {
				t.Errorf("s3ErrorText(%q, %q) = %q, want %q", tt.err, tt.secret, got, tt.want)
			}
		})
	}
}

// stallBucket is a bucket that never answers a listing or a HEAD: it
// waits for the caller's context to end (or 10 s, a safety net).
type stallBucket struct{ *backuptest.Bucket }

func stall(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Second):
		return errors.New("stallBucket: the caller's context never ended")
	}
}

func (stallBucket) List(ctx context.Context, _ string) ([]backup.Object, error) {
	return nil, stall(ctx)
}

func (stallBucket) Head(ctx context.Context, _ string) (backup.Object, error) {
	return backup.Object{}, stall(ctx)
}

// stalledBackups keeps its archives in a stallBucket.
type stalledBackups struct{ *fakeBackups }

func (f stalledBackups) Storage() backup.Storage {
	return backup.NewS3Storage(stallBucket{&backuptest.Bucket{}}, f.dir)
}

// TestBackupRoutesEndInTime: a storage that never answers gets each
// route's error (§7's message for the list) before the route's write
// deadline, here 1 s, whatever its client allows: the handler's work has
// that deadline, not only the client's leaving.
func TestBackupRoutesEndInTime(t *testing.T) {
	e := newEnvWith(t, Config{Backups: stalledBackups{newFakeBackups(t)}, WriteTimeout: time.Second}, HTTPConfig{})
	e.srv.Client().Timeout = 5 * time.Second
	tests := []struct {
		method, path string
		body         string
	}{
		{"GET", "/api/backups", `{"data":{},"message":"Failed to load backups filesystem.","status":400}`},
		{"DELETE", "/api/backups/x.zip", `{"data":{},"message":"Failed to delete backup.","status":400}`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			req, err := http.NewRequest(tt.method, e.srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", e.su)
			res, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v after %v", tt.method, tt.path, err, time.Since(start))
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if took := time.Since(start); res.StatusCode != 400 || strings.TrimSpace(string(b)) != tt.body || err != nil || took > time.Second {
				t.Errorf("%s %s: %d %s %v after %v, want 400 %s within 1 s", tt.method, tt.path, res.StatusCode, b, err, took, tt.body)
			}
		})
	}
}
