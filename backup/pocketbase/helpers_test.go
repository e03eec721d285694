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

// v031Schema is the schema of PocketBase v0.31.0's system tables, as its
// migrations create them, and its _superusers collection.
const v031Schema = `
CREATE TABLE _collections (
	id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL,
	system BOOLEAN DEFAULT FALSE NOT NULL,
	type TEXT DEFAULT "base" NOT NULL,
	name TEXT UNIQUE NOT NULL,
	fields JSON DEFAULT "[]" NOT NULL,
	indexes JSON DEFAULT "[]" NOT NULL,
	listRule TEXT DEFAULT NULL,
	viewRule TEXT DEFAULT NULL,
	createRule TEXT DEFAULT NULL,
	updateRule TEXT DEFAULT NULL,
	deleteRule TEXT DEFAULT NULL,
	options JSON DEFAULT "{}" NOT NULL,
	created TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%fZ')) NOT NULL,
	updated TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%fZ')) NOT NULL
);
CREATE TABLE _params (
	id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL,
	value JSON DEFAULT NULL,
	created TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%fZ')) NOT NULL,
	updated TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%fZ')) NOT NULL
);
CREATE TABLE _externalAuths (collectionRef TEXT DEFAULT '' NOT NULL, created TEXT DEFAULT '' NOT NULL, id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL, provider TEXT DEFAULT '' NOT NULL, providerId TEXT DEFAULT '' NOT NULL, recordRef TEXT DEFAULT '' NOT NULL, updated TEXT DEFAULT '' NOT NULL);
CREATE TABLE _authOrigins (collectionRef TEXT DEFAULT '' NOT NULL, created TEXT DEFAULT '' NOT NULL, fingerprint TEXT DEFAULT '' NOT NULL, id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL, recordRef TEXT DEFAULT '' NOT NULL, updated TEXT DEFAULT '' NOT NULL);
CREATE TABLE _superusers (created TEXT DEFAULT '' NOT NULL, email TEXT DEFAULT '' NOT NULL, emailVisibility BOOLEAN DEFAULT FALSE NOT NULL, id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL, password TEXT DEFAULT '' NOT NULL, tokenKey TEXT DEFAULT '' NOT NULL, updated TEXT DEFAULT '' NOT NULL, verified BOOLEAN DEFAULT FALSE NOT NULL);
INSERT INTO _collections (id, system, type, name, fields, options, created, updated)
	VALUES ('pbc_3142635823', 1, 'auth', '_superusers', '[{"id":"f1","name":"email","type":"email"}]', '{"passwordAuth":{"enabled":true}}', '2025-01-02 03:04:05.678Z', '2025-01-02 03:04:05.678Z');
`

// auxSchema is auxiliary.db's _logs table as PocketBase v0.31.0 creates it.
const auxSchema = `
CREATE TABLE _logs (
	id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL,
	level INTEGER DEFAULT 0 NOT NULL,
	message TEXT DEFAULT "" NOT NULL,
	data JSON DEFAULT "{}" NOT NULL,
	created TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%fZ')) NOT NULL
);
`

// fixtureDir writes a data dir into a new temp dir: data.db from
// v031Schema and then extra, and auxiliary.db from auxSchema and aux
// unless aux is "-".
func fixtureDir(t *testing.T, extra, aux string) string {
	t.Helper()
	dir := t.TempDir()
	runSQL(t, filepath.Join(dir, "data.db"), v031Schema+extra)
	if aux != "-" {
		runSQL(t, filepath.Join(dir, "auxiliary.db"), auxSchema+aux)
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
