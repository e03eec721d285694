package settings

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"strongbox/logstore/journal"
	"strongbox/logstore/journal/journaltest"
)

// TestSettingsVersion: each saved document carries its format version; a
// journal written before the field existed opens as version 1, and one
// holding a newer version is refused with an error that says so.
func TestSettingsVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.journal")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := patch(s, `{"logs":{"maxDays":3}}`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var payloads [][]byte
	j, err := journal.Open(path, journal.Options{}, func(_ int64, p []byte) error {
		payloads = append(payloads, bytes.Clone(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	for _, p := range payloads {
		if !bytes.HasPrefix(p, []byte(`{"v":1,`)) {
			t.Errorf("frame %.40s… does not start with its version", p)
		}
	}

	last := payloads[len(payloads)-1]
	old, err := Open(journaltest.Write(t, "old.journal", bytes.Replace(last, []byte(`"v":1,`), nil, 1)), Options{})
	if err != nil {
		t.Fatalf("Open of a journal without versions: %v", err)
	}
	if got := old.Get().Logs.MaxDays; got != 3 {
		t.Errorf("a journal without versions: maxDays %d, want 3", got)
	}
	old.Close()

	newer := bytes.Replace(last, []byte(`"v":1,`), []byte(`"v":2,`), 1)
	if n, err := Open(journaltest.Write(t, "newer.journal", last, newer), Options{}); err == nil {
		n.Close()
		t.Error("Open accepted a document of format version 2")
	} else if !strings.Contains(err.Error(), "format version 2") {
		t.Errorf("Open = %v, want an error naming format version 2", err)
	}
}
