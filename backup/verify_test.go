package backup

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entry is one zip entry of a hand-built archive.
type entry struct {
	name     string
	data     string
	mode     fs.FileMode // 0: a regular file, 0600
	unlisted bool        // left out of the manifest
}

// archive describes a hand-built archive: its entries, and a manifest
// listing them that mutate may then change. With rawManifest set, that text
// is the manifest; with noManifest, there is none.
type archive struct {
	entries     []entry
	mutate      func(*Manifest)
	rawManifest string
	noManifest  bool
}

func (a archive) build(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	m := Manifest{Format: Format, Strongbox: "test", Created: testTime, Files: []ManifestFile{}}
	for _, e := range a.entries {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := e.mode
		if mode == 0 {
			mode = 0o600
		}
		fh.SetMode(mode)
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.data)
		if !e.unlisted && mode.IsRegular() {
			m.Files = append(m.Files, ManifestFile{Name: e.name, Size: int64(len(e.data)), SHA256: sum(e.data)})
		}
	}
	if a.mutate != nil {
		a.mutate(&m)
	}
	if !a.noManifest {
		mj := []byte(a.rawManifest)
		if a.rawManifest == "" {
			mj, _ = json.Marshal(m)
		}
		w, err := zw.Create(ManifestName)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(mj)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// verifyCases are the archives Verify must refuse, with a word of the
// message it must give. They also seed FuzzVerify.
var verifyCases = []struct {
	name string
	a    archive
	want string
}{
	{"missing manifest", archive{entries: []entry{{name: "a", data: "x"}}, noManifest: true}, "no manifest.json"},
	{"manifest not json", archive{entries: []entry{{name: "a", data: "x"}}, rawManifest: "{"}, "manifest.json"},
	{"unknown format", archive{entries: []entry{{name: "a", data: "x"}}, mutate: func(m *Manifest) { m.Format = 2 }}, "unknown format 2"},
	{"format missing", archive{rawManifest: `{"files":[]}`}, "unknown format 0"},
	{"checksum mismatch", archive{entries: []entry{{name: "a", data: "x"}}, mutate: func(m *Manifest) { m.Files[0].SHA256 = sum("y") }}, "SHA-256 mismatch"},
	{"bad checksum text", archive{entries: []entry{{name: "a", data: "x"}}, mutate: func(m *Manifest) { m.Files[0].SHA256 = "zz" }}, "bad size or checksum"},
	{"size larger", archive{entries: []entry{{name: "a", data: "xyz"}}, mutate: func(m *Manifest) { m.Files[0].Size = 4 }}, "not the 4 bytes"},
	{"size smaller", archive{entries: []entry{{name: "a", data: "xyz"}}, mutate: func(m *Manifest) { m.Files[0].Size = 2 }}, "not the 2 bytes"},
	{"negative size", archive{entries: []entry{{name: "a", data: "xyz"}}, mutate: func(m *Manifest) { m.Files[0].Size = -1 }}, "bad size"},
	{"extra file", archive{entries: []entry{{name: "a", data: "x"}, {name: "b", data: "y", unlisted: true}}}, `"b" is not listed`},
	{"missing file", archive{entries: []entry{{name: "a", data: "x"}}, mutate: func(m *Manifest) {
		m.Files = append(m.Files, ManifestFile{Name: "gone", SHA256: sum("")})
	}}, `"gone" listed in manifest.json is missing`},
	{"listed as folder", archive{entries: []entry{{name: "d/", mode: fs.ModeDir | 0o700}}, mutate: func(m *Manifest) {
		m.Files = append(m.Files, ManifestFile{Name: "d", SHA256: sum("")})
	}}, "is missing"},
	{"dotdot", archive{entries: []entry{{name: "../x", data: "x"}}}, "unsafe name"},
	{"absolute", archive{entries: []entry{{name: "/abs", data: "x"}}}, "unsafe name"},
	{"dotdot inside", archive{entries: []entry{{name: "a/../../x", data: "x"}}}, "unsafe name"},
	{"dotdot clean-looking", archive{entries: []entry{{name: "a/..", data: "x"}}}, "unsafe name"},
	{"dot element", archive{entries: []entry{{name: "./a", data: "x"}}}, "unsafe name"},
	{"double slash", archive{entries: []entry{{name: "a//b", data: "x"}}}, "unsafe name"},
	{"backslash dotdot", archive{entries: []entry{{name: `..\x`, data: "x"}}}, "unsafe name"},
	{"backslash inside", archive{entries: []entry{{name: `a\..\..\x`, data: "x"}}}, "unsafe name"},
	{"backslash absolute", archive{entries: []entry{{name: `\abs`, data: "x"}}}, "unsafe name"},
	{"drive letter", archive{entries: []entry{{name: "C:x", data: "x"}}}, "unsafe name"},
	{"nul", archive{entries: []entry{{name: "a\x00b", data: "x"}}}, "unsafe name"},
	{"manifest lists unsafe", archive{mutate: func(m *Manifest) {
		m.Files = append(m.Files, ManifestFile{Name: "../x", SHA256: sum("")})
	}}, "unsafe name"},
	{"symlink", archive{entries: []entry{{name: "link", data: "/etc/passwd", mode: fs.ModeSymlink | 0o777}}}, "not a regular file"},
	{"symlink named as folder", archive{entries: []entry{{name: "link/", data: "/etc", mode: fs.ModeSymlink | 0o777}}}, "not a regular file"},
	{"device", archive{entries: []entry{{name: "dev", data: "", mode: fs.ModeDevice | 0o600}}}, "not a regular file"},
	{"named pipe", archive{entries: []entry{{name: "fifo", data: "", mode: fs.ModeNamedPipe | 0o600}}}, "not a regular file"},
	{"duplicate entry", archive{entries: []entry{{name: "a", data: "x"}, {name: "a", data: "x", unlisted: true}}}, `"a" appears twice`},
	{"duplicate manifest", archive{entries: []entry{{name: ManifestName, data: "{}", unlisted: true}}}, "appears twice"},
	{"file and folder", archive{entries: []entry{{name: "a", data: "x"}, {name: "a/b", data: "y"}}}, `"a" is both a file and a folder`},
	{"manifest and folder", archive{entries: []entry{{name: "manifest.json/b", data: "y"}}}, "both a file and a folder"},
	{"duplicate in manifest", archive{entries: []entry{{name: "a", data: "x"}}, mutate: func(m *Manifest) {
		m.Files = append(m.Files, m.Files[0])
	}}, `lists "a" twice`},
}

func TestVerifyRejects(t *testing.T) {
	for _, tt := range verifyCases {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.a.build(t)
			_, err := Verify(bytes.NewReader(b), int64(len(b)), Limits{})
			if !errors.Is(err, ErrInvalidArchive) {
				t.Fatalf("Verify() = %v, want ErrInvalidArchive", err)
			}
			ae, ok := errors.AsType[*ArchiveError](err)
			if !ok || !strings.Contains(ae.Reason, tt.want) {
				t.Errorf("Verify() = %q, want an ArchiveError saying %q", err, tt.want)
			}
		})
	}
}

// TestExtractRejects: Extract, which checks the archive in the same pass
// as it writes, refuses every archive Verify refuses, for the same
// reason, and leaves no destination behind.
func TestExtractRejects(t *testing.T) {
	d, path := openDir(t)
	for i, tt := range verifyCases {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("bad_%d.zip", i)
			if err := os.WriteFile(filepath.Join(path, key), tt.a.build(t), 0o600); err != nil {
				t.Fatal(err)
			}
			parent := t.TempDir()
			dst := filepath.Join(parent, "out")
			err := d.Extract(key, dst, Limits{})
			ae, ok := errors.AsType[*ArchiveError](err)
			if !ok || !strings.Contains(ae.Reason, tt.want) {
				t.Errorf("Extract() = %v, want an ArchiveError saying %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("Extract() left %v beside the destination's place", entries)
			}
		})
	}
}

func TestVerifyAccepts(t *testing.T) {
	tests := []struct {
		name string
		a    archive
	}{
		{"empty", archive{}},
		{"nested with folders", archive{entries: []entry{
			{name: "logs/", mode: fs.ModeDir | 0o700},
			{name: "logs/1.seg", data: "one"},
			{name: "auth.journal", data: patternString(3 << 20)},
		}}},
		{"upper-case checksum", archive{entries: []entry{{name: "a", data: "x"}}, mutate: func(m *Manifest) {
			m.Files[0].SHA256 = strings.ToUpper(m.Files[0].SHA256)
		}}},
		{"unknown manifest field", archive{rawManifest: `{"format":1,"files":[],"later":true}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.a.build(t)
			if _, err := Verify(bytes.NewReader(b), int64(len(b)), Limits{}); err != nil {
				t.Errorf("Verify() = %v, want nil", err)
			}
		})
	}
}

// patternString returns n bytes of patternReader: compressible, but well
// under the default ratio limit.
func patternString(n int64) string {
	b, _ := io.ReadAll(io.LimitReader(&patternReader{}, n))
	return string(b)
}

func TestVerifyNotZip(t *testing.T) {
	for _, in := range []string{"", "PK", "hello, world", "PK\x03\x04" + strings.Repeat("\x00", 100)} {
		_, err := Verify(strings.NewReader(in), int64(len(in)), Limits{})
		if !errors.Is(err, ErrInvalidArchive) || !strings.Contains(err.Error(), "not a zip") {
			t.Errorf("Verify(%q) = %v, want not a zip", in, err)
		}
	}
}

func TestVerifyLimits(t *testing.T) {
	files := archive{entries: []entry{{name: "a", data: "x"}, {name: "b", data: "y"}, {name: "c", data: "z"}}}.build(t)
	tests := []struct {
		name   string
		b      []byte
		limits Limits
		want   string
	}{
		{"too many entries", files, Limits{MaxFiles: 3}, "4 entries"},
		{"total over limit", archive{entries: []entry{{name: "a", data: strings.Repeat("x", 100)}}}.build(t), Limits{MaxUncompressed: 99}, "limit of 99 bytes"},
		{"manifest sizes over limit", archive{entries: []entry{{name: "a", data: "x"}}, mutate: func(m *Manifest) {
			m.Files[0].Size = 1 << 40
		}}.build(t), Limits{}, "files total more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(bytes.NewReader(tt.b), int64(len(tt.b)), tt.limits)
			if !errors.Is(err, ErrInvalidArchive) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Verify() = %v, want %q", err, tt.want)
			}
		})
	}
}

// writeBomb writes to path an archive holding one entry of size zero
// bytes, streamed (never held in memory), with a manifest that lists it
// truthfully, so only the limits can refuse it.
func writeBomb(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	w, err := zw.Create("logs/zeros.seg")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	zero := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(zero)) {
		chunk := zero[:min(int64(len(zero)), left)]
		w.Write(chunk)
		h.Write(chunk)
	}
	m := Manifest{Format: Format, Files: []ManifestFile{{Name: "logs/zeros.seg", Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}}}
	mj, _ := json.Marshal(m)
	w, _ = zw.Create(ManifestName)
	w.Write(mj)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyZipBomb(t *testing.T) {
	d, path := openDir(t)
	writeBomb(t, filepath.Join(path, "bomb.zip"), 100<<20)
	fi, _ := os.Stat(filepath.Join(path, "bomb.zip"))
	t.Logf("100 MiB of zeros compress to %d bytes", fi.Size())
	tests := []struct {
		name   string
		limits Limits
		want   string
	}{
		{"total", Limits{MaxUncompressed: 10 << 20, MaxRatio: 1e9}, "limit of 10485760 bytes"},
		{"ratio", Limits{MaxUncompressed: 1 << 40, MaxRatio: 100}, "expands more than 100 times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Verify("bomb.zip", tt.limits)
			if !errors.Is(err, ErrInvalidArchive) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Verify() = %v, want %q", err, tt.want)
			}
			dst := filepath.Join(t.TempDir(), "out")
			if err := d.Extract("bomb.zip", dst, tt.limits); err == nil {
				t.Error("Extract of a bomb succeeded")
			}
			if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Extract of a bomb left its destination: %v", err)
			}
		})
	}
	// Within generous limits the same archive is fine.
	if _, err := d.Verify("bomb.zip", Limits{MaxUncompressed: 200 << 20, MaxRatio: 1e6}); err != nil {
		t.Errorf("Verify() within limits = %v", err)
	}
}

// TestVerifyLyingHeader: an entry whose header claims a small size but
// which decompresses to more is stopped by the bytes actually read.
func TestVerifyLyingHeader(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	data := strings.Repeat("a", 5<<20)
	m := Manifest{Format: Format, Files: []ManifestFile{{Name: "a", Size: 10, SHA256: sum(data[:10])}}}
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "a", Method: zip.Deflate, UncompressedSize64: 10})
	io.WriteString(w, data)
	mj, _ := json.Marshal(m)
	w, _ = zw.Create(ManifestName)
	w.Write(mj)
	zw.Close()
	b := buf.Bytes()
	_, err := Verify(bytes.NewReader(b), int64(len(b)), Limits{MaxUncompressed: 1 << 20})
	if !errors.Is(err, ErrInvalidArchive) || !strings.Contains(err.Error(), "not the 10 bytes") {
		t.Errorf("Verify() = %v, want a size mismatch", err)
	}
}

func FuzzVerify(f *testing.F) {
	for _, tt := range verifyCases {
		f.Add(tt.a.build(f))
	}
	f.Add(archive{entries: []entry{{name: "logs/1.seg", data: "one"}, {name: "a", data: "x"}}}.build(f))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Verify(bytes.NewReader(b), int64(len(b)), Limits{MaxUncompressed: 1 << 20, MaxFiles: 100})
		if err == nil && m == nil {
			t.Fatal("Verify() = nil, nil")
		}
		if err != nil && m != nil {
			t.Fatal("Verify() returned a manifest with an error")
		}
	})
}

// TestVerifyCentralDirectory: an archive whose central directory holds
// more records than MaxFiles allows is refused before archive/zip reads
// them all (it keeps every one in memory), whatever its record count says;
// real archives, zip64 ones included, pass.
func TestVerifyCentralDirectory(t *testing.T) {
	many := func(n int) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for i := range n {
			if _, err := zw.CreateHeader(&zip.FileHeader{Name: strings.Repeat("n", 8) + string(rune('a'+i%26)) + hex.EncodeToString([]byte{byte(i >> 16), byte(i >> 8), byte(i)}), Method: zip.Store}); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	t.Run("span of real archives", func(t *testing.T) {
		for _, n := range []int{1, 1000, 70_000} { // 70,000 > 65,535: a zip64 end record
			b := many(n)
			span, ok := centralDirSpan(bytes.NewReader(b), int64(len(b)))
			// Each record: 46 bytes and a 15-byte name.
			if !ok || span != int64(n)*(46+15) {
				t.Errorf("%d entries: centralDirSpan = %d, %v, want %d", n, span, ok, n*(46+15))
			}
		}
	})
	t.Run("too many records", func(t *testing.T) {
		b := many(1000)
		// The end record claims 3 entries; the reader would read 1,000.
		eocd := bytes.LastIndex(b, []byte("PK\x05\x06"))
		b[eocd+8], b[eocd+9], b[eocd+10], b[eocd+11] = 3, 0, 3, 0
		_, err := Verify(bytes.NewReader(b), int64(len(b)), Limits{MaxFiles: 10})
		if !errors.Is(err, ErrInvalidArchive) || !strings.Contains(err.Error(), "central directory") {
			t.Errorf("Verify() = %v, want a central directory refusal", err)
		}
	})
	t.Run("directory declared to start earlier than its offset", func(t *testing.T) {
		// A size reaching back to the start of the file: the reader
		// starts there, whatever the offset says.
		b := many(1000)
		eocd := bytes.LastIndex(b, []byte("PK\x05\x06"))
		binary.LittleEndian.PutUint32(b[eocd+12:], uint32(eocd))
		binary.LittleEndian.PutUint32(b[eocd+16:], uint32(eocd-1))
		span, ok := centralDirSpan(bytes.NewReader(b), int64(len(b)))
		if !ok || span != int64(eocd) {
			t.Errorf("centralDirSpan = %d, %v, want %d", span, ok, eocd)
		}
	})
	t.Run("created archives pass", func(t *testing.T) {
		b := archive{entries: []entry{{name: "a", data: "x"}, {name: "logs/b", data: "y"}}}.build(t)
		if _, err := Verify(bytes.NewReader(b), int64(len(b)), Limits{MaxFiles: 3}); err != nil {
			t.Errorf("Verify() = %v", err)
		}
	})
}
