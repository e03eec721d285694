package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"strongbox/authn"
)

// claimsOf decodes a token's payload without verifying it.
func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d segments", token, len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestErrorsAndRoutes(t *testing.T) {
	t.Parallel()
	e := newBaseEnv(t)
	user := e.signUp("u1@example.com", "password1")
	userTok := e.login("users", "u1@example.com", "password1")

	tests := []struct {
		name, method, path, token, body string
		status                          int
		msg                             string
	}{
		{"unknown path", "GET", "/api/nope", "", "", 404, msgNotFound},
		{"unknown POST", "POST", "/api/nope", "", "", 404, msgNotFound},
		{"wrong method", "PUT", "/api/health", "", "", 404, msgNotFound},
		{"wrong method on collections", "DELETE", "/api/collections", e.su, "", 404, msgNotFound},
		{"login unknown collection", "POST", "/api/collections/nope/auth-with-password", "", `{"identity":"a@b.c","password":"x"}`, 404, msgNoCollection},
		{"login base collection", "POST", "/api/collections/posts/auth-with-password", "", `{"identity":"a@b.c","password":"x"}`, 404, msgNoAuthCollection},
		{"login wrong password", "POST", "/api/collections/users/auth-with-password", "", `{"identity":"u1@example.com","password":"nope-nope"}`, 400, msgAuthFailed},
		{"login unknown identity", "POST", "/api/collections/users/auth-with-password", "", `{"identity":"x@example.com","password":"password1"}`, 400, msgAuthFailed},
		{"login email case differs", "POST", "/api/collections/users/auth-with-password", "", `{"identity":"U1@example.com","password":"password1"}`, 400, msgAuthFailed},
		{"login malformed JSON", "POST", "/api/collections/users/auth-with-password", "", `{"identity":`, 400, msgLoadFailed},
		{"login identity not a string", "POST", "/api/collections/users/auth-with-password", "", `{"identity":5,"password":"x"}`, 400, msgLoadFailed},
		{"methods unknown collection", "GET", "/api/collections/nope/auth-methods", "", "", 404, msgNoCollection},
		{"methods base collection", "GET", "/api/collections/posts/auth-methods", "", "", 404, msgNoAuthCollection},
		{"refresh no token", "POST", "/api/collections/users/auth-refresh", "", "", 401, msgAuthRequired},
		{"refresh garbage token", "POST", "/api/collections/users/auth-refresh", "invalid.token.value", "", 401, msgAuthRequired},
		{"refresh lowercase bearer", "POST", "/api/collections/users/auth-refresh", "bearer " + userTok, "", 401, msgAuthRequired},
		{"refresh unknown collection", "POST", "/api/collections/nope/auth-refresh", userTok, "", 404, msgNoCollection},
		{"refresh other collection", "POST", "/api/collections/users/auth-refresh", e.su, "", 403, "The request requires auth record from _superusers collection."},
		{"impersonate no token", "POST", "/api/collections/users/impersonate/" + user, "", "", 401, msgAuthRequired},
		{"impersonate as user", "POST", "/api/collections/users/impersonate/" + user, userTok, "", 403, msgNotAllowed},
		{"impersonate unknown collection", "POST", "/api/collections/nope/impersonate/" + user, e.su, "", 404, msgNoAuthCollection},
		{"impersonate base collection", "POST", "/api/collections/posts/impersonate/" + user, e.su, "", 404, msgNoAuthCollection},
		{"impersonate unknown record", "POST", "/api/collections/users/impersonate/nonexistent0000", e.su, "", 404, msgNotFound},
		{"impersonate duration string", "POST", "/api/collections/users/impersonate/" + user, e.su, `{"duration":"abc"}`, 400, msgLoadFailed},
		{"file token no auth", "POST", "/api/files/token", "", "", 401, msgAuthRequired},
		{"collections as guest", "GET", "/api/collections", "", "", 401, msgAuthRequired},
		{"collections as user", "GET", "/api/collections", userTok, "", 403, msgNotAllowed},
		{"superusers records as guest", "GET", "/api/collections/_superusers/records", "", "", 403, msgSuperusersOnly},
		{"sign up as superuser without auth", "POST", "/api/collections/_superusers/records", "", `{"email":"x@example.com","password":"password1","passwordConfirm":"password1"}`, 403, msgSuperusersOnly},
		{"unsupported content type", "POST", "/api/collections/users/auth-with-password", "", "", 400, msgUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res *response
			if tt.name == "unsupported content type" {
				res = e.doRaw(tt.method, tt.path, tt.token, "text/plain", strings.NewReader("identity=x"))
			} else if tt.body != "" {
				res = e.do(tt.method, tt.path, tt.token, tt.body)
			} else {
				res = e.do(tt.method, tt.path, tt.token, nil)
			}
			wantError(t, res, tt.status, tt.msg)
		})
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.do("GET", "/api/health", "", nil)
	for k, v := range map[string]string{
		"X-Xss-Protection":       "1; mode=block",
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "SAMEORIGIN",
	} {
		if got := res.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if got, want := string(res.Body), `{"message":"API is healthy.","code":200,"data":{}}`+"\n"; got != want {
		t.Errorf("health body = %q, want %q", got, want)
	}
}

func TestPasswordLogin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.signUp("u1@example.com", "password1")

	res := e.do("POST", "/api/collections/users/auth-with-password", "", map[string]string{"identity": "u1@example.com", "password": "password1"})
	if res.Status != 200 {
		t.Fatalf("login: %d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	rec := body["record"].(map[string]any)
	if rec["id"] != id || rec["email"] != "u1@example.com" || rec["collectionName"] != "users" || rec["collectionId"] != authn.UsersID {
		t.Errorf("record = %v", rec)
	}
	for _, secret := range []string{"password", "passwordHash", "tokenKey"} {
		if _, ok := rec[secret]; ok {
			t.Errorf("record exposes %q", secret)
		}
	}
	if !strings.HasPrefix(string(res.Body), `{"record":{`) {
		t.Errorf("body keys out of order: %s", res.Body)
	}
	// §5.9: users password tokens are static.
	claims := claimsOf(t, body["token"].(string))
	if _, ok := claims["exp"]; ok {
		t.Errorf("users token has exp: %v", claims)
	}
	if claims["type"] != "auth" || claims["refreshable"] != true || claims["id"] != id {
		t.Errorf("claims = %v", claims)
	}
	// _superusers tokens expire after a day.
	su := claimsOf(t, e.su)
	if exp, _ := su["exp"].(float64); int64(exp) != e.clock.Now().Add(24*time.Hour).Unix() {
		t.Errorf("superuser exp = %v, want now+1d", su["exp"])
	}

	// Form bodies work too.
	form := url.Values{"identity": {"u1@example.com"}, "password": {"password1"}}
	res = e.doRaw("POST", "/api/collections/users/auth-with-password", "", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if res.Status != 200 {
		t.Errorf("form login: %d %s", res.Status, res.Body)
	}

	// Validation errors name the fields.
	res = e.do("POST", "/api/collections/users/auth-with-password", "", `{}`)
	want := `{"data":{"identity":{"code":"validation_required","message":"Cannot be blank."},"password":{"code":"validation_required","message":"Cannot be blank."}},"message":"An error occurred while validating the submitted data.","status":400}`
	if res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("empty body: %d %s", res.Status, res.Body)
	}
	res = e.do("POST", "/api/collections/users/auth-with-password", "", `{"identity":"u1@example.com","password":"password1","identityField":"username"}`)
	if res.Status != 400 || !strings.Contains(string(res.Body), `"identityField":{"code":"validation_in_invalid"`) {
		t.Errorf("bad identityField: %d %s", res.Status, res.Body)
	}

	// Disabled password auth is a 403.
	res = e.do("PATCH", "/api/collections/users", e.su, `{"passwordAuth":{"enabled":false}}`)
	if res.Status != 200 {
		t.Fatalf("disable password auth: %d %s", res.Status, res.Body)
	}
	wantError(t, e.do("POST", "/api/collections/users/auth-with-password", "", `{"identity":"u1@example.com","password":"password1"}`), 403, msgPasswordAuthOff)
}

func TestRefreshAndImpersonate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.signUp("u1@example.com", "password1")
	tok := e.login("users", "u1@example.com", "password1")

	res := e.do("POST", "/api/collections/users/auth-refresh", "Bearer "+tok, nil)
	if res.Status != 200 {
		t.Fatalf("refresh: %d %s", res.Status, res.Body)
	}
	if rec := res.JSON(t)["record"].(map[string]any); rec["id"] != id {
		t.Errorf("refresh record = %v", rec)
	}

	res = e.do("POST", "/api/collections/users/impersonate/"+id, e.su, `{"duration":60}`)
	if res.Status != 200 {
		t.Fatalf("impersonate: %d %s", res.Status, res.Body)
	}
	imp := res.JSON(t)["token"].(string)
	c := claimsOf(t, imp)
	if c["refreshable"] != false || int64(c["exp"].(float64)) != e.clock.Now().Unix()+60 {
		t.Errorf("impersonation claims = %v", c)
	}
	res = e.do("POST", "/api/collections/users/auth-refresh", imp, nil)
	if res.Status != 200 || res.JSON(t)["token"] != imp {
		t.Errorf("refresh of a static token should return it unchanged: %d %s", res.Status, res.Body)
	}
	e.clock.Add(61 * time.Second)
	wantError(t, e.do("POST", "/api/collections/users/auth-refresh", imp, nil), 401, msgAuthRequired)

	res = e.do("POST", "/api/collections/users/impersonate/"+id, e.su, `{"duration":-1}`)
	want := `{"data":{"duration":{"code":"validation_min_greater_equal_than_required","message":"Must be no less than 0.","params":{"threshold":0}}},"message":"An error occurred while validating the submitted data.","status":400}`
	if res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("negative duration: %d %s", res.Status, res.Body)
	}

	// A file token is not an auth token.
	res = e.do("POST", "/api/files/token", tok, nil)
	if res.Status != 200 {
		t.Fatalf("file token: %d %s", res.Status, res.Body)
	}
	ft := res.JSON(t)["token"].(string)
	if fc := claimsOf(t, ft); fc["type"] != "file" || fc["exp"] == nil {
		t.Errorf("file claims = %v", fc)
	}
	wantError(t, e.do("POST", "/api/collections/users/auth-refresh", ft, nil), 401, msgAuthRequired)

	// A password change ends every token of the record.
	res = e.do("PATCH", "/api/collections/users/records/"+id, e.su, `{"password":"password2","passwordConfirm":"password2"}`)
	if res.Status != 200 {
		t.Fatalf("change password: %d %s", res.Status, res.Body)
	}
	wantError(t, e.do("POST", "/api/collections/users/auth-refresh", tok, nil), 401, msgAuthRequired)
}

func TestAuthMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.do("GET", "/api/collections/users/auth-methods", "", nil)
	want := `{"password":{"identityFields":["email"],"enabled":true},"oauth2":{"providers":[],"enabled":false},"mfa":{"enabled":false,"duration":0},"otp":{"enabled":false,"duration":0},"totp":{"enabled":false},"passkey":{"enabled":false},"authProviders":null,"usernamePassword":false,"emailPassword":true}` + "\n"
	if res.Status != 200 || string(res.Body) != want {
		t.Errorf("auth-methods = %d %s\nwant %s", res.Status, res.Body, want)
	}
	res = e.do("GET", "/api/collections/users/auth-methods?fields=password", "", nil)
	if got := strings.TrimSpace(string(res.Body)); got != `{"password":{"enabled":true,"identityFields":["email"]}}` {
		t.Errorf("fields=password: %s", got)
	}
}

func TestSignUpValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("taken@example.com", "password1")
	tests := []struct {
		name, body string
		want       map[string]string // field → code
	}{
		// The password fields are judged first, alone (TestPasswordFieldsFirst).
		{"empty", `{}`, map[string]string{"password": "validation_required", "passwordConfirm": "validation_required"}},
		{"bad email", `{"email":"nope","password":"password1","passwordConfirm":"password1"}`, map[string]string{"email": "validation_is_email"}},
		{"short password", `{"email":"a@example.com","password":"short","passwordConfirm":"short"}`, map[string]string{"password": "validation_min_text_constraint"}},
		{"long password", `{"email":"a@example.com","password":"` + strings.Repeat("x", 72) + `","passwordConfirm":"` + strings.Repeat("x", 72) + `"}`, map[string]string{"password": "validation_max_text_constraint"}},
		{"mismatch", `{"email":"a@example.com","password":"password1","passwordConfirm":"password2"}`, map[string]string{"passwordConfirm": "validation_values_mismatch"}},
		{"duplicate", `{"email":"taken@example.com","password":"password1","passwordConfirm":"password1"}`, map[string]string{"email": "validation_not_unique"}},
		{"verified by guest", `{"email":"b@example.com","password":"password1","passwordConfirm":"password1","verified":true}`, map[string]string{"verified": "validation_values_mismatch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("POST", "/api/collections/users/records", "", tt.body)
			if res.Status != 400 {
				t.Fatalf("status = %d %s, want 400", res.Status, res.Body)
			}
			m := res.JSON(t)
			if m["message"] != "Failed to create record." {
				t.Errorf("message = %v", m["message"])
			}
			data := m["data"].(map[string]any)
			if len(data) != len(tt.want) {
				t.Errorf("data = %v, want fields %v", data, tt.want)
			}
			for field, code := range tt.want {
				fe, _ := data[field].(map[string]any)
				if fe == nil || fe["code"] != code {
					t.Errorf("data.%s = %v, want code %s", field, data[field], code)
				}
			}
		})
	}
}

// TestPasswordFieldsFirst pins the order in which a record create, and an
// update that touches the password, are validated: the password fields
// first and alone (password required, passwordConfirm required and equal,
// oldPassword required and right for the owner), then the rest, the new
// password's length included (with no params, as PocketBase's password
// field words it). Each want is the data PocketBase v0.31.0 answered to the
// same body.
func TestPasswordFieldsFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.signUp("owner@example.com", "Passw0rd!x1")
	owner := e.login("users", "owner@example.com", "Passw0rd!x1")
	const (
		required = `{"code":"validation_required","message":"Cannot be blank."}`
		mismatch = `{"code":"validation_values_mismatch","message":"Values don't match."}`
		short    = `{"code":"validation_min_text_constraint","message":"Must be at least 8 character(s)."}`
		isEmail  = `{"code":"validation_is_email","message":"Must be a valid email address."}`
		oldWrong = `{"code":"validation_invalid_old_password","message":"Missing or invalid old password."}`
	)
	tests := []struct {
		name, method, token, body, want string
	}{
		{"create: mismatch hides the rest", "POST", "", `{"email":"bad","password":"a","passwordConfirm":"b"}`, `{"passwordConfirm":` + mismatch + `}`},
		{"create: short", "POST", "", `{"email":"ok1@example.com","password":"a","passwordConfirm":"a"}`, `{"password":` + short + `}`},
		{"create: email and short", "POST", "", `{"email":"bad","password":"a","passwordConfirm":"a"}`, `{"email":` + isEmail + `,"password":` + short + `}`},
		{"create: no confirmation", "POST", "", `{"email":"ok2@example.com","password":"Passw0rd!x1"}`, `{"passwordConfirm":` + required + `}`},
		{"create: blank", "POST", "", `{"email":"","password":"","passwordConfirm":"x"}`, `{"password":` + required + `,"passwordConfirm":` + mismatch + `}`},
		{"create: nothing", "POST", "", `{}`, `{"password":` + required + `,"passwordConfirm":` + required + `}`},
		{"create: 72 bytes", "POST", "", `{"email":"ok3@example.com","password":"` + strings.Repeat("A", 72) + `","passwordConfirm":"` + strings.Repeat("A", 72) + `"}`,
			`{"password":{"code":"validation_max_text_constraint","message":"Must be less than 71 character(s)."}}`},
		{"superuser: mismatch", "PATCH", e.su, `{"password":"a","passwordConfirm":"b"}`, `{"passwordConfirm":` + mismatch + `}`},
		{"superuser: short", "PATCH", e.su, `{"password":"a","passwordConfirm":"a"}`, `{"password":` + short + `}`},
		{"superuser: no confirmation", "PATCH", e.su, `{"password":"Passw0rd!x2"}`, `{"passwordConfirm":` + required + `}`},
		{"superuser: mismatch hides the email", "PATCH", e.su, `{"email":"bad","password":"a","passwordConfirm":"b"}`, `{"passwordConfirm":` + mismatch + `}`},
		{"owner: mismatch", "PATCH", owner, `{"password":"a","passwordConfirm":"b"}`, `{"oldPassword":` + required + `,"passwordConfirm":` + mismatch + `}`},
		{"owner: short", "PATCH", owner, `{"password":"a","passwordConfirm":"a"}`, `{"oldPassword":` + required + `}`},
		{"owner: no old password", "PATCH", owner, `{"password":"Passw0rd!x2","passwordConfirm":"Passw0rd!x2"}`, `{"oldPassword":` + required + `}`},
		{"owner: wrong old password", "PATCH", owner, `{"password":"Passw0rd!x2","passwordConfirm":"Passw0rd!x2","oldPassword":"wrong"}`, `{"oldPassword":` + oldWrong + `}`},
		{"owner: no confirmation", "PATCH", owner, `{"password":"Passw0rd!x2"}`, `{"oldPassword":` + required + `,"passwordConfirm":` + required + `}`},
		{"owner: confirmation only", "PATCH", owner, `{"passwordConfirm":"Passw0rd!x2"}`, `{"oldPassword":` + required + `,"password":` + required + `,"passwordConfirm":` + mismatch + `}`},
		{"owner: old password only", "PATCH", owner, `{"oldPassword":"Passw0rd!x1"}`, `{"password":` + required + `,"passwordConfirm":` + required + `}`},
		{"owner: all wrong", "PATCH", owner, `{"name":"x","password":"a","passwordConfirm":"b","oldPassword":"bad"}`, `{"oldPassword":` + oldWrong + `,"passwordConfirm":` + mismatch + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, msg := "/api/collections/users/records", "Failed to create record."
			if tt.method == "PATCH" {
				path, msg = path+"/"+id, "Failed to update record."
			}
			res := e.do(tt.method, path, tt.token, tt.body)
			want := `{"data":` + tt.want + `,"message":"` + msg + `","status":400}`
			if res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
				t.Errorf("%s %s = %d %s\nwant 400 %s", tt.method, tt.body, res.Status, res.Body, want)
			}
		})
	}
}

func TestRecordVisibility(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.signUp("a@example.com", "password1")
	b := e.signUp("b@example.com", "password1")
	aTok := e.login("users", "a@example.com", "password1")

	res := e.do("GET", "/api/collections/users/records/"+a, aTok, nil)
	if res.Status != 200 || res.JSON(t)["email"] != "a@example.com" {
		t.Errorf("owner view: %d %s", res.Status, res.Body)
	}
	wantError(t, e.do("GET", "/api/collections/users/records/"+b, aTok, nil), 404, msgNotFound)
	res = e.do("GET", "/api/collections/users/records", aTok, nil)
	if m := res.JSON(t); m["totalItems"] != float64(1) {
		t.Errorf("owner list = %s", res.Body)
	}
	res = e.do("GET", "/api/collections/users/records", e.su, nil)
	if m := res.JSON(t); m["totalItems"] != float64(2) {
		t.Errorf("superuser list = %s", res.Body)
	}
	res = e.do("DELETE", "/api/collections/users/records/"+b, e.su, nil)
	if res.Status != 204 || len(res.Body) != 0 {
		t.Errorf("delete: %d %q", res.Status, res.Body)
	}
	// The last superuser stays.
	su := e.auth.Records(e.auth.Superusers())[0]
	wantError(t, e.do("DELETE", "/api/collections/_superusers/records/"+su.ID, e.su, nil), 400, "You can't delete the only existing superuser.")
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := strings.Repeat("x", DefaultBodyLimit+1)
	res := e.doRaw("POST", "/api/collections/users/auth-with-password", "", "application/json", strings.NewReader(big))
	wantError(t, res, 413, msgTooLarge)
}

func TestPanicIsA500Envelope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.srv.Config.Handler.(*Server)
	s.mux.Handle("GET /test-panic", s.handle(func(http.ResponseWriter, *http.Request) error { panic("boom") }))
	wantError(t, e.do("GET", "/test-panic", "", nil), 500, msgBadRequest)
}

func TestListFilterSort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, email := range []string{"b@example.com", "a@example.com", "c@example.org"} {
		e.signUp(email, "password1")
	}
	emails := func(path string) []any {
		t.Helper()
		res := e.do("GET", path, e.su, nil)
		if res.Status != 200 {
			t.Fatalf("%s: %d %s", path, res.Status, res.Body)
		}
		var out []any
		for _, it := range res.JSON(t)["items"].([]any) {
			m := it.(map[string]any)
			if v, ok := m["email"]; ok {
				out = append(out, v)
			} else {
				out = append(out, m["name"])
			}
		}
		return out
	}
	got := emails("/api/collections/users/records?sort=-email&filter=" + url.QueryEscape(`email ~ "example.com"`))
	if want := []any{"b@example.com", "a@example.com"}; !slices.Equal(got, want) {
		t.Errorf("records = %v, want %v", got, want)
	}
	got = emails("/api/collections?filter=" + url.QueryEscape(`name = "users"`))
	if want := []any{"users"}; !slices.Equal(got, want) {
		t.Errorf("collections = %v, want %v", got, want)
	}
	wantError(t, e.do("GET", "/api/collections/users/records?filter=nope%3D1", e.su, nil), 400, msgBadRequest)
	wantError(t, e.do("GET", "/api/collections/users/records?sort=password", e.su, nil), 400, msgBadRequest)
	// A filter that matches nothing, and any filter on a collection with no
	// records, gives an empty array, not null.
	if res := e.do("POST", "/api/collections", e.su, `{"name":"empties","type":"auth"}`); res.Status != 200 {
		t.Fatalf("create collection: %d %s", res.Status, res.Body)
	}
	for _, path := range []string{
		"/api/collections/users/records?filter=" + url.QueryEscape(`email = "nobody@example.com"`),
		"/api/collections/empties/records?filter=" + url.QueryEscape(`email != ""`) + "&perPage=5",
		"/api/collections?filter=" + url.QueryEscape(`name = "nothing" && type = "auth"`),
	} {
		res := e.do("GET", path, e.su, nil)
		if res.Status != 200 || !strings.Contains(string(res.Body), `"items":[]`) || !strings.Contains(string(res.Body), `"totalItems":0`) {
			t.Errorf("%s: %d %s, want 200 with no items", path, res.Status, res.Body)
		}
	}
}

// TestUsernameIdentity: a collection can make a text field an identity
// field; it is then unique and accepted by auth-with-password.
func TestUsernameIdentity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.do("POST", "/api/collections", e.su, `{"name":"members","type":"auth","createRule":"","fields":[{"name":"username","type":"text","max":40}],"passwordAuth":{"enabled":true,"identityFields":["email","username"]}}`)
	if res.Status != 200 {
		t.Fatalf("create collection: %d %s", res.Status, res.Body)
	}
	res = e.do("POST", "/api/collections/members/records", "", `{"email":"m@example.com","username":"mika","password":"password1","passwordConfirm":"password1"}`)
	if res.Status != 200 || res.JSON(t)["username"] != "mika" {
		t.Fatalf("sign up: %d %s", res.Status, res.Body)
	}
	res = e.do("POST", "/api/collections/members/records", "", `{"email":"n@example.com","username":"mika","password":"password1","passwordConfirm":"password1"}`)
	if res.Status != 400 || !strings.Contains(string(res.Body), `"username":{"code":"validation_not_unique"`) {
		t.Errorf("duplicate username: %d %s", res.Status, res.Body)
	}
	tok := e.login("members", "mika", "password1")
	if c := claimsOf(t, tok); c["exp"] == nil {
		t.Errorf("a new auth collection's tokens expire (7 days): %v", c)
	}
	res = e.do("GET", "/api/collections/members/auth-methods", "", nil)
	if m := res.JSON(t); m["usernamePassword"] != true || m["emailPassword"] != true {
		t.Errorf("auth-methods = %s", res.Body)
	}
	res = e.do("POST", "/api/collections/members/auth-with-password", "", `{"identity":"mika","password":"password1","identityField":"email"}`)
	wantError(t, res, 400, msgAuthFailed)
}

func TestCollectionGuards(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// OTP on _superusers is a second factor only: enabling it enables
	// MFA (as in PocketBase), and MFA cannot go while OTP stays.
	res := e.do("PATCH", "/api/collections/_superusers", e.su, `{"otp":{"enabled":true}}`)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"mfa":{"enabled":true,`) {
		t.Errorf("enable OTP on _superusers: %d %s", res.Status, res.Body)
	}
	res = e.do("PATCH", "/api/collections/_superusers", e.su, `{"mfa":{"enabled":false}}`)
	if res.Status != 400 || !strings.Contains(string(res.Body), `"mfa":{"enabled":{"code":"validation_superusers_otp_mfa"`) {
		t.Errorf("disable MFA with OTP on _superusers: %d %s", res.Status, res.Body)
	}
	res = e.do("PATCH", "/api/collections/_superusers", e.su, `{"otp":{"enabled":false},"mfa":{"enabled":false}}`)
	if res.Status != 200 {
		t.Errorf("disable OTP and MFA on _superusers: %d %s", res.Status, res.Body)
	}
	res = e.do("PATCH", "/api/collections/users", e.su, `{"type":"base"}`)
	if res.Status != 400 || !strings.Contains(string(res.Body), `"type":{"code":"validation_collection_type_change"`) {
		t.Errorf("type change: %d %s", res.Status, res.Body)
	}
	res = e.do("POST", "/api/collections", e.su, `{"name":"posts","type":"base"}`)
	if res.Status != 400 || !strings.Contains(string(res.Body), `"type":{"code":"validation_unsupported_value"`) {
		t.Errorf("base collection: %d %s", res.Status, res.Body)
	}
	// A page far past the end is empty, not a crash.
	res = e.do("GET", "/api/collections?page=9223372036854775807", e.su, nil)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"items":[]`) {
		t.Errorf("huge page: %d %s", res.Status, res.Body)
	}
	res = e.do("GET", "/api/collections/users/records?page=9223372036854775807", "", nil)
	if res.Status != 200 {
		t.Errorf("huge page on records: %d %s", res.Status, res.Body)
	}
}

// TestImpersonationExpires: static tokens always expire, even for users,
// whose password tokens do not (§5.9).
func TestImpersonationExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.signUp("u@example.com", "password1")
	res := e.do("POST", "/api/collections/users/impersonate/"+id, e.su, nil)
	c := claimsOf(t, res.JSON(t)["token"].(string))
	exp, _ := c["exp"].(float64)
	if want := e.clock.Now().Add(authn.DefaultStaticTokenDuration).Unix(); int64(exp) != want {
		t.Errorf("exp = %v, want %d", c["exp"], want)
	}
}

// TestRecordIDAndIdentityFieldErrors pins the answers to a sign-up with a
// chosen id and to an identity field that does not exist to what
// PocketBase v0.31.0 answered the same bodies: the id field's own rules,
// each with its code, and a taken id as any taken unique value.
func TestRecordIDAndIdentityFieldErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	signUp := func(id string) string {
		return `{"id":"` + id + `","email":"id-` + id + `@example.com","password":"Passw0rd!p1","passwordConfirm":"Passw0rd!p1"}`
	}
	const failed = `,"message":"Failed to create record.","status":400}`
	for _, tt := range []struct{ name, body, want string }{
		{"short", signUp("short"), `{"data":{"id":{"code":"validation_min_text_constraint","message":"Must be at least 15 character(s).","params":{"min":15}}}` + failed},
		{"capitals", signUp("UPPERCASEIDXXXX"), `{"data":{"id":{"code":"validation_invalid_format","message":"Invalid value format."}}` + failed},
		{"long", signUp("abcdefghijklmnop"), `{"data":{"id":{"code":"validation_max_text_constraint","message":"Must be no more than 15 character(s).","params":{"max":15}}}` + failed},
	} {
		res := e.do("POST", "/api/collections/users/records", e.su, tt.body)
		if res.Status != 400 || strings.TrimSpace(string(res.Body)) != tt.want {
			t.Errorf("%s: %d %s\nwant 400 %s", tt.name, res.Status, res.Body, tt.want)
		}
	}
	if res := e.do("POST", "/api/collections/users/records", e.su, signUp("abcdefghijklmno")); res.Status != 200 {
		t.Fatalf("a valid id: %d %s", res.Status, res.Body)
	}
	res := e.do("POST", "/api/collections/users/records", e.su, strings.Replace(signUp("abcdefghijklmno"), "id-", "dup-", 1))
	if want := `{"data":{"id":{"code":"validation_not_unique","message":"Value must be unique."}}` + failed; res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("taken id: %d %s\nwant 400 %s", res.Status, res.Body, want)
	}
	res = e.do("PATCH", "/api/collections/users", e.su, `{"passwordAuth":{"identityFields":["email","nope","name"]}}`)
	want := `{"data":{"passwordAuth":{"identityFields":{"code":"validation_missing_field","message":"Invalid or missing field nope.","params":{"fieldName":"nope"}}}},"message":"Failed to update collection.","status":400}`
	if res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("unknown identity field: %d %s\nwant 400 %s", res.Status, res.Body, want)
	}
}
