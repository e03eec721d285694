package pocketbase

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"strongbox/backup/sqlite"
)

// snapshot is everything Data reads.
type snapshot struct {
	Collections   []Collection
	Rows          map[string][]Row
	ExternalAuths []ExternalAuth
	AuthOrigins   []AuthOrigin
	Settings      json.RawMessage
	Logs          []Log
}

// read reads everything from d.
func read(t *testing.T, d *Data) snapshot {
	t.Helper()
	var s snapshot
	var err error
	if s.Collections, err = d.Collections(); err != nil {
		t.Fatal(err)
	}
	s.Rows = map[string][]Row{}
	for _, c := range s.Collections {
		if err := d.Rows(c, func(r Row) error { s.Rows[c.Name] = append(s.Rows[c.Name], r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.ExternalAuths(func(a ExternalAuth) error { s.ExternalAuths = append(s.ExternalAuths, a); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := d.AuthOrigins(func(o AuthOrigin) error { s.AuthOrigins = append(s.AuthOrigins, o); return nil }); err != nil {
		t.Fatal(err)
	}
	if s.Settings, err = d.Settings(); err != nil {
		t.Fatal(err)
	}
	if err := d.Logs(func(l Log) error { s.Logs = append(s.Logs, l); return nil }); err != nil {
		t.Fatal(err)
	}
	return s
}

func openRead(t *testing.T, path string, opts Options) snapshot {
	t.Helper()
	d, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	return read(t, d)
}

// TestPocketBase reads the data dir of a real PocketBase v0.31.0, and the
// backup archive it made, and compares what it reads with what it stored
// through its API and with what sqlite3 reads.
func TestPocketBase(t *testing.T) {
	t.Parallel()
	needSQLite3(t)
	pb := newPB(t, nil)
	pb.start()
	var posts, members struct{ ID string }
	pb.call("POST", "/api/collections", map[string]any{"name": "posts", "type": "base", "listRule": "",
		"fields": []map[string]any{{"name": "title", "type": "text"}, {"name": "meta", "type": "json"},
			{"name": "tags", "type": "select", "maxSelect": 2, "values": []string{"a", "b", "c"}},
			{"name": "when", "type": "date"}}}, &posts)
	pb.call("POST", "/api/collections", map[string]any{"name": "members", "type": "auth",
		"listRule": "id = @request.auth.id", "viewRule": "id = @request.auth.id",
		"fields": []map[string]any{
			{"name": "nickname", "type": "text", "max": 40},
			{"name": "score", "type": "number"},
			{"name": "active", "type": "bool"},
			{"name": "photo", "type": "file", "maxSelect": 1, "maxSize": 1000000},
			{"name": "favorite", "type": "relation", "collectionId": posts.ID, "maxSelect": 1},
		}}, &members)
	post := pb.createRecord("posts", map[string]any{"title": "hello", "meta": map[string]any{"k": 1},
		"tags": []string{"a", "b"}, "when": "2025-01-02 03:04:05.678Z"})
	post2 := pb.createRecord("posts", map[string]any{"title": "bare", "meta": 42})
	post3 := pb.createRecord("posts", map[string]any{"title": "none"})
	ann := pb.createRecord("members", map[string]any{"email": "ann@example.com", "password": "ann-password",
		"passwordConfirm": "ann-password", "nickname": "Ann", "score": 7.5, "active": true, "favorite": post,
		"verified": true, "emailVisibility": true})
	bob := pb.createRecord("members", map[string]any{"email": "bob@example.com", "password": "bob-password",
		"passwordConfirm": "bob-password", "nickname": "Bob", "score": 3})
	pb.createRecord("_externalAuths", map[string]any{"collectionRef": members.ID, "recordRef": ann,
		"provider": "google", "providerId": "g-1"})
	pb.call("PATCH", "/api/settings", map[string]any{
		"meta": map[string]any{"appName": "Import test"},
		"smtp": map[string]any{"enabled": true, "host": "smtp.example.com", "port": 587, "username": "mailer", "password": "smtp-secret"},
		"logs": map[string]any{"maxDays": 9},
	}, nil)
	for range 5 {
		pb.call("GET", "/api/health", nil, nil)
	}
	pb.waitLogs(5) // PocketBase writes its logs every 3s: the archive holds these
	pb.call("POST", "/api/backups", map[string]any{"name": "before_stop.zip"}, nil)
	pb.stop()

	got := openRead(t, pb.dir, Options{})
	compareSQLite3(t, pb.dir, got)
	checkArchive(t, filepath.Join(pb.dir, "backups", "before_stop.zip"), got)

	byName := map[string]Collection{}
	for _, c := range got.Collections {
		byName[c.Name] = c
	}
	m := byName["members"]
	if m.ID != members.ID || m.Type != "auth" || m.System || m.ListRule == nil || *m.ListRule != "id = @request.auth.id" || m.CreateRule != nil {
		t.Errorf("members = %+v", m)
	}
	fieldTypes := map[string]string{}
	for _, f := range m.Fields {
		fieldTypes[f["name"].(string)] = f["type"].(string)
		if f["name"] == "favorite" && f["collectionId"] != posts.ID {
			t.Errorf("favorite = %v, want collectionId %s", f, posts.ID)
		}
	}
	wantTypes := map[string]string{"id": "text", "password": "password", "tokenKey": "text", "email": "email",
		"emailVisibility": "bool", "verified": "bool",
		"nickname": "text", "score": "number", "active": "bool", "photo": "file", "favorite": "relation"}
	if diff := cmp.Diff(wantTypes, fieldTypes); diff != "" {
		t.Errorf("members' fields (-want +got):\n%s", diff)
	}
	if su := byName["_superusers"]; !su.System || su.Type != "auth" {
		t.Errorf("_superusers = %+v", su)
	}

	// the value types convert receives, per field type
	rows := got.Rows["members"]
	if len(rows) != 2 {
		t.Fatalf("members' rows: %v", rows)
	}
	for _, r := range rows {
		if pwd := r["password"].(string); !strings.HasPrefix(pwd, "$2a$") {
			t.Errorf("%s: password %q, want a bcrypt hash", r["email"], pwd)
		}
		if key := r["tokenKey"].(string); len(key) != 50 {
			t.Errorf("%s: tokenKey %q", r["email"], key)
		}
		for _, k := range []string{"password", "tokenKey", "created", "updated"} {
			delete(r, k)
		}
	}
	wantRows := []Row{
		{"id": ann, "email": "ann@example.com", "emailVisibility": int64(1), "verified": int64(1),
			"nickname": "Ann", "score": 7.5, "active": int64(1), "photo": "", "favorite": post},
		{"id": bob, "email": "bob@example.com", "emailVisibility": int64(0), "verified": int64(0),
			"nickname": "Bob", "score": int64(3), "active": int64(0), "photo": "", "favorite": ""},
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("members' rows (-want +got):\n%s", diff)
	}
	wantPosts := []Row{
		{"id": post, "title": "hello", "meta": `{"k":1}`, "tags": `["a","b"]`, "when": "2025-01-02 03:04:05.678Z"},
		{"id": post2, "title": "bare", "meta": int64(42), "tags": "[]", "when": ""},
		{"id": post3, "title": "none", "meta": nil, "tags": "[]", "when": ""},
	}
	if diff := cmp.Diff(wantPosts, got.Rows["posts"]); diff != "" {
		t.Errorf("posts' rows (-want +got):\n%s", diff)
	}
	if sus := got.Rows["_superusers"]; len(sus) != 1 || sus[0]["email"] != pbAdmin || !strings.HasPrefix(sus[0]["password"].(string), "$2a$") {
		t.Errorf("_superusers' rows: %v", sus)
	}

	if len(got.ExternalAuths) != 1 {
		t.Fatalf("ExternalAuths: %+v", got.ExternalAuths)
	}
	if ea := got.ExternalAuths[0]; ea.CollectionRef != members.ID || ea.RecordRef != ann || ea.Provider != "google" || ea.ProviderID != "g-1" || ea.Created.IsZero() {
		t.Errorf("ExternalAuths: %+v", ea)
	}

	var settings struct {
		Meta struct{ AppName string }
		SMTP struct {
			Enabled                  bool
			Host, Username, Password string
			Port                     int
		}
		Logs struct{ MaxDays int }
	}
	if err := json.Unmarshal(got.Settings, &settings); err != nil {
		t.Fatal(err)
	}
	if settings.Meta.AppName != "Import test" || settings.SMTP.Password != "smtp-secret" || settings.SMTP.Port != 587 ||
		settings.SMTP.Host != "smtp.example.com" || !settings.SMTP.Enabled || settings.Logs.MaxDays != 9 {
		t.Errorf("Settings() = %s", got.Settings)
	}

	checkHealthLog(t, got.Logs)
	d, err := Open(pb.dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]int{"_logs": len(got.Logs), "_mfas": 0, "_otps": 0, "members": 2, "nothing": 0} {
		if n, err := d.Count(table); n != want || err != nil {
			t.Errorf("Count(%s) = %d, %v, want %d", table, n, err, want)
		}
	}
	d.Close()

}

// checkArchive checks that the archive holds the same as the dir, the
// logs up to the backup.
func checkArchive(t *testing.T, path string, dir snapshot) {
	t.Helper()
	zipped := openRead(t, path, Options{TempDir: t.TempDir()})
	if n := len(zipped.Logs); n == 0 || n > len(dir.Logs) {
		t.Fatalf("the archive holds %d logs, the dir %d", n, len(dir.Logs))
	}
	dir.Logs = dir.Logs[:len(zipped.Logs)]
	if diff := cmp.Diff(dir, zipped); diff != "" {
		t.Errorf("the archive's data (-dir +archive):\n%s", diff)
	}
}

// checkHealthLog checks the log of a GET /api/health request.
func checkHealthLog(t *testing.T, logs []Log) {
	t.Helper()
	for _, l := range logs {
		if l.Message != "GET /api/health" {
			continue
		}
		var data map[string]any
		if err := json.Unmarshal(l.Data, &data); err != nil {
			t.Fatal(err)
		}
		delete(data, "execTime")
		delete(data, "userAgent")
		want := map[string]any{"auth": "", "method": "GET", "referer": "", "remoteIP": "127.0.0.1",
			"status": float64(200), "type": "request", "url": "/api/health", "userIP": "127.0.0.1"}
		if diff := cmp.Diff(want, data); diff != "" || l.Level != 0 || l.Created.IsZero() {
			t.Errorf("log %s: level %d, created %v, data (-want +got):\n%s", l.ID, l.Level, l.Created, diff)
		}
		return
	}
	t.Errorf("no log of GET /api/health in %d logs", len(logs))
}

// compareSQLite3 compares what Data read from dir with what sqlite3 reads:
// every column of every row, the JSON columns decoded.
func compareSQLite3(t *testing.T, dir string, got snapshot) {
	t.Helper()
	data, aux := filepath.Join(dir, "data.db"), filepath.Join(dir, "auxiliary.db")
	var cs []map[string]any
	for _, c := range got.Collections {
		var fields, options any
		mustJSON(t, c.Fields, &fields)
		mustJSON(t, c.Options, &options)
		cs = append(cs, map[string]any{"id": c.ID, "name": c.Name, "type": c.Type, "system": c.System,
			"fields": fields, "indexes": c.Indexes, "options": options, "created": c.Created.Format("2006-01-02 15:04:05.000Z"),
			"listRule": deref(c.ListRule), "viewRule": deref(c.ViewRule), "createRule": deref(c.CreateRule),
			"updateRule": deref(c.UpdateRule), "deleteRule": deref(c.DeleteRule)})
	}
	var want []map[string]any
	for _, r := range querySQL(t, data, "SELECT id, name, type, system, fields, indexes, options, created, listRule, viewRule, createRule, updateRule, deleteRule FROM _collections ORDER BY rowid") {
		r["system"] = r["system"] == json.Number("1")
		var fields, indexes, options any
		json.Unmarshal([]byte(r["fields"].(string)), &fields)
		json.Unmarshal([]byte(r["indexes"].(string)), &indexes)
		json.Unmarshal([]byte(r["options"].(string)), &options)
		var is []string
		mustJSON(t, indexes, &is)
		r["fields"], r["indexes"], r["options"] = fields, is, options
		want = append(want, r)
	}
	if diff := cmp.Diff(want, cs); diff != "" {
		t.Errorf("collections (-sqlite3 +Collections):\n%s", diff)
	}
	for name, rows := range got.Rows {
		var norm []map[string]any
		for _, r := range rows {
			n := map[string]any{}
			for k, v := range r {
				n[k] = normalize(v)
			}
			norm = append(norm, n)
		}
		if diff := cmp.Diff(querySQL(t, data, `SELECT * FROM "`+name+`" ORDER BY rowid`), norm); diff != "" {
			t.Errorf("rows of %s (-sqlite3 +Rows):\n%s", name, diff)
		}
	}
	var logs []map[string]any
	for _, l := range got.Logs {
		logs = append(logs, map[string]any{"id": l.ID, "level": json.Number(strconv.Itoa(l.Level)), "message": l.Message,
			"data": string(l.Data), "created": l.Created.Format("2006-01-02 15:04:05.000Z")})
	}
	if diff := cmp.Diff(querySQL(t, aux, "SELECT id, level, message, data, created FROM _logs ORDER BY rowid"), logs); diff != "" {
		t.Errorf("logs (-sqlite3 +Logs):\n%s", diff)
	}
	settings := querySQL(t, data, "SELECT CAST(value AS TEXT) AS value FROM _params WHERE id = 'settings'")
	if len(settings) != 1 || settings[0]["value"] != string(got.Settings) {
		t.Errorf("settings: sqlite3 reads %v, Settings() %s", settings, got.Settings)
	}
	for table, n := range map[string]int{"_externalAuths": len(got.ExternalAuths), "_authOrigins": len(got.AuthOrigins)} {
		if rows := querySQL(t, data, "SELECT count(*) AS n FROM "+table); rows[0]["n"] != json.Number(strconv.Itoa(n)) {
			t.Errorf("%s: sqlite3 counts %v, read %d", table, rows[0]["n"], n)
		}
	}
}

// normalize turns a SQLite value into what sqlite3 -json prints.
func normalize(v any) any {
	switch v := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case float64:
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return v
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// mustJSON converts v into out through JSON.
func mustJSON(t *testing.T, v, out any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestPocketBaseRunning checks that Open refuses the data dir of a running
// PocketBase, and that it reads what the write-ahead log of a PocketBase
// killed (SIGKILL) right after a write holds.
func TestPocketBaseRunning(t *testing.T) {
	t.Parallel()
	pb := newPB(t, nil)
	pb.start()
	_, err := Open(pb.dir, Options{})
	want := "pocketbase: PocketBase is still running on this data dir: stop it, or import a backup archive (" + filepath.Join(pb.dir, "data.db") + " is open in another process)"
	if !errors.Is(err, sqlite.ErrLocked) || err.Error() != want {
		t.Errorf("Open while PocketBase runs:\n got %v\nwant %s", err, want)
	}
	id := pb.createRecord("users", map[string]any{"email": "wal@example.com", "password": "wal-password", "passwordConfirm": "wal-password"})
	pb.signal(syscall.SIGKILL)
	if fi, err := os.Stat(filepath.Join(pb.dir, "data.db-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("PocketBase left no write-ahead log: %v", err)
	}
	// data.db alone does not hold the record yet: the log does
	alone := t.TempDir()
	os.WriteFile(filepath.Join(alone, "data.db"), readFile(t, filepath.Join(pb.dir, "data.db")), 0o600)
	if hasUser(openRead(t, alone, Options{}), id) {
		t.Fatal("data.db holds the record without its write-ahead log: this test tests nothing")
	}
	if got := openRead(t, pb.dir, Options{}); !hasUser(got, id) {
		t.Errorf("the record written before the kill is not among users' rows: %v", got.Rows["users"])
	}
}

// hasUser reports whether s holds the users record id.
func hasUser(s snapshot, id string) bool {
	for _, r := range s.Rows["users"] {
		if r["id"] == id {
			return true
		}
	}
	return false
}

// TestPocketBaseEncrypted reads the settings of a PocketBase started with
// --encryptionEnv.
func TestPocketBaseEncrypted(t *testing.T) {
	t.Parallel()
	needSQLite3(t)
	pb := newPB(t, []string{"PB_KEY=" + testKey}, "--encryptionEnv", "PB_KEY")
	pb.start()
	pb.call("PATCH", "/api/settings", map[string]any{"meta": map[string]any{"appName": "Sealed"},
		"smtp": map[string]any{"enabled": true, "host": "smtp.example.com", "port": 25, "password": "sealed-secret"}}, nil)
	pb.stop()
	stored := querySQL(t, filepath.Join(pb.dir, "data.db"), "SELECT CAST(value AS TEXT) AS value FROM _params WHERE id = 'settings'")
	if v, _ := stored[0]["value"].(string); strings.HasPrefix(v, "{") {
		t.Fatalf("PocketBase stored its settings in the clear: %.60s", v)
	}

	s := openRead(t, pb.dir, Options{EncryptionKey: testKey, EncryptionEnv: "PB_KEY"}).Settings
	var settings struct {
		Meta struct{ AppName string }
		SMTP struct{ Password string }
	}
	if err := json.Unmarshal(s, &settings); err != nil || settings.Meta.AppName != "Sealed" || settings.SMTP.Password != "sealed-secret" {
		t.Errorf("Settings() = %s, %v", s, err)
	}

	prefix := "pocketbase: " + filepath.Join(pb.dir, "data.db") + `: table _params, row "settings": the settings are encrypted: `
	for key, want := range map[string]string{
		"":                       prefix + "start the import with --encryption-env PB_KEY, the variable PocketBase's --encryptionEnv named",
		strings.ToUpper(testKey): prefix + "the key in PB_KEY does not open them (authentication failed)",
	} {
		d, err := Open(pb.dir, Options{EncryptionKey: key, EncryptionEnv: "PB_KEY"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Settings()
		d.Close()
		if !errors.Is(err, ErrEncrypted) || err.Error() != want {
			t.Errorf("Settings() with key %q:\n got %v\nwant %s", key, err, want)
		}
	}
}
