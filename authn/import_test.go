package authn

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn/validation"
	"strongbox/logstore/journal"
)

// pbMembers is an auth collection as PocketBase v0.31.0's collection API
// shows it, secrets included (its _collections row).
const pbMembers = `{"id":"pbc_1234567890","name":"members","type":"auth","system":false,
 "listRule":"id = @request.auth.id","viewRule":null,"createRule":"","updateRule":null,"deleteRule":null,
 "authRule":"verified = true","manageRule":null,
 "fields":[{"id":"text1579384326","name":"username","type":"text","system":false,"hidden":false,"presentable":false,"required":false,"min":0,"max":40,"pattern":"","autogeneratePattern":"","primaryKey":false},
  {"id":"number1","name":"age","type":"number","system":false,"hidden":false,"presentable":false,"required":false,"min":null,"max":null,"onlyInt":true}],
 "passwordAuth":{"enabled":true,"identityFields":["email","username"]},
 "authToken":{"duration":1209600,"secret":"pb-auth-secret-0123456789012345678901234567890"},
 "passwordResetToken":{"duration":1800,"secret":"pb-reset-secret-012345678901234567890123456789"},
 "emailChangeToken":{"duration":1800,"secret":"pb-email-secret-012345678901234567890123456789"},
 "verificationToken":{"duration":259200,"secret":"pb-verify-secret-01234567890123456789012345678"},
 "fileToken":{"duration":180,"secret":"pb-file-secret-0123456789012345678901234567890"}}`

func importMembers(t *testing.T, s *Store) *Collection {
	t.Helper()
	created := Time{time.Date(2025, 1, 2, 3, 4, 5, 6e6, time.UTC)}
	c, err := s.ImportCollection(input(t, pbMembers), created, Time{created.Add(time.Hour)})
	if err != nil {
		t.Fatalf("ImportCollection: %v", err)
	}
	return c
}

func TestImportCollection(t *testing.T) {
	s, _, _ := newTestStore(t)
	c := importMembers(t, s)
	if c.ID != "pbc_1234567890" || c.Name != "members" || c.AuthToken.Secret != "pb-auth-secret-0123456789012345678901234567890" ||
		c.FileToken.Secret != "pb-file-secret-0123456789012345678901234567890" || c.AuthToken.Duration != 1209600 {
		t.Errorf("imported collection = %s %s %+v, want the id, name, secrets and durations sent", c.ID, c.Name, c.AuthToken)
	}
	if got := c.Created.String(); got != "2025-01-02 03:04:05.006Z" {
		t.Errorf("created = %s, want PocketBase's", got)
	}
	if got := c.Updated.String(); got != "2025-01-02 04:04:05.006Z" {
		t.Errorf("updated = %s, want PocketBase's", got)
	}
	if ruleText(c.AuthRule) != "verified = true" || c.ViewRule != nil || ruleText(c.CreateRule) != "" || c.CreateRule == nil {
		t.Errorf("rules = auth %v view %v create %v, want those sent", c.AuthRule, c.ViewRule, c.CreateRule)
	}
	if _, err := s.ImportCollection(input(t, pbMembers), Time{}, Time{}); err == nil {
		t.Error("a second import of the same id succeeded, want a refusal")
	}

	// _superusers is updated in place, with its invariants.
	su, err := s.ImportCollection(input(t, `{"id":"pbc_3142635823","name":"_superusers","type":"auth","system":true,
		"authToken":{"duration":3600,"secret":"su-secret-0123456789012345678901234567890123"},"otp":{"enabled":true,"duration":300,"length":6}}`), Time{}, Time{})
	if err != nil {
		t.Fatalf("import _superusers: %v", err)
	}
	if su.AuthToken.Secret != "su-secret-0123456789012345678901234567890123" || su.AuthToken.Duration != 3600 || !su.OTP.Enabled || !su.MFA.Enabled {
		t.Errorf("_superusers = %+v otp %+v mfa %+v, want the secret, duration and OTP imported (with MFA)", su.AuthToken, su.OTP, su.MFA)
	}
	_, err = s.ImportCollection(input(t, `{"id":"pbc_3142635823","name":"_superusers","oauth2":{"enabled":true}}`), Time{}, Time{})
	if _, ok := errors.AsType[validation.Errors](err); !ok {
		t.Errorf("import _superusers with OAuth2 = %v, want a validation error", err)
	}
}

// pbHash is a bcrypt hash of "old-password-1" at cost 10 with the $2a$
// prefix, as PocketBase stores them.
func pbHash(t *testing.T) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte("old-password-1"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(h), "$2a$10$") {
		t.Fatalf("hash %s, want $2a$10$", h)
	}
	return string(h)
}

func TestImportRecords(t *testing.T) {
	s, _, path := newTestStore(t)
	c := importMembers(t, s)
	hash := pbHash(t)
	at := time.Date(2025, 3, 4, 5, 6, 7, 8e6, time.UTC)
	rec := func(id, email string, fields map[string]any) *Record {
		return &Record{ID: id, Email: email, EmailVisibility: true, Verified: true, PasswordHash: hash,
			TokenKey: "tk_" + id + "_0123456789012345678901234567", Created: at, Updated: at.Add(time.Minute), Fields: fields}
	}
	noHash := rec("nohash000000001", "nohash@example.com", nil)
	noHash.PasswordHash = "plain"
	noKey := rec("nokey0000000001", "nokey@example.com", nil)
	noKey.TokenKey = "short"
	skips, err := s.ImportRecords(c, []*Record{
		rec("alice0000000001", "alice@example.com", map[string]any{"username": "alice", "age": float64(31)}),
		rec("bob000000000001", "bob@example.com", map[string]any{"username": "bob", "age": "40"}),
		rec("alice0000000001", "other@example.com", nil),                                // duplicate id
		rec("carol0000000001", "alice@example.com", nil),                                // duplicate email
		rec("dave00000000001", "dave@example.com", map[string]any{"username": "alice"}), // duplicate identity field
		rec("BadId", "bad@example.com", nil),
		rec("eve000000000001", "not-an-email", nil),
		rec("frank0000000001", "frank@example.com", map[string]any{"age": 1.5}),
		noHash, noKey,
	})
	if err != nil {
		t.Fatalf("ImportRecords: %v", err)
	}
	var got []string
	for _, sk := range skips {
		got = append(got, sk.ID+" "+sk.Reason)
	}
	want := []string{
		"alice0000000001 authn: import: skipped: id: another record has it",
		"carol0000000001 authn: import: skipped: email: another record has it",
		"dave00000000001 authn: import: skipped: username: another record has it",
		"BadId authn: import: skipped: id: Must be at least 15 character(s).",
		"eve000000000001 authn: import: skipped: email: Must be a valid email address.",
		"frank0000000001 authn: import: skipped: age: Decimal numbers are not allowed.",
		"nohash000000001 authn: import: skipped: password: not a bcrypt hash",
		"nokey0000000001 authn: import: skipped: tokenKey: not 30 to 255 characters",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("skips:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	alice, err := s.AuthWithPassword(t.Context(), c, "alice@example.com", "", "old-password-1")
	if err != nil {
		t.Fatalf("sign in with the imported hash: %v", err)
	}
	if alice.PasswordHash != hash || alice.ID != "alice0000000001" || !alice.Created.Equal(at) || alice.TokenKey != "tk_alice0000000001_0123456789012345678901234567" {
		t.Errorf("imported record = %+v, want the hash, id, created and token key kept", alice)
	}
	if bob, ok := s.FindByEmail(c, "bob@example.com"); !ok || bob.Fields["age"] != float64(40) || bob.Fields["username"] != "bob" {
		t.Errorf("bob = %+v, want age 40 and username bob", bob)
	}
	if _, err := s.AuthWithPassword(t.Context(), c, "bob", "username", "old-password-1"); err != nil {
		t.Errorf("sign in by username: %v", err)
	}

	// The eight accepted records went in one frame: the store's journal
	// holds the bootstrap frame, the collection's and the records'.
	s.Close()
	frames := 0
	j, err := journal.Open(path, journal.Options{Strict: true}, func(int64, []byte) error { frames++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if frames != 3 {
		t.Errorf("journal frames = %d, want 3 (bootstrap, collection, one for the records)", frames)
	}
}

// TestImportedTokensStayValid: a token PocketBase issued, signed by hand
// as PocketBase signs it (HS256 with the record's tokenKey followed by the
// collection's secret), is accepted once record and collection are
// imported.
func TestImportedTokensStayValid(t *testing.T) {
	s, clk, _ := newTestStore(t)
	c := importMembers(t, s)
	r := &Record{ID: "alice0000000001", Email: "alice@example.com", PasswordHash: pbHash(t),
		TokenKey: "tk_alice_0123456789012345678901234567890", Created: clk.t, Updated: clk.t}
	if _, err := s.ImportRecords(c, []*Record{r}); err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	claims, _ := json.Marshal(map[string]any{"collectionId": c.ID, "exp": clk.t.Add(time.Hour).Unix(), "id": r.ID, "refreshable": true, "type": "auth"})
	unsigned := enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc(claims)
	mac := hmac.New(sha256.New, []byte(r.TokenKey+"pb-auth-secret-0123456789012345678901234567890"))
	mac.Write([]byte(unsigned))
	token := unsigned + "." + enc(mac.Sum(nil))
	gotC, gotR, _, err := s.VerifyToken(token, TokenAuth)
	if err != nil || gotC.ID != c.ID || gotR.ID != r.ID {
		t.Fatalf("VerifyToken(PocketBase's token) = %v, %v, %v, want the imported record", gotC, gotR, err)
	}
}

func TestImportLinksAndOrigins(t *testing.T) {
	s, clk, _ := newTestStore(t)
	c := importMembers(t, s)
	r := &Record{ID: "alice0000000001", Email: "alice@example.com", PasswordHash: pbHash(t),
		TokenKey: "tk_alice_0123456789012345678901234567890", Created: clk.t, Updated: clk.t}
	if _, err := s.ImportRecords(c, []*Record{r}); err != nil {
		t.Fatal(err)
	}
	link := func(id, rec, provider, pid string) *ExternalAuth {
		return &ExternalAuth{ID: id, CollectionID: c.ID, RecordID: rec, Provider: provider, ProviderID: pid, Created: clk.t, Updated: clk.t}
	}
	skips, err := s.ImportExternalAuths([]*ExternalAuth{
		link("l1", r.ID, "github", "123"),
		link("l2", r.ID, "google", "123"),
		link("l3", "gone00000000001", "github", "9"),
		link("l4", r.ID, "myspace", "9"),
		link("l1", r.ID, "gitlab", "9"),
		link("l5", r.ID, "github", "77"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "l3 its record was not imported; l4 unknown provider \"myspace\"; l1 another link has its id; l5 its record has another link to the provider"
	if got := joinSkips(skips); got != want {
		t.Errorf("link skips = %s, want %s", got, want)
	}
	if got := len(s.ExternalAuths(c, r.ID)); got != 2 {
		t.Errorf("links of alice = %d, want 2", got)
	}
	origin := func(id, rec, fp string) *AuthOrigin {
		return &AuthOrigin{ID: id, CollectionID: c.ID, RecordID: rec, Fingerprint: fp, Created: clk.t, Updated: clk.t}
	}
	skips, err = s.ImportAuthOrigins([]*AuthOrigin{origin("o1", r.ID, "fp1"), origin("o2", r.ID, "fp1"), origin("o3", "gone00000000001", "fp1")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := joinSkips(skips), "o2 its record has another origin with the fingerprint; o3 its record was not imported"; got != want {
		t.Errorf("origin skips = %s, want %s", got, want)
	}
}

func joinSkips(skips []ImportSkip) string {
	var out []string
	for _, sk := range skips {
		out = append(out, sk.ID+" "+sk.Reason)
	}
	return strings.Join(out, "; ")
}

// TestImportTokenKeyUnique: a record whose token key another record of
// the collection has (in the same batch, an earlier one, or one stored
// before the import) is skipped with its reason, as PocketBase's unique
// index of tokenKey would refuse it; a key a record gave up (a password
// reset rotates it) is free again, and another collection's keys do not
// count.
func TestImportTokenKeyUnique(t *testing.T) {
	s, _, _ := newTestStore(t)
	c := importMembers(t, s)
	alice := signUp(t, s, "alice@example.com", "alice-password-1")
	hash := pbHash(t)
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	rec := func(id, key string) *Record {
		return &Record{ID: id, Email: id + "@example.com", PasswordHash: hash, TokenKey: key, Created: at, Updated: at}
	}
	const keyA, keyB = "key-a-0123456789012345678901234567", "key-b-0123456789012345678901234567"
	reasons := func(skips []ImportSkip, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("ImportRecords: %v", err)
		}
		var got []string
		for _, sk := range skips {
			got = append(got, sk.ID+" "+strings.TrimPrefix(sk.Reason, ErrImportSkipped.Error()+": "))
		}
		return strings.Join(got, "; ")
	}
	if got := reasons(s.ImportRecords(c, []*Record{rec("first0000000001", keyA), rec("second000000001", keyA), rec("third0000000001", keyB)})); got != "second000000001 tokenKey: another record has it" {
		t.Errorf("one batch: skips %q, want the second record with key A", got)
	}
	if got := reasons(s.ImportRecords(c, []*Record{rec("fourth000000001", keyB)})); got != "fourth000000001 tokenKey: another record has it" {
		t.Errorf("a later batch: skips %q, want the record with key B", got)
	}
	first, _ := s.Record(c, "first0000000001")
	if _, err := s.ResetPassword(t.Context(), c, first, nil, "new-password-1"); err != nil {
		t.Fatal(err)
	}
	if got := reasons(s.ImportRecords(c, []*Record{rec("fifth0000000001", keyA)})); got != "" {
		t.Errorf("key A given up: skips %q, want none", got)
	}
	// In users, key A is free; alice's key, stored before any import into
	// users, is not.
	users, _ := s.Collection(UsersName)
	if got := reasons(s.ImportRecords(users, []*Record{rec("sixth0000000001", keyA), rec("eighth000000001", alice.TokenKey)})); got != "eighth000000001 tokenKey: another record has it" {
		t.Errorf("users: skips %q, want alice's key refused only", got)
	}
	if err := s.DeleteRecord(c, "third0000000001"); err != nil {
		t.Fatal(err)
	}
	if got := reasons(s.ImportRecords(c, []*Record{rec("seventh00000001", keyB)})); got != "" {
		t.Errorf("key B's record deleted: skips %q, want none", got)
	}

}
