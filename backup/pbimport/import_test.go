package pbimport

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/backup/pocketbase"
	"strongbox/httpapi/settings"
)

var update = flag.Bool("update", false, "rewrite the .golden files in testdata")

// fakeSource is a PocketBase data dir built in memory. Rows of a
// collection come from rows, or from gen when set (n generated rows).
type fakeSource struct {
	cols     []pocketbase.Collection
	rows     map[string][]pocketbase.Row
	gen      map[string]func(i int) pocketbase.Row
	genN     map[string]int
	links    []pocketbase.ExternalAuth
	origins  []pocketbase.AuthOrigin
	counts   map[string]int
	settings json.RawMessage
	logs     []pocketbase.Log
	genLogs  int
	logAt    time.Time
	changed  error // what Unchanged returns
}

func (f *fakeSource) Collections() ([]pocketbase.Collection, error) { return f.cols, nil }

func (f *fakeSource) Rows(c pocketbase.Collection, fn func(pocketbase.Row) error) error {
	for _, r := range f.rows[c.ID] {
		if err := fn(r); err != nil {
			return err
		}
	}
	for i := range f.genN[c.ID] {
		if err := fn(f.gen[c.ID](i)); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeSource) ExternalAuths(fn func(pocketbase.ExternalAuth) error) error {
	for _, l := range f.links {
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeSource) AuthOrigins(fn func(pocketbase.AuthOrigin) error) error {
	for _, o := range f.origins {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeSource) Count(table string) (int, error)    { return f.counts[table], nil }
func (f *fakeSource) Settings() (json.RawMessage, error) { return f.settings, nil }
func (f *fakeSource) Unchanged() error                   { return f.changed }

func (f *fakeSource) Logs(fn func(pocketbase.Log) error) error {
	for _, l := range f.logs {
		if err := fn(l); err != nil {
			return err
		}
	}
	for i := range f.genLogs {
		if err := fn(genLog(f.logAt, i)); err != nil {
			return err
		}
	}
	return nil
}

// genLog is the i-th synthetic request log, a second apart from at.
func genLog(at time.Time, i int) pocketbase.Log {
	data := fmt.Sprintf(`{"auth":"","execTime":%d.5,"method":"GET","referer":"","remoteIP":"127.0.0.1","status":200,"type":"request","url":"/api/collections/users/records?page=%d","userAgent":"bench","userIP":"127.0.0.1"}`, i%97, i%13)
	return pocketbase.Log{ID: fmt.Sprintf("l%014d", i), Created: at.Add(time.Duration(i) * time.Second), Level: 0,
		Message: "GET /api/collections/users/records", Data: json.RawMessage(data)}
}

// obj decodes a JSON object literal.
func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

// pbAuthFields are the built-in fields of a PocketBase v0.31.0 auth
// collection, then extra.
func pbAuthFields(t testing.TB, extra ...string) []map[string]any {
	t.Helper()
	fields := []string{
		`{"autogeneratePattern":"[a-z0-9]{15}","hidden":false,"id":"text3208210256","max":15,"min":15,"name":"id","pattern":"^[a-z0-9]+$","presentable":false,"primaryKey":true,"required":true,"system":true,"type":"text"}`,
		`{"cost":0,"hidden":true,"id":"password901924565","max":0,"min":8,"name":"password","pattern":"","presentable":false,"required":true,"system":true,"type":"password"}`,
		`{"autogeneratePattern":"[a-zA-Z0-9]{50}","hidden":true,"id":"text2504183744","max":60,"min":30,"name":"tokenKey","pattern":"","presentable":false,"primaryKey":false,"required":true,"system":true,"type":"text"}`,
		`{"exceptDomains":null,"hidden":false,"id":"email3885137012","name":"email","onlyDomains":null,"presentable":false,"required":true,"system":true,"type":"email"}`,
		`{"hidden":false,"id":"bool1547992806","name":"emailVisibility","presentable":false,"required":false,"system":true,"type":"bool"}`,
		`{"hidden":false,"id":"bool256245529","name":"verified","presentable":false,"required":false,"system":true,"type":"bool"}`,
	}
	fields = append(fields, extra...)
	fields = append(fields,
		`{"hidden":false,"id":"autodate2990389176","name":"created","onCreate":true,"onUpdate":false,"presentable":false,"system":false,"type":"autodate"}`,
		`{"hidden":false,"id":"autodate3332085495","name":"updated","onCreate":true,"onUpdate":true,"presentable":false,"system":false,"type":"autodate"}`)
	out := make([]map[string]any, len(fields))
	for i, f := range fields {
		out[i] = obj(t, f)
	}
	return out
}

// pbAuthOptions are the options of a PocketBase auth collection, with
// the given secret prefix and the fields of more over them.
func pbAuthOptions(t testing.TB, secret string, more string) map[string]any {
	t.Helper()
	o := obj(t, fmt.Sprintf(`{"authRule":"","manageRule":null,
	 "authAlert":{"enabled":true,"emailTemplate":{"subject":"Login from a new location","body":"<p>new login</p>"}},
	 "oauth2":{"enabled":false,"mappedFields":{"id":"","name":"","username":"","avatarURL":""},"providers":[]},
	 "passwordAuth":{"enabled":true,"identityFields":["email"]},
	 "mfa":{"enabled":false,"duration":1800,"rule":""},
	 "otp":{"enabled":false,"duration":180,"length":8,"emailTemplate":{"subject":"OTP","body":"<p>{OTP}</p>"}},
	 "authToken":{"duration":86400,"secret":"%[1]s-auth-0123456789012345678901234567890"},
	 "passwordResetToken":{"duration":1800,"secret":"%[1]s-reset-012345678901234567890123456789"},
	 "emailChangeToken":{"duration":1800,"secret":"%[1]s-email-012345678901234567890123456789"},
	 "verificationToken":{"duration":259200,"secret":"%[1]s-verify-01234567890123456789012345678"},
	 "fileToken":{"duration":180,"secret":"%[1]s-file-0123456789012345678901234567890"},
	 "verificationTemplate":{"subject":"Verify","body":"<p>{TOKEN}</p>"},
	 "resetPasswordTemplate":{"subject":"Reset","body":"<p>{TOKEN}</p>"},
	 "confirmEmailChangeTemplate":{"subject":"Confirm","body":"<p>{TOKEN}</p>"}}`, secret))
	for k, v := range obj(t, more) {
		o[k] = v
	}
	return o
}

func strp(s string) *string { return &s }

var pbCreated = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// pbHashOld is a bcrypt hash of "old-password-1" at PocketBase's cost
// (10) with the $2a$ prefix.
var pbHashOld = func() string {
	h, err := bcrypt.GenerateFromPassword([]byte("old-password-1"), 10)
	if err != nil {
		panic(err)
	}
	return string(h)
}()

func pbUser(id, email string, extra map[string]any) pocketbase.Row {
	r := pocketbase.Row{"id": id, "email": email, "emailVisibility": int64(1), "verified": int64(0), "password": pbHashOld,
		"tokenKey": "tk_" + id + "_01234567890123456789012345678", "created": "2025-06-02 10:00:00.123Z", "updated": "2025-06-03 10:00:00.456Z"}
	for k, v := range extra {
		r[k] = v
	}
	return r
}

// pbFixture is a PocketBase data dir with one of everything an import
// maps or skips.
func pbFixture(t testing.TB) *fakeSource {
	t.Helper()
	users := pocketbase.Collection{ID: "_pb_users_auth_", Name: "users", Type: "auth", Created: pbCreated, Updated: pbCreated,
		ListRule: strp("id = @request.auth.id"), ViewRule: strp("@collection.posts.author ?= id"), CreateRule: strp(""),
		Fields: pbAuthFields(t,
			`{"autogeneratePattern":"","hidden":false,"id":"text1579384326","max":255,"min":0,"name":"name","pattern":"","presentable":false,"primaryKey":false,"required":false,"system":false,"type":"text"}`,
			`{"hidden":false,"id":"file376926767","maxSelect":1,"maxSize":0,"mimeTypes":["image/jpeg"],"name":"avatar","presentable":false,"protected":false,"required":false,"system":false,"thumbs":null,"type":"file"}`,
			`{"hidden":false,"id":"number1","max":null,"min":null,"name":"age","onlyInt":true,"presentable":false,"required":false,"system":false,"type":"number"}`,
			`{"hidden":false,"id":"bool2","name":"admin","presentable":false,"required":false,"system":false,"type":"bool"}`,
			`{"hidden":false,"id":"select3","maxSelect":1,"name":"plan","presentable":false,"required":false,"system":false,"type":"select","values":["free","pro"]}`,
			`{"exceptDomains":null,"hidden":false,"id":"email4","name":"backup","onlyDomains":["example.com"],"presentable":false,"required":false,"system":false,"type":"email"}`),
		Indexes: []string{
			"CREATE UNIQUE INDEX `idx_tokenKey__pb_users_auth_` ON `users` (`tokenKey`)",
			"CREATE UNIQUE INDEX `idx_email__pb_users_auth_` ON `users` (`email`) WHERE `email` != ''",
			"CREATE INDEX `idx_plan` ON `users` (`plan`)",
			"CREATE INDEX `idx_name` ON `users` (`name`)",
		},
		Options: pbAuthOptions(t, "users", `{"oauth2":{"enabled":true,"mappedFields":{"id":"","name":"name","username":"","avatarURL":"avatar"},
		 "providers":[{"name":"github","clientId":"gh-id","clientSecret":"gh-secret","authURL":"","tokenURL":"","userInfoURL":"","displayName":"","pkce":null,"extra":null},
		  {"name":"myspace","clientId":"ms-id","clientSecret":"ms-secret","authURL":"","tokenURL":"","userInfoURL":"","displayName":"","pkce":null,"extra":null}]},
		 "mfa":{"enabled":true,"duration":900,"rule":"admin = true"},"passwordAuth":{"enabled":true,"identityFields":["email"]},
		 "authToken":{"duration":1209600,"secret":"users-auth-0123456789012345678901234567890"}}`),
	}
	superusers := pocketbase.Collection{ID: authn.SuperusersID, Name: "_superusers", Type: "auth", System: true, Created: pbCreated, Updated: pbCreated,
		Fields: pbAuthFields(t, `{"hidden":false,"id":"text9","name":"nickname","system":false,"type":"text"}`),
		Indexes: []string{
			"CREATE UNIQUE INDEX `idx_tokenKey_pbc_3142635823` ON `_superusers` (`tokenKey`)",
			"CREATE UNIQUE INDEX `idx_email_pbc_3142635823` ON `_superusers` (`email`) WHERE `email` != ''",
		},
		Options: pbAuthOptions(t, "su", `{"authAlert":{"enabled":true,"emailTemplate":{"subject":"Login from a new location","body":"<p>new login</p>"}}}`),
	}
	members := pocketbase.Collection{ID: "pbc_111", Name: "members", Type: "auth", Created: pbCreated, Updated: pbCreated,
		Fields:  pbAuthFields(t, `{"hidden":false,"id":"json5","name":"profile","system":false,"type":"json","maxSize":0}`),
		Options: pbAuthOptions(t, "members", `{"passwordAuth":{"enabled":true,"identityFields":["email"]},"futureOption":{"x":1}}`),
	}
	src := &fakeSource{
		cols: []pocketbase.Collection{
			superusers, users, members,
			{ID: "pbc_222", Name: "posts", Type: "base", Created: pbCreated, Updated: pbCreated},
			{ID: "pbc_333", Name: "post_stats", Type: "view", Created: pbCreated, Updated: pbCreated},
			{ID: "pbc_2281828961", Name: "_externalAuths", Type: "base", System: true},
			{ID: "pbc_4275539003", Name: "_authOrigins", Type: "base", System: true},
			{ID: "pbc_2279338944", Name: "_mfas", Type: "base", System: true},
			{ID: "pbc_1638494021", Name: "_otps", Type: "base", System: true},
		},
		rows: map[string][]pocketbase.Row{
			authn.SuperusersID: {pbUser("admin0000000001", "admin@example.com", map[string]any{"verified": int64(1), "nickname": "boss"})},
			"_pb_users_auth_": {
				pbUser("alice0000000001", "alice@example.com", map[string]any{"name": "Alice", "age": int64(31), "admin": int64(1), "avatar": "a.png", "plan": "pro", "backup": ""}),
				pbUser("bob000000000001", "bob@example.com", map[string]any{"name": "Bob", "age": float64(40), "admin": int64(0), "verified": int64(1)}),
				pbUser("carol0000000001", "", map[string]any{"name": "Carol"}),                                                                 // no email: skipped
				pbUser("dave00000000001", "dave@example.com", map[string]any{"age": 1.5}),                                                      // not an integer: skipped
				pbUser("erin00000000001", "erin@example.com", map[string]any{"password": "nohash"}),                                            // skipped
				pbUser("frank0000000001", "frank@example.com", map[string]any{"tokenKey": "tk_alice0000000001_01234567890123456789012345678"}), // alice's: skipped
			},
			"pbc_111": {pbUser("mem000000000001", "mem@example.com", map[string]any{"profile": `{"a":1}`})},
		},
		links: []pocketbase.ExternalAuth{
			{ID: "ea1", CollectionRef: "_pb_users_auth_", RecordRef: "alice0000000001", Provider: "github", ProviderID: "4242", Created: pbCreated, Updated: pbCreated},
			{ID: "ea2", CollectionRef: "_pb_users_auth_", RecordRef: "carol0000000001", Provider: "github", ProviderID: "77", Created: pbCreated, Updated: pbCreated},
		},
		origins: []pocketbase.AuthOrigin{
			{ID: "ao1", CollectionRef: authn.SuperusersID, RecordRef: "admin0000000001", Fingerprint: "fp-admin", Created: pbCreated, Updated: pbCreated},
		},
		counts: map[string]int{"_mfas": 2, "_otps": 1},
		settings: json.RawMessage(`{
		 "meta":{"appName":"Acme PB","appURL":"https://pb.example.com","senderName":"Acme","senderAddress":"no-reply@example.com","hideControls":false},
		 "logs":{"maxDays":7,"minLevel":0,"logIP":true,"logAuthId":true},
		 "smtp":{"enabled":true,"port":465,"host":"smtp.example.com","username":"mailer","password":"smtp-secret","authMethod":"PLAIN","tls":true,"localName":""},
		 "s3":{"enabled":true,"bucket":"files","region":"eu","endpoint":"https://s3.example.com","accessKey":"ak","secret":"sk","forcePathStyle":false},
		 "backups":{"cron":"0 3 * * *","cronMaxKeep":5,"s3":{"enabled":false,"bucket":"","region":"","endpoint":"","accessKey":"","secret":"","forcePathStyle":false}},
		 "batch":{"enabled":true,"maxRequests":-5,"timeout":3,"maxBodySize":0},
		 "rateLimits":{"enabled":true,"rules":[{"label":"*:auth","audience":"","duration":3,"maxRequests":2}]},
		 "trustedProxy":{"headers":["X-Forwarded-For"],"useLeftmostIP":true},
		 "superuserIPs":["10.0.0.1"]}`),
		logs: []pocketbase.Log{
			{ID: "req000000000001", Created: logsAt, Level: 0, Message: "GET /api/health",
				Data: json.RawMessage(`{"auth":"","execTime":0.25,"method":"GET","referer":"","remoteIP":"127.0.0.1","status":200,"type":"request","url":"/api/health","userAgent":"curl","userIP":"127.0.0.1"}`)},
			{ID: "req000000000002", Created: logsAt.Add(time.Minute), Level: 4, Message: "GET /nope",
				Data: json.RawMessage(`{"auth":"_superusers","authId":"admin0000000001","details":{"x":1},"error":"Not found.","execTime":1,"method":"GET","referer":"","remoteIP":"127.0.0.1","status":404,"type":"request","url":"/nope","userAgent":"curl","userIP":"127.0.0.1","extra":true}`)},
			{ID: "app000000000001", Created: logsAt.Add(2 * time.Minute), Level: 8, Message: "cron failed",
				Data: json.RawMessage(`{"error":"boom","job":"__pbBackup__"}`)},
		},
	}
	return src
}

// importClock is a clock 30 days after the fixture's logs, which
// settings.logs.maxDays 7 then drops.
func importClock() time.Time { return logsAt.Add(30 * 24 * time.Hour) }

// logsAt is when the fixture's logs were written: an hour ago, within
// the retention of settings.logs.maxDays 7.
var logsAt = time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)

func TestImportPocketBase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sb_data")
	rep, err := Import(t.Context(), pbFixture(t), Options{OpenStores: openTestStores, Dir: dir, BatchSize: 2})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	golden(t, "import_report.golden", rep.Text())

	st := openImported(t, dir)
	checkImportedAuth(t, st)
	checkImportedSettings(t, st)
	checkImportedLogs(t, st)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("report differs from %s (run with -update to accept):\n%s", path, got)
	}
}

func checkImportedAuth(t *testing.T, st *imported) {
	t.Helper()
	auth := st.Auth
	users, ok := auth.Collection("users")
	if !ok {
		t.Fatal("no users collection")
	}
	if users.ID != "_pb_users_auth_" || users.AuthToken.Secret != "users-auth-0123456789012345678901234567890" || users.AuthToken.Duration != 1209600 ||
		!users.MFA.Enabled || users.MFA.Rule != "admin = true" || !users.OAuth2.Enabled || len(users.OAuth2.Providers) != 1 ||
		users.OAuth2.Providers[0].ClientSecret != "gh-secret" || users.OAuth2.MappedFields.Name != "name" || !users.Created.Equal(pbCreated) {
		t.Errorf("users = %+v %+v, want PocketBase's options, secrets and dates", users, users.AuthOptions)
	}
	if users.ViewRule != nil || *users.ListRule != "id = @request.auth.id" || users.CreateRule == nil || *users.CreateRule != "" {
		t.Errorf("users rules = list %v view %v create %v, want the join rule null and the others kept", users.ListRule, users.ViewRule, users.CreateRule)
	}
	for _, name := range []string{"name", "age", "admin", "backup"} {
		if users.Field(name) == nil {
			t.Errorf("users has no field %s", name)
		}
	}
	for _, name := range []string{"avatar", "plan"} {
		if users.Field(name) != nil {
			t.Errorf("users has the skipped field %s", name)
		}
	}
	alice, err := auth.AuthWithPassword(t.Context(), users, "alice@example.com", "", "old-password-1")
	if err != nil {
		t.Fatalf("alice signs in with her PocketBase password: %v", err)
	}
	if alice.Fields["age"] != float64(31) || alice.Fields["admin"] != true || alice.Fields["name"] != "Alice" || !alice.EmailVisibility || alice.Verified {
		t.Errorf("alice = %+v, want the values converted from SQLite", alice)
	}
	if links := auth.ExternalAuths(users, alice.ID); len(links) != 1 || links[0].ProviderID != "4242" {
		t.Errorf("alice's links = %v, want the github link", links)
	}
	su := auth.Superusers()
	if su.AuthToken.Secret != "su-auth-0123456789012345678901234567890" {
		t.Errorf("_superusers secret = %q, want PocketBase's", su.AuthToken.Secret)
	}
	if _, err := auth.AuthWithPassword(t.Context(), su, "admin@example.com", "", "old-password-1"); err != nil {
		t.Errorf("the superuser signs in: %v", err)
	}
	if _, ok := auth.Collection("posts"); ok {
		t.Error("the base collection posts was imported")
	}
	// A token PocketBase issued to alice, signed as PocketBase signs it.
	tok := pbToken(t, users, alice)
	if _, r, _, err := auth.VerifyToken(tok, authn.TokenAuth); err != nil || r.ID != alice.ID {
		t.Errorf("PocketBase's token for alice = %v, %v, want it accepted", r, err)
	}
}

// pbToken signs an auth token for r of c as PocketBase v0.31.0 does: HS256
// with the record's tokenKey followed by the collection's secret.
func pbToken(t *testing.T, c *authn.Collection, r *authn.Record) string {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	claims, _ := json.Marshal(map[string]any{"collectionId": c.ID, "exp": time.Now().Add(time.Hour).Unix(), "id": r.ID, "refreshable": true, "type": "auth"})
	unsigned := enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc(claims)
	mac := hmac.New(sha256.New, []byte(r.TokenKey+c.AuthToken.Secret))
	mac.Write([]byte(unsigned))
	return unsigned + "." + enc(mac.Sum(nil))
}

func checkImportedSettings(t *testing.T, st *imported) {
	t.Helper()
	v := st.Settings.Get()
	if v.Meta.AppName != "Acme PB" || v.SMTP.Password != "smtp-secret" || v.SMTP.Port != 465 || v.Backups.Cron != "0 3 * * *" ||
		v.Backups.CronMaxKeep != 5 || v.Logs.MaxDays != 7 || !v.Logs.LogAuthID || len(v.TrustedProxy.Headers) != 1 {
		t.Errorf("settings = %+v, want PocketBase's", v)
	}
	if v.Batch.MaxRequests != 50 {
		t.Errorf("batch.maxRequests = %d, want the default 50 (PocketBase's -5 is refused)", v.Batch.MaxRequests)
	}
	if v.S3.Enabled {
		t.Error("s3 (file storage) imported")
	}
}

func checkImportedLogs(t *testing.T, st *imported) {
	t.Helper()
	for _, want := range pbFixture(t).logs {
		e, err := st.Logs.Get(want.ID)
		if err != nil {
			t.Errorf("log %s: %v", want.ID, err)
			continue
		}
		var wantData, gotData any
		json.Unmarshal(want.Data, &wantData)
		b, _ := json.Marshal(e.Data())
		json.Unmarshal(b, &gotData)
		if !e.Created.Equal(want.Created) || e.Level != want.Level || e.Message != want.Message || !jsonEqual(wantData, gotData) {
			t.Errorf("log %s = %+v data %s, want %+v", want.ID, e, b, want)
		}
		if isReq := e.Request != nil; isReq != (want.ID == "req000000000001") {
			t.Errorf("log %s stored as a request: %v, want only the exact request log", want.ID, isReq)
		}
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestImportTarget(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		wantErr string
	}{
		{"new", func(*testing.T, string) {}, ""},
		{"empty", func(t *testing.T, dir string) { mkdir(t, dir) }, ""},
		{"not empty", func(t *testing.T, dir string) {
			mkdir(t, dir)
			os.WriteFile(filepath.Join(dir, "auth.journal"), []byte("x"), 0o600)
		}, "is not empty"},
		{"a file", func(t *testing.T, dir string) { os.WriteFile(dir, []byte("x"), 0o600) }, "is not a folder"},
		{"stale import", func(t *testing.T, dir string) {
			mkdir(t, filepath.Join(filepath.Dir(dir), ".sb_data.import-123", "logs"))
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sb_data")
			tt.prepare(t, dir)
			rep, err := Import(t.Context(), pbFixture(t), Options{OpenStores: openTestStores, Dir: dir})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrTarget) {
					t.Errorf("import = %v, want an ErrTarget containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "auth.journal")); err != nil {
				t.Errorf("no auth journal in the target: %v", err)
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".sb_data.import-*"))
			if len(left) > 0 {
				t.Errorf("temporary folders left: %v", left)
			}
			if tt.name == "stale import" && (len(rep.StaleRemoved) != 1 || !strings.Contains(rep.Text(), "removed unfinished import .sb_data.import-123")) {
				t.Errorf("report = %s, want the stale folder named", rep.Text())
			}
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestImportChanged: a source written to while it was read (a PocketBase
// running without the locks the check looks for) fails the import, which
// leaves no target and no temporary folder.
func TestImportChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sb_data")
	src := pbFixture(t)
	src.changed = errors.New("PocketBase wrote to this data dir while it was read")
	_, err := Import(t.Context(), src, Options{OpenStores: openTestStores, Dir: dir, Now: importClock})
	if err == nil || !strings.Contains(err.Error(), "wrote to this data dir") {
		t.Fatalf("import = %v, want the source's error", err)
	}
	if left, _ := os.ReadDir(filepath.Dir(dir)); len(left) > 0 {
		t.Errorf("a failed import left %v", left)
	}
}

func TestImportDryRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sb_data")
	rep, err := Import(t.Context(), pbFixture(t), Options{OpenStores: openTestStores, Dir: dir, DryRun: true, Now: importClock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("dry run created %s (%v)", dir, err)
	}
	if left, _ := os.ReadDir(filepath.Dir(dir)); len(left) > 0 {
		t.Errorf("dry run left %v beside the target", left)
	}
	if !strings.Contains(rep.Text(), "logs: 3 counted (dry run: not written)\nlogs: 3 older than settings.logs.maxDays (7 days): retention drops them\n") {
		t.Errorf("dry-run report:\n%s\nwant the logs counted", rep.Text())
	}
}

// TestLogEntry: a request log is stored as a Request only when its data
// round-trips exactly.
func TestLogEntry(t *testing.T) {
	tests := []struct {
		name, data string
		request    bool
	}{
		{"request", `{"auth":"users","authId":"x","execTime":1.5,"method":"POST","referer":"r","remoteIP":"1.2.3.4","status":400,"type":"request","url":"/u","userAgent":"ua","userIP":"5.6.7.8","error":"bad","details":"d"}`, true},
		{"request without IPs", `{"auth":"","execTime":0,"method":"GET","referer":"","status":200,"type":"request","url":"/","userAgent":""}`, true},
		{"null details", `{"auth":"","details":null,"error":"x","execTime":0,"method":"GET","referer":"","status":500,"type":"request","url":"/","userAgent":""}`, true},
		{"error without details", `{"auth":"","error":"x","execTime":0,"method":"GET","referer":"","status":500,"type":"request","url":"/","userAgent":""}`, false},
		{"status as text", `{"auth":"","execTime":0,"method":"GET","referer":"","status":"200","type":"request","url":"/","userAgent":""}`, false},
		{"one address", `{"auth":"","execTime":0,"method":"GET","referer":"","remoteIP":"1.2.3.4","status":200,"type":"request","url":"/","userAgent":""}`, false},
		{"extra key", `{"auth":"","execTime":0,"method":"GET","referer":"","status":200,"type":"request","url":"/","userAgent":"","more":1}`, false},
		{"empty error", `{"auth":"","error":"","execTime":0,"method":"GET","referer":"","status":200,"type":"request","url":"/","userAgent":""}`, false},
		{"fractional status", `{"auth":"","execTime":0,"method":"GET","referer":"","status":200.5,"type":"request","url":"/","userAgent":""}`, false},
		{"app log", `{"job":"x"}`, false},
		{"no data", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := logEntry(pocketbase.Log{ID: "abc", Data: json.RawMessage(tt.data)})
			if err != nil {
				t.Fatal(err)
			}
			if (e.Request != nil) != tt.request {
				t.Errorf("logEntry(%s) request = %v, want %v", tt.data, e.Request != nil, tt.request)
			}
			if tt.data != "" {
				var want any
				json.Unmarshal([]byte(tt.data), &want)
				if !jsonEqual(e.Data(), want) {
					t.Errorf("logEntry(%s).Data() = %v, want the same data", tt.data, e.Data())
				}
			}
		})
	}
}

// crashEnv names, in the child process of TestImportCrash, the target
// dir and the step the child stops after (STEP=DIR); crashArchiveEnv an
// archive to import instead of the fixture; crashDryRunEnv, when set,
// makes the import a dry run.
const (
	crashEnv        = "STRONGBOX_TEST_IMPORT_CRASH"
	crashArchiveEnv = "STRONGBOX_TEST_IMPORT_CRASH_ARCHIVE"
	crashDryRunEnv  = "STRONGBOX_TEST_IMPORT_CRASH_DRY_RUN"
)

// TestImportCrash kills a child process in the middle of an import (after
// each step, records committed and settings saved included): the target
// is then absent, or the empty folder it was, never a half-imported data
// dir; nothing is left in the child's $TMPDIR, an archive's extracted
// databases (hashes, token keys, secrets) and a dry run's conversion
// included; a second import succeeds and removes the leftover temporary
// folder beside the target.
func TestImportCrash(t *testing.T) {
	if v := os.Getenv(crashEnv); v != "" {
		crashChild(t, v)
		return
	}
	archive := pbArchive(t)
	for _, tc := range []struct {
		step     string
		existing bool // the target is an empty folder
		archive  bool // import an archive (extracted in the import's folder)
		dryRun   bool
	}{{"records", false, false, false}, {"records", true, false, false}, {"settings", false, false, false}, {"logs", true, false, false},
		{"records", false, true, false}, {"logs", false, true, true}} {
		t.Run(fmt.Sprintf("%s/empty target %v/archive %v/dry run %v", tc.step, tc.existing, tc.archive, tc.dryRun), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sb_data")
			if tc.existing {
				mkdir(t, dir)
			}
			childTmp := t.TempDir()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestImportCrash$")
			cmd.Env = append(os.Environ(), crashEnv+"="+tc.step+"="+dir, "TMPDIR="+childTmp)
			if tc.archive {
				cmd.Env = append(cmd.Env, crashArchiveEnv+"="+archive)
			}
			if tc.dryRun {
				cmd.Env = append(cmd.Env, crashDryRunEnv+"=1")
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stalled := func() bool {
				m, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".sb_data.import-*", "stalled"))
				return len(m) > 0
			}
			if !eventually(30*time.Second, stalled) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the child never reached the step %s:\n%s", tc.step, out.String())
			}
			extracted, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".sb_data.import-*", "strongbox-pocketbase-*", "data.db"))
			cmd.Process.Kill() // SIGKILL: no cleanup runs
			cmd.Wait()
			if tc.archive && len(extracted) != 1 {
				t.Errorf("the archive's data.db extracted in the import's folder: %v, want one", extracted)
			}
			if left, _ := os.ReadDir(childTmp); len(left) > 0 {
				t.Errorf("after the kill the child's $TMPDIR holds %v, want nothing", left)
			}
			if err := requireData(dir); err == nil {
				t.Fatalf("after a kill during the step %s, %s holds data", tc.step, dir)
			}
			if entries, err := os.ReadDir(dir); (err == nil) != tc.existing || len(entries) > 0 {
				t.Errorf("after the kill the target has %d entries (%v), want it as it was", len(entries), err)
			}
			rep, err := Import(t.Context(), pbFixture(t), Options{OpenStores: openTestStores, Dir: dir})
			if err != nil {
				t.Fatalf("import after the crash: %v", err)
			}
			if len(rep.StaleRemoved) != 1 || !strings.Contains(rep.Text(), "removed unfinished import .sb_data.import-") {
				t.Errorf("report after the crash:\n%s\nwant the unfinished import removed", rep.Text())
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".sb_data.import-*")); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			if err := requireData(dir); err != nil {
				t.Errorf("after the second import: %v", err)
			}
		})
	}
}

// pbArchive zips backup/pocketbase's fixture pb_data (a PocketBase
// v0.31 data dir) as PocketBase's backups are, and returns its path.
func pbArchive(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pb_backup.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range []string{"data.db", "auxiliary.db"} {
		b, err := os.ReadFile(filepath.Join("..", "pocketbase", "testdata", "pb_data", name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := errors.Join(zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	return path
}

// crashChild is TestImportCrash's child: it imports the fixture (or the
// archive crashArchiveEnv names) into the target of v (STEP=DIR) and
// stops after STEP, marking the temporary folder with a file "stalled",
// until it is killed.
func crashChild(t *testing.T, v string) {
	step, dir, _ := strings.Cut(v, "=")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	open := func(tempDir string) (ClosingSource, error) {
		if archive := os.Getenv(crashArchiveEnv); archive != "" {
			return pocketbase.Open(archive, pocketbase.Options{TempDir: tempDir})
		}
		return openSource{pbFixture(t)}, nil
	}
	opts := Options{OpenStores: openTestStores, Dir: dir, DryRun: os.Getenv(crashDryRunEnv) != "", AfterStep: func(s, tmp string) {
		if s != step {
			return
		}
		if err := os.WriteFile(filepath.Join(tmp, "stalled"), nil, 0o600); err != nil {
			t.Error(err)
		}
		<-ctx.Done() // the parent kills the process meanwhile
	}}
	_, err := ImportFrom(ctx, open, opts)
	t.Errorf("the child was not killed (import: %v)", err)
}

// BenchmarkImport imports 100,000 users, then 100,000 users and
// 1,000,000 request logs, from a source built in memory (run with
// -benchtime 1x): the time of a large import, streamed and committed in
// batches.
func BenchmarkImport(b *testing.B) {
	for _, tc := range []struct {
		name        string
		users, logs int
	}{{"100k-users", 100_000, 0}, {"100k-users-1M-logs", 100_000, 1_000_000}} {
		b.Run(tc.name, func(b *testing.B) {
			src := benchSource(b, tc.users, tc.logs)
			for b.Loop() {
				rep, err := Import(b.Context(), src, Options{OpenStores: openTestStores, Dir: filepath.Join(b.TempDir(), "sb_data")})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Collections[0].Records.Imported != tc.users || rep.Logs != tc.logs {
					b.Fatalf("imported %d users and %d logs, want %d and %d:\n%s", rep.Collections[0].Records.Imported, rep.Logs, tc.users, tc.logs, rep.Text())
				}
			}
		})
	}
}

// benchSource is a PocketBase data dir of a users collection with n
// users and logs request logs, made as they are read.
func benchSource(b *testing.B, users, logs int) *fakeSource {
	return &fakeSource{
		cols: []pocketbase.Collection{{ID: "_pb_users_auth_", Name: "users", Type: "auth", Created: pbCreated, Updated: pbCreated,
			Fields:  pbAuthFields(b, `{"hidden":false,"id":"text1","name":"name","max":255,"system":false,"type":"text"}`),
			Options: pbAuthOptions(b, "users", `{}`)}},
		gen: map[string]func(int) pocketbase.Row{"_pb_users_auth_": func(i int) pocketbase.Row {
			id := fmt.Sprintf("u%014d", i)
			return pbUser(id, id+"@example.com", map[string]any{"name": "User " + id})
		}},
		genN:    map[string]int{"_pb_users_auth_": users},
		genLogs: logs,
		logAt:   time.Now().Add(-time.Duration(logs) * time.Second),
	}
}

// TestRecordOf: SQLite values become the values of the field's type.
func TestRecordOf(t *testing.T) {
	c := &authn.Collection{Fields: []authn.Field{
		{Name: "id", Type: authn.FieldText, System: true},
		{Name: "flag", Type: authn.FieldBool},
		{Name: "n", Type: authn.FieldNumber},
		{Name: "s", Type: authn.FieldText},
		{Name: "created", Type: authn.FieldAutodate},
	}}
	tests := []struct {
		name string
		col  string
		in   any
		want any // nil: the field is left out
	}{
		{"bool 1", "flag", int64(1), true},
		{"bool 0", "flag", int64(0), false},
		{"bool text", "flag", "true", true},
		{"bool null", "flag", nil, nil},
		{"number int", "n", int64(42), float64(42)},
		{"number real", "n", 2.5, 2.5},
		{"number text stays for validation", "n", "x", "x"},
		{"text", "s", "hello", "hello"},
		{"text from int", "s", int64(7), "7"},
		{"text from blob", "s", []byte("raw"), "raw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := recordOf(c, pocketbase.Row{"id": "abc", "created": "2025-01-02 03:04:05.678Z", "verified": int64(1), tt.col: tt.in})
			got, ok := r.Fields[tt.col]
			if tt.want == nil {
				if ok {
					t.Errorf("recordOf(%s=%#v) set %#v, want it left out", tt.col, tt.in, got)
				}
				return
			}
			if !ok || got != tt.want {
				t.Errorf("recordOf(%s=%#v) = %#v, want %#v", tt.col, tt.in, got, tt.want)
			}
			if r.ID != "abc" || !r.Verified || r.Created != time.Date(2025, 1, 2, 3, 4, 5, 678e6, time.UTC) {
				t.Errorf("recordOf built-ins = %+v", r)
			}
		})
	}
}

func ExampleImport() {
	// A PocketBase data dir with a base collection and two OTPs; a real
	// one comes from pocketbase.Open.
	src := &fakeSource{
		cols:     []pocketbase.Collection{{ID: "pbc_1", Name: "posts", Type: "base"}},
		counts:   map[string]int{"_otps": 2},
		settings: json.RawMessage(`{"meta":{"appName":"Acme","appURL":"https://acme.example.com","senderName":"Acme","senderAddress":"a@acme.example.com"}}`),
	}
	parent, err := os.MkdirTemp("", "import-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(parent)
	rep, err := Import(context.Background(), src, Options{OpenStores: openTestStores, Dir: filepath.Join(parent, "sb_data")})
	if err != nil {
		panic(err)
	}
	fmt.Print(rep.Text())
	// Output:
	// external auths: 0 imported, 0 skipped
	// auth origins: 0 imported, 0 skipped
	// settings: imported meta
	// logs: 0 imported
	// skipped collection posts (base): strongbox stores no base records
	// skipped transient _otps (2 rows): one-time passwords are transient (they last minutes)
}

// BenchmarkImportRateLimits imports settings whose rateLimits section has
// n rules (distinct labels, none conflicting): checking that no two rules
// conflict must not take time quadratic in n.
func BenchmarkImportRateLimits(b *testing.B) {
	for _, n := range []int{0, 1000, 5000, 8000, 20_000, 100_000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			src := &fakeSource{settings: rateLimitsSettings(n)}
			for b.Loop() {
				if _, err := Import(b.Context(), src, Options{OpenStores: openTestStores, Dir: filepath.Join(b.TempDir(), "sb_data")}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestImportRateLimitsBound: a rateLimits section with more rules than
// the API can take (settings.MaxRateLimitRules) is refused and reported,
// strongbox's defaults kept; one of that many is imported.
func TestImportRateLimitsBound(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{
		{settings.MaxRateLimitRules, "settings: imported rateLimits\n"},
		{settings.MaxRateLimitRules + 1, fmt.Sprintf("skipped settings rateLimits: refused, strongbox's defaults kept: rateLimits.rules: The length must be no more than %d.\n", settings.MaxRateLimitRules)},
	} {
		rep, err := Import(t.Context(), &fakeSource{settings: rateLimitsSettings(tt.n)}, Options{OpenStores: openTestStores, Dir: filepath.Join(t.TempDir(), "sb_data")})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rep.Text(), tt.want) {
			t.Errorf("%d rules: report\n%s\nwant %q", tt.n, rep.Text(), tt.want)
		}
	}
}

// rateLimitsSettings is a settings document whose rateLimits section has
// n rules with distinct labels.
func rateLimitsSettings(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"rateLimits":{"enabled":true,"rules":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"label":"/api/r%d","audience":"","duration":10,"maxRequests":100}`, i)
	}
	b.WriteString(`]}}`)
	return json.RawMessage(b.String())
}

// TestImportRuleNamesLaterCollection: a rule of a collection may name
// @request.auth.F of a field that only a collection imported after it
// has; it is kept, not stored as null, while a field no auth collection
// has is still refused and reported.
func TestImportRuleNamesLaterCollection(t *testing.T) {
	src := pbFixture(t)
	for i := range src.cols {
		switch src.cols[i].Name {
		case "users":
			src.cols[i].ListRule = strp("@request.auth.level > 1")
			src.cols[i].UpdateRule = strp("@request.auth.nosuch = 1")
		case "members":
			src.cols[i].Fields = pbAuthFields(t, `{"hidden":true,"id":"number7","name":"level","onlyInt":true,"system":false,"type":"number"}`)
		}
	}
	dir := filepath.Join(t.TempDir(), "sb_data")
	rep, err := Import(t.Context(), src, Options{OpenStores: openTestStores, Dir: dir, BatchSize: 2})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	text := rep.Text()
	if strings.Contains(text, "users.listRule") {
		t.Errorf("the report skips users.listRule, which names members.level:\n%s", text)
	}
	if !strings.Contains(text, "users.updateRule") {
		t.Errorf("the report does not skip users.updateRule, which names a field no collection has:\n%s", text)
	}
	st := openImported(t, dir)
	users, ok := st.Auth.Collection("users")
	if !ok {
		t.Fatal("no users collection after the import")
	}
	if got := users.ListRule; got == nil || *got != "@request.auth.level > 1" {
		t.Errorf("users.listRule = %v, want the rule as PocketBase had it", got)
	}
	if users.UpdateRule != nil {
		t.Errorf("users.updateRule = %q, want null", *users.UpdateRule)
	}
	if members, ok := st.Auth.Collection("members"); !ok || members.Created.IsZero() || !members.Created.Equal(pbCreated) {
		t.Errorf("members imported with created %v, want %v", members.Created, pbCreated)
	}
}
