package pocketbase

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// needSQLite3 returns the path of Debian's sqlite3, or skips t.
func needSQLite3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 is not installed (apt-get install sqlite3): it writes the fixtures of this test")
	}
	return p
}

// runSQL runs sql in sqlite3 on the database file db.
func runSQL(t *testing.T, db, sql string) {
	t.Helper()
	cmd := exec.Command(needSQLite3(t), "-bail", db)
	cmd.Stdin = strings.NewReader(sql)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3 %s: %v\n%s", db, err, out)
	}
}

// querySQL returns the rows sqlite3 prints for query on db, numbers as
// json.Number.
func querySQL(t *testing.T, db, query string) []map[string]any {
	t.Helper()
	out, err := exec.Command(needSQLite3(t), "-readonly", "-json", db, query).Output()
	if err != nil {
		t.Fatalf("sqlite3 %s %q: %v", db, query, err)
	}
	var rows []map[string]any
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil {
		t.Fatalf("sqlite3 %s %q: %v\n%s", db, query, err, out)
	}
	return rows
}

// fixtureDir writes a data dir into a new temp dir: data.db from
// testdata/v031-data.sql (the schema of PocketBase v0.31.0's system tables,
// as its migrations create them, and its _superusers collection) and then
// extra, and auxiliary.db from testdata/v031-auxiliary.sql (its _logs
// table) and then aux, unless aux is "-".
func fixtureDir(t *testing.T, extra, aux string) string {
	t.Helper()
	dir := t.TempDir()
	runSQL(t, filepath.Join(dir, "data.db"), string(readFile(t, "testdata/v031-data.sql"))+extra)
	if aux != "-" {
		runSQL(t, filepath.Join(dir, "auxiliary.db"), string(readFile(t, "testdata/v031-auxiliary.sql"))+aux)
	}
	return dir
}

// zipEntry is an entry of an archive writeZip writes.
type zipEntry struct {
	name string
	body []byte
	mode os.FileMode
}

// writeZip writes an archive of entries to a new file and returns its path.
func writeZip(t *testing.T, entries []zipEntry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pb_backup.zip")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(e.mode | 0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readFile returns the content of a file, failing t.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func itoa(i int) string { return strconv.Itoa(i) }
