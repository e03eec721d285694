package api

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/authn/oauth2"
)

// fakeExchanger is an oauth2.Exchanger that answers each code from a
// table: a User, or an error (oauth2.ErrToken, oauth2.ErrUser). It keeps
// what it was asked.
type fakeExchanger struct {
	mu    sync.Mutex
	users map[string]*oauth2.User
	errs  map[string]error
	calls []string // "provider code verifier redirectURL"
}

func (f *fakeExchanger) Exchange(_ context.Context, cfg oauth2.Config, code, verifier, redirectURL string) (*oauth2.User, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, strings.Join([]string{cfg.Name, code, verifier, redirectURL}, " "))
	if err, ok := f.errs[code]; ok {
		return nil, err
	}
	if u, ok := f.users[code]; ok {
		return u, nil
	}
	return nil, oauth2.ErrToken
}

func googleUser(id, email string, verified bool) *oauth2.User {
	return &oauth2.User{ID: id, Name: "Ann Lee", Username: "ann", Email: email, EmailVerified: verified,
		AvatarURL: "https://img.test/" + id + ".png", AccessToken: "at-" + id, RefreshToken: "rt-" + id,
		Expiry: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC), Raw: map[string]any{"sub": id}}
}

// oauth2Env is an env with OAuth2 on for users (a google provider) and a
// fake Exchanger.
func oauth2Env(t *testing.T, extra string) (*env, *fakeExchanger) {
	t.Helper()
	fx := &fakeExchanger{users: map[string]*oauth2.User{}, errs: map[string]error{}}
	e := newEnvWith(t, Config{OAuth2: fx}, HTTPConfig{})
	body := `{"oauth2":{"enabled":true,"providers":[{"name":"google","clientId":"cid","clientSecret":"csecret"}]}` + extra + `}`
	if res := e.do("PATCH", "/api/collections/users", e.su, body); res.Status != 200 {
		t.Fatalf("enable OAuth2: %d %s", res.Status, res.Body)
	}
	return e, fx
}

// oauth2Login posts auth-with-oauth2 for code.
func (e *env) oauth2Login(token, code, extra string) *response {
	e.t.Helper()
	return e.do("POST", "/api/collections/users/auth-with-oauth2", token,
		`{"provider":"google","code":"`+code+`","codeVerifier":"v","redirectURL":"https://app.test/cb"`+extra+`}`)
}

func TestAuthWithOAuth2Errors(t *testing.T) {
	t.Parallel()
	e, fx := oauth2Env(t, "")
	fx.errs["bad-token"] = fmt.Errorf("%w: invalid_grant", oauth2.ErrToken)
	fx.errs["bad-user"] = fmt.Errorf("%w: 500 from userinfo", oauth2.ErrUser)
	loadErr := func(data string) string {
		return `{"data":` + data + `,"message":"An error occurred while loading the submitted data.","status":400}`
	}
	tests := []struct {
		name, col, body string
		status          int
		want            string
	}{
		{"token", "users", `{"provider":"google","code":"bad-token","redirectURL":"https://app.test/cb"}`, 400,
			`{"data":{},"message":"Failed to fetch OAuth2 token.","status":400}`},
		{"user", "users", `{"provider":"google","code":"bad-user","redirectURL":"https://app.test/cb"}`, 400,
			`{"data":{},"message":"Failed to fetch OAuth2 user.","status":400}`},
		{"unknown provider", "users", `{"provider":"github","code":"c","redirectURL":"https://app.test/cb"}`, 400,
			loadErr(`{"provider":{"code":"validation_invalid_provider","message":"Provider with name github is missing or is not enabled.","params":{"name":"github"}}}`)},
		{"required", "users", `{}`, 400,
			loadErr(`{"code":{"code":"validation_required","message":"Cannot be blank."},"provider":{"code":"validation_required","message":"Cannot be blank."},"redirectURL":{"code":"validation_required","message":"Cannot be blank."}}`)},
		{"createData not an object", "users", `{"provider":"google","code":"c","redirectURL":"x","createData":"x"}`, 400,
			`{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`},
		{"superusers", "_superusers", `{"provider":"google","code":"c","redirectURL":"x"}`, 403,
			`{"data":{},"message":"The collection is not configured to allow OAuth2 authentication.","status":403}`},
		{"no collection", "nope", `{}`, 404,
			`{"data":{},"message":"Missing or invalid collection context.","status":404}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("POST", "/api/collections/"+tt.col+"/auth-with-oauth2", "", tt.body)
			if got := strings.TrimSpace(string(res.Body)); res.Status != tt.status || got != tt.want {
				t.Errorf("POST %s %s = %d %s\nwant %d %s", tt.col, tt.body, res.Status, got, tt.status, tt.want)
			}
		})
	}
	// Every name PocketBase registers has a preset: spotify, which once
	// answered 500 "Failed to init provider spotify.", reaches the
	// exchange (whose refusal of the code is the token error), with the
	// verifier since spotify uses PKCE. PocketBase answers that 500 only
	// for a name it does not register, which a collection cannot save.
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"oauth2":{"providers":[{"name":"spotify","clientId":"c","clientSecret":"s"}]}}`); res.Status != 200 {
		t.Fatal(res.Status, string(res.Body))
	}
	res := e.do("POST", "/api/collections/users/auth-with-oauth2", "", `{"provider":"spotify","code":"c","codeVerifier":"v","redirectURL":"x"}`)
	if want := `{"data":{},"message":"Failed to fetch OAuth2 token.","status":400}`; res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("spotify = %d %s, want 400 %s", res.Status, res.Body, want)
	}
	if last := fx.calls[len(fx.calls)-1]; last != "spotify c v x" {
		t.Errorf("exchange call = %q, want spotify's", last)
	}
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"oauth2":{"enabled":false}}`); res.Status != 200 {
		t.Fatal(res.Status, string(res.Body))
	}
	wantError(t, e.oauth2Login("", "c", ""), 403, "The collection is not configured to allow OAuth2 authentication.")
}

// TestAuthWithOAuth2Accounts: the resolution order through the API, and
// the result's meta.
func TestAuthWithOAuth2Accounts(t *testing.T) {
	t.Parallel()
	e, fx := oauth2Env(t, `,"createRule":""`)
	fx.users["new"] = googleUser("g1", "ann@example.com", true)

	// A new account: meta with exactly PocketBase's keys, isNew true,
	// mapped name, verified, the verifier passed on (google uses PKCE).
	res := e.oauth2Login("", "new", "")
	if res.Status != 200 {
		t.Fatalf("new account: %d %s", res.Status, res.Body)
	}
	var got struct {
		Meta   map[string]any `json:"meta"`
		Record map[string]any `json:"record"`
		Token  string         `json:"token"`
	}
	if err := json.Unmarshal(res.Body, &got); err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(got.Meta)
	wantMeta := `{"accessToken":"at-g1","avatarURL":"https://img.test/g1.png","avatarUrl":"https://img.test/g1.png","email":"ann@example.com","expiry":"2026-11-22 11:00:00.000Z","id":"g1","isNew":true,"name":"Ann Lee","rawUser":{"sub":"g1"},"refreshToken":"rt-g1","username":"ann"}`
	if string(meta) != wantMeta {
		t.Errorf("meta = %s\nwant %s", meta, wantMeta)
	}
	if !strings.HasPrefix(string(res.Body), `{"meta":`) || got.Token == "" || got.Record["email"] != "ann@example.com" ||
		got.Record["verified"] != true || got.Record["name"] != "Ann Lee" {
		t.Errorf("new account result = %s", res.Body)
	}
	if fx.calls[0] != "google new v https://app.test/cb" {
		t.Errorf("exchange call = %q", fx.calls[0])
	}
	annID := got.Record["id"].(string)

	// The linked account again: isNew false, same record.
	res = e.oauth2Login("", "new", "")
	if m := res.JSON(t); res.Status != 200 || m["record"].(map[string]any)["id"] != annID || m["meta"].(map[string]any)["isNew"] != false {
		t.Errorf("linked account = %d %s", res.Status, res.Body)
	}

	// An unverified provider email matches no one: a separate sign-up,
	// which without createData lacks an email (the record validation's
	// errors, under the create message).
	bobID := e.signUp("bob@example.com", "bob-password")
	fx.users["bob-unverified"] = googleUser("g2", "bob@example.com", false)
	res = e.oauth2Login("", "bob-unverified", "")
	want := `{"data":{"email":{"code":"validation_required","message":"Cannot be blank."}},"message":"Failed to create record.","status":400}`
	if got := strings.TrimSpace(string(res.Body)); res.Status != 400 || got != want {
		t.Errorf("unverified provider email = %d %s\nwant %s", res.Status, got, want)
	}
	res = e.oauth2Login("", "bob-unverified", `,"createData":{"email":"bob2@example.com","name":"B"}`)
	if m := res.JSON(t); res.Status != 200 || m["record"].(map[string]any)["id"] == bobID || m["record"].(map[string]any)["verified"] != false ||
		m["meta"].(map[string]any)["email"] != "" {
		t.Errorf("unverified provider email with createData = %d %s; want a new unverified record, meta.email empty", res.Status, res.Body)
	}

	// A verified provider email and an unverified record: taken over
	// safely (the squatter's password and tokens stop working).
	bobToken := e.login("users", "bob@example.com", "bob-password")
	fx.users["bob"] = googleUser("g3", "bob@example.com", true)
	res = e.oauth2Login("", "bob", "")
	if m := res.JSON(t); res.Status != 200 || m["record"].(map[string]any)["id"] != bobID || m["record"].(map[string]any)["verified"] != true {
		t.Errorf("unverified record match = %d %s", res.Status, res.Body)
	}
	wantError(t, e.do("POST", "/api/collections/users/auth-with-password", "", `{"identity":"bob@example.com","password":"bob-password"}`), 400, "Failed to authenticate.")
	wantError(t, e.do("POST", "/api/collections/users/auth-refresh", bobToken, nil), 401, "The request requires valid record authorization token.")

	// A verified record matched by a verified email keeps its password.
	carolID := e.signUp("carol@example.com", "carol-password")
	if res := e.do("PATCH", "/api/collections/users/records/"+carolID, e.su, `{"verified":true}`); res.Status != 200 {
		t.Fatal(res.Status, string(res.Body))
	}
	fx.users["carol"] = googleUser("g4", "carol@example.com", true)
	if res = e.oauth2Login("", "carol", ""); res.Status != 200 || res.JSON(t)["record"].(map[string]any)["id"] != carolID {
		t.Errorf("verified record match = %d %s", res.Status, res.Body)
	}
	e.login("users", "carol@example.com", "carol-password")

	// Logged-in linking: the signed-in record, whatever the email.
	danID := e.signUp("dan@example.com", "dan-password")
	danToken := e.login("users", "dan@example.com", "dan-password")
	fx.users["dan"] = googleUser("g5", "someone-else@example.com", true)
	if res = e.oauth2Login(danToken, "dan", ""); res.Status != 200 || res.JSON(t)["record"].(map[string]any)["id"] != danID {
		t.Errorf("logged-in linking = %d %s", res.Status, res.Body)
	}
	e.login("users", "dan@example.com", "dan-password") // the signed-in record keeps its password
	// A second google account for dan: the link is unique per record and provider.
	fx.users["dan2"] = googleUser("g6", "", false)
	wantError(t, e.oauth2Login(danToken, "dan2", ""), 400, "Failed to authenticate.")

	// createData is validated as a sign-up.
	fx.users["erin"] = googleUser("g7", "erin@example.com", true)
	res = e.oauth2Login("", "erin", `,"createData":{"name":`+`"`+strings.Repeat("x", 256)+`"}`)
	want = `{"data":{"name":{"code":"validation_max_text_constraint","message":"Must be no more than 255 character(s).","params":{"max":255}}},"message":"Failed to create record.","status":400}`
	if got := strings.TrimSpace(string(res.Body)); res.Status != 400 || got != want {
		t.Errorf("createData too long = %d %s\nwant %s", res.Status, got, want)
	}

	// Links durable across a reopen, and deleted with their record.
	if res := e.do("DELETE", "/api/collections/users/records/"+annID, e.su, nil); res.Status != 204 {
		t.Fatal(res.Status, string(res.Body))
	}
	res = e.oauth2Login("", "new", "")
	if m := res.JSON(t); res.Status != 200 || m["record"].(map[string]any)["id"] == annID || m["meta"].(map[string]any)["isNew"] != true {
		t.Errorf("sign-in after the linked record's deletion = %d %s", res.Status, res.Body)
	}
}

// TestAuthWithOAuth2CreateRule: sign-up goes through the createRule.
func TestAuthWithOAuth2CreateRule(t *testing.T) {
	t.Parallel()
	e, fx := oauth2Env(t, `,"createRule":null`)
	fx.users["new"] = googleUser("g1", "ann@example.com", true)
	wantError(t, e.oauth2Login("", "new", ""), 403, "Only superusers can perform this action.")
	// An existing record signs in whatever the createRule.
	e.signUp2(t, "ann@example.com")
	if res := e.oauth2Login("", "new", ""); res.Status != 200 {
		t.Errorf("existing record with createRule null = %d %s", res.Status, res.Body)
	}
}

// signUp2 creates a users record as a superuser (whatever the createRule).
func (e *env) signUp2(t *testing.T, email string) {
	t.Helper()
	res := e.do("POST", "/api/collections/users/records", e.su, map[string]any{"email": email, "password": "password1", "passwordConfirm": "password1", "verified": true})
	if res.Status != 200 {
		t.Fatalf("sign up %s: %d %s", email, res.Status, res.Body)
	}
}

// TestAuthWithOAuth2MFA: OAuth2 as one factor of MFA; the record it
// creates exists before the 401.
func TestAuthWithOAuth2MFA(t *testing.T) {
	t.Parallel()
	e, fx := oauth2Env(t, `,"mfa":{"enabled":true}`)
	fx.users["ann"] = googleUser("g1", "ann@example.com", true)
	res := e.oauth2Login("", "ann", "")
	if res.Status != 401 || !strings.HasPrefix(string(res.Body), `{"mfaId":"`) {
		t.Fatalf("first factor = %d %s, want 401 {mfaId}", res.Status, res.Body)
	}
	mfaID := res.JSON(t)["mfaId"].(string)
	users, _ := e.auth.Collection("users")
	rec, ok := e.auth.FindByEmail(users, "ann@example.com")
	if !ok {
		t.Fatal("the first factor's record was not created")
	}
	// The same method again is refused; a password second factor passes.
	wantError(t, e.oauth2Login("", "ann", `,"mfaId":"`+mfaID+`"`), 400, "A different authentication method is required.")
	if _, err := e.auth.SetPassword(t.Context(), users, rec.ID, "ann-password"); err != nil {
		t.Fatal(err)
	}
	// A new password ends the MFA session (as in PocketBase): start again
	// with OAuth2, finish with the password.
	mfaID = e.oauth2Login("", "ann", "").JSON(t)["mfaId"].(string)
	res = e.do("POST", "/api/collections/users/auth-with-password?mfaId="+mfaID, "", `{"identity":"ann@example.com","password":"ann-password"}`)
	if res.Status != 200 || res.JSON(t)["token"] == nil {
		t.Errorf("password as the second factor = %d %s", res.Status, res.Body)
	}
}

// zeros is a randomness source of zero bytes: every random character is
// "A".
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestAuthMethodsOAuth2: enabled providers with fresh state and PKCE
// values and a ready authURL ending in redirect_uri=, as
// PocketBase gives them; a provider that cannot be set up is left out;
// _superusers never lists OAuth2.
func TestAuthMethodsOAuth2(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, Config{Rand: zeros{}}, HTTPConfig{})
	body := `{"oauth2":{"enabled":true,"providers":[` +
		`{"name":"google","clientId":"cid","clientSecret":"s"},` +
		`{"name":"github","clientId":"gh","clientSecret":"s","pkce":false,"displayName":"Code"},` +
		`{"name":"oidc","clientId":"o","clientSecret":"s"}]}}`
	if res := e.do("PATCH", "/api/collections/users", e.su, body); res.Status != 200 {
		t.Fatalf("enable OAuth2: %d %s", res.Status, res.Body)
	}
	res := e.do("GET", "/api/collections/users/auth-methods", "", nil)
	state, verifier := strings.Repeat("A", 30), strings.Repeat("A", 43)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	googleURL := "https://accounts.google.com/o/oauth2/v2/auth?client_id=cid&code_challenge=" + challenge +
		"&code_challenge_method=S256&response_type=code&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fuserinfo.profile+https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fuserinfo.email&state=" + state + "&redirect_uri="
	githubURL := "https://github.com/login/oauth/authorize?client_id=gh&response_type=code&scope=read%3Auser+user%3Aemail&state=" + state + "&redirect_uri="
	providers := `[{"name":"google","displayName":"Google","state":"` + state + `","authURL":"` + googleURL + `","authUrl":"` + googleURL +
		`","codeVerifier":"` + verifier + `","codeChallenge":"` + challenge + `","codeChallengeMethod":"S256"},` +
		`{"name":"github","displayName":"Code","state":"` + state + `","authURL":"` + githubURL + `","authUrl":"` + githubURL +
		`","codeVerifier":"","codeChallenge":"","codeChallengeMethod":""}]`
	var m map[string]json.RawMessage
	if err := json.Unmarshal(res.Body, &m); err != nil {
		t.Fatal(err)
	}
	var gotProviders []any
	json.Unmarshal(m["authProviders"], &gotProviders)
	compact := func(raw []byte) string {
		var v any
		json.Unmarshal(raw, &v)
		b, _ := json.Marshal(v)
		return string(b)
	}
	if got, want := compact(m["oauth2"]), compact([]byte(`{"enabled":true,"providers":`+providers+`}`)); res.Status != 200 || got != want {
		t.Errorf("oauth2 = %d %s\nwant %s", res.Status, got, want)
	}
	if got := compact(m["authProviders"]); got != compact([]byte(providers)) {
		t.Errorf("authProviders = %s, want the providers", got)
	}
	if !strings.Contains(string(res.Body), `"name":"google","displayName":"Google","state":`) {
		t.Errorf("provider keys out of PocketBase's order: %s", res.Body)
	}
	res = e.do("GET", "/api/collections/_superusers/auth-methods", "", nil)
	if !strings.Contains(string(res.Body), `"oauth2":{"providers":[],"enabled":false}`) || !strings.Contains(string(res.Body), `"authProviders":null`) {
		t.Errorf("_superusers auth-methods = %s", res.Body)
	}
}

// TestExternalAuthsRecords: the links as a v0.31 SDK reads and deletes
// them (listExternalAuths, unlinkExternalAuth): _externalAuths records,
// each record seeing only its own, superusers all.
func TestExternalAuthsRecords(t *testing.T) {
	t.Parallel()
	e, fx := oauth2Env(t, "")
	fx.users["ann"] = googleUser("g1", "ann@example.com", true)
	fx.users["bob"] = googleUser("g2", "bob@example.com", true)
	annRes := e.oauth2Login("", "ann", "").JSON(t)
	annToken, annID := annRes["token"].(string), annRes["record"].(map[string]any)["id"].(string)
	bobToken := e.oauth2Login("", "bob", "").JSON(t)["token"].(string)

	list := func(token, filter string) []any {
		t.Helper()
		res := e.do("GET", "/api/collections/_externalAuths/records?filter="+url.QueryEscape(filter), token, nil)
		if res.Status != 200 {
			t.Fatalf("list: %d %s", res.Status, res.Body)
		}
		return res.JSON(t)["items"].([]any)
	}
	items := list(annToken, "recordRef = '"+annID+"'")
	if len(items) != 1 {
		t.Fatalf("ann's links = %v, want one", items)
	}
	link := items[0].(map[string]any)
	b, _ := json.Marshal(link)
	want := `{"collectionId":"pbc_2281828961","collectionName":"_externalAuths","collectionRef":"_pb_users_auth_","created":"2026-11-22 10:00:00.000Z","id":"` +
		link["id"].(string) + `","provider":"google","providerId":"g1","recordRef":"` + annID + `","updated":"2026-11-22 10:00:00.000Z"}`
	if string(b) != want {
		t.Errorf("link = %s\nwant %s", b, want)
	}
	if got := list(bobToken, "recordRef = '"+annID+"'"); len(got) != 0 {
		t.Errorf("bob sees ann's links: %v", got)
	}
	if got := list("", ""); len(got) != 0 {
		t.Errorf("a guest sees links: %v", got)
	}
	if got := list(e.su, ""); len(got) != 2 {
		t.Errorf("a superuser sees %d links, want 2", len(got))
	}
	path := "/api/collections/_externalAuths/records/" + link["id"].(string)
	wantError(t, e.do("DELETE", path, bobToken, nil), 404, "The requested resource wasn't found.")
	if res := e.do("GET", path, annToken, nil); res.Status != 200 {
		t.Errorf("view own link: %d %s", res.Status, res.Body)
	}
	if res := e.do("DELETE", path, annToken, nil); res.Status != 204 {
		t.Fatalf("unlink: %d %s", res.Status, res.Body)
	}
	if got := list(annToken, "recordRef = '"+annID+"' && provider = 'google'"); len(got) != 0 {
		t.Errorf("after unlink: %v", got)
	}
	// Unlinked: the next sign-in with that identity matches by email and links again.
	if res := e.oauth2Login("", "ann", ""); res.Status != 200 || res.JSON(t)["record"].(map[string]any)["id"] != annID {
		t.Errorf("sign-in after unlink = %d %s", res.Status, res.Body)
	}
}
