package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testTime = time.Date(2026, 11, 23, 15, 30, 0, 0, time.UTC)

// memSource returns a Source of in-memory files, named by slash paths.
func memSource(files map[string]string) Source {
	var src Source
	for _, name := range sortedKeys(files) {
		data := files[name]
		src = append(src, File{Name: name, Size: int64(len(data)), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(data)), nil
		}})
	}
	return src
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func openDir(t testing.TB) (*Dir, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backups")
	d, err := OpenDir(path)
	if err != nil {
		t.Fatalf("OpenDir: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d, path
}

// dirNames lists every name in the folder, temporary files included.
func dirNames(t *testing.T, path string) []string {
	t.Helper()
	entries, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestCreateVerifyExtract(t *testing.T) {
	d, path := openDir(t)
	files := map[string]string{
		"auth.journal":      "auth records",
		"settings.journal":  strings.Repeat("settings ", 1000),
		"logs/00000001.seg": "",
		"logs/00000002.seg": strings.Repeat("\x00\x01log", 50000),
	}
	src := memSource(files)
	// A file that grew after the capture: only Size bytes are copied.
	src = append(src, File{Name: "grown.journal", Size: 3, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("abcdef")), nil
	}})
	files["grown.journal"] = "abc"

	info, err := d.Create(t.Context(), "first.zip", src, Meta{Version: "1.2.3", Created: testTime.Add(500 * time.Millisecond)})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if info.Key != "first.zip" || info.Size <= 0 {
		t.Errorf("Create = %+v, want key first.zip and a size", info)
	}
	list, err := d.List()
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff([]Info{info}, list); diff != "" {
		t.Errorf("List() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"first.zip"}, dirNames(t, path)); diff != "" {
		t.Errorf("folder holds more than the archive (-want +got):\n%s", diff)
	}

	m, err := d.Verify("first.zip", Limits{})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := &Manifest{Format: 1, Strongbox: "1.2.3", Created: testTime}
	for _, name := range sortedKeys(files) {
		if name == "grown.journal" {
			continue
		}
		want.Files = append(want.Files, ManifestFile{Name: name, Size: int64(len(files[name])), SHA256: sum(files[name])})
	}
	want.Files = append(want.Files, ManifestFile{Name: "grown.journal", Size: 3, SHA256: sum("abc")})
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("Verify() manifest mismatch (-want +got):\n%s", diff)
	}

	dst := filepath.Join(t.TempDir(), "restore")
	if err := d.Extract("first.zip", dst, Limits{}); err != nil {
		t.Fatalf("Extract: %v", err)
	}
	got := map[string]string{}
	err = filepath.WalkDir(dst, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dst, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Errorf("extracted files mismatch (-want +got):\n%s", diff)
	}
	if err := d.Extract("first.zip", dst, Limits{}); err == nil {
		t.Error("Extract into an existing folder succeeded")
	}

	f, err := d.Open("first.zip")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	fi, _ := f.Stat()
	f.Close()
	if fi.Size() != info.Size {
		t.Errorf("Open: size %d, want %d", fi.Size(), info.Size)
	}

	if _, err := d.Create(t.Context(), "first.zip", src, Meta{}); !errors.Is(err, ErrExists) {
		t.Errorf("Create of an existing key = %v, want ErrExists", err)
	}
	if err := d.Delete("first.zip"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if list, _ := d.List(); len(list) != 0 {
		t.Errorf("List after Delete = %v, want empty", list)
	}
}

func TestDirErrors(t *testing.T) {
	d, path := openDir(t)
	if err := os.WriteFile(filepath.Join(path, "z.zip"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(path, "z.zip"), filepath.Join(path, "link.zip")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(path, "dir.zip"), 0o700)
	os.WriteFile(filepath.Join(path, "Bad.zip"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(path, "a.zip"), []byte("xy"), 0o600)
	os.WriteFile(filepath.Join(path, "@auto_b.zip"), []byte("xy"), 0o600)
	os.WriteFile(filepath.Join(path, "@other_b.zip"), []byte("xy"), 0o600)

	list, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, i := range list {
		keys = append(keys, i.Key)
	}
	if diff := cmp.Diff([]string{"@auto_b.zip", "a.zip", "z.zip"}, keys); diff != "" {
		t.Errorf("List() keys mismatch (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		op   func() error
		want error
	}{
		{"delete missing", func() error { return d.Delete("missing.zip") }, ErrNotFound},
		{"delete bad name", func() error { return d.Delete("../a.zip") }, ErrInvalidName},
		// Delete removes archives only, which List shows: regular files.
		{"delete folder", func() error { return d.Delete("dir.zip") }, ErrNotFound},
		{"delete symlink", func() error { return d.Delete("link.zip") }, ErrNotFound},
		{"open missing", func() error { _, err := d.Open("missing.zip"); return err }, ErrNotFound},
		{"open symlink", func() error { _, err := d.Open("link.zip"); return err }, nil},
		{"open folder", func() error { _, err := d.Open("dir.zip"); return err }, ErrNotFound},
		{"open bad name", func() error { _, err := d.Open("Bad.zip"); return err }, ErrInvalidName},
		{"verify missing", func() error { _, err := d.Verify("missing.zip", Limits{}); return err }, ErrNotFound},
		{"verify not a zip", func() error { _, err := d.Verify("z.zip", Limits{}); return err }, ErrInvalidArchive},
		{"extract missing", func() error { return d.Extract("missing.zip", t.TempDir()+"/x", Limits{}) }, ErrNotFound},
		{"create bad name", func() error { _, err := d.Create(t.Context(), "a b.zip", nil, Meta{}); return err }, ErrInvalidName},
		{"create bad key", func() error { _, err := d.Create(t.Context(), "@other_b.zip", nil, Meta{}); return err }, ErrInvalidName},
		{"create existing auto key", func() error { _, err := d.Create(t.Context(), "@auto_b.zip", nil, Meta{}); return err }, ErrExists},
		{"put auto key", func() error {
			_, err := d.Put(t.Context(), "@auto_c.zip", strings.NewReader(""), 1<<20, Limits{})
			return err
		}, ErrInvalidName},
		{"delete bad key", func() error { return d.Delete("@other_b.zip") }, ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), path) || strings.Contains(err.Error(), os.TempDir()) {
				t.Errorf("error %q names a server path", err)
			}
		})
	}
}

func TestCleanTemp(t *testing.T) {
	d, path := openDir(t)
	for _, n := range []string{".tmp-abc", ".tmp-def", "keep.zip"} {
		if err := os.WriteFile(filepath.Join(path, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.CleanTemp(); err != nil {
		t.Fatalf("CleanTemp: %v", err)
	}
	if diff := cmp.Diff([]string{"keep.zip"}, dirNames(t, path)); diff != "" {
		t.Errorf("after CleanTemp (-want +got):\n%s", diff)
	}
}

// failReader yields n bytes, then fails.
type failReader struct {
	n   int
	err error
}

func (f *failReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(len(p), f.n)
	clear(p[:k])
	f.n -= k
	return k, nil
}

func TestCreateFailureLeavesNothing(t *testing.T) {
	good := memSource(map[string]string{"a.journal": strings.Repeat("a", 100000)})
	errBoom := errors.New("disk on fire")
	tests := []struct {
		name string
		src  func(cancel context.CancelFunc) Source
		want error
	}{
		{"open fails", func(context.CancelFunc) Source {
			return append(good, File{Name: "b", Size: 1, Open: func() (io.ReadCloser, error) { return nil, errBoom }})
		}, errBoom},
		{"read fails midway", func(context.CancelFunc) Source {
			return append(good, File{Name: "b", Size: 1 << 20, Open: func() (io.ReadCloser, error) {
				return io.NopCloser(&failReader{n: 500000, err: errBoom}), nil
			}})
		}, errBoom},
		{"short file", func(context.CancelFunc) Source {
			return append(good, File{Name: "b", Size: 10, Open: func() (io.ReadCloser, error) {
				return io.NopCloser(strings.NewReader("12345")), nil
			}})
		}, nil},
		{"cancelled midway", func(cancel context.CancelFunc) Source {
			return append(good, File{Name: "b", Size: 1 << 20, Open: func() (io.ReadCloser, error) {
				cancel()
				return io.NopCloser(&failReader{n: 1 << 20}), nil
			}})
		}, context.Canceled},
		{"duplicate name", func(context.CancelFunc) Source { return append(good, good...) }, nil},
		{"unsafe name", func(context.CancelFunc) Source {
			return Source{{Name: "../x", Size: 0, Open: good[0].Open}}
		}, nil},
		{"manifest name", func(context.CancelFunc) Source {
			return Source{{Name: ManifestName, Size: 0, Open: good[0].Open}}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, path := openDir(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			_, err := d.Create(ctx, "x.zip", tt.src(cancel), Meta{})
			if err == nil {
				t.Fatal("Create succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Create error %v, want %v", err, tt.want)
			}
			if names := dirNames(t, path); len(names) != 0 {
				t.Errorf("Create left %v behind", names)
			}
		})
	}
}

func TestCreateConcurrentSameKey(t *testing.T) {
	for _, links := range []bool{true, false} {
		t.Run(fmt.Sprintf("links=%v", links), func(t *testing.T) {
			d, path := openDir(t)
			if !links {
				d.link = func(string, string) error { return errors.ErrUnsupported }
			}
			testCreateConcurrentSameKey(t, d, path)
		})
	}
}

func testCreateConcurrentSameKey(t *testing.T, d *Dir, path string) {
	src := memSource(map[string]string{"a": strings.Repeat("data", 10000)})
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = d.Create(t.Context(), "same.zip", src, Meta{Version: fmt.Sprint(i)})
		})
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, ErrExists):
			t.Errorf("Create: %v, want nil or ErrExists", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d creates won, want 1", wins)
	}
	if diff := cmp.Diff([]string{"same.zip"}, dirNames(t, path)); diff != "" {
		t.Errorf("folder (-want +got):\n%s", diff)
	}
	if _, err := d.Verify("same.zip", Limits{}); err != nil {
		t.Errorf("Verify of the winner: %v", err)
	}
}

func TestCreateNewNameNeverOverwrites(t *testing.T) {
	d, _ := openDir(t)
	src := memSource(map[string]string{"a": "1"})
	var keys []string
	for range 3 {
		key := NewName(testTime, d.Exists)
		if _, err := d.Create(t.Context(), key, src, Meta{}); err != nil {
			t.Fatalf("Create(%s): %v", key, err)
		}
		keys = append(keys, key)
	}
	want := []string{"sb_backup_20261123153000.zip", "sb_backup_20261123153000_2.zip", "sb_backup_20261123153000_3.zip"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func TestCreateDoesNotHoldArchiveInMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	d, _ := openDir(t)
	const size = 64 << 20
	src := Source{{Name: "big.seg", Size: size, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(io.LimitReader(&patternReader{}, size)), nil
	}}}
	var before, after runtimeStats
	before.read()
	if _, err := d.Create(t.Context(), "big.zip", src, Meta{}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	after.read()
	t.Logf("Create of %d MiB allocated %d KiB", size>>20, (after.totalAlloc-before.totalAlloc)>>10)
	if got := after.totalAlloc - before.totalAlloc; got > 16<<20 {
		t.Errorf("Create of a %d MiB source allocated %d MiB, want under 16", size>>20, got>>20)
	}
	before.read()
	if _, err := d.Verify("big.zip", Limits{}); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	after.read()
	t.Logf("Verify of %d MiB allocated %d KiB", size>>20, (after.totalAlloc-before.totalAlloc)>>10)
	if got := after.totalAlloc - before.totalAlloc; got > 16<<20 {
		t.Errorf("Verify of a %d MiB archive allocated %d MiB, want under 16", size>>20, got>>20)
	}
}

// patternReader yields a compressible but not trivial byte stream.
type patternReader struct{ i uint32 }

func (p *patternReader) Read(b []byte) (int, error) {
	for k := range b {
		p.i = p.i*1664525 + 1013904223
		b[k] = byte(p.i>>24) & 0x0f
	}
	return len(b), nil
}

func TestCreateAutoKey(t *testing.T) {
	d, _ := openDir(t)
	key := NewAutoName(testTime, d.Exists)
	if _, err := d.Create(t.Context(), key, memSource(map[string]string{"auth.journal": "x"}), Meta{Created: testTime}); err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	if _, err := d.Verify(key, Limits{}); err != nil {
		t.Errorf("Verify(%q): %v", key, err)
	}
	list, err := d.List()
	if err != nil || len(list) != 1 || list[0].Key != key {
		t.Fatalf("List() = %v, %v; want the one key %q", list, err, key)
	}
	if err := d.Delete(key); err != nil {
		t.Errorf("Delete(%q): %v", key, err)
	}
}

// BenchmarkExtract extracts an archive of 64 MiB of log-like data (what a
// restore does once the route has verified it):
//
//	go test ./backup -run '^$' -bench Extract -benchtime 5x
func BenchmarkExtract(b *testing.B) {
	d, _ := openDir(b)
	var seg strings.Builder
	for i := 0; seg.Len() < 64<<20; i++ {
		fmt.Fprintf(&seg, `{"id":"%015d","level":0,"message":"GET /api/health?i=%d","data":{"status":200}}`+"\n", i, i)
	}
	files := map[string]string{"auth.journal": "auth", "logs/00000001.seg": seg.String()}
	if _, err := d.Create(b.Context(), "big.zip", memSource(files), Meta{Version: "bench", Created: testTime}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(seg.Len()))
	for i := 0; b.Loop(); i++ {
		dst := filepath.Join(b.TempDir(), fmt.Sprint("out", i))
		if err := d.Extract("big.zip", dst, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
