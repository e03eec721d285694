package api

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strongbox/backup"
)

// fakeBackups is a Backups over a real backup.Dir in a temporary
// folder. Create writes a small archive of one in-memory file; when block
// is set it first reports the key on entered and waits for block to close.
type fakeBackups struct {
	dir       *backup.Dir
	path      string
	lock      backup.Lock
	maxUpload int64
	entered   chan string
	block     chan struct{}
	fail      error // Create fails with it
}

func newFakeBackups(t *testing.T) *fakeBackups {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backups")
	d, err := backup.OpenDir(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return &fakeBackups{dir: d, path: path, maxUpload: 1 << 30}
}

func (f *fakeBackups) Storage() backup.Storage      { return f.dir.Storage() }
func (f *fakeBackups) TestS3(context.Context) error { return errors.New("fake: no S3") }
func (f *fakeBackups) Lock() *backup.Lock           { return &f.lock }
func (f *fakeBackups) Limits() backup.Limits        { return backup.Limits{} }
func (f *fakeBackups) MaxUpload() int64             { return f.maxUpload }
func (f *fakeBackups) CanRestore() error            { return nil }
func (f *fakeBackups) Restore(context.Context, *backup.Archive) error {
	return errors.New("fake: no restore")
}

func (f *fakeBackups) Create(ctx context.Context, key string) (backup.Info, error) {
	if f.block != nil {
		f.entered <- key
		<-f.block
	}
	if f.fail != nil {
		return backup.Info{}, f.fail
	}
	return f.dir.Create(ctx, key, memSource("data.txt", []byte("hello")), backup.Meta{Version: "test"})
}

// memSource is a Source of one file with the given content.
func memSource(name string, content []byte) backup.Source {
	return backup.Source{{Name: name, Size: int64(len(content)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(content)), nil
	}}}
}

// archiveBytes returns a valid strongbox archive holding content.
func archiveBytes(t *testing.T, content []byte) []byte {
	t.Helper()
	d, err := backup.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Create(t.Context(), "a.zip", memSource("data.bin", content), backup.Meta{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	f, err := d.Open("a.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newBackupEnv is an env serving fb, with its own log in log.
func newBackupEnv(t *testing.T, fb *fakeBackups, log *syncLog) *env {
	t.Helper()
	cfg := Config{Backups: fb}
	if fb == nil {
		cfg.Backups = nil
	}
	if log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	return newEnvWith(t, cfg, HTTPConfig{})
}

// userToken signs up a users record and returns its auth token.
func (e *env) userToken() string {
	e.t.Helper()
	e.signUp("user@example.com", "user-password")
	return e.login("users", "user@example.com", "user-password")
}

// fileToken returns a file token of the caller authenticated by token.
func (e *env) fileToken(token string) string {
	e.t.Helper()
	res := e.do("POST", "/api/files/token", token, nil)
	if res.Status != 200 {
		e.t.Fatalf("file token: %d %s", res.Status, res.Body)
	}
	return res.JSON(e.t)["token"].(string)
}

// multipartBody encodes fields and one file (when fileName is not "") as
// a multipart form.
func multipartBody(t *testing.T, fields map[string]string, field, fileName string, content []byte) (string, *bytes.Buffer) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if fileName != "" {
		fw, err := mw.CreateFormFile(field, fileName)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(content)
	}
	mw.Close()
	return mw.FormDataContentType(), &b
}

func (e *env) upload(fileName string, content []byte) *response {
	e.t.Helper()
	ct, body := multipartBody(e.t, nil, "file", fileName, content)
	return e.doRaw("POST", "/api/backups/upload", e.su, ct, body)
}

func TestBackupGuards(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	user := e.userToken()
	userFile := e.fileToken(user)
	if _, err := fb.Create(t.Context(), "a.zip"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, token string
		status                    int
		msg                       string
	}{
		{"list guest", "GET", "/api/backups", "", 401, msgAuthRequired},
		{"list user", "GET", "/api/backups", user, 403, msgSuperusersOnly},
		{"create guest", "POST", "/api/backups", "", 401, msgAuthRequired},
		{"create user", "POST", "/api/backups", user, 403, msgNotAllowed},
		{"upload guest", "POST", "/api/backups/upload", "", 401, msgAuthRequired},
		{"upload user", "POST", "/api/backups/upload", user, 403, msgNotAllowed},
		{"delete guest", "DELETE", "/api/backups/a.zip", "", 401, msgAuthRequired},
		{"delete user", "DELETE", "/api/backups/a.zip", user, 403, msgNotAllowed},
		{"download no token", "GET", "/api/backups/a.zip", "", 403, msgFileForbidden},
		{"download superuser header only", "GET", "/api/backups/a.zip", e.su, 403, msgFileForbidden},
		{"download auth token in query", "GET", "/api/backups/a.zip?token=" + e.su, "", 403, msgFileForbidden},
		{"download user file token", "GET", "/api/backups/a.zip?token=" + userFile, "", 403, msgFileForbidden},
		{"download tampered token", "GET", "/api/backups/a.zip?token=" + e.fileToken(e.su) + "x", "", 403, msgFileForbidden},
		{"download garbage token", "GET", "/api/backups/a.zip?token=abc", "", 403, msgFileForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do(tt.method, tt.path, tt.token, nil), tt.status, tt.msg)
		})
	}
	if !fb.dir.Exists("a.zip") {
		t.Error("a refused delete deleted the archive")
	}
}

func TestBackupsWithoutFolder(t *testing.T) {
	t.Parallel()
	e := newBackupEnv(t, nil, nil)
	ft := e.fileToken(e.su)
	ct, body := multipartBody(t, nil, "file", "a.zip", []byte("PK\x05\x06"))
	tests := []struct {
		name string
		res  *response
		msg  string
	}{
		{"list", e.do("GET", "/api/backups", e.su, nil), msgBackupsLoad},
		{"create", e.do("POST", "/api/backups", e.su, nil), msgBackupCreateFailed},
		{"upload", e.doRaw("POST", "/api/backups/upload", e.su, ct, body), msgBadRequest},
		{"delete", e.do("DELETE", "/api/backups/a.zip", e.su, nil), msgBackupsLoad},
		{"download", e.do("GET", "/api/backups/a.zip?token="+ft, "", nil), msgFilesystemInit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantError(t, tt.res, 400, tt.msg) })
	}
}

func TestBackupsList(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	wantBody(t, e.do("GET", "/api/backups", e.su, nil), 200, `[]`)
	mtime := time.Date(2026, 11, 22, 9, 40, 39, 508_000_000, time.UTC)
	var sizes []int64
	for _, k := range []string{"b.zip", "a.zip"} {
		info, err := fb.Create(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(fb.path, k), mtime, mtime); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, info.Size)
	}
	tests := []struct{ query, want string }{
		{"", fmt.Sprintf(`[{"modified":"2026-11-22 09:40:39.508Z","key":"a.zip","size":%d},{"modified":"2026-11-22 09:40:39.508Z","key":"b.zip","size":%d}]`, sizes[1], sizes[0])},
		{"?fields=key", `[{"key":"a.zip"},{"key":"b.zip"}]`},
		{"?fields=key,size", fmt.Sprintf(`[{"key":"a.zip","size":%d},{"key":"b.zip","size":%d}]`, sizes[1], sizes[0])},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			wantBody(t, e.do("GET", "/api/backups"+tt.query, e.su, nil), 200, tt.want)
		})
	}
}

func TestBackupCreate(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	if _, err := fb.Create(t.Context(), "taken.zip"); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 147) + ".zip"
	form := url.Values{"name": {"form.zip"}}.Encode()
	mct, mbody := multipartBody(t, map[string]string{"name": "multi.zip"}, "", "", nil)
	const invalid = `{"data":{"name":{"code":"%s","message":"%s"}},"message":"An error occurred while validating the submitted data.","status":400}`
	tests := []struct {
		name     string
		ct       string
		body     io.Reader
		status   int
		wantBody string
		key      string // archive that must exist after
	}{
		{"no body generates a name", "", nil, 204, "", "sb_backup_20261122100000.zip"},
		{"empty JSON generates another", "application/json", strings.NewReader(`{}`), 204, "", "sb_backup_20261122100000_2.zip"},
		{"JSON name", "application/json", strings.NewReader(`{"name":"json.zip"}`), 204, "", "json.zip"},
		{"urlencoded name", "application/x-www-form-urlencoded", strings.NewReader(form), 204, "", "form.zip"},
		{"multipart name", mct, mbody, 204, "", "multi.zip"},
		{"malformed JSON", "application/json", strings.NewReader(`{"name":`), 400,
			`{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`, ""},
		{"name not a string", "application/json", strings.NewReader(`{"name":1}`), 400,
			`{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`, ""},
		{"name too long", "application/json", strings.NewReader(`{"name":"` + long + `"}`), 400,
			`{"data":{"name":{"code":"validation_length_out_of_range","message":"The length must be between 1 and 150.","params":{"max":150,"min":1}}},"message":"An error occurred while validating the submitted data.","status":400}`, ""},
		{"name upper case", "application/json", strings.NewReader(`{"name":"Bad.zip"}`), 400,
			fmt.Sprintf(invalid, "validation_match_invalid", "Must be in a valid format."), ""},
		{"name without .zip", "application/json", strings.NewReader(`{"name":"x"}`), 400,
			fmt.Sprintf(invalid, "validation_match_invalid", "Must be in a valid format."), ""},
		{"name taken", "application/json", strings.NewReader(`{"name":"taken.zip"}`), 400,
			fmt.Sprintf(invalid, "validation_backup_name_exists", "The backup file name is invalid or already exists."), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.doRaw("POST", "/api/backups", e.su, tt.ct, tt.body)
			wantBody(t, res, tt.status, tt.wantBody)
			if tt.key != "" && !fb.dir.Exists(tt.key) {
				t.Errorf("%s was not created", tt.key)
			}
		})
	}
	if fb.dir.Exists(long) || fb.dir.Exists("Bad.zip") {
		t.Error("a refused create wrote an archive")
	}
}

func TestBackupCreateChecksLockFirst(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	release, _ := fb.lock.TryLock(backup.KindRestore, "x.zip")
	defer release()
	for _, body := range []string{`{"name":`, `{"name":"Bad"}`, `{"name":"ok.zip"}`} {
		t.Run(body, func(t *testing.T) {
			wantError(t, e.doRaw("POST", "/api/backups", e.su, "application/json", strings.NewReader(body)), 400, msgBackupBusy)
		})
	}
}

func TestBackupCreateConcurrent(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	fb.entered, fb.block = make(chan string), make(chan struct{})
	e := newBackupEnv(t, fb, nil)
	first := make(chan *response)
	go func() { first <- e.do("POST", "/api/backups", e.su, nil) }()
	var key string
	select {
	case key = <-fb.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first create never started")
	}
	wantError(t, e.do("POST", "/api/backups", e.su, `{"name":"second.zip"}`), 400, msgBackupBusy)
	// The archive being created is busy even with a generated name.
	wantError(t, e.do("DELETE", "/api/backups/"+key, e.su, nil), 400, msgBackupInUse)
	if got := e.do("GET", "/api/health", e.su, nil).JSON(t)["data"].(map[string]any)["canBackup"]; got != false {
		t.Errorf("canBackup during a create = %v, want false", got)
	}
	close(fb.block)
	select {
	case res := <-first:
		wantBody(t, res, 204, "")
	case <-time.After(10 * time.Second):
		t.Fatal("the first create never answered")
	}
	if got := e.do("GET", "/api/health", e.su, nil).JSON(t)["data"].(map[string]any)["canBackup"]; got != true {
		t.Errorf("canBackup after the create = %v, want true", got)
	}
	if fb.dir.Exists("second.zip") || !fb.dir.Exists(key) {
		t.Errorf("archives after: second.zip %v, %s %v", fb.dir.Exists("second.zip"), key, fb.dir.Exists(key))
	}
}

func TestBackupCreateFailure(t *testing.T) {
	t.Parallel()
	var log syncLog
	fb := newFakeBackups(t)
	fb.fail = errors.New("capture: disk on fire")
	e := newBackupEnv(t, fb, &log)
	wantError(t, e.do("POST", "/api/backups", e.su, `{"name":"x.zip"}`), 400, msgBackupCreateFailed)
	if s := log.String(); !strings.Contains(s, "level=ERROR") || !strings.Contains(s, "disk on fire") {
		t.Errorf("log = %q, want an error line with the cause", s)
	}
	if _, _, held := fb.lock.Held(); held {
		t.Error("a failed create kept the lock")
	}
}

func TestBackupUpload(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	good := archiveBytes(t, []byte("some data"))
	if _, err := fb.Create(t.Context(), "taken.zip"); err != nil {
		t.Fatal(err)
	}
	const fileErr = `{"data":{"file":{"code":"%s","message":%q}},"message":"Something went wrong while processing your request.","status":400}`
	required := fmt.Sprintf(fileErr, "validation_required", "Cannot be blank.")
	fieldOnly, fieldBody := multipartBody(t, map[string]string{"file": "not a file"}, "", "", nil)
	otherCT, otherBody := multipartBody(t, nil, "other", "x.zip", good)
	tests := []struct {
		name     string
		ct       string
		body     io.Reader
		wantBody string
		status   int
	}{
		{"JSON body", "application/json", strings.NewReader(`{"file":"x"}`), required, 400},
		{"no body", "", nil, required, 400},
		{"file as a plain field", fieldOnly, fieldBody, required, 400},
		{"file in another field", otherCT, otherBody, required, 400},
	}
	for _, tt := range []struct {
		name, file string
		content    []byte
		wantBody   string
	}{
		{"text file named .zip", "notzip.zip", []byte("hello, world"), fmt.Sprintf(fileErr, "validation_invalid_mime_type", `"notzip.zip" mime type must be one of: application/zip.`)},
		{"empty file", "empty.zip", nil, fmt.Sprintf(fileErr, "validation_invalid_mime_type", `"empty.zip" mime type must be one of: application/zip.`)},
		{"bad file name", "Bad Name.zip", good, fmt.Sprintf(fileErr, "validation_match_invalid", "The file name must be 1 to 150 lowercase letters, digits, _ or -, then .zip.")},
		{"existing name", "taken.zip", good, fmt.Sprintf(fileErr, "validation_backup_name_exists", "Backup file with the specified name already exists.")},
		{"empty zip", "emptyzip.zip", append([]byte("PK\x05\x06"), make([]byte, 18)...), fmt.Sprintf(fileErr, "validation_invalid_backup", "The file is not a valid backup archive: no manifest.json.")},
		{"PocketBase archive", "pb_backup.zip", pocketBaseArchive(t), fmt.Sprintf(fileErr, "validation_invalid_backup",
			"The file is not a valid backup archive: a PocketBase backup archive (data.db, no manifest.json): import it into a new data dir with `strongbox import pocketbase FILE`.")},
		{"good", "good.zip", good, ""},
		// The base name only, as the reference does: never outside the folder.
		{"path in the file name", "../../evil.zip", good, ""},
		{"backslashes in the file name", `..\\evil2.zip`, good, fmt.Sprintf(fileErr, "validation_match_invalid", "The file name must be 1 to 150 lowercase letters, digits, _ or -, then .zip.")},
	} {
		ct, body := multipartBody(t, nil, "file", tt.file, tt.content)
		status := 400
		if tt.wantBody == "" {
			status = 204
		}
		tests = append(tests, struct {
			name     string
			ct       string
			body     io.Reader
			wantBody string
			status   int
		}{tt.name, ct, body, tt.wantBody, status})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantBody(t, e.doRaw("POST", "/api/backups/upload", e.su, tt.ct, tt.body), tt.status, tt.wantBody)
		})
	}
	got, err := os.ReadFile(filepath.Join(fb.path, "good.zip"))
	if err != nil || !bytes.Equal(got, good) {
		t.Errorf("good.zip stored %d bytes (%v), want the %d uploaded", len(got), err, len(good))
	}
	if !fb.dir.Exists("evil.zip") {
		t.Error("../../evil.zip was not stored as evil.zip")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(fb.path), "evil.zip")); err == nil {
		t.Error("../../evil.zip was stored outside the backups folder")
	}
	for _, k := range []string{"emptyzip.zip", "notzip.zip", "empty.zip", "pb_backup.zip"} {
		if fb.dir.Exists(k) {
			t.Errorf("refused upload %s was stored", k)
		}
	}
	wantNoTemp(t, fb)
}

// wantNoTemp asserts that the backups folder holds only archives.
func wantNoTemp(t *testing.T, fb *fakeBackups) {
	t.Helper()
	ents, err := os.ReadDir(fb.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range ents {
		if !backup.ValidName(de.Name()) {
			t.Errorf("backups folder holds %s", de.Name())
		}
	}
}

// TestBackupUploadStreams uploads an archive larger than the whole body
// budget (32 MiB): it is streamed to disk, not held in memory.
func TestBackupUploadStreams(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	content := make([]byte, DefaultBodyBudget+(1<<20))
	rand.Read(content)
	big := archiveBytes(t, content)
	if len(big) <= DefaultBodyBudget {
		t.Fatalf("archive of %d bytes, want more than %d", len(big), DefaultBodyBudget)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fw, err := mw.CreateFormFile("file", "big.zip")
		if err == nil {
			_, err = fw.Write(big)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	wantBody(t, e.doRaw("POST", "/api/backups/upload", e.su, mw.FormDataContentType(), pr), 204, "")
	if info, err := fb.dir.Stat("big.zip"); err != nil || info.Size != int64(len(big)) {
		t.Errorf("big.zip: %+v %v, want %d bytes", info, err, len(big))
	}
	if n := e.api.budget.inUse(); n != 0 {
		t.Errorf("budget in use after the upload: %d", n)
	}
}

func TestBackupUploadTooLarge(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	fb.maxUpload = 1024
	e := newBackupEnv(t, fb, nil)
	want := `{"data":{"file":{"code":"validation_file_size_limit","message":"The maximum allowed file size is 1024 bytes.","params":{"maxSize":1024}}},"message":"Something went wrong while processing your request.","status":400}`
	content := make([]byte, 4096)
	rand.Read(content)
	big := archiveBytes(t, content)
	t.Run("streamed past the maximum", func(t *testing.T) {
		wantBody(t, e.upload("big.zip", big), 400, want)
	})
	t.Run("declared past the maximum", func(t *testing.T) {
		// The body is never sent: the declared length alone is refused.
		c := e.dial()
		fmt.Fprintf(c, "POST /api/backups/upload HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n"+
			"Content-Type: multipart/form-data; boundary=x\r\nContent-Length: %d\r\n\r\n", e.su, 1024+uploadOverhead+1)
		res := readRaw(t, bufio.NewReader(c), "POST")
		if !res.Close {
			t.Error("the connection stays open after a refused body")
		}
		wantBody(t, res, 400, want)
	})
	t.Run("chunked, other fields past the maximum", func(t *testing.T) {
		small := archiveBytes(t, []byte("x"))
		if len(small) >= 1024 {
			t.Fatalf("small archive of %d bytes", len(small))
		}
		ct, body := multipartBody(t, map[string]string{"padding": strings.Repeat("x", 2*uploadOverhead)}, "file", "small.zip", small)
		// A reader of unknown length is sent chunked: no length to refuse early.
		res := e.doRaw("POST", "/api/backups/upload", e.su, ct, io.MultiReader(body))
		wantBody(t, res, 400, want)
	})
	if fb.dir.Exists("big.zip") || fb.dir.Exists("small.zip") {
		t.Error("an upload over the maximum was stored")
	}
	wantNoTemp(t, fb)
}

func TestBackupDelete(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	if _, err := fb.Create(t.Context(), "a.zip"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, key string
		status    int
		msg       string
	}{
		{"existing", "a.zip", 204, ""},
		{"deleted already", "a.zip", 400, msgBackupDeleteMissing},
		{"never existed", "missing.zip", 400, msgBackupDeleteMissing},
		{"invalid key", "..%2Fauth.journal", 400, msgBackupDeleteMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("DELETE", "/api/backups/"+tt.key, e.su, nil)
			if tt.status == 204 {
				wantBody(t, res, 204, "")
				return
			}
			wantError(t, res, tt.status, tt.msg)
		})
	}
	wantBody(t, e.do("GET", "/api/backups", e.su, nil), 200, `[]`)
}

func TestBackupDeleteBusy(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	for _, k := range []string{"a.zip", "b.zip"} {
		if _, err := fb.Create(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	release, _ := fb.lock.TryLock(backup.KindRestore, "a.zip")
	defer release()
	wantError(t, e.do("DELETE", "/api/backups/a.zip", e.su, nil), 400, msgBackupInUse)
	// Any other archive waits too (§3, §7 row 2; the reference lets it go).
	wantError(t, e.do("DELETE", "/api/backups/b.zip", e.su, nil), 400, msgBackupBusy)
	release()
	wantBody(t, e.do("DELETE", "/api/backups/b.zip", e.su, nil), 204, "")
}

func TestBackupDownload(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	if _, err := fb.Create(t.Context(), "a.zip"); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(fb.path, "a.zip"))
	if err != nil {
		t.Fatal(err)
	}
	ft := e.fileToken(e.su)
	get := func(method, path, rng string) *response {
		t.Helper()
		req, err := http.NewRequest(method, e.srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return &response{Status: res.StatusCode, Header: res.Header, Body: b}
	}
	tests := []struct {
		name, method, rng string
		status            int
		body              []byte
		length            string
	}{
		{"whole", "GET", "", 200, want, fmt.Sprint(len(want))},
		{"range", "GET", "bytes=0-3", 206, []byte("PK\x03\x04"), "4"},
		{"head", "HEAD", "", 200, nil, fmt.Sprint(len(want))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := get(tt.method, "/api/backups/a.zip?token="+ft, tt.rng)
			if res.Status != tt.status || !bytes.Equal(res.Body, tt.body) {
				t.Errorf("got %d with %d bytes, want %d with %d", res.Status, len(res.Body), tt.status, len(tt.body))
			}
			for k, v := range map[string]string{
				"Content-Type":        "application/zip",
				"Content-Disposition": "attachment; filename=a.zip",
				"Content-Length":      tt.length,
				"Accept-Ranges":       "bytes",
				"Cache-Control":       "no-store",
			} {
				if got := res.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
	t.Run("unknown key", func(t *testing.T) {
		wantError(t, get("GET", "/api/backups/missing.zip?token="+ft, ""), 404, msgNotFound)
	})
	t.Run("expired token", func(t *testing.T) {
		e.clock.Add(time.Hour)
		wantError(t, get("GET", "/api/backups/a.zip?token="+ft, ""), 403, msgFileForbidden)
	})
}

func TestBackupDownloadTokenNotLogged(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	if _, err := fb.Create(t.Context(), "a.zip"); err != nil {
		t.Fatal(err)
	}
	ft := e.fileToken(e.su)
	if res := e.do("GET", "/api/backups/a.zip?token="+ft, "", nil); res.Status != 200 {
		t.Fatalf("download: %d %s", res.Status, res.Body)
	}
	items := e.listLogs(`data.url ~ "/api/backups/a.zip"`)
	if len(items) != 1 {
		t.Fatalf("got %d log entries for the download", len(items))
	}
	b, _ := json.Marshal(items[0])
	if strings.Contains(string(b), ft) {
		t.Errorf("log entry holds the file token: %s", b)
	}
	if got := items[0]["data"].(map[string]any)["url"]; got != "/api/backups/a.zip?token=REDACTED" {
		t.Errorf("logged url = %v", got)
	}
}

// TestBackupUploadIgnoresLock: an upload neither checks nor takes the lock,
// as in PocketBase v0.31.0.
func TestBackupUploadIgnoresLock(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	release, _ := fb.lock.TryLock(backup.KindCreate, "other.zip")
	defer release()
	wantBody(t, e.upload("up.zip", archiveBytes(t, []byte("x"))), 204, "")
	if kind, key, _ := fb.lock.Held(); kind != backup.KindCreate || key != "other.zip" {
		t.Errorf("lock after the upload: %v %q", kind, key)
	}
}

// TestBackupCreateOutlivesClient: a create whose client goes away runs to
// its end and answers; the archive is there afterwards, as in PocketBase
// v0.31.0. The request's context ends while the create runs, as net/http
// ends it when the client's connection closes.
func TestBackupCreateOutlivesClient(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	fb.entered, fb.block = make(chan string), make(chan struct{})
	e := newBackupEnv(t, fb, nil)
	ctx, cancel := context.WithCancel(t.Context())
	req := httptest.NewRequestWithContext(ctx, "POST", "/api/backups", strings.NewReader(`{"name":"gone.zip"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", e.su)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.api.ServeHTTP(rec, req)
	}()
	select {
	case <-fb.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the create never started")
	}
	cancel()
	close(fb.block)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the create of a client that went away did not finish")
	}
	if rec.Code != 204 || rec.Body.Len() != 0 {
		t.Errorf("answer = %d %q, want 204 and no body", rec.Code, rec.Body)
	}
	if !fb.dir.Exists("gone.zip") {
		t.Error("no archive after the create of a client that went away")
	}
}

// TestBackupHostileKeys: keys that are not archive names, however encoded,
// never reach outside the backups folder, and no answer names a path.
func TestBackupHostileKeys(t *testing.T) {
	t.Parallel()
	fb := newFakeBackups(t)
	e := newBackupEnv(t, fb, nil)
	// A file next to the backups folder that a traversal would reach.
	if err := os.WriteFile(filepath.Join(filepath.Dir(fb.path), "secret.zip"), []byte("PK\x03\x04secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(fb.path, "folder.zip"), 0o700); err != nil {
		t.Fatal(err)
	}
	ft := e.fileToken(e.su)
	for _, key := range []string{
		"..%2Fsecret.zip",
		"%2E%2E%2Fsecret.zip",
		"..%5Csecret.zip",
		url.PathEscape(filepath.ToSlash(filepath.Join(filepath.Dir(fb.path), "secret.zip"))),
		"secret.zip%00.zip",
		strings.Repeat("a", 4096) + ".zip",
		"folder.zip",
		"%40auto_..%2F..%2Fsecret.zip",
	} {
		t.Run(key[:min(len(key), 40)], func(t *testing.T) {
			for _, tt := range []struct {
				method, path, token string
				status              int
				msg                 string
			}{
				{"GET", "/api/backups/" + key + "?token=" + ft, "", 404, msgNotFound},
				{"HEAD", "/api/backups/" + key + "?token=" + ft, "", 404, ""},
				{"DELETE", "/api/backups/" + key, e.su, 400, msgBackupDeleteMissing},
			} {
				res := e.do(tt.method, tt.path, tt.token, nil)
				if tt.method == "HEAD" {
					if res.Status != tt.status {
						t.Errorf("HEAD: %d, want %d", res.Status, tt.status)
					}
					continue
				}
				wantError(t, res, tt.status, tt.msg)
				if strings.Contains(string(res.Body), fb.path) || strings.Contains(string(res.Body), "secret") {
					t.Errorf("%s answer names a path: %s", tt.method, res.Body)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(fb.path), "secret.zip")); err != nil {
		t.Errorf("the file outside the backups folder: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(fb.path, "folder.zip")); err != nil || !fi.IsDir() {
		t.Errorf("folder.zip after the deletes: %v", err)
	}
}

// pocketBaseArchive is a backup archive as PocketBase makes it: its
// pb_data zipped, data.db at the root, no manifest.
func pocketBaseArchive(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"data.db", "auxiliary.db", "storage/"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(name, "/") {
			w.Write([]byte("SQLite format 3\x00"))
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
