package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestDashboardBackupsBrowser walks through the dashboard's Backups screen
// in headless Chromium (testdata/dashboard/backups.mjs): the superuser
// creates a backup with a name, downloads it (the bytes must equal the
// archive the API serves), uploads an archive with the progress bar,
// saves the auto-backup settings (and sees a field error and the S3
// test's error), sees the create button disabled while a backup runs,
// deletes a backup with confirmation, and restores one, which restarts
// the server: a child process, since a restore re-executes it. The data is
// then as at the backup (meta.appName, changed after it, is back). It
// runs and skips as TestDashboardBrowser does.
func TestDashboardBackupsBrowser(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a restore re-executes the server, which Windows cannot (no exec)")
	}
	chromium, pptr, node := browserTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	child, _, _ := startChildServer(t, ctx,
		"STRONGBOX_SUPERUSER_EMAIL="+dashEmail, "STRONGBOX_SUPERUSER_PASSWORD="+dashPassword)
	d := &dashAPI{t: t, base: child.Base}
	if code, _ := d.call("GET", "/_/", "", ""); code == http.StatusNotFound {
		t.Skip("the dashboard is not served here: GET /_/ answered 404")
	}
	d.su = d.login("_superusers", dashEmail, dashPassword)
	const before, after = "before-backup", "after-backup"
	d.mustCall("PATCH", "/api/settings", d.su, fmt.Sprintf(`{"meta":{"appName":%q}}`, before), 200)

	// The archive to upload: one the server made, under another name.
	dir := t.TempDir()
	d.mustCall("POST", "/api/backups", d.su, `{"name":"seed.zip"}`, 204)
	upload := filepath.Join(dir, "uploaded_copy.zip")
	if err := os.WriteFile(upload, d.backupBytes("seed.zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	// And one the server refuses: not a zip archive at all.
	badUpload := filepath.Join(dir, "not_an_archive.zip")
	if err := os.WriteFile(badUpload, []byte("this is not a zip archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.mustCall("DELETE", "/api/backups/seed.zip", d.su, "", 204)
	downloads := filepath.Join(dir, "downloads")
	if err := os.Mkdir(downloads, 0o755); err != nil {
		t.Fatal(err)
	}

	journey := map[string]string{
		"base": child.Base, "chromium": chromium, "shots": dashArtifacts(t),
		"email": dashEmail, "password": dashPassword, "created": "dash_one.zip",
		"downloads": downloads, "uploadFile": upload, "badUploadFile": badUpload, "appNameBefore": before, "appNameAfter": after,
	}
	out := runDashScript(t, ctx, node, pptr, "backups.mjs", journey, 13)

	// A refused name said which names are allowed; the refused upload the
	// server's data.file message.
	if !strings.Contains(out, `name-error "Must be in a valid format. Use lowercase letters, digits, _ and - only, ending in .zip`) {
		t.Error("a refused backup name did not say which names are allowed")
	}
	if !strings.Contains(out, `upload-error "\"not_an_archive.zip\" mime type must be one of: application/zip."`) {
		t.Error("a refused upload did not show the server's data.file message")
	}
	// The browser downloaded the archive the API serves.
	m := regexp.MustCompile(`(?m)^download (.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("the journey reported no download")
	}
	got, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	// After the restore the superuser signs in again (the token of before
	// may be gone with the data).
	d.su = d.login("_superusers", dashEmail, dashPassword)
	if want := d.backupBytes(journey["created"]); !bytes.Equal(got, want) {
		t.Errorf("the browser downloaded %d bytes, want the %d of GET /api/backups/%s", len(got), len(want), journey["created"])
	}
	var s struct{ Meta struct{ AppName string } }
	if b := d.mustCall("GET", "/api/settings", d.su, "", 200); json.Unmarshal(b, &s) != nil || s.Meta.AppName != before {
		t.Errorf("after the restore meta.appName is %q, want %q as at the backup", s.Meta.AppName, before)
	}
	var list []struct{ Key string }
	json.Unmarshal(d.mustCall("GET", "/api/backups", d.su, "", 200), &list)
	for _, it := range list {
		if it.Key == filepath.Base(upload) {
			t.Errorf("%s is still listed after its delete: %v", it.Key, list)
		}
	}
}

// backupBytes downloads the archive key with a file token.
func (d *dashAPI) backupBytes(key string) []byte {
	d.t.Helper()
	var tok struct{ Token string }
	if json.Unmarshal(d.mustCall("POST", "/api/files/token", d.su, "", 200), &tok) != nil || tok.Token == "" {
		d.t.Fatal("no file token")
	}
	return d.mustCall("GET", "/api/backups/"+key+"?token="+tok.Token, "", "", 200)
}
