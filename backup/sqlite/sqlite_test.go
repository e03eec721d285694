package sqlite

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// pocketBaseSchema is the schema PocketBase v0.31.0 writes to data.db and
// auxiliary.db (from `sqlite3 data.db .schema` on a fresh pb_data).
func pocketBaseSchema(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	for _, f := range []string{"testdata/pocketbase-data.sql", "testdata/pocketbase-auxiliary.sql"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// sqlite_stat1 and sqlite_stat4 are SQLite's own (ANALYZE makes
		// them): a script may not create them.
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if !strings.HasPrefix(line, "CREATE TABLE sqlite_") {
				b.WriteString(line)
			}
		}
	}
	b.WriteString("ANALYZE;\n")
	return b.String()
}

// fixtures are scripts for the sqlite3 CLI that build the databases the
// reader must read as sqlite3 does.
var fixtures = []struct {
	name   string
	script func(t testing.TB) string
}{
	{"serial types", func(testing.TB) string {
		return `CREATE TABLE t(a, b, c);
INSERT INTO t VALUES (NULL, 0, 1), (127, -128, 32767), (-32768, 8388607, -8388608),
 (2147483647, -2147483648, 140737488355327), (-140737488355328, 9223372036854775807, -9223372036854775808),
 (1.5, -0.0, 1e300), ('', X'', 'héllo'), (X'00ff', 'it''s', 3.141592653589793), (-1, 255, 256),
 (2.5e-308, 'line
break', 'x');
`
	}},
	{"overflow and interior pages", func(testing.TB) string {
		return `PRAGMA page_size=512;
CREATE TABLE t(i INTEGER, s TEXT, b BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
INSERT INTO t SELECT i, hex(randomblob(i % 700)), randomblob(i * 7 % 5000) FROM n;
DELETE FROM t WHERE i % 3 = 0 OR (i > 1000 AND i < 1800);
CREATE TABLE small(x);
INSERT INTO small VALUES (1);
`
	}},
	{"overflow thresholds 4096", func(testing.TB) string {
		return `CREATE TABLE t(b BLOB);
WITH RECURSIVE n(i) AS (SELECT 3900 UNION ALL SELECT i+1 FROM n WHERE i < 4200)
INSERT INTO t SELECT zeroblob(i) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 40)
INSERT INTO t SELECT randomblob(i * 1000) FROM n;
`
	}},
	{"alter table add column", func(testing.TB) string {
		return `CREATE TABLE t(id INTEGER PRIMARY KEY, b TEXT);
INSERT INTO t(b) VALUES ('one'), ('two');
INSERT INTO t VALUES (100, 'hundred');
ALTER TABLE t ADD COLUMN c TEXT DEFAULT 'x''y';
ALTER TABLE t ADD COLUMN d INTEGER DEFAULT -5;
ALTER TABLE t ADD COLUMN e REAL DEFAULT 2.5;
ALTER TABLE t ADD COLUMN f DEFAULT NULL;
ALTER TABLE t ADD COLUMN g BLOB DEFAULT X'CAFE';
ALTER TABLE t ADD COLUMN h BOOLEAN DEFAULT TRUE;
ALTER TABLE t ADD COLUMN "quoted col" TEXT DEFAULT "dq";
ALTER TABLE t ADD COLUMN k;
INSERT INTO t(b, c, d) VALUES ('three', 'c3', 3);
CREATE TABLE u(a INT, "b c", [d], ` + "`e`" + `, PRIMARY KEY(a), UNIQUE("b c"), CHECK (a > 0));
INSERT INTO u VALUES (1, 2, 3, 4), (5, 'x', NULL, 7.5);
CREATE TABLE v(x INTEGER, y, PRIMARY KEY(x));
INSERT INTO v VALUES (7, 'seven'), (3, 'three');
`
	}},
	{"pocketbase schema", func(t testing.TB) string {
		return pocketBaseSchema(t) + `
INSERT INTO _collections(name, type, system) VALUES ('users', 'auth', TRUE), ('posts', 'base', FALSE);
INSERT INTO _params(id, value) VALUES ('settings', '{"meta":{"appName":"Acme"}}');
INSERT INTO _externalAuths(collectionRef, provider, providerId, recordRef) VALUES ('c1', 'google', '123', 'r1');
INSERT INTO _logs(level, message, data) VALUES (0, 'GET /api/health', '{"status":200}'), (4, 'boom', '{}');
INSERT INTO _migrations VALUES ('1_init.go', 1700000000000000);
`
	}},
	{"reserved bytes", func(testing.TB) string {
		return `.filectrl reserve_bytes 32
CREATE TABLE t(a, b);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 500)
INSERT INTO t SELECT i, randomblob(i * 13) FROM n;
`
	}},
	{"utf-16le", func(testing.TB) string {
		return `PRAGMA encoding='UTF-16le';
CREATE TABLE t(a TEXT, b);
INSERT INTO t VALUES ('héllo wörld ☃ 𝄞', 1), ('', X'00'), (hex(randomblob(3000)), 2.5);
`
	}},
	{"utf-16be", func(testing.TB) string {
		return `PRAGMA encoding='UTF-16be';
CREATE TABLE t(a TEXT);
INSERT INTO t VALUES ('héllo ☃ 𝄞'), (hex(randomblob(3000)));
`
	}},
	{"stored generated column", func(testing.TB) string {
		return `CREATE TABLE t(a INTEGER, b AS (a * 2) STORED, c TEXT);
INSERT INTO t(a, c) VALUES (1, 'x'), (2, 'y');
`
	}},
	{"empty table and vacuumed file", func(testing.TB) string {
		return `CREATE TABLE empty(a);
CREATE TABLE t(a);
INSERT INTO t VALUES (1), (2);
VACUUM;
`
	}},
}

// checkAgainstSQLite compares every table the reader lists with what
// sqlite3 reads from the same files. Reader first: sqlite3 may checkpoint
// a WAL when it closes.
func checkAgainstSQLite(t *testing.T, path string) {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	tables, err := db.Tables()
	if err != nil {
		t.Fatalf("Tables: %v", err)
	}
	got := map[string][]string{}
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
		got[tb.Name] = readAll(t, db, tb.Name)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	wantNames := sqliteQuery(t, path, "SELECT name FROM sqlite_schema WHERE type = 'table'")
	if !slices.Equal(names, wantNames) {
		t.Fatalf("Tables: got %q, sqlite3 lists %q", names, wantNames)
	}
	for _, tb := range tables {
		cols, want := sqliteRows(t, path, tb.Name)
		var gotCols []string
		for _, c := range tb.Columns {
			gotCols = append(gotCols, c.Name)
		}
		if !slices.Equal(gotCols, cols) {
			t.Errorf("table %q: columns %q, sqlite3 has %q", tb.Name, gotCols, cols)
		}
		for i := range want {
			want[i] = normalizeReals(want[i])
		}
		if len(got[tb.Name]) != len(want) {
			t.Errorf("table %q: %d rows, sqlite3 reads %d", tb.Name, len(got[tb.Name]), len(want))
		}
		for i := range min(len(want), len(got[tb.Name])) {
			if got[tb.Name][i] != want[i] {
				t.Errorf("table %q row %d:\n got  %.300s\n want %.300s", tb.Name, i, got[tb.Name][i], want[i])
				break
			}
		}
	}
}

func TestAgainstSQLite(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			path := fixturePath(t, "fixture.db")
			runSQLite(t, path, f.script(t))
			checkAgainstSQLite(t, path)
		})
	}
}

// TestFixtureShapes checks that the fixtures have what they are meant to
// exercise: interior pages, freelist pages, overflow pages.
func TestFixtureShapes(t *testing.T) {
	path := fixturePath(t, "fixture.db")
	runSQLite(t, path, fixtures[1].script(t))
	if free := sqliteQuery(t, path, "PRAGMA freelist_count"); len(free) != 1 || free[0] == "0" {
		t.Errorf("freelist_count = %q, want pages on the freelist", free)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Rows("t")
	if err != nil {
		t.Fatal(err)
	}
	maxDepthSeen := 0
	for rows.Next() {
		maxDepthSeen = max(maxDepthSeen, len(rows.stack))
	}
	if rows.Err() != nil || maxDepthSeen < 3 {
		t.Errorf("tree depth %d (err %v), want at least 3 levels", maxDepthSeen, rows.Err())
	}
}

func TestTableLookup(t *testing.T) {
	path := fixturePath(t, "fixture.db")
	runSQLite(t, path, fixtures[3].script(t))
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.Table("T")
	if err != nil || tb.Name != "t" || !tb.Columns[0].RowIDAlias || tb.Columns[1].RowIDAlias {
		t.Errorf("Table(T) = %+v, %v", tb, err)
	}
	if v, _ := db.Table("v"); !v.Columns[0].RowIDAlias {
		t.Errorf("v.x (INTEGER, PRIMARY KEY(x)) is not a rowid alias: %+v", v.Columns)
	}
	if u, _ := db.Table("u"); u.Columns[0].RowIDAlias {
		t.Errorf("u.a (INT, not INTEGER) is a rowid alias: %+v", u.Columns)
	}
	if _, err := db.Table("nope"); !errors.Is(err, ErrNoTable) {
		t.Errorf("Table(nope) = %v, want ErrNoTable", err)
	}
	if _, err := db.Rows("nope"); !errors.Is(err, ErrNoTable) {
		t.Errorf("Rows(nope) = %v, want ErrNoTable", err)
	}
}

func TestWithoutRowID(t *testing.T) {
	path := fixturePath(t, "fixture.db")
	runSQLite(t, path, "CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID; INSERT INTO w VALUES ('a', 1);")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.Table("w")
	if err != nil || !tb.WithoutRowID {
		t.Fatalf("Table(w) = %+v, %v; want WithoutRowID", tb, err)
	}
	if _, err := db.Rows("w"); err == nil || !strings.Contains(err.Error(), "WITHOUT ROWID") {
		t.Errorf("Rows(w) = %v, want a refusal naming WITHOUT ROWID", err)
	}
}

func TestVirtualTable(t *testing.T) {
	path := fixturePath(t, "fixture.db")
	runSQLite(t, path, "CREATE VIRTUAL TABLE f USING fts5(body); INSERT INTO f VALUES ('hello world'); CREATE TABLE t(a); INSERT INTO t VALUES (1);")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := db.Table("f")
	if err != nil || f.RootPage != 0 {
		t.Fatalf("Table(f) = %+v, %v; want the virtual table, root page 0", f, err)
	}
	if _, err := db.Rows("f"); err == nil || !strings.Contains(err.Error(), "virtual table") {
		t.Errorf("Rows(f) = %v, want a refusal naming the virtual table", err)
	}
	if got := readAll(t, db, "t"); len(got) != 1 {
		t.Errorf("t: %q", got)
	}
	if got := readAll(t, db, "f_content"); len(got) != 1 {
		t.Errorf("f_content (FTS5's shadow table): %q", got)
	}
}
