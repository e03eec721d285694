package backup

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPut(t *testing.T) {
	good := archive{entries: []entry{{name: "auth.journal", data: "records"}}}.build(t)
	tests := []struct {
		name string
		key  string
		body []byte
		max  int64
		want error
	}{
		{"valid", "up.zip", good, 1 << 20, nil},
		{"exists", "taken.zip", good, 1 << 20, ErrExists},
		{"bad name", "Up.zip", good, 1 << 20, ErrInvalidName},
		{"too large", "big.zip", good, int64(len(good)) - 1, ErrTooLarge},
		{"exactly the limit", "exact.zip", good, int64(len(good)), nil},
		{"not a zip", "text.zip", []byte("hello"), 1 << 20, ErrInvalidArchive},
		{"not ours", "other.zip", archive{noManifest: true, entries: []entry{{name: "a", data: "x"}}}.build(t), 1 << 20, ErrInvalidArchive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, path := openDir(t)
			if err := os.WriteFile(filepath.Join(path, "taken.zip"), []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := d.Put(t.Context(), tt.key, bytes.NewReader(tt.body), tt.max, Limits{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Put(%s) = %v, want %v", tt.key, err, tt.want)
			}
			want := []string{"taken.zip"}
			if tt.want == nil {
				want = append(want, tt.key)
				slices.Sort(want)
				if _, err := d.Verify(tt.key, Limits{}); err != nil {
					t.Errorf("Verify after Put: %v", err)
				}
			}
			if diff := cmp.Diff(want, dirNames(t, path)); diff != "" {
				t.Errorf("folder after Put (-want +got):\n%s", diff)
			}
			if b, _ := os.ReadFile(filepath.Join(path, "taken.zip")); string(b) != "old" {
				t.Error("Put overwrote an existing archive")
			}
		})
	}
}

func TestPutReadFails(t *testing.T) {
	d, path := openDir(t)
	errBoom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("PK"), &failReader{n: 1000, err: errBoom})
	if _, err := d.Put(t.Context(), "up.zip", r, 1<<20, Limits{}); !errors.Is(err, errBoom) {
		t.Errorf("Put = %v, want %v", err, errBoom)
	}
	if names := dirNames(t, path); len(names) != 0 {
		t.Errorf("Put left %v behind", names)
	}
}
