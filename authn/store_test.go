package authn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn/validation"
	"strongbox/logstore/journal"
	"strongbox/logstore/journal/journaltest"
)

type testClock struct{ t time.Time }

func (c *testClock) Now() time.Time { return c.t }

func openTestStore(t testing.TB, path string, clk *testClock) *Store {
	t.Helper()
	h, err := NewHasher(bcrypt.MinCost, 2)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{Hasher: h, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// input decodes a collection body as httpapi/api does.
func input(t *testing.T, body string) CollectionInput {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("input %s: %v", body, err)
	}
	return CollectionInput{Values: v}
}

func newTestStore(t *testing.T) (*Store, *testClock, string) {
	t.Helper()
	clk := &testClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "auth.journal")
	s := openTestStore(t, path, clk)
	t.Cleanup(func() { s.Close() })
	return s, clk, path
}

func signUp(t *testing.T, s *Store, email, password string) *Record {
	t.Helper()
	users, _ := s.Collection(UsersName)
	r, err := s.CreateRecord(context.Background(), users, RecordInput{Values: map[string]any{
		"email": email, "password": password, "passwordConfirm": password, "name": "N",
	}})
	if err != nil {
		t.Fatalf("sign up %s: %v", email, err)
	}
	return r
}

func TestBootstrap(t *testing.T) {
	s, _, _ := newTestStore(t)
	cols := s.Collections()
	if len(cols) != 2 || cols[0].ID != SuperusersID || cols[1].ID != UsersID {
		t.Fatalf("collections = %v", cols)
	}
	users := cols[1]
	if users.AuthToken.Duration != 0 {
		t.Errorf("users authToken.duration = %d, want 0 (static tokens, §5.9)", users.AuthToken.Duration)
	}
	if cols[0].AuthToken.Duration != 86400 {
		t.Errorf("_superusers authToken.duration = %d, want 86400", cols[0].AuthToken.Duration)
	}
	b, _ := json.Marshal(users.Public())
	var m map[string]any
	json.Unmarshal(b, &m)
	if tok := m["authToken"].(map[string]any); tok["secret"] != nil {
		t.Errorf("public collection leaks its secret: %v", tok)
	}
}

// TestReplay reopens a store and finds every acknowledged change.
func TestReplay(t *testing.T) {
	s, clk, path := newTestStore(t)
	a := signUp(t, s, "a@example.com", "password1")
	b := signUp(t, s, "b@example.com", "password1")
	users, _ := s.Collection(UsersName)
	if _, err := s.UpdateRecord(context.Background(), users, a.ID, RecordInput{Manager: true, Values: map[string]any{"name": "Alice"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRecord(users, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateCollection(input(t, `{"name":"members","type":"auth"}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2 := openTestStore(t, path, clk)
	defer s2.Close()
	users, _ = s2.Collection(UsersName)
	got, ok := s2.Record(users, a.ID)
	if !ok || got.Fields["name"] != "Alice" || got.Email != "a@example.com" {
		t.Errorf("record after replay = %+v", got)
	}
	if _, ok := s2.Record(users, b.ID); ok {
		t.Errorf("deleted record came back")
	}
	if _, ok := s2.Collection("MEMBERS"); !ok {
		t.Errorf("created collection lost (lookup by name is case-insensitive)")
	}
	if _, err := s2.AuthWithPassword(context.Background(), users, "a@example.com", "", "password1"); err != nil {
		t.Errorf("login after replay: %v", err)
	}
}

// TestTornJournal cuts the journal at every byte of its last record: the
// store opens with the record before it and without the torn one.
func TestTornJournal(t *testing.T) {
	s, clk, path := newTestStore(t)
	signUp(t, s, "a@example.com", "password1")
	before, _ := os.Stat(path)
	signUp(t, s, "b@example.com", "password1")
	s.Close()
	full, _ := os.ReadFile(path)
	for cut := before.Size(); cut < int64(len(full)); cut += 7 {
		p := filepath.Join(t.TempDir(), "auth.journal")
		os.WriteFile(p, full[:cut], 0o600)
		s2 := openTestStore(t, p, clk)
		users, _ := s2.Collection(UsersName)
		_, okA := s2.FindByEmail(users, "a@example.com")
		_, okB := s2.FindByEmail(users, "b@example.com")
		if !okA || okB {
			t.Errorf("cut at %d: a=%v b=%v, want a only", cut, okA, okB)
		}
		s2.Close()
	}
}

func TestCorruptMiddleRefused(t *testing.T) {
	s, clk, path := newTestStore(t)
	signUp(t, s, "a@example.com", "password1")
	signUp(t, s, "b@example.com", "password1")
	s.Close()
	b, _ := os.ReadFile(path)
	b[100] ^= 0xff // inside the first collection frame
	os.WriteFile(path, b, 0o600)
	h, _ := NewHasher(bcrypt.MinCost, 1)
	_, err := Open(path, Options{Hasher: h, Now: clk.Now})
	if err == nil {
		t.Fatal("Open accepted a journal damaged in the middle")
	}
}

func TestCompaction(t *testing.T) {
	s, clk, path := newTestStore(t)
	users, _ := s.Collection(UsersName)
	s.compactAt = 64 << 10
	r := signUp(t, s, "a@example.com", "password1")
	for i := range 400 {
		name := strings.Repeat("x", 50+i%200)
		if _, err := s.UpdateRecord(context.Background(), users, r.ID, RecordInput{Manager: true, Values: map[string]any{"name": name}}); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := os.Stat(path)
	if st.Size() > 64<<10+4*s.live {
		t.Errorf("journal is %d bytes after 400 updates of one record (live %d): not compacted", st.Size(), s.live)
	}
	s.Close()
	s2 := openTestStore(t, path, clk)
	defer s2.Close()
	got, _ := s2.Record(users, r.ID)
	if n := len(got.Fields["name"].(string)); n != 50+399%200 {
		t.Errorf("name length after compaction = %d, want %d", n, 50+399%200)
	}
}

func TestTokens(t *testing.T) {
	s, clk, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")

	static, _ := s.NewAuthToken(users, r, true, 0)
	short, _ := s.NewAuthToken(users, r, false, time.Minute)
	file, _ := s.NewFileToken(users, r)

	if _, _, _, err := s.VerifyToken(static, TokenAuth); err != nil {
		t.Errorf("static token: %v", err)
	}
	if _, _, _, err := s.VerifyToken(file, TokenAuth); !errors.Is(err, ErrTokenSignature) {
		t.Errorf("file token as auth: %v, want ErrTokenSignature", err)
	}
	if _, _, _, err := s.VerifyToken(static, TokenFile); !errors.Is(err, ErrTokenSignature) {
		t.Errorf("auth token as file: %v, want ErrTokenSignature", err)
	}
	clk.t = clk.t.Add(time.Minute)
	if _, _, _, err := s.VerifyToken(short, TokenAuth); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("expired token: %v, want ErrTokenExpired", err)
	}
	if _, _, _, err := s.VerifyToken(static, TokenAuth); err != nil {
		t.Errorf("static token a minute later: %v", err)
	}
	// Changing the email rotates the token key.
	if _, err := s.UpdateRecord(context.Background(), users, r.ID, RecordInput{Manager: true, Values: map[string]any{"email": "new@example.com"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.VerifyToken(static, TokenAuth); !errors.Is(err, ErrTokenSignature) {
		t.Errorf("token after email change: %v, want ErrTokenSignature", err)
	}
	// A token for a deleted record is refused.
	r2 := signUp(t, s, "b@example.com", "password1")
	tok2, _ := s.NewAuthToken(users, r2, true, 0)
	s.DeleteRecord(users, r2.ID)
	if _, _, _, err := s.VerifyToken(tok2, TokenAuth); !errors.Is(err, ErrTokenRecord) {
		t.Errorf("token of deleted record: %v, want ErrTokenRecord", err)
	}
}

func TestOwnerRules(t *testing.T) {
	s, _, _ := newTestStore(t)
	r := signUp(t, s, "a@example.com", "password1")
	users, _ := s.Collection(UsersName)
	ctx := context.Background()
	_, err := s.UpdateRecord(ctx, users, r.ID, RecordInput{Values: map[string]any{"password": "password2", "passwordConfirm": "password2"}})
	var ve validation.Errors
	if !errors.As(err, &ve) || ve["oldPassword"] == nil {
		t.Errorf("password change without oldPassword: %v", err)
	}
	if _, err := s.UpdateRecord(ctx, users, r.ID, RecordInput{Values: map[string]any{"password": "password2", "passwordConfirm": "password2", "oldPassword": "password1"}}); err != nil {
		t.Errorf("password change with oldPassword: %v", err)
	}
	_, err = s.UpdateRecord(ctx, users, r.ID, RecordInput{Values: map[string]any{"email": "x@example.com"}})
	if !errors.As(err, &ve) || ve["email"] == nil {
		t.Errorf("owner email change: %v, want a validation error", err)
	}
}

func TestCollectionValidation(t *testing.T) {
	s, _, _ := newTestStore(t)
	tests := []struct {
		name, body, field string
	}{
		{"no name", `{"type":"auth"}`, "name"},
		{"bad name", `{"name":"a b","type":"auth"}`, "name"},
		{"duplicate", `{"name":"USERS","type":"auth"}`, "name"},
		{"reserved", `{"name":"_x","type":"auth"}`, "name"},
		{"view type", `{"name":"v","type":"view"}`, "type"},
		{"rule", `{"name":"r","type":"auth","listRule":"nofield = true"}`, "listRule"},
		{"manageRule blank", `{"name":"r","type":"auth","manageRule":""}`, "manageRule"},
		{"authRule join", `{"name":"r","type":"auth","authRule":"@collection.users.id = id"}`, "authRule"},
		{"mfa alone", `{"name":"m","type":"auth","mfa":{"enabled":true}}`, "mfa"},
		{"token duration", `{"name":"d","type":"auth","fileToken":{"duration":1}}`, "fileToken"},
		{"field type", `{"name":"f","type":"auth","fields":[{"name":"x","type":"relation"}]}`, "fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.CreateCollection(input(t, tt.body))
			var ce validation.Errors
			if !errors.As(err, &ce) || ce[tt.field] == nil {
				t.Errorf("CreateCollection(%s) = %v, want an error on %s", tt.body, err, tt.field)
			}
		})
	}
	su := s.Superusers()
	_, err := s.UpdateCollection(su, input(t, `{"name":"admins","oauth2":{"enabled":true}}`))
	var ce validation.Errors
	if !errors.As(err, &ce) || ce["name"] != errSystemNameChange || ce["oauth2"] == nil {
		t.Errorf("rename _superusers and enable OAuth2: %v %v, want both refused", err, ce)
	}
	if su = s.Superusers(); su.Name != SuperusersName || su.OAuth2.Enabled {
		t.Errorf("_superusers invariants broken: name %q oauth2 %v", su.Name, su.OAuth2.Enabled)
	}
	if err := s.DeleteCollection(su); !errors.Is(err, ErrSystemCollection) {
		t.Errorf("delete _superusers: %v", err)
	}
	old := su.FileToken.Secret
	if _, err := s.UpdateCollection(su, input(t, `{"authRule":null}`)); !errors.As(err, &ce) || ce["authRule"] != errSystemRuleChange {
		t.Errorf("authRule null on _superusers: %v, want %s", err, errSystemRuleChange.Code)
	}
	su, err = s.UpdateCollection(su, input(t, `{"fileToken":{"duration":60}}`))
	if err != nil || su.FileToken.Secret != old || su.FileToken.Duration != 60 {
		t.Errorf("update without secrets: %v; secret kept %v, duration %d", err, su.FileToken.Secret == old, su.FileToken.Duration)
	}
}

// TestTokenDurations: every duration of every collection is 10..94670856
// seconds, with PocketBase's codes; only the users authToken may be 0
// (§5.9 of the interface document).
func TestTokenDurations(t *testing.T) {
	s, _, _ := newTestStore(t)
	other, err := s.CreateCollection(input(t, `{"name":"members","type":"auth"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{SuperusersID, UsersID, other.ID} {
		for _, typ := range TokenTypes {
			for _, tc := range []struct {
				d    int64
				code string
			}{
				{0, "validation_required"},
				{-1, "validation_min_greater_equal_than_required"},
				{9, "validation_min_greater_equal_than_required"},
				{10, ""},
				{MaxTokenDuration, ""},
				{MaxTokenDuration + 1, "validation_max_less_equal_than_required"},
			} {
				if tc.d == 0 && col == UsersID && typ == TokenAuth {
					tc.code = ""
				}
				c, _ := s.Collection(col)
				key := string(typ) + "Token"
				body := fmt.Sprintf(`{%q:{"duration":%d}}`, key, tc.d)
				_, err := s.UpdateCollection(c, input(t, body))
				var ce validation.Errors
				errors.As(err, &ce)
				got := ""
				if m, ok := ce[key].(validation.Errors); ok {
					if fe, ok := m["duration"].(*validation.Error); ok {
						got = fe.Code
					}
				}
				if got != tc.code || (tc.code == "" && err != nil) {
					t.Errorf("%s: UpdateCollection(%s) = %v (code %q), want code %q", c.Name, body, err, got, tc.code)
				}
			}
		}
	}
	su := s.Superusers()
	for _, body := range []string{`{"authToken":{"secret":""}}`, `{"authToken":{"secret":"short"}}`} {
		if _, err := s.UpdateCollection(su, input(t, body)); err == nil {
			t.Errorf("UpdateCollection(%s) accepted", body)
		}
	}
}

// TestStaticTokens: only users password tokens lack exp, and such a token
// stops working once the users collection sets a duration.
func TestStaticTokens(t *testing.T) {
	s, _, _ := newTestStore(t)
	ctx := context.Background()
	root, err := s.CreateSuperuser(ctx, "root@example.com", "password1")
	if err != nil {
		t.Fatal(err)
	}
	users, _ := s.Collection(UsersName)
	u := signUp(t, s, "a@example.com", "password1")
	tok, _ := s.NewAuthToken(users, u, true, 0)
	if _, claims, _ := parseClaims(t, tok); claims.Exp != nil {
		t.Errorf("users password token has exp %d", *claims.Exp)
	}
	// A _superusers collection with a zero duration (as an older version
	// could store) still gets expiring tokens.
	su := s.Superusers().clone()
	su.AuthToken.Duration = 0
	tok, _ = s.NewAuthToken(su, root, true, 0)
	if _, claims, _ := parseClaims(t, tok); claims.Exp == nil {
		t.Errorf("superuser token without exp")
	}
	// A token without exp is refused for any other collection.
	bare, _ := Sign(Claims{CollectionID: SuperusersID, ID: root.ID, Type: TokenAuth}, signingKey(s.Superusers(), root, TokenAuth))
	if _, _, _, err := s.VerifyToken(bare, TokenAuth); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("superuser token without exp: %v, want ErrTokenExpired", err)
	}
	static, _ := s.NewAuthToken(users, u, true, 0)
	if _, err := s.UpdateCollection(users, input(t, `{"authToken":{"duration":3600}}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.VerifyToken(static, TokenAuth); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("users token without exp after a duration was set: %v, want ErrTokenExpired", err)
	}
}

func parseClaims(t *testing.T, tok string) (string, Claims, error) {
	t.Helper()
	p, err := ParseUnverified(tok)
	if err != nil {
		t.Fatal(err)
	}
	return tok, p.Claims, nil
}

// TestRepairSuperusers: a journal in which an older version let
// _superusers be opened up is put right when the store opens.
func TestRepairSuperusers(t *testing.T) {
	s, clk, path := newTestStore(t)
	su := s.Superusers().clone()
	su.CreateRule, su.ListRule = strp(""), strp("")
	su.AuthToken.Duration = 0
	su.OAuth2.Enabled = true
	s.mu.Lock()
	if err := s.commit(&op{Op: "collection", Collection: su}); err != nil {
		t.Fatal(err)
	}
	s.mu.Unlock()
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	got := s.Superusers()
	if got.CreateRule != nil || got.ListRule != nil || got.AuthToken.Duration != 86400 || got.OAuth2.Enabled {
		t.Errorf("after reopen: createRule %v listRule %v authToken %d oauth2 %v", got.CreateRule, got.ListRule, got.AuthToken.Duration, got.OAuth2.Enabled)
	}
}

// TestRepairOnOpen: token durations an older version let out of range are
// put back to their defaults when the store opens (but users' static
// authToken of §5.9 is kept), and a _superusers whose rules were opened is
// reported with every superuser for the operator to review.
func TestRepairOnOpen(t *testing.T) {
	s, clk, path := newTestStore(t)
	members, err := s.CreateCollection(input(t, `{"name":"members","type":"auth"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSuperuser(t.Context(), "planted@example.com", "password123"); err != nil {
		t.Fatal(err)
	}
	m := members.clone()
	m.AuthToken.Duration, m.FileToken.Duration = 0, 5
	users, _ := s.Collection(UsersName)
	u := users.clone()
	u.AuthToken.Duration, u.VerificationToken.Duration = 0, 0
	su := s.Superusers().clone()
	su.CreateRule = strp("")
	s.mu.Lock()
	if err := s.commit(&op{Op: "collection", Collection: m}, &op{Op: "collection", Collection: u}, &op{Op: "collection", Collection: su}); err != nil {
		t.Fatal(err)
	}
	s.mu.Unlock()
	s.Close()

	var log bytes.Buffer
	h, err := NewHasher(bcrypt.MinCost, 2)
	if err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{Hasher: h, Now: clk.Now, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, _ := s.Collection("members")
	if got.AuthToken.Duration != 604800 || got.FileToken.Duration != 180 {
		t.Errorf("members after reopen: authToken %d fileToken %d, want 604800 and 180", got.AuthToken.Duration, got.FileToken.Duration)
	}
	gotUsers, _ := s.Collection(UsersName)
	if gotUsers.AuthToken.Duration != 0 || gotUsers.VerificationToken.Duration != 259200 {
		t.Errorf("users after reopen: authToken %d verificationToken %d, want 0 (static, §5.9) and 259200", gotUsers.AuthToken.Duration, gotUsers.VerificationToken.Duration)
	}
	for _, want := range []string{
		`collection=members options="authToken, fileToken"`,
		`collection=users options=verificationToken`,
		"review every superuser",
		"planted@example.com",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	}
}

func TestRandomUniform(t *testing.T) {
	r := NewRandom(nil)
	seen := map[byte]int{}
	for range 200 {
		s, err := r.String(idAlphabet, IDLength)
		if err != nil || !ValidID(s) {
			t.Fatalf("ID %q, %v", s, err)
		}
		for i := range len(s) {
			seen[s[i]]++
		}
	}
	if len(seen) != len(idAlphabet) {
		t.Errorf("3000 draws used %d of %d characters", len(seen), len(idAlphabet))
	}
}

// TestCapture: a capture taken while the store is in use, copied after the
// writers resume, opens as a store holding everything acknowledged before
// it.
func TestCapture(t *testing.T) {
	s, clk, _ := newTestStore(t)
	signUp(t, s, "a@example.com", "password1")
	secs, release, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	release()
	defer secs[0].Close()
	signUp(t, s, "b@example.com", "password1")
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, secs[0].Reader()); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "copy.journal")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c := openTestStore(t, p, clk)
	defer c.Close()
	users, _ := c.Collection(UsersName)
	_, okA := c.FindByEmail(users, "a@example.com")
	_, okB := c.FindByEmail(users, "b@example.com")
	if !okA || okB {
		t.Errorf("snapshot holds a=%v b=%v, want a only", okA, okB)
	}
}

// TestMalformedJournal: well-framed entries that do not describe a change
// are refused with an error, never a panic.
func TestMalformedJournal(t *testing.T) {
	for _, payload := range []string{
		`{"op":"record"}`,
		`[{"op":"record"}]`,
		`[{"op":"collection"}]`,
		`[{"op":"collection","collection":{"id":"x","name":"x","type":"auth"}}]`,
		`[{"op":"deleteRecord"}]`,
		`[null]`,
		`[{"op":"frobnicate","id":"x"}]`,
		`[{"op":"externalAuth","externalAuth":{"id":"x","collectionId":"c","recordId":"r","provider":"google"}}]`,
		`[{"op":"deleteExternalAuth"}]`,
	} {
		path := filepath.Join(t.TempDir(), "auth.journal")
		j, err := journal.Open(path, journal.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		j.Append([]byte(payload))
		j.Close()
		h, _ := NewHasher(bcrypt.MinCost, 1)
		if s, err := Open(path, Options{Hasher: h}); err == nil {
			s.Close()
			t.Errorf("Open accepted a journal holding %s", payload)
		}
	}
}

// TestJournalVersion: every op is written with its format version; a
// journal written before the field existed opens as version 1, and one
// holding a newer version is refused with an error that says so.
func TestJournalVersion(t *testing.T) {
	s, clk, path := newTestStore(t)
	signUp(t, s, "a@example.com", "password1")
	s.Close()
	var payloads [][]byte
	j, err := journal.Open(path, journal.Options{}, func(_ int64, p []byte) error {
		payloads = append(payloads, bytes.Clone(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	for _, p := range payloads {
		var ops []map[string]any
		if err := json.Unmarshal(p, &ops); err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if o["v"] != float64(opVersion) {
				t.Errorf("op %s %v has v=%v, want %d", o["op"], o["id"], o["v"], opVersion)
			}
		}
	}

	var old [][]byte
	for _, p := range payloads {
		old = append(old, bytes.ReplaceAll(p, []byte(`"v":1,`), nil))
	}
	if bytes.Contains(bytes.Join(old, nil), []byte(`"v":`)) {
		t.Fatal("could not strip the versions")
	}
	o := openTestStore(t, journaltest.Write(t, "old.journal", old...), clk)
	users, _ := o.Collection(UsersName)
	if _, ok := o.FindByEmail(users, "a@example.com"); !ok {
		t.Error("a journal without versions lost its record")
	}
	o.Close()

	newer := journaltest.Write(t, "newer.journal", append(payloads, []byte(`[{"v":2,"op":"deleteRecord","id":"x"}]`))...)
	h, _ := NewHasher(bcrypt.MinCost, 1)
	if n, err := Open(newer, Options{Hasher: h}); err == nil {
		n.Close()
		t.Error("Open accepted an op of format version 2")
	} else if !strings.Contains(err.Error(), "format version 2") {
		t.Errorf("Open = %v, want an error naming format version 2", err)
	}
}

// TestRecordAgainstStaleCollection: a record prepared against a collection
// that was deleted (or replaced) meanwhile is not committed.
func TestRecordAgainstStaleCollection(t *testing.T) {
	s, _, _ := newTestStore(t)
	c, err := s.CreateCollection(input(t, `{"name":"members","type":"auth"}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.CreateRecord(t.Context(), c, RecordInput{Values: map[string]any{
		"email": "a@example.com", "password": "password1", "passwordConfirm": "password1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCollection(c); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRecord(t.Context(), c, RecordInput{Values: map[string]any{
		"email": "b@example.com", "password": "password1", "passwordConfirm": "password1"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CreateRecord in a deleted collection = %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateRecord(t.Context(), c, r.ID, RecordInput{Values: map[string]any{"emailVisibility": true}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateRecord in a deleted collection = %v, want ErrNotFound", err)
	}
	if n := len(s.recs); n != len(s.byCol[SuperusersID])+len(s.byCol[UsersID]) {
		t.Errorf("%d records held, want only those of live collections", n)
	}
}

// TestSuperusersDatesAreSystem: the created and updated fields of
// _superusers are system fields, as PocketBase's are, also after the
// store is opened again; those of users are not.
func TestSuperusersDatesAreSystem(t *testing.T) {
	s, clk, path := newTestStore(t)
	check := func(s *Store) {
		t.Helper()
		for _, tc := range []struct {
			c    *Collection
			want bool
		}{{s.Superusers(), true}, {mustCollection(t, s, "users"), false}} {
			for _, f := range tc.c.Fields {
				if f.Type == FieldAutodate && f.System != tc.want {
					t.Errorf("%s.%s system = %v, want %v", tc.c.Name, f.Name, f.System, tc.want)
				}
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTestStore(t, path, clk)
	defer s2.Close()
	check(s2)
}

func mustCollection(t *testing.T, s *Store, name string) *Collection {
	t.Helper()
	c, ok := s.Collection(name)
	if !ok {
		t.Fatalf("no collection %s", name)
	}
	return c
}
