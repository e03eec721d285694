package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"strongbox/backup"
	"strongbox/backup/backuptest"
	"strongbox/httpapi/settings"
)

const enableS3 = `{"backups":{"s3":{"enabled":true,"bucket":"b","region":"us-east-1","endpoint":"http://127.0.0.1:9000","accessKey":"k","secret":"s3cret"}}}`

// bucketOf is an Options.ObjectStore that answers bucket whatever the
// settings, and records the last settings it was given.
func bucketOf(bucket *backuptest.Bucket, last *settings.S3) func(settings.S3) (backup.ObjectStore, error) {
	return func(c settings.S3) (backup.ObjectStore, error) {
		*last = c
		return bucket, nil
	}
}

// TestServerFollowsBackupsS3: enabling backups.s3 switches the archives
// to the bucket at once (a create lands there, the list is the bucket's),
// disabling it switches back to the folder; no archive moves either way.
func TestServerFollowsBackupsS3(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bucket := &backuptest.Bucket{}
	var last settings.S3
	ts := startServer(t, dir, func(c *Config) { c.ObjectStore = bucketOf(bucket, &last) }, nil)
	token := ts.login(t)
	do := func(method, path, body string) (int, string) {
		t.Helper()
		code, b, err := ts.do(t, method, path, token, body)
		if err != nil {
			t.Fatal(err)
		}
		return code, strings.TrimSpace(string(b))
	}
	list := func() []string {
		t.Helper()
		code, body := do("GET", "/api/backups", "")
		var l []struct{ Key string }
		if code != 200 || json.Unmarshal([]byte(body), &l) != nil {
			t.Fatalf("list: %d %s", code, body)
		}
		var out []string
		for _, e := range l {
			out = append(out, e.Key)
		}
		return out
	}
	if code, body := do("POST", "/api/backups", `{"name":"local.zip"}`); code != 204 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := do("PATCH", "/api/settings", enableS3); code != 200 || strings.Contains(body, "s3cret") {
		t.Fatalf("enable S3: %d %s", code, body)
	}
	if last.Bucket != "b" || last.Secret != "s3cret" {
		t.Errorf("the client was made with %+v", last)
	}
	if got := list(); len(got) != 0 {
		t.Errorf("list on the empty bucket = %q (archives are not moved)", got)
	}
	if code, body := do("POST", "/api/backups", `{"name":"remote.zip"}`); code != 204 {
		t.Fatalf("create on S3: %d %s", code, body)
	}
	data, ok := bucket.Data("remote.zip")
	if !ok {
		t.Fatal("the archive is not in the bucket")
	}
	if _, err := backup.Verify(bytes.NewReader(data), int64(len(data)), backup.Limits{}); err != nil {
		t.Errorf("the archive in the bucket: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "backups", "remote.zip")); err == nil {
		t.Error("the archive was written to the folder too")
	}
	if got := list(); !slices.Equal(got, []string{"remote.zip"}) {
		t.Errorf("list on S3 = %q", got)
	}
	if code, body := do("POST", "/api/settings/test/s3", `{"filesystem":"backups"}`); code != 204 {
		t.Errorf("test S3: %d %s", code, body)
	}
	if code, body := do("PATCH", "/api/settings", `{"backups":{"s3":{"enabled":false}}}`); code != 200 {
		t.Fatalf("disable S3: %d %s", code, body)
	}
	if got := list(); !slices.Equal(got, []string{"local.zip"}) {
		t.Errorf("list after switching back = %q", got)
	}
}

// TestServerS3Unreachable: backups.s3 enabled with the real client and a
// bucket nothing answers for (a closed port on 127.0.0.1) fails the backup
// routes with the folder's "cannot load" answer, never falling back to the
// folder unseen, and the settings test says why without the secret.
func TestServerS3Unreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	ts := startServer(t, t.TempDir(), nil, nil)
	token := ts.login(t)
	unreachable := strings.NewReplacer(`"bucket":"b"`, `"bucket":"archives"`, "127.0.0.1:9000", closed).Replace(enableS3)
	if code, body, _ := ts.do(t, "PATCH", "/api/settings", token, unreachable); code != 200 {
		t.Fatalf("enable S3: %d %s", code, body)
	}
	code, body, _ := ts.do(t, "GET", "/api/backups", token, "")
	if code != 400 || !strings.Contains(string(body), "Failed to load backups filesystem.") {
		t.Errorf("list: %d %s", code, body)
	}
	code, body, _ = ts.do(t, "POST", "/api/settings/test/s3", token, `{"filesystem":"backups"}`)
	if code != 400 || !strings.Contains(string(body), "connection refused") || strings.Contains(string(body), "s3cret") {
		t.Errorf("test S3: %d %s", code, body)
	}
}

// TestAutoBackupsOnS3: the schedule creates in the bucket and prunes only
// the automatic backups there beyond cronMaxKeep.
func TestAutoBackupsOnS3(t *testing.T) {
	t.Parallel()
	d := openBackupDir(t, t.TempDir())
	clock := captureTime.Add(-time.Hour)
	bucket := &backuptest.Bucket{Now: func() time.Time { return clock }}
	for i, key := range []string{"@auto_sb_backup_20261123150000.zip", "manual.zip", "@auto_sb_backup_20261123151000.zip", "@auto_sb_backup_20261123152000.zip"} {
		clock = captureTime.Add(time.Duration(i-10) * time.Minute)
		bucket.Set(key, []byte("x"))
	}
	clock = captureTime
	st := backup.NewS3Storage(bucket, d)
	var lock backup.Lock
	fc := &fakeCreate{d: d, st: st}
	a := newSchedule(slog.New(slog.DiscardHandler), fixedNow, func() backup.Storage { return st }, &lock, fc.create)
	a.reload(settings.Settings{Backups: settings.Backups{Cron: "* * * * *", CronMaxKeep: 2}})
	a.run(captureTime)
	want := []string{"@auto_sb_backup_20261123152000.zip", "@auto_sb_backup_20261123160000.zip", "manual.zip"}
	if got := bucket.Keys(); !slices.Equal(got, want) {
		t.Errorf("bucket after the run: %q, want %q", got, want)
	}
	if got := keys(t, d); len(got) != 0 {
		t.Errorf("the folder holds %q", got)
	}
}

// TestBackupCLIOnS3: strongbox backup list|create|restore read the stored
// settings and work on the bucket.
func TestBackupCLIOnS3(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bucket := &backuptest.Bucket{}
	var last settings.S3
	opts := Options{Dir: dir, BcryptCost: 4, ObjectStore: bucketOf(bucket, &last)}
	st, err := Open(opts, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Settings.Update(func(v *settings.Settings) error { return json.Unmarshal([]byte(enableS3), v) })
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := CreateBackup(ctx, opts, "c.zip", "test"); err != nil {
		t.Fatal(err)
	}
	list, err := ListBackups(ctx, opts)
	if err != nil || len(list) != 1 || list[0].Key != "c.zip" {
		t.Errorf("ListBackups = %+v, %v", list, err)
	}
	if !slices.Equal(bucket.Keys(), []string{"c.zip"}) {
		t.Errorf("bucket holds %q", bucket.Keys())
	}
	// An archive of other data, put in the bucket, restores.
	makeArchive(t, dir, "good.zip", "Restored", nil)
	local := filepath.Join(dir, "backups", "good.zip")
	data, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	bucket.Set("good.zip", data)
	if err := os.Remove(local); err != nil {
		t.Fatal(err)
	}
	if err := RestoreOffline(opts, "missing.zip"); err == nil {
		t.Error("RestoreOffline of a key the bucket lacks succeeded")
	}
	if err := RestoreOffline(opts, "good.zip"); err != nil {
		t.Fatalf("RestoreOffline from S3: %v", err)
	}
	st, err = Open(opts, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Settings.Get().Meta.AppName; got != "Restored" {
		t.Errorf("appName = %q after the restore, want Restored", got)
	}
	st.Close()
	if got := keys(t, openBackupDir(t, dir)); len(got) != 0 {
		t.Errorf("the backups folder holds %q", got)
	}
	noPending(t, dir)
}

// TestRestoreFromS3: POST /api/backups/{key}/restore of an archive in the
// bucket downloads it into the backups folder, verifies it, swaps it in
// and restarts on it; a restore whose download fails answers 400 and
// changes nothing.
func TestRestoreFromS3(t *testing.T) {
	// Not parallel: its exec leaves an inheritable descriptor that the
	// descriptor checks of other restores would count as leaked.
	dir := t.TempDir()
	bucket := &backuptest.Bucket{}
	var last settings.S3
	calls := make(chan execCall, 1)
	var ts *testServer
	ts = startServer(t, dir, func(c *Config) {
		c.ObjectStore = bucketOf(bucket, &last)
		c.Exec = fakeExec(t, dir, func() string { return strings.TrimPrefix(ts.base, "http://") }, calls, nil)
	}, nil)
	token := ts.login(t)
	if code, body, _ := ts.do(t, "PATCH", "/api/settings", token, enableS3); code != 200 {
		t.Fatalf("enable S3: %d %s", code, body)
	}
	makeArchive(t, dir, "r.zip", "Restored", nil)
	local := filepath.Join(dir, "backups", "r.zip")
	data, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	bucket.Set("r.zip", data)
	if err := os.Remove(local); err != nil {
		t.Fatal(err)
	}

	bucket.Fail = func(op, key string) error {
		if op == "get" {
			return errors.New("connection reset by peer")
		}
		return nil
	}
	code, body, _ := ts.do(t, "POST", "/api/backups/r.zip/restore", token, "")
	if code != 400 || !strings.Contains(string(body), "The backup file could not be read.") {
		t.Errorf("restore with a failing download: %d %s", code, body)
	}
	if _, err := os.Stat(filepath.Join(dir, backup.WorkDir)); err == nil {
		t.Error("a restore whose download failed started a swap")
	}
	if got := ts.appName(t, token); got != "Acme" {
		t.Errorf("appName = %q after a failed restore", got)
	}

	bucket.Fail = nil
	if code, body, _ := ts.do(t, "POST", "/api/backups/r.zip/restore", token, ""); code != 204 {
		t.Fatalf("restore: %d %s", code, body)
	}
	select {
	case <-calls:
	case <-time.After(30 * time.Second):
		t.Fatal("the restore never re-executed the process")
	}
	if err := ts.stop(); err != nil {
		t.Fatalf("Run after the exec: %v", err)
	}
	ts2 := startServer(t, dir, nil, nil)
	if got := ts2.appName(t, ts2.login(t)); got != "Restored" {
		t.Errorf("appName = %q after the restore, want Restored", got)
	}
	// The downloaded copy is gone (removed after the restore, or by the
	// start's clean-up of temporary files).
	ents, err := os.ReadDir(filepath.Join(dir, "backups"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("the backups folder holds %s", e.Name())
	}
}
