package backup

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLimitsCheck: Verify, Dir.Verify and Dir.Put run Limits.Check once
// every entry matched the manifest; Check reads the listed files through
// Files; an *ArchiveError from it refuses the archive (Put keeps nothing),
// any other error is a failure to check it, not a refusal; Extract does
// not run it.
func TestLimitsCheck(t *testing.T) {
	files := []entry{{name: "auth.journal", data: "records"}, {name: "logs/a.seg", data: "segment"}}
	good := archive{entries: files}.build(t)
	readAll := func(got map[string]string) func(Files) error {
		return func(f Files) error {
			for _, mf := range f.Manifest.Files {
				rc, err := f.Open(mf.Name)
				if err != nil {
					return err
				}
				b, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					return err
				}
				got[mf.Name] = string(b)
			}
			_, err := f.Open("unlisted")
			return err
		}
	}
	refuse := func(Files) error { return &ArchiveError{Reason: "auth.journal does not open"} }
	fail := func(Files) error { return errors.New("disk full") }
	tests := []struct {
		name        string
		check       func(map[string]string) func(Files) error
		wantRefused bool
		wantFailed  bool
	}{
		{"reads the files", readAll, true, false}, // Open of an unlisted name refuses
		{"refuses", func(map[string]string) func(Files) error { return refuse }, true, false},
		{"fails", func(map[string]string) func(Files) error { return fail }, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			limits := Limits{Check: tt.check(got)}
			_, err := Verify(bytes.NewReader(good), int64(len(good)), limits)
			if errors.Is(err, ErrInvalidArchive) != tt.wantRefused || (err != nil && !errors.Is(err, ErrInvalidArchive)) != tt.wantFailed {
				t.Fatalf("Verify = %v, want refused %v, failed %v", err, tt.wantRefused, tt.wantFailed)
			}
			if tt.name == "reads the files" {
				if diff := cmp.Diff(map[string]string{"auth.journal": "records", "logs/a.seg": "segment"}, got); diff != "" {
					t.Errorf("the files Check read (-want +got):\n%s", diff)
				}
			}
			d, path := openDir(t)
			_, err = d.Put(t.Context(), "up.zip", bytes.NewReader(good), 1<<20, limits)
			if err == nil || errors.Is(err, ErrInvalidArchive) != tt.wantRefused {
				t.Errorf("Put = %v, want refused %v", err, tt.wantRefused)
			}
			if names := dirNames(t, path); len(names) != 0 {
				t.Errorf("Put kept %v", names)
			}
			if err := os.WriteFile(filepath.Join(path, "up.zip"), good, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Verify("up.zip", limits); err == nil || errors.Is(err, ErrInvalidArchive) != tt.wantRefused {
				t.Errorf("Dir.Verify = %v, want refused %v", err, tt.wantRefused)
			}
			dst := filepath.Join(t.TempDir(), "x")
			if err := d.Extract("up.zip", dst, limits); err != nil {
				t.Errorf("Extract = %v: it does not run Check", err)
			}
		})
	}
	var calls []string
	limits := Limits{Check: func(f Files) error { calls = append(calls, f.Manifest.Files[0].Name); return nil }}
	if _, err := Verify(bytes.NewReader(good), int64(len(good)), limits); err != nil {
		t.Fatalf("Verify with a passing Check = %v", err)
	}
	// A damaged entry is refused before Check runs.
	bad := archive{entries: files, mutate: func(m *Manifest) { m.Files[0].SHA256 = sum("other") }}.build(t)
	if _, err := Verify(bytes.NewReader(bad), int64(len(bad)), limits); !errors.Is(err, ErrInvalidArchive) {
		t.Fatalf("Verify of a damaged entry = %v", err)
	}
	if !slices.Equal(calls, []string{"auth.journal"}) {
		t.Errorf("Check ran for %v, want once, for the good archive", calls)
	}
}
