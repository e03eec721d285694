package journal

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCapture checks that a Section holds the durable prefix at the instant
// of Capture, whatever happens to the journal afterwards.
func TestCapture(t *testing.T) {
	tests := []struct {
		name  string
		after func(t *testing.T, f *File) // runs between Capture and the copy
	}{
		{"appends", func(t *testing.T, f *File) {
			if _, err := f.Append([]byte("later")); err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}},
		{"compaction", func(t *testing.T, f *File) {
			if err := f.Compact(func(w *Writer) error {
				_, err := w.Append([]byte("compacted"))
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}},
		{"removal", func(t *testing.T, f *File) {
			if err := os.Remove(f.Path()); err != nil {
				t.Fatal(err)
			}
		}},
		{"close", func(t *testing.T, f *File) {
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(filepath.Join(t.TempDir(), "j"), Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, p := range []string{"one", "two"} {
				if _, err := f.Append([]byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			// A frame written but not yet fsynced is not acknowledged:
			// the capture leaves it out.
			if _, err := f.Append([]byte("unsynced")); err != nil {
				t.Fatal(err)
			}
			want := f.Committed()
			sec, err := f.Capture()
			if err != nil {
				t.Fatal(err)
			}
			defer sec.Close()
			if sec.Size != want || sec.Path != f.Path() {
				t.Errorf("Capture() = {%s, %d}, want {%s, %d}", sec.Path, sec.Size, f.Path(), want)
			}
			tt.after(t, f)

			data, err := io.ReadAll(sec.Reader())
			if err != nil {
				t.Fatal(err)
			}
			cp := filepath.Join(t.TempDir(), "copy")
			if err := os.WriteFile(cp, data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, _, err := replayAll(t, cp, Options{Strict: true})
			if err != nil || !cmp.Equal(got, []string{"one", "two"}) {
				t.Errorf("replay of the section = %q, %v; want [one two]", got, err)
			}
			if err := sec.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := sec.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

func TestCaptureClosed(t *testing.T) {
	f, err := Open(filepath.Join(t.TempDir(), "j"), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if sec, err := f.Capture(); !errors.Is(err, ErrClosed) {
		t.Errorf("Capture() after Close = %v, %v; want ErrClosed", sec, err)
	}
}
