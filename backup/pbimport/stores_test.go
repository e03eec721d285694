package pbimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/backup/pocketbase"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
)

// openTestStores is the tests' Options.OpenStores: the auth and settings
// stores of a data dir as the server lays it out (app.ImportStores),
// strongbox's settings store behind StoreSettings, so that the tests see
// its validation.
func openTestStores(dir string) (*Stores, error) {
	hasher, err := authn.NewHasher(bcrypt.MinCost, 0)
	if err != nil {
		return nil, err
	}
	auth, err := authn.Open(filepath.Join(dir, "auth.journal"), authn.Options{Hasher: hasher})
	if err != nil {
		return nil, err
	}
	set, err := settings.Open(filepath.Join(dir, "settings.journal"), settings.Options{})
	if err != nil {
		return nil, errors.Join(err, auth.Close())
	}
	return &Stores{Auth: auth, Settings: StoreSettings(set), Close: func() error { return errors.Join(set.Close(), auth.Close()) }}, nil
}

// imported are the stores of a data dir an import wrote.
type imported struct {
	Auth     *authn.Store
	Settings *settings.Store
	Logs     *logstore.Store
}

// openImported opens the stores of the data dir dir an import wrote, the
// log store with the imported settings.logs, until the test ends.
func openImported(t *testing.T, dir string) *imported {
	t.Helper()
	hasher, err := authn.NewHasher(bcrypt.MinCost, 0)
	if err != nil {
		t.Fatal(err)
	}
	var st imported
	if st.Auth, err = authn.Open(filepath.Join(dir, "auth.journal"), authn.Options{Hasher: hasher}); err != nil {
		t.Fatalf("open the imported dir: %v", err)
	}
	t.Cleanup(func() { st.Auth.Close() })
	if st.Settings, err = settings.Open(filepath.Join(dir, "settings.journal"), settings.Options{}); err != nil {
		t.Fatalf("open the imported dir: %v", err)
	}
	t.Cleanup(func() { st.Settings.Close() })
	ls := st.Settings.Get().Logs
	if st.Logs, err = logstore.Open(filepath.Join(dir, "logs"), logstore.Options{MaxDays: ls.MaxDays, MinLevel: ls.MinLevel}); err != nil {
		t.Fatalf("open the imported dir: %v", err)
	}
	t.Cleanup(func() { st.Logs.Close() })
	return &st
}

// requireData reports an error unless dir holds a store an import
// writes, as app.RequireData does.
func requireData(dir string) error {
	for _, name := range []string{"auth.journal", "settings.journal", "logs"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s holds no strongbox data", dir)
}

// eventually polls cond until it holds, for up to d, and reports whether
// it held.
func eventually(d time.Duration, cond func() bool) bool {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(d); !cond(); <-tick.C {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// TestImportSettingsSections: each section is decoded into its part of
// strongbox's settings (StoreSettings), so that a value of the wrong type
// is reported with the section's field, a key strongbox does not keep is
// reported, and settings.logs.maxDays as imported decides which logs are
// reported as expired.
func TestImportSettingsSections(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"wrong type", `{"batch":{"maxRequests":"many"}}`, []string{
			"settings: none imported (strongbox's defaults)\n",
			"skipped settings batch: its values do not fit strongbox's settings: json: cannot unmarshal string into Go struct field Batch.maxRequests of type int\n",
		}},
		{"not an object", `{"meta":[1]}`, []string{"skipped settings meta: not an object\n"}},
		{"lost key", `{"trustedProxy":{"headers":[],"useLeftmostIP":false,"extra":1}}`, []string{
			"settings: imported trustedProxy\n",
			"skipped setting trustedProxy.extra: strongbox does not keep it\n",
		}},
		{"log retention", `{"logs":{"maxDays":2,"minLevel":0,"logIP":true,"logAuthId":false}}`, []string{
			"settings: imported logs\n",
			"logs: 3 imported\nlogs: 2 older than settings.logs.maxDays (2 days): retention drops them\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Date(2025, 6, 10, 0, 0, 0, 0, time.UTC)
			src := &fakeSource{settings: json.RawMessage(tt.doc), logs: []pocketbase.Log{
				{ID: "old000000000001", Created: now.Add(-72 * time.Hour), Message: "a"},
				{ID: "old000000000002", Created: now.Add(-49 * time.Hour), Message: "b"},
				{ID: "new000000000001", Created: now.Add(-47 * time.Hour), Message: "c"},
			}}
			rep, err := Import(t.Context(), src, Options{OpenStores: openTestStores, Dir: filepath.Join(t.TempDir(), "sb_data"),
				Now: func() time.Time { return now }})
			if err != nil {
				t.Fatalf("Import(settings %s): %v", tt.doc, err)
			}
			for _, want := range tt.want {
				if !strings.Contains(rep.Text(), want) {
					t.Errorf("Import(settings %s) report:\n%s\nwant %q", tt.doc, rep.Text(), want)
				}
			}
		})
	}
}

// TestStoreSettingsUnknownSection: a section strongbox's settings have no
// field for is an error, not a silent no-op.
func TestStoreSettingsUnknownSection(t *testing.T) {
	set, err := settings.Open(filepath.Join(t.TempDir(), "settings.journal"), settings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if _, err := StoreSettings(set).ImportSection("nosuch", json.RawMessage(`{}`)); err == nil {
		t.Error(`ImportSection("nosuch") = nil error, want one`)
	}
	if days, _, err := StoreSettings(set).LogRetention(); err != nil || days != settings.Defaults().Logs.MaxDays {
		t.Errorf("LogRetention() = %d, %v, want the default %d", days, err, settings.Defaults().Logs.MaxDays)
	}
}
