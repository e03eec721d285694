package pocketbase

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"strongbox/backup/sqlite"
)

// TestOpenRefuses checks the errors of Open on data dirs that are not
// PocketBase v0.23 to v0.31's.
func TestOpenRefuses(t *testing.T) {
	const preV023 = `
CREATE TABLE _admins (id TEXT PRIMARY KEY, email TEXT, passwordHash TEXT);
CREATE TABLE _collections (id TEXT PRIMARY KEY, system BOOLEAN, type TEXT, name TEXT, schema JSON, indexes JSON, listRule TEXT, viewRule TEXT, createRule TEXT, updateRule TEXT, deleteRule TEXT, options JSON, created TEXT, updated TEXT);
CREATE TABLE _params (id TEXT PRIMARY KEY, key TEXT, value JSON, created TEXT, updated TEXT);
`
	tests := []struct {
		name   string
		dir    func(t *testing.T) string
		is     error
		format string // the message; %s is the data dir
	}{{
		name: "pre-v0.23",
		dir: func(t *testing.T) string {
			dir := t.TempDir()
			runSQL(t, filepath.Join(dir, "data.db"), preV023)
			return dir
		},
		is:     ErrVersion,
		format: "pocketbase: %s/data.db: not a PocketBase v0.23 to v0.31 data dir: it is from a PocketBase before v0.23; open it with PocketBase v0.31 once first (which migrates it), stop it, then import it",
	}, {
		name: "newer _collections",
		dir: func(t *testing.T) string {
			return fixtureDir(t, "ALTER TABLE _collections ADD COLUMN sortOrder INTEGER DEFAULT 0;", "")
		},
		is:     ErrVersion,
		format: "pocketbase: %s/data.db: not a PocketBase v0.23 to v0.31 data dir: table _collections has columns PocketBase v0.31 does not create (sortOrder); is it from a newer PocketBase?",
	}, {
		name: "newer _logs",
		dir: func(t *testing.T) string {
			return fixtureDir(t, "", "ALTER TABLE _logs ADD COLUMN trace TEXT; ALTER TABLE _logs ADD COLUMN span TEXT;")
		},
		is:     ErrVersion,
		format: "pocketbase: %s/auxiliary.db: not a PocketBase v0.23 to v0.31 data dir: table _logs has columns PocketBase v0.31 does not create (trace, span); is it from a newer PocketBase?",
	}, {
		name:   "no _authOrigins",
		dir:    func(t *testing.T) string { return fixtureDir(t, "DROP TABLE _authOrigins;", "") },
		is:     ErrVersion,
		format: "pocketbase: %s/data.db: not a PocketBase v0.23 to v0.31 data dir: it has no table _authOrigins",
	}, {
		name:   "_params without created",
		dir:    func(t *testing.T) string { return fixtureDir(t, "ALTER TABLE _params DROP COLUMN created;", "") },
		is:     ErrVersion,
		format: "pocketbase: %s/data.db: not a PocketBase v0.23 to v0.31 data dir: table _params lacks the columns created",
	}, {
		name:   "no _superusers collection",
		dir:    func(t *testing.T) string { return fixtureDir(t, "DELETE FROM _collections;", "") },
		is:     ErrVersion,
		format: "pocketbase: %s/data.db: not a PocketBase v0.23 to v0.31 data dir: it has no _superusers auth collection",
	}, {
		name:   "no data.db",
		dir:    func(t *testing.T) string { return t.TempDir() },
		format: "pocketbase: %s has no data.db: not a PocketBase data dir (pb_data)",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			d, err := Open(dir, Options{})
			if err == nil {
				d.Close()
				t.Fatal("Open: no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Open: %v, not %v", err, tt.is)
			}
			if want := strings.ReplaceAll(tt.format, "%s", dir); err.Error() != want {
				t.Errorf("Open:\n got %s\nwant %s", err, want)
			}
		})
	}
}

// TestOpenDamaged checks that a truncated data.db is refused as damaged.
func TestOpenDamaged(t *testing.T) {
	var sql strings.Builder
	sql.WriteString("CREATE TABLE posts (id TEXT PRIMARY KEY, body TEXT);\n")
	for i := range 300 {
		fmt.Fprintf(&sql, "INSERT INTO posts VALUES ('p%d', '%s');\n", i, strings.Repeat("lorem ipsum ", 40))
	}
	dir := fixtureDir(t, sql.String(), "-")
	db := filepath.Join(dir, "data.db")
	b := readFile(t, db)
	if err := os.WriteFile(db, b[:len(b)/2+100], 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir, Options{})
	if err == nil {
		// the damage may lie only in pages Open does not read
		err = d.Rows(Collection{Name: "posts", Type: "base"}, func(Row) error { return nil })
		d.Close()
	}
	if !errors.Is(err, sqlite.ErrCorrupt) {
		t.Fatalf("Open, Rows: %v, want an error wrapping sqlite.ErrCorrupt", err)
	}
	t.Log(err)
}

// TestFixture reads a data dir sqlite3 wrote: collections, their rows
// (a column added after the row was written has its default), the OAuth2
// links, auth origins, logs and counts.
func TestFixture(t *testing.T) {
	dir := fixtureDir(t, `
INSERT INTO _collections (id, system, type, name, fields, indexes, listRule, viewRule, createRule, options, created, updated)
	VALUES ('pbc_1', 0, 'base', 'posts', '[{"id":"t1","name":"title","type":"text","max":0}]', '["CREATE INDEX idx_t ON posts (title)"]', '', 'id != ''''', NULL, '{}', '2025-03-04 05:06:07.089Z', '2025-03-04 05:06:08.000Z');
INSERT INTO _collections (id, system, type, name, options, created, updated)
	VALUES ('pbc_2', 0, 'view', 'v', '{"viewQuery":"SELECT id FROM posts"}', '2025-03-04 05:06:07.089Z', '2025-03-04 05:06:07.089Z');
CREATE TABLE posts (id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL, title TEXT DEFAULT '' NOT NULL, n NUMERIC DEFAULT 0 NOT NULL);
INSERT INTO posts VALUES ('a', 'one', 1), ('b', 'two', 2.5);
ALTER TABLE posts ADD COLUMN flag BOOLEAN DEFAULT FALSE NOT NULL;
ALTER TABLE posts ADD COLUMN tags JSON DEFAULT '[]' NOT NULL;
INSERT INTO posts VALUES ('c', 'three', 3, TRUE, '["x"]');
INSERT INTO _externalAuths VALUES ('pbc_3142635823', '2025-03-04 05:06:07.089Z', 'ea1', 'google', 'g-123', 'su1', '2025-03-04 05:06:07.089Z');
INSERT INTO _authOrigins VALUES ('pbc_3142635823', '2025-03-04 05:06:07.089Z', 'fp', 'ao1', 'su1', '');
CREATE TABLE _mfas (id TEXT PRIMARY KEY);
INSERT INTO _mfas VALUES ('m1'), ('m2');
`, `INSERT INTO _logs VALUES ('l1', 0, 'GET /api/health', '{"status":200,"url":"/api/health"}', '2025-03-04 05:06:07.089Z');
INSERT INTO _logs VALUES ('l2', -4, 'debug', '{}', '2025-03-04 06:00:00.000Z');`)
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	cs, err := d.Collections()
	if err != nil {
		t.Fatal(err)
	}
	empty, notEmpty := "", "id != ''"
	at := func(s string) time.Time { tm, _ := time.Parse("2006-01-02 15:04:05Z", s); return tm }
	wantCs := []Collection{{
		ID: "pbc_3142635823", Name: "_superusers", Type: "auth", System: true,
		Fields:  []map[string]any{{"id": "f1", "name": "email", "type": "email"}},
		Indexes: []string{}, Options: map[string]any{"passwordAuth": map[string]any{"enabled": true}},
		Created: at("2025-01-02 03:04:05.678Z"), Updated: at("2025-01-02 03:04:05.678Z"),
	}, {
		ID: "pbc_1", Name: "posts", Type: "base",
		Fields:   []map[string]any{{"id": "t1", "name": "title", "type": "text", "max": float64(0)}},
		Indexes:  []string{"CREATE INDEX idx_t ON posts (title)"},
		ListRule: &empty, ViewRule: &notEmpty, Options: map[string]any{},
		Created: at("2025-03-04 05:06:07.089Z"), Updated: at("2025-03-04 05:06:08Z"),
	}, {
		ID: "pbc_2", Name: "v", Type: "view", Fields: []map[string]any{}, Indexes: []string{},
		Options: map[string]any{"viewQuery": "SELECT id FROM posts"},
		Created: at("2025-03-04 05:06:07.089Z"), Updated: at("2025-03-04 05:06:07.089Z"),
	}}
	if diff := cmp.Diff(wantCs, cs); diff != "" {
		t.Errorf("Collections (-want +got):\n%s", diff)
	}

	var rows []Row
	if err := d.Rows(cs[1], func(r Row) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	wantRows := []Row{
		{"id": "a", "title": "one", "n": int64(1), "flag": int64(0), "tags": "[]"},
		{"id": "b", "title": "two", "n": 2.5, "flag": int64(0), "tags": "[]"},
		{"id": "c", "title": "three", "n": int64(3), "flag": int64(1), "tags": `["x"]`},
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("Rows(posts) (-want +got):\n%s", diff)
	}
	if err := d.Rows(cs[2], func(r Row) error { t.Errorf("Rows(view): %v", r); return nil }); err != nil {
		t.Errorf("Rows(view): %v", err)
	}

	var eas []ExternalAuth
	if err := d.ExternalAuths(func(a ExternalAuth) error { eas = append(eas, a); return nil }); err != nil {
		t.Fatal(err)
	}
	wantEAs := []ExternalAuth{{ID: "ea1", CollectionRef: "pbc_3142635823", RecordRef: "su1", Provider: "google", ProviderID: "g-123",
		Created: at("2025-03-04 05:06:07.089Z"), Updated: at("2025-03-04 05:06:07.089Z")}}
	if diff := cmp.Diff(wantEAs, eas); diff != "" {
		t.Errorf("ExternalAuths (-want +got):\n%s", diff)
	}
	var aos []AuthOrigin
	if err := d.AuthOrigins(func(o AuthOrigin) error { aos = append(aos, o); return nil }); err != nil {
		t.Fatal(err)
	}
	wantAOs := []AuthOrigin{{ID: "ao1", CollectionRef: "pbc_3142635823", RecordRef: "su1", Fingerprint: "fp", Created: at("2025-03-04 05:06:07.089Z")}}
	if diff := cmp.Diff(wantAOs, aos); diff != "" {
		t.Errorf("AuthOrigins (-want +got):\n%s", diff)
	}

	var logs []Log
	if err := d.Logs(func(l Log) error { logs = append(logs, l); return nil }); err != nil {
		t.Fatal(err)
	}
	wantLogs := []Log{
		{ID: "l1", Created: at("2025-03-04 05:06:07.089Z"), Message: "GET /api/health", Data: json.RawMessage(`{"status":200,"url":"/api/health"}`)},
		{ID: "l2", Created: at("2025-03-04 06:00:00Z"), Level: -4, Message: "debug", Data: json.RawMessage(`{}`)},
	}
	if diff := cmp.Diff(wantLogs, logs); diff != "" {
		t.Errorf("Logs (-want +got):\n%s", diff)
	}

	for table, want := range map[string]int{"_mfas": 2, "_otps": 0, "_logs": 2, "posts": 3} {
		if n, err := d.Count(table); n != want || err != nil {
			t.Errorf("Count(%s) = %d, %v, want %d", table, n, err, want)
		}
	}
	if s, err := d.Settings(); s != nil || err != nil {
		t.Errorf("Settings() = %s, %v, want nil (none stored)", s, err)
	}

	// fn's error comes back as it is, and stops the walk
	stop := errors.New("enough")
	n := 0
	if err := d.Logs(func(Log) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Logs with a failing fn: %v after %d rows, want %v after 1", err, n, stop)
	}
	if err := d.Rows(cs[1], func(Row) error { return stop }); err != stop {
		t.Errorf("Rows with a failing fn: %v, want %v", err, stop)
	}
}

// TestDecodeErrors checks that a row that does not decode gives an error
// naming its table, id and column.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, sql, want string
		read            func(d *Data) error
	}{{
		name: "fields not JSON",
		sql:  `INSERT INTO _collections (id, type, name, fields) VALUES ('pbc_9', 'base', 'bad', '[{');`,
		want: `table _collections, row "pbc_9", column fields: unexpected end of JSON input`,
		read: func(d *Data) error { _, err := d.Collections(); return err },
	}, {
		name: "unknown type",
		sql:  `INSERT INTO _collections (id, type, name) VALUES ('pbc_9', 'graph', 'bad');`,
		want: `table _collections, row "pbc_9", column type: want base, auth or view, have "graph"`,
		read: func(d *Data) error { _, err := d.Collections(); return err },
	}, {
		name: "created not a date",
		sql:  `INSERT INTO _externalAuths VALUES ('c', 'yesterday', 'ea9', 'google', 'g', 'r', '');`,
		want: `table _externalAuths, row "ea9", column created: want a date like 2006-01-02 15:04:05.000Z, have "yesterday"`,
		read: func(d *Data) error { return d.ExternalAuths(func(ExternalAuth) error { return nil }) },
	}, {
		name: "system not a boolean",
		sql:  `INSERT INTO _collections (id, system, type, name) VALUES ('pbc_9', 'yes', 'base', 'bad');`,
		want: `table _collections, row "pbc_9", column system: want an integer, have text`,
		read: func(d *Data) error { _, err := d.Collections(); return err },
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Open(fixtureDir(t, tt.sql, "-"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			err = tt.read(d)
			if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("got %v\nwant an error ending %s", err, tt.want)
			}
		})
	}
	t.Run("log data not JSON", func(t *testing.T) {
		d, err := Open(fixtureDir(t, "", `INSERT INTO _logs VALUES ('l9', 0, 'm', '{"a":', '');`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		err = d.Logs(func(Log) error { return nil })
		want := `table _logs, row "l9", column data: not JSON: "{\"a\":"`
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("got %v\nwant an error ending %s", err, want)
		}
	})
}

// FuzzDecodeCollection checks that decodeCollection never panics, and
// that an error names the row.
func FuzzDecodeCollection(f *testing.F) {
	f.Add("auth", int64(1), `[{"name":"email","type":"email"}]`, `["CREATE INDEX i ON t (a)"]`, `{"mfa":{"enabled":false}}`, "2025-01-02 03:04:05.678Z")
	f.Add("view", int64(0), `[]`, `[]`, `{"viewQuery":"SELECT 1"}`, "")
	f.Add("base", int64(2), `[1]`, `{}`, `[]`, "2025-13-02 03:04:05Z")
	f.Fuzz(func(t *testing.T, typ string, system int64, fields, indexes, options, created string) {
		r := Row{"id": "pbc_1", "name": "c", "type": typ, "system": system, "fields": fields, "indexes": indexes,
			"options": options, "created": created, "updated": []byte(created), "listRule": nil, "viewRule": "",
			"createRule": nil, "updateRule": nil, "deleteRule": nil}
		_, err := decodeCollection(r)
		if err != nil && !strings.HasPrefix(err.Error(), `table _collections, row "pbc_1", column `) {
			t.Fatalf("decodeCollection: %v", err)
		}
	})
}
