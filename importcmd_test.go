package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"strongbox/backup/pocketbase"
)

// emptyPocketBase is a PocketBase data dir with no collections, settings
// or logs of its own: what the command does around the conversion does
// not depend on them (app's tests cover the conversion).
type emptyPocketBase struct {
	closed   *int
	settings string // the settings document; "" = an appName only
}

func (emptyPocketBase) Collections() ([]pocketbase.Collection, error)                { return nil, nil }
func (emptyPocketBase) Rows(pocketbase.Collection, func(pocketbase.Row) error) error { return nil }
func (emptyPocketBase) ExternalAuths(func(pocketbase.ExternalAuth) error) error      { return nil }
func (emptyPocketBase) AuthOrigins(func(pocketbase.AuthOrigin) error) error          { return nil }
func (emptyPocketBase) Count(string) (int, error)                                    { return 0, nil }
func (p emptyPocketBase) Settings() (json.RawMessage, error) {
	if p.settings != "" {
		return json.RawMessage(p.settings), nil
	}
	return json.RawMessage(`{"meta":{"appName":"From PB"}}`), nil
}
func (emptyPocketBase) Logs(func(pocketbase.Log) error) error { return nil }
func (emptyPocketBase) Unchanged() error                      { return nil }
func (p emptyPocketBase) Close() error                        { *p.closed++; return nil }

// fakeOpen makes `import pocketbase` open an emptyPocketBase (or fail
// with openErr) for the rest of the test, and returns the options it was
// opened with and how many times it was closed.
func fakeOpen(t *testing.T, openErr error) (*pocketbase.Options, *int) {
	t.Helper()
	old := openPocketBase
	t.Cleanup(func() { openPocketBase = old })
	var got pocketbase.Options
	closed := new(int)
	openPocketBase = func(path string, opts pocketbase.Options) (pocketBaseSource, error) {
		got = opts
		if openErr != nil {
			return nil, openErr
		}
		return emptyPocketBase{closed: closed}, nil
	}
	return &got, closed
}

func TestImportCommand(t *testing.T) {
	env := envOf("STRONGBOX_BCRYPT_COST", "4", "PB_KEY", "0123456789abcdef0123456789abcdef")
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "auth.journal"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		openErr error
		wantErr string // "" = success
		wantOut string
		wantKey string
		wantDir bool // the target holds an imported data dir afterwards
	}{
		{"no source", []string{"import"}, nil, "missing arguments\nusage: strongbox import pocketbase PATH", "", "", false},
		{"unknown source", []string{"import", "sqlite", "x"}, nil, `unknown import source "sqlite" (want pocketbase)`, "", "", false},
		{"stray", []string{"import", "pocketbase", "a", "b"}, nil, `unexpected argument "b"`, "", "", false},
		{"help", []string{"import", "--help"}, nil, "", "usage: strongbox import pocketbase PATH [--dir ./sb_data] [--dry-run] [--no-mail] [--encryption-env NAME]\n", "", false},
		{"help names dry-run", []string{"import", "pocketbase", "--help"}, nil, "", "the logs are counted, not written", "", false},
		{"empty key variable", []string{"import", "pocketbase", "pb_data", "--encryption-env", "NO_SUCH_VAR"}, nil, "--encryption-env NO_SUCH_VAR: the variable is empty or not set", "", "", false},
		{"open fails", []string{"import", "pocketbase", "pb_data"}, fmt.Errorf("pocketbase: %w: no _collections table", pocketbase.ErrVersion), "import pb_data: pocketbase: not a PocketBase v0.23 to v0.31 data dir: no _collections table", "", "", false},
		{"encrypted", []string{"import", "pocketbase", "pb_data"}, fmt.Errorf("%w: start the import with --encryption-env NAME", pocketbase.ErrEncrypted), "import pb_data: the settings are encrypted: start the import with --encryption-env NAME", "", "", false},
		{"not empty", []string{"import", "pocketbase", "pb_data", "--dir", full}, nil, full + " is not empty: an import never merges into existing data", "", "", false},
		{"dry run", []string{"import", "pocketbase", "pb_data", "--dry-run"}, nil, "", "Dry run: pb_data read in", "", false},
		{"import", []string{"import", "pocketbase", "pb_data", "--encryption-env", "PB_KEY"}, nil, "", "settings: imported meta\n", "0123456789abcdef0123456789abcdef", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, closed := fakeOpen(t, tt.openErr)
			dir := filepath.Join(t.TempDir(), "sb_data")
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "--dir") {
				args = append(args, "--dir", dir)
			}
			var out bytes.Buffer
			err := run(t.Context(), args, env, &out, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("run(%q) = %v, want an error containing %q", args, err, tt.wantErr)
				}
			} else if err != nil || !strings.Contains(out.String(), tt.wantOut) {
				t.Fatalf("run(%q) = %v, printed %q; want success printing %q", args, err, out.String(), tt.wantOut)
			}
			// A report ends with what to run next.
			if next := "next: strongbox serve --dir " + dir + "\n"; tt.wantDir && !strings.HasSuffix(out.String(), next) {
				t.Errorf("printed %q, want it to end with %q", out.String(), next)
			}
			if opts.EncryptionKey != tt.wantKey {
				t.Errorf("opened with key %q, want %q", opts.EncryptionKey, tt.wantKey)
			}
			if _, err := os.Stat(filepath.Join(dir, "settings.journal")); (err == nil) != tt.wantDir {
				t.Errorf("target holds an import: %v, want %v", err == nil, tt.wantDir)
			}
			if tt.wantDir || strings.HasPrefix(tt.name, "dry") {
				if *closed != 1 {
					t.Errorf("source closed %d times, want once", *closed)
				}
				// An archive is extracted into the import's own folder
				// beside the target, which the next import removes.
				if got := opts.TempDir; filepath.Dir(got) != filepath.Dir(dir) || !strings.HasPrefix(filepath.Base(got), ".sb_data.import-") {
					t.Errorf("opened with TempDir %q, want the import's folder beside %s", got, dir)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("the refused target changed: %d entries", len(entries))
	}
}

// TestImportMail: imported SMTP settings that are enabled are live, and
// the report says so; --no-mail turns them off, and the report says that.
func TestImportMail(t *testing.T) {
	const smtpOn = `{"meta":{"senderAddress":"a@example.com"},"smtp":{"enabled":true,"host":"smtp.example.com","port":587}}`
	tests := []struct {
		name, settings string
		noMail         bool
		wantLine       string // "" = no mail line
		wantEnabled    bool
	}{
		{"on", smtpOn, false, "mail: SMTP is on (smtp.example.com:587): the first serve sends mail through it; import with --no-mail to turn it off\n", true},
		{"no-mail", smtpOn, true, "mail: SMTP turned off (--no-mail): mails go to the outbox", false},
		{"off", `{"smtp":{"enabled":false,"host":"smtp.example.com","port":587}}`, false, "", false},
		{"off with no-mail", `{"smtp":{"enabled":false,"host":"smtp.example.com","port":587}}`, true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := openPocketBase
			t.Cleanup(func() { openPocketBase = old })
			openPocketBase = func(string, pocketbase.Options) (pocketBaseSource, error) {
				return emptyPocketBase{closed: new(int), settings: tt.settings}, nil
			}
			dir := filepath.Join(t.TempDir(), "sb data")
			args := []string{"import", "pocketbase", "pb_data", "--dir", dir}
			if tt.noMail {
				args = append(args, "--no-mail")
			}
			var out bytes.Buffer
			if err := run(t.Context(), args, envOf("STRONGBOX_BCRYPT_COST", "4"), &out, io.Discard); err != nil {
				t.Fatalf("run(%q) = %v", args, err)
			}
			got := out.String()
			if tt.wantLine != "" && !strings.Contains(got, tt.wantLine) || tt.wantLine == "" && strings.Contains(got, "mail:") {
				t.Errorf("printed %q, want the mail line %q", got, tt.wantLine)
			}
			if strings.Contains(got, "skipped setting smtp.enabled") {
				t.Errorf("printed %q: --no-mail's change reported as a setting lost", got)
			}
			// The dir has a space: the command to run next quotes it.
			if next := "next: strongbox serve --dir '" + dir + "'\n"; !strings.HasSuffix(got, next) {
				t.Errorf("printed %q, want it to end with %q", got, next)
			}
			b, err := os.ReadFile(filepath.Join(dir, "settings.journal"))
			if err != nil {
				t.Fatal(err)
			}
			if on := bytes.Contains(b, []byte(`"enabled":true`)); on != tt.wantEnabled {
				t.Errorf("stored smtp enabled %v, want %v", on, tt.wantEnabled)
			}
		})
	}
}

// TestImportExitStatus: the built binary exits 1 with one line on stderr
// when the import fails.
func TestImportExitStatus(t *testing.T) {
	t.Parallel()
	bin := strongboxBinary(t)
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), bin, "import", "pocketbase", filepath.Join(dir, "no_pb_data"), "--dir", filepath.Join(dir, "sb_data"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 1 {
		t.Fatalf("import of a missing dir: %v, want exit status 1", err)
	}
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "strongbox: import ") {
		t.Errorf("stderr = %q, want one line starting %q", stderr.String(), "strongbox: import ")
	}
	if _, err := os.Stat(filepath.Join(dir, "sb_data")); !os.IsNotExist(err) {
		t.Errorf("a failed import created the target (%v)", err)
	}
}
