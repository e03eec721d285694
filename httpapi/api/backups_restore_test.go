package api

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strongbox/backup"
)

// restoreFake is a Backups over a real backups folder whose Restore only
// reports its calls.
type restoreFake struct {
	dir        *backup.Dir
	lock       backup.Lock
	canRestore error
	slow       time.Duration // CanRestore takes this long, as a long Verify would
	restoreErr error
	calls      chan string // keys Restore was called with
}

func (f *restoreFake) Storage() backup.Storage                             { return f.dir.Storage() }
func (f *restoreFake) TestS3(context.Context) error                        { return nil }
func (f *restoreFake) Lock() *backup.Lock                                  { return &f.lock }
func (f *restoreFake) Limits() backup.Limits                               { return backup.Limits{} }
func (f *restoreFake) MaxUpload() int64                                    { return 1 << 20 }
func (f *restoreFake) Create(context.Context, string) (backup.Info, error) { return backup.Info{}, nil }
func (f *restoreFake) CanRestore() error {
	// Not a wait for a condition: slow work, as a long Verify is.
	time.Sleep(f.slow)
	return f.canRestore
}
func (f *restoreFake) Restore(ctx context.Context, a *backup.Archive) error {
	defer a.Close()
	if _, ok := ctx.Deadline(); !ok {
		return errors.New("restore without a deadline")
	}
	f.calls <- a.Key()
	return f.restoreErr
}

func newRestoreFake(t *testing.T) *restoreFake {
	t.Helper()
	d, err := backup.OpenDir(filepath.Join(t.TempDir(), "backups"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	src := backup.Source{{Name: "auth.journal", Size: 4, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("data")), nil }}}
	if _, err := d.Create(t.Context(), "good.zip", src, backup.Meta{}); err != nil {
		t.Fatal(err)
	}
	return &restoreFake{dir: d, calls: make(chan string, 1)}
}

// waitRestore returns the key Restore was called with, or "" if it was
// not called before the deadline.
func (f *restoreFake) waitRestore(t *testing.T) string {
	t.Helper()
	select {
	case k := <-f.calls:
		return k
	case <-time.After(10 * time.Second):
		return ""
	}
}

// waitFree waits until the restore goroutine released the lock.
func (f *restoreFake) waitFree(t *testing.T) {
	t.Helper()
	waitFor(t, "the lock released after a failed restore", func() bool {
		_, _, held := f.lock.Held()
		return !held
	})
}

func TestBackupRestoreChecks(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		nilFS   bool
		edit    func(t *testing.T, f *restoreFake)
		key     string
		token   string // "su", "user" or "" (guest)
		status  int
		message string // "" for the 204
		held    bool   // the lock is held after the answer
	}{
		{name: "guest", key: "good.zip", status: 401, message: msgAuthRequired},
		{name: "not a superuser", key: "good.zip", token: "user", status: 403, message: msgNotAllowed},
		{name: "no backups folder", nilFS: true, key: "good.zip", token: "su", status: 400, message: msgBackupsLoad},
		{name: "lock busy", key: "good.zip", token: "su", status: 400, message: msgBackupBusy, held: true, edit: func(t *testing.T, f *restoreFake) {
			f.lock.TryLock(backup.KindCreate, "other.zip")
		}},
		{name: "missing key", key: "nope.zip", token: "su", status: 400, message: msgRestoreMissing},
		{name: "invalid key", key: "Bad.zip", token: "su", status: 400, message: msgRestoreMissing},
		{name: "cannot restore here", key: "good.zip", token: "su", status: 400, message: "Not on this system.", edit: func(t *testing.T, f *restoreFake) {
			f.canRestore = errors.New("Not on this system.")
		}},
		{name: "not an archive", key: "junk.zip", token: "su", status: 400, message: msgRestoreInvalid + "not a zip file.", edit: func(t *testing.T, f *restoreFake) {
			// Put would refuse it: write it by hand.
			path := filepath.Join(f.backupsPath(t), "junk.zip")
			if err := os.WriteFile(path, []byte("not a zip at all"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a file that does not match its manifest", key: "tampered.zip", token: "su", status: 400, message: msgRestoreInvalid + `entry "auth.journal": SHA-256 mismatch.`, edit: func(t *testing.T, f *restoreFake) {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			w, _ := zw.Create("auth.journal")
			io.WriteString(w, "evil")
			other := sha256.Sum256([]byte("good"))
			m, _ := json.Marshal(backup.Manifest{Format: backup.Format, Files: []backup.ManifestFile{{Name: "auth.journal", Size: 4, SHA256: hex.EncodeToString(other[:])}}})
			w, _ = zw.Create(backup.ManifestName)
			w.Write(m)
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(f.backupsPath(t), "tampered.zip"), buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a folder by that name", key: "dir.zip", token: "su", status: 400, message: msgRestoreMissing, edit: func(t *testing.T, f *restoreFake) {
			if err := os.Mkdir(filepath.Join(f.backupsPath(t), "dir.zip"), 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "dot-dot key", key: "..%2Fauth.journal", token: "su", status: 400, message: msgRestoreMissing},
		{name: "absolute key", key: "%2Fetc%2Fpasswd.zip", token: "su", status: 400, message: msgRestoreMissing},
		{name: "very long key", key: strings.Repeat("a", 5000) + ".zip", token: "su", status: 400, message: msgRestoreMissing},
		{name: "ok", key: "good.zip", token: "su", status: 204, held: true},
		// The automatic backups are restorable: @auto_ is not a name a
		// client may give, but a key like any other.
		{name: "ok, automatic backup", key: "@auto_sb_backup_20261122100000.zip", token: "su", status: 204, held: true, edit: func(t *testing.T, f *restoreFake) {
			src := backup.Source{{Name: "auth.journal", Size: 4, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("data")), nil }}}
			if _, err := f.dir.Create(t.Context(), "@auto_sb_backup_20261122100000.zip", src, backup.Meta{}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newRestoreFake(t)
			if tt.edit != nil {
				tt.edit(t, f)
			}
			cfg := Config{Backups: f}
			if tt.nilFS {
				cfg.Backups = nil
			}
			e := newEnvWith(t, cfg, HTTPConfig{})
			token := map[string]string{"su": e.su}[tt.token]
			if tt.token == "user" {
				e.signUp("user@example.com", "password123")
				token = e.login("users", "user@example.com", "password123")
			}
			if tt.status == 204 {
				// Restore blocks until the test takes its call, so the
				// lock is seen held.
				f.calls = make(chan string)
			}
			res := e.do("POST", "/api/backups/"+strings.ReplaceAll(tt.key, "@", "%40")+"/restore", token, nil)
			if tt.status == 204 {
				if res.Status != 204 || len(res.Body) != 0 {
					t.Fatalf("got %d %s, want 204 with no body", res.Status, res.Body)
				}
				if kind, key, held := f.lock.Held(); !held || kind != backup.KindRestore || key != tt.key {
					t.Errorf("after the 204 the lock is %v %q %v, want held for the restore of %s", kind, key, held, tt.key)
				}
				if got := f.waitRestore(t); got != tt.key {
					t.Errorf("Restore called with %q, want %q", got, tt.key)
				}
				return
			}
			wantError(t, res, tt.status, tt.message)
			if _, _, held := f.lock.Held(); held != tt.held {
				t.Errorf("lock held = %v after the refusal, want %v", held, tt.held)
			}
			select {
			case k := <-f.calls:
				t.Errorf("Restore(%q) called after a refusal", k)
			default:
			}
		})
	}
}

func (f *restoreFake) backupsPath(t *testing.T) string {
	t.Helper()
	// Found from an archive's open file.
	r, err := f.dir.Open("good.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return filepath.Dir(r.Name())
}

// TestBackupRestoreFails: a restore that could not restart the process is
// logged and releases the lock, so that a later operation can run.
func TestBackupRestoreFails(t *testing.T) {
	t.Parallel()
	f := newRestoreFake(t)
	f.restoreErr = errors.New("exec failed")
	var log syncLog
	e := newEnvWith(t, Config{Backups: f, Logger: slog.New(slog.NewTextHandler(&log, nil))}, HTTPConfig{})
	res := e.do("POST", "/api/backups/good.zip/restore", e.su, nil)
	if res.Status != 204 {
		t.Fatalf("got %d %s, want 204", res.Status, res.Body)
	}
	if got := f.waitRestore(t); got != "good.zip" {
		t.Fatalf("Restore called with %q", got)
	}
	f.waitFree(t)
	if _, ok := f.lock.TryLock(backup.KindCreate, ""); !ok {
		t.Error("the lock is still held after the failed restore")
	}
	if want := `level=ERROR msg="Failed to restore backup" key=good.zip err="exec failed"`; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, log.String())
	}
}

// TestBackupRestoreSlowVerify: a restore whose checks outlast a JSON
// route's write deadline still answers its 204 (it has the backup routes'
// deadline), rather than restarting the server on a client told nothing.
func TestBackupRestoreSlowVerify(t *testing.T) {
	t.Parallel()
	f := newRestoreFake(t)
	// The write deadline leaves the env's own sign-in (under 50 ms alone)
	// room on a loaded machine: 50 ms cut it now and then, and 250 ms did
	// under the race detector beside other work.
	f.slow = 3 * time.Second
	e := newEnvWith(t, Config{Backups: f, WriteTimeout: time.Second}, HTTPConfig{})
	res := e.do("POST", "/api/backups/good.zip/restore", e.su, nil)
	if res.Status != 204 {
		t.Fatalf("got %d %s, want 204", res.Status, res.Body)
	}
	if got := f.waitRestore(t); got != "good.zip" {
		t.Errorf("Restore called with %q", got)
	}
}
