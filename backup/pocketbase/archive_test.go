package pocketbase

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strongbox/backup/sqlite"
)

// TestArchive opens archives: one as PocketBase makes them (the database
// files at the root beside other files) and ones it refuses.
func TestArchive(t *testing.T) {
	dir := fixtureDir(t, `INSERT INTO _params VALUES ('settings', '{"meta":{"appName":"Zipped"}}', '', '');`, "")
	data := readFile(t, filepath.Join(dir, "data.db"))
	aux := readFile(t, filepath.Join(dir, "auxiliary.db"))

	t.Run("PocketBase's layout", func(t *testing.T) {
		tmp := t.TempDir()
		path := writeZip(t, []zipEntry{
			{name: "auxiliary.db", body: aux},
			{name: "data.db", body: data},
			{name: "data.db-wal", body: nil},
			{name: "storage/pbc_1/r1/a.txt", body: []byte("a file")},
			{name: "types.d.ts", body: []byte("// types")},
		})
		d, err := Open(path, Options{TempDir: tmp})
		if err != nil {
			t.Fatal(err)
		}
		s, err := d.Settings()
		if string(s) != `{"meta":{"appName":"Zipped"}}` || err != nil {
			t.Errorf("Settings() = %s, %v", s, err)
		}
		extracted := listDir(t, tmp)
		if want := "strongbox-pocketbase-*/auxiliary.db strongbox-pocketbase-*/data.db strongbox-pocketbase-*/data.db-wal"; extracted != want {
			t.Errorf("extracted %s, want %s", extracted, want)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if left := listDir(t, tmp); left != "" {
			t.Errorf("Close left %s", left)
		}
	})

	tests := []struct {
		name    string
		entries []zipEntry
		max     int64
		format  string // %s is the archive's path
	}{{
		name:    "a name leaving the archive",
		entries: []zipEntry{{name: "data.db", body: data}, {name: "../data.db", body: data}},
		format:  `pocketbase: %s has an entry named "../data.db", which points outside the archive: not an archive PocketBase made`,
	}, {
		name:    "a name leaving the archive deeper",
		entries: []zipEntry{{name: "storage/../../x", body: data}, {name: "data.db", body: data}},
		format:  `pocketbase: %s has an entry named "storage/../../x", which points outside the archive: not an archive PocketBase made`,
	}, {
		name:    "an absolute name",
		entries: []zipEntry{{name: "/tmp/data.db", body: data}},
		format:  `pocketbase: %s has an entry named "/tmp/data.db", which points outside the archive: not an archive PocketBase made`,
	}, {
		name:    "no data.db",
		entries: []zipEntry{{name: "auxiliary.db", body: aux}, {name: "pb_data/data.db", body: data}},
		format:  "pocketbase: %s holds no data.db at its root: not a PocketBase backup archive",
	}, {
		name:    "data.db twice",
		entries: []zipEntry{{name: "data.db", body: data}, {name: "data.db", body: data}},
		format:  "pocketbase: %s holds data.db twice: not an archive PocketBase made",
	}, {
		name:    "data.db a symlink",
		entries: []zipEntry{{name: "data.db", body: []byte("/etc/passwd"), mode: fs.ModeSymlink}},
		format:  "pocketbase: %s: data.db is not a regular file (mode Lrw-r--r--): not an archive PocketBase made",
	}, {
		name:    "larger than the limit",
		entries: []zipEntry{{name: "data.db", body: data}, {name: "auxiliary.db", body: aux}},
		max:     int64(len(data) + len(aux) - 1),
		format:  "pocketbase: the database files of %s are larger than the limit of " + itoa(len(data)+len(aux)-1) + " bytes",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			path := writeZip(t, tt.entries)
			d, err := Open(path, Options{TempDir: tmp, MaxArchiveBytes: tt.max})
			if err == nil {
				d.Close()
				t.Fatal("Open: no error")
			}
			if want := strings.ReplaceAll(tt.format, "%s", path); err.Error() != want {
				t.Errorf("Open:\n got %s\nwant %s", err, want)
			}
			if left := listDir(t, tmp); left != "" {
				t.Errorf("Open left %s", left)
			}
		})
	}

	t.Run("a truncated data.db", func(t *testing.T) {
		tmp := t.TempDir()
		path := writeZip(t, []zipEntry{{name: "data.db", body: data[:len(data)/2]}})
		_, err := Open(path, Options{TempDir: tmp})
		want := "pocketbase: " + path + "/data.db is damaged or not a SQLite database: "
		if !errors.Is(err, sqlite.ErrCorrupt) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Open:\n got %v\nwant an error wrapping sqlite.ErrCorrupt, starting %s", err, want)
		}
		if left := listDir(t, tmp); left != "" {
			t.Errorf("Open left %s", left)
		}
	})
	t.Run("neither", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "notes.txt")
		os.WriteFile(path, []byte("not a zip"), 0o644)
		_, err := Open(path, Options{})
		want := "pocketbase: " + path + " is neither a PocketBase data dir (pb_data) nor a .zip backup archive: zip: not a valid zip file"
		if err == nil || err.Error() != want {
			t.Errorf("Open:\n got %v\nwant %s", err, want)
		}
	})
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nothing")
		_, err := Open(path, Options{})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open: %v, want an error wrapping fs.ErrNotExist", err)
		}
	})
}

// TestExtractFileSize checks that an entry whose data is longer than its
// header declares is refused.
func TestExtractFileSize(t *testing.T) {
	dir := fixtureDir(t, "", "-")
	path := writeZip(t, []zipEntry{{name: "data.db", body: readFile(t, filepath.Join(dir, "data.db"))}})
	// shrink the declared uncompressed size in the central directory
	b := readFile(t, path)
	i := strings.LastIndex(string(b), "PK\x01\x02")
	size := uint32(b[i+24]) | uint32(b[i+25])<<8 | uint32(b[i+26])<<16 | uint32(b[i+27])<<24
	size -= 100
	b[i+24], b[i+25], b[i+26], b[i+27] = byte(size), byte(size>>8), byte(size>>16), byte(size>>24)
	os.WriteFile(path, b, 0o644)
	_, err := Open(path, Options{TempDir: t.TempDir()})
	// archive/zip or extractFile's own count stops the copy
	want := "pocketbase: extracting data.db from " + path + ": "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Open: %v\nwant an error starting %s", err, want)
	}
	t.Log(err)
}

// listDir lists the files under dir, the names of the dirs Open makes
// as a pattern.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			first, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
			if strings.HasPrefix(first, "strongbox-pocketbase-") {
				first = "strongbox-pocketbase-*"
			}
			names = append(names, first+"/"+rest)
		}
		return nil
	})
	return strings.Join(names, " ")
}
