package app

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"strongbox/backup"
	"strongbox/logstore/journal"
)

// dataDirFiles returns the files of a data dir made by the server's
// stores: a server that started (creating its first superuser), changed
// a setting, logged requests and stopped.
func dataDirFiles(t *testing.T) map[string][]byte {
	t.Helper()
	src := t.TempDir()
	ts := startServer(t, src, nil, nil)
	token := ts.login(t)
	if code, body, err := ts.do(t, "PATCH", "/api/settings", token, `{"meta":{"appName":"Crafted"}}`); err != nil || code != 200 {
		t.Fatalf("PATCH /api/settings: %d %s %v", code, body, err)
	}
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && backup.Excluded(rel) {
			return filepath.SkipDir
		}
		if d.IsDir() || backup.Excluded(rel) {
			return nil
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// craftZip returns an archive of files whose manifest lists each with its
// true size and SHA-256, so that only the stores can tell it is damaged.
func craftZip(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	m := backup.Manifest{Format: backup.Format, Strongbox: "test", Created: time.Unix(0, 0).UTC(), Files: []backup.ManifestFile{}}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		sum := sha256.Sum256(files[name])
		m.Files = append(m.Files, backup.ManifestFile{Name: name, Size: int64(len(files[name])), SHA256: hex.EncodeToString(sum[:])})
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[name])
	}
	w, err := zw.Create(backup.ManifestName)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewEncoder(w).Encode(m); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// uploadZip posts data as the multipart upload of the archive name.
func uploadZip(t *testing.T, ts *testServer, token, name string, data []byte) (int, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", ts.base+"/api/backups/upload", &body)
	req.Header.Set("Authorization", token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return res.StatusCode, b.Bytes()
}

// segmentName returns the name of the data dir's first log segment.
func segmentName(t *testing.T, files map[string][]byte) string {
	t.Helper()
	for name := range files {
		if strings.HasPrefix(name, "logs/") && strings.HasSuffix(name, ".seg") {
			return name
		}
	}
	t.Fatal("the data dir has no log segment")
	return ""
}

// TestVerifyOpensStores: an archive whose files match its manifest but
// whose stores would not open (a damaged journal, a damaged segment
// header), or which lacks a store a data dir needs (an empty manifest
// among them), is refused by upload and by restore with §7's 400 and the
// reason, and nothing is stored or changed; a good one is accepted by
// both. A restore that then fails (here, its exec) is recorded as an error
// event in the log store.
func TestVerifyOpensStores(t *testing.T) {
	t.Parallel()
	good := dataDirFiles(t)
	seg := segmentName(t, good)
	with := func(edit func(map[string][]byte)) map[string][]byte {
		files := make(map[string][]byte, len(good))
		for k, v := range good {
			files[k] = bytes.Clone(v)
		}
		edit(files)
		return files
	}
	// A damaged byte in the first frame's payload, valid frames after it:
	// the auth store refuses to open it rather than lose them.
	midFrame := journal.HeaderSize + journal.FrameOverhead + 2
	const damaged = `auth.journal does not open as the server would open it: authn: journal: auth.journal: \d+ damaged bytes at offset \d+, followed by valid records; restore the data dir from a backup, or move auth.journal aside to start empty`
	tests := []struct {
		name   string
		files  map[string][]byte
		reason string // a regular expression; "" = accepted
	}{
		{"damaged auth journal", with(func(f map[string][]byte) { f["auth.journal"][midFrame] ^= 0xff }), damaged},
		{"settings journal not a journal", with(func(f map[string][]byte) {
			f["settings.journal"] = []byte("not a journal, though the manifest's hash matches")
		}),
			`settings.journal does not open as the server would open it: settings: journal: not a journal file: settings.journal`},
		{"damaged segment header", with(func(f map[string][]byte) { copy(f[seg], "NOTJRNL!") }),
			regexp.QuoteMeta(seg) + ` does not open as the server would open it: journal: not a journal file: ` + regexp.QuoteMeta(seg)},
		{"empty manifest", map[string][]byte{}, `it has no auth.journal, which a data dir needs`},
		{"no auth journal", with(func(f map[string][]byte) { delete(f, "auth.journal") }), `it has no auth.journal, which a data dir needs`},
		{"no settings journal", with(func(f map[string][]byte) { delete(f, "settings.journal") }), `it has no settings.journal, which a data dir needs`},
		{"good", good, ""},
	}

	dir := t.TempDir()
	es := startEventsServer(t, func(c *Config) {
		c.Options.Dir = dir
		c.Exec = func(string, []string, []string) error { return errors.New("exec format error") }
	})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := craftZip(t, tt.files)
			key := "crafted" + string(rune('a'+i)) + ".zip"
			code, body := uploadZip(t, es.testServer, es.token, key, data)
			var up struct {
				Message string
				Data    struct {
					File struct{ Code, Message string }
				}
			}
			json.Unmarshal(body, &up)
			if tt.reason == "" {
				if code != http.StatusNoContent {
					t.Errorf("upload: %d %s, want 204", code, body)
				}
			} else {
				want := regexp.MustCompile(`^The file is not a valid backup archive: ` + tt.reason + `\.$`)
				if code != 400 || up.Message != "Something went wrong while processing your request." ||
					up.Data.File.Code != "validation_invalid_backup" || !want.MatchString(up.Data.File.Message) {
					t.Errorf("upload: %d %s, want 400 with data.file validation_invalid_backup %q", code, body, want)
				}
				if _, err := os.Stat(filepath.Join(dir, "backups", key)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the refused upload is stored (%v)", err)
				}
				// The archive reaches the backups folder another way
				// (copied there by hand): restore refuses it too.
				if err := os.WriteFile(filepath.Join(dir, "backups", key), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			code, body, _ = es.do(t, "POST", "/api/backups/"+key+"/restore", es.token, "")
			var rs struct{ Message string }
			json.Unmarshal(body, &rs)
			if tt.reason == "" {
				if code != http.StatusNoContent {
					t.Errorf("restore: %d %s, want 204", code, body)
				}
				return
			}
			want := regexp.MustCompile(`^The backup file is not a valid strongbox backup: ` + tt.reason + `\.$`)
			if code != 400 || !want.MatchString(rs.Message) {
				t.Errorf("restore: %d %s, want 400 %q", code, body, want)
			}
			if got := es.appName(t, es.token); got != "Acme" {
				t.Errorf("appName = %q after a refused restore, want Acme", got)
			}
		})
	}
	// The good archive's restore answered 204, then its exec failed: the
	// old data serves again, and the failure is in the log store.
	waitFor(t, "the restore to end", func() bool {
		release, ok := backups{es.Server}.Lock().TryLock(backup.KindRestore, "")
		if ok {
			release()
		}
		return ok
	})
	got := waitEvents(t, es, `level = 8 && message = "Failed to restore backup"`)
	if d, _ := got[0]["data"].(map[string]any); d["key"] == nil || !strings.Contains(d["err"].(string), "exec format error") {
		t.Errorf("the failed restore's event: %v", got[0])
	}
	if !strings.Contains(es.stderr.String(), `level=ERROR msg="Failed to restore backup"`) {
		t.Errorf("stderr lacks the failed restore:\n%s", es.stderr.String())
	}
	// No scratch file of a check is left in the backups folder.
	ents, _ := os.ReadDir(filepath.Join(dir, "backups"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("%s left in the backups folder", e.Name())
		}
	}
}

// BenchmarkVerifyArchive measures what opening the stores adds to Verify
// on the archive STRONGBOX_BENCH_ARCHIVE (skipped when unset), made for
// example by `strongbox logs seed --n 1000000` and `strongbox backup
// create`: "manifest" checks the structure and every file's SHA-256,
// "stores" that and the stores.
func BenchmarkVerifyArchive(b *testing.B) {
	path := os.Getenv("STRONGBOX_BENCH_ARCHIVE")
	if path == "" {
		b.Skip("STRONGBOX_BENCH_ARCHIVE is unset")
	}
	dataDir := b.TempDir()
	d, err := backup.OpenDir(filepath.Join(dataDir, "backups"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if err := os.Link(path, filepath.Join(dataDir, "backups", "bench.zip")); err != nil {
		b.Skipf("link the archive into the backups folder: %v", err)
	}
	var checking time.Duration // the time spent in the stores' check
	stores := withStoresCheck(backup.Limits{}, dataDir)
	check := stores.Check
	stores.Check = func(f backup.Files) error {
		t := time.Now()
		defer func() { checking += time.Since(t) }()
		return check(f)
	}
	for _, bb := range []struct {
		name   string
		limits backup.Limits
	}{
		{"manifest", backup.Limits{}},
		{"stores", stores},
	} {
		b.Run(bb.name, func(b *testing.B) {
			checking = 0
			for b.Loop() {
				if _, err := d.Verify("bench.zip", bb.limits); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(checking.Microseconds())/1000/float64(b.N), "check-ms/op")
		})
	}
}
