package api

import (
	"strings"
	"testing"
)

// ruleEnv is an env whose users collection has ann (name "Ann",
// verified), bob (name "Bob") and carl (name "admin"), all with password
// "password1", and the given rules set on users.
func ruleEnv(t *testing.T, rules string) (e *env, ann, bob, carl string) {
	t.Helper()
	e, _, ann = otpEnv(t, false)
	bob = e.signUp("bob@example.com", "password1")
	carl = e.signUp("carl@example.com", "password1")
	for id, body := range map[string]string{ann: `{"name":"Ann","verified":true}`, bob: `{"name":"Bob"}`, carl: `{"name":"admin"}`} {
		if res := e.do("PATCH", "/api/collections/users/records/"+id, e.su, body); res.Status != 200 {
			t.Fatalf("set up %s: %d %s", id, res.Status, res.Body)
		}
	}
	if res := e.do("PATCH", "/api/collections/users", e.su, rules); res.Status != 200 {
		t.Fatalf("set rules %s: %d %s", rules, res.Status, res.Body)
	}
	return e, ann, bob, carl
}

// doWith sends a JSON request with extra headers.
func (e *env) doWith(method, path, token, body string, header map[string]string) *response {
	e.t.Helper()
	if body == "" {
		return e.doHeader(method, path, token, "", nil, header)
	}
	return e.doHeader(method, path, token, "application/json", strings.NewReader(body), header)
}

// TestRuleList: a list shows what its rule lets through, to guests too
// (no 403 for a non-null rule); a null rule is 403 for anyone but
// superusers, who see everything.
func TestRuleList(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, rules, who, query string
		header                  map[string]string
		status                  int
		total                   float64
	}{
		{"guest, verified", `{"listRule":"verified = true"}`, "guest", "", nil, 200, 1},
		{"user, own or verified", `{"listRule":"verified = true || id = @request.auth.id"}`, "bob", "", nil, 200, 2},
		{"query operand", `{"listRule":"@request.query.key = 'k'"}`, "guest", "?key=k", nil, 200, 3},
		{"query operand missing", `{"listRule":"@request.query.key = 'k'"}`, "guest", "", nil, 200, 0},
		{"header operand", `{"listRule":"@request.headers.x_team = name"}`, "guest", "", map[string]string{"X-Team": "Bob"}, 200, 1},
		{"auth field", `{"listRule":"@request.auth.name = 'admin'"}`, "carl", "", nil, 200, 3},
		{"auth field, other", `{"listRule":"@request.auth.name = 'admin'"}`, "bob", "", nil, 200, 0},
		{"method and context", `{"listRule":"@request.method = 'GET' && @request.context = 'default'"}`, "guest", "", nil, 200, 3},
		{"with filter", `{"listRule":"name != 'Bob'"}`, "guest", "?filter=" + "name%3D'Ann'", nil, 200, 1},
		{"null rule", `{"listRule":null}`, "bob", "", nil, 403, 0},
		{"superuser", `{"listRule":"id = 'none'"}`, "su", "", nil, 200, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, _, _, _ := ruleEnv(t, tt.rules)
			token := map[string]string{"guest": "", "su": e.su}[tt.who]
			if tt.who == "bob" || tt.who == "carl" {
				token = e.login("users", tt.who+"@example.com", "password1")
			}
			res := e.doWith("GET", "/api/collections/users/records"+tt.query, token, "", tt.header)
			if tt.status == 403 {
				wantError(t, res, 403, msgSuperusersOnly)
				return
			}
			if res.Status != 200 || res.JSON(t)["totalItems"] != tt.total {
				t.Errorf("%d %s, want 200 with %v items", res.Status, res.Body, tt.total)
			}
		})
	}
}

// TestRuleViewUpdateDelete: a view, update or delete the rule refuses is
// 404, one it allows goes through.
func TestRuleViewUpdateDelete(t *testing.T) {
	t.Parallel()
	e, ann, bob, _ := ruleEnv(t, `{"viewRule":"name = 'Ann' || id = @request.auth.id",`+
		`"updateRule":"id = @request.auth.id && @request.body.verified:isset = false",`+
		`"deleteRule":"id = @request.auth.id && @request.headers.x_confirm = 'yes'"}`)
	bobTok := e.login("users", "bob@example.com", "password1")
	for _, tt := range []struct {
		name, method, id, token, body string
		header                        map[string]string
		status                        int
	}{
		{"view allowed to a guest", "GET", ann, "", "", nil, 200},
		{"view refused", "GET", bob, "", "", nil, 404},
		{"view own", "GET", bob, bobTok, "", nil, 200},
		{"update refused by body", "PATCH", bob, bobTok, `{"verified":false}`, nil, 404},
		{"update other refused", "PATCH", ann, bobTok, `{"name":"x"}`, nil, 404},
		{"update allowed", "PATCH", bob, bobTok, `{"name":"Robert"}`, nil, 200},
		{"delete without header", "DELETE", bob, bobTok, "", nil, 404},
		{"delete other", "DELETE", ann, bobTok, "", map[string]string{"X-Confirm": "yes"}, 404},
		{"delete allowed", "DELETE", bob, bobTok, "", map[string]string{"X-Confirm": "yes"}, 204},
	} {
		res := e.doWith(tt.method, "/api/collections/users/records/"+tt.id, tt.token, tt.body, tt.header)
		if tt.status == 404 {
			wantError(t, res, 404, msgNotFound)
		} else if res.Status != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.name, res.Status, res.Body, tt.status)
		}
	}
}

// TestRuleCreate: a create the rule refuses is 400 "Failed to create
// record.", checked against the submitted record and body before the
// fields are validated.
func TestRuleCreate(t *testing.T) {
	t.Parallel()
	e, _, _, _ := ruleEnv(t, `{"createRule":"name = 'ok' && @request.body.email ~ '@example.org'"}`)
	for _, tt := range []struct {
		body   string
		status int
	}{
		{`{"email":"new@example.org","password":"password1","passwordConfirm":"password1","name":"no"}`, 400},
		{`{"email":"new@example.com","password":"password1","passwordConfirm":"password1","name":"ok"}`, 400},
		{`{"email":"new@example.org","password":"x","name":"no"}`, 400}, // the rule first, not the fields
		{`{"email":"new@example.org","password":"password1","passwordConfirm":"password1","name":"ok"}`, 200},
	} {
		res := e.do("POST", "/api/collections/users/records", "", tt.body)
		if tt.status == 400 {
			wantError(t, res, 400, msgCreateFailed)
		} else if res.Status != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.body, res.Status, res.Body, tt.status)
		}
	}
}

// TestAuthRule: an authRule that refuses the sign-in is 403 for every
// method, before MFA; a superuser-authenticated request passes any
// authRule; a refresh is checked too.
func TestAuthRule(t *testing.T) {
	t.Parallel()
	e, fm, _ := otpEnv(t, true)
	bob := e.signUp("bob@example.com", "password1")
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"authRule":"verified = true && @request.context != 'otp'"}`); res.Status != 200 {
		t.Fatalf("set authRule: %d %s", res.Status, res.Body)
	}
	password := func(token, email string) *response {
		return e.do("POST", "/api/collections/users/auth-with-password", token, map[string]string{"identity": email, "password": "password1"})
	}
	wantError(t, password("", "bob@example.com"), 403, msgAuthRuleFailed)
	if res := password(e.su, "bob@example.com"); res.Status != 401 || !strings.Contains(string(res.Body), "mfaId") {
		t.Errorf("superuser-authenticated sign-in: %d %s, want the MFA challenge", res.Status, res.Body)
	}
	if res := e.do("PATCH", "/api/collections/users/records/"+bob, e.su, `{"verified":true}`); res.Status != 200 {
		t.Fatal(res.Status)
	}
	if res := password("", "bob@example.com"); res.Status != 401 {
		t.Errorf("verified bob: %d %s, want the MFA challenge", res.Status, res.Body)
	}
	otpID, code := e.requestOTP(fm, "users", "bob@example.com")
	wantError(t, e.do("POST", "/api/collections/users/auth-with-otp", "", map[string]string{"otpId": otpID, "password": code}), 403, msgAuthRuleFailed)
}

// TestAuthRuleRefresh: a changed authRule ends the collection's auth
// tokens, as in PocketBase; auth-refresh applies the authRule again.
func TestAuthRuleRefresh(t *testing.T) {
	t.Parallel()
	e, ann, _, _ := ruleEnv(t, `{}`)
	old := e.login("users", "ann@example.com", "password1")
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"authRule":"name = 'Ann' && id = @request.auth.id"}`); res.Status != 200 {
		t.Fatalf("set authRule: %d %s", res.Status, res.Body)
	}
	if res := e.do("POST", "/api/collections/users/auth-refresh", old, nil); res.Status != 401 {
		t.Errorf("refresh with a token from before the authRule changed: %d %s, want 401", res.Status, res.Body)
	}
	wantError(t, e.do("POST", "/api/collections/users/auth-with-password", "", map[string]string{"identity": "ann@example.com", "password": "password1"}), 403, msgAuthRuleFailed)
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"authRule":"name = 'Ann' && (id = @request.auth.id || @request.context = 'password')"}`); res.Status != 200 {
		t.Fatalf("set authRule: %d %s", res.Status, res.Body)
	}
	tok := e.login("users", "ann@example.com", "password1")
	if res := e.do("POST", "/api/collections/users/auth-refresh", tok, nil); res.Status != 200 {
		t.Errorf("refresh: %d %s", res.Status, res.Body)
	}
	if res := e.do("PATCH", "/api/collections/users/records/"+ann, e.su, `{"name":"Anna"}`); res.Status != 200 {
		t.Fatal(res.Status)
	}
	wantError(t, e.do("POST", "/api/collections/users/auth-refresh", tok, nil), 403, msgAuthRuleFailed)
}

// TestManageRule: a signed-in record the manageRule matches may change
// another record's email, password and verified without oldPassword, and
// sees its email; anyone else may not.
func TestManageRule(t *testing.T) {
	t.Parallel()
	e, ann, bob, _ := ruleEnv(t, `{"manageRule":"@request.auth.name = 'admin'","updateRule":"","viewRule":""}`)
	carlTok := e.login("users", "carl@example.com", "password1")
	bobTok := e.login("users", "bob@example.com", "password1")
	change := `{"email":"bob2@example.com","password":"newpassword1","passwordConfirm":"newpassword1","verified":true}`

	res := e.do("PATCH", "/api/collections/users/records/"+ann, bobTok, change)
	if res.Status != 400 || !strings.Contains(string(res.Body), "validation_") {
		t.Errorf("non-manager: %d %s, want 400 validation errors", res.Status, res.Body)
	}
	res = e.do("GET", "/api/collections/users/records/"+ann, carlTok, nil)
	if res.Status != 200 || res.JSON(t)["email"] != "ann@example.com" {
		t.Errorf("manager view: %d %s, want the email shown", res.Status, res.Body)
	}
	res = e.do("GET", "/api/collections/users/records/"+ann, bobTok, nil)
	if res.Status != 200 || res.JSON(t)["email"] != nil {
		t.Errorf("non-manager view: %d %s, want the email hidden", res.Status, res.Body)
	}
	res = e.do("PATCH", "/api/collections/users/records/"+bob, carlTok, change)
	if res.Status != 200 || res.JSON(t)["email"] != "bob2@example.com" || res.JSON(t)["verified"] != true {
		t.Fatalf("manager update: %d %s", res.Status, res.Body)
	}
	e.login("users", "bob2@example.com", "newpassword1")
}

// TestRuleSaveRefusals: rules that name unknown fields or joins are
// refused at save with validation_invalid_rule saying so; a blank
// manageRule is refused as PocketBase refuses it.
func TestRuleSaveRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tt := range []struct {
		body, key, code, msg string
	}{
		{`{"listRule":"nosuch = 1"}`, "listRule", "validation_invalid_rule", `Invalid rule. Raw error: offset 0: unknown field \"nosuch\".`},
		{`{"authRule":"@collection.users.id = id"}`, "authRule", "validation_invalid_rule", `joins are not supported`},
		{`{"viewRule":"name.x = 1"}`, "viewRule", "validation_invalid_rule", `joins are not supported`},
		{`{"manageRule":""}`, "manageRule", "validation_nil_or_not_empty_required", `Cannot be blank.`},
		{`{"createRule":"password != ''"}`, "createRule", "validation_invalid_rule", `hidden`},
		{`{"updateRule":"id = @request.auth.id && @request.auth.nosuch != true"}`, "updateRule", "validation_invalid_rule",
			`Invalid rule. Raw error: offset 25: unknown field \"@request.auth.nosuch\": no auth collection has a field \"nosuch\".`},
		{`{"mfa":{"rule":"@request.auth.nosuch:lower = 'x'"}}`, "rule", "validation_invalid_rule", `no auth collection has a field`},
	} {
		res := e.do("PATCH", "/api/collections/users", e.su, tt.body)
		body := string(res.Body)
		if res.Status != 400 || !strings.Contains(body, `"`+tt.key+`":{"code":"`+tt.code+`"`) || !strings.Contains(body, tt.msg) {
			t.Errorf("%s: %d %s, want 400 %s on %s mentioning %s", tt.body, res.Status, body, tt.code, tt.key, tt.msg)
		}
	}
}

func TestHeaderKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"X-Token": "x_token", "Content-Type": "content_type", "X-API-Key": "x_api_key",
		"Authorization": "authorization", "myTestDB": "my_test_db", "X--a__b": "x_a_b",
	} {
		if got := headerKey(in); got != want {
			t.Errorf("headerKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRuleHiddenFields: a rule reads hidden fields, of @request.auth and
// of the record itself, as PocketBase's rules do: a banned member fails
// "@request.auth.banned != true" (404 on its own update), a hidden role
// "admin" satisfies a listRule; a rule may name a field of another auth
// collection (the signed-in record may be of any), but one that no auth
// collection has is refused at save.
func TestRuleHiddenFields(t *testing.T) {
	t.Parallel()
	e, ids := hiddenEnv(t, `{"updateRule":"id = @request.auth.id && @request.auth.banned != true",`+
		`"listRule":"@request.auth.role = \"admin\""}`)
	tokens := map[string]string{}
	for _, name := range []string{"alice", "bob", "carol"} {
		tokens[name] = e.login("members", name+"@secret.test", "password1")
	}
	for _, tt := range []struct {
		name, who, method, path, body string
		status                        int
	}{
		{"not banned, own update", "alice", "PATCH", ids["alice"], `{"emailVisibility":true}`, 200},
		{"banned, own update", "bob", "PATCH", ids["bob"], `{"emailVisibility":false}`, 404},
		{"banned, own update", "carol", "PATCH", ids["carol"], `{"emailVisibility":true}`, 404},
		{"a rule on the record's own hidden field", "su", "PATCH", "", `{"viewRule":"banned = false"}`, 200},
		{"own hidden field, viewable", "", "GET", ids["alice"], "", 200},
		{"own hidden field, not viewable", "", "GET", ids["bob"], "", 404},
	} {
		path := "/api/collections/members/records/" + tt.path
		if tt.who == "su" {
			tokens[tt.who], path = e.su, "/api/collections/members"
		}
		res := e.do(tt.method, path, tokens[tt.who], tt.body)
		if tt.status == 404 {
			wantError(t, res, 404, msgNotFound)
		} else if res.Status != tt.status {
			t.Errorf("%s (%s): %d %s, want %d", tt.name, tt.who, res.Status, res.Body, tt.status)
		}
	}
	for who, want := range map[string]float64{"alice": 3, "bob": 0, "": 0} {
		res := e.do("GET", "/api/collections/members/records", tokens[who], nil)
		if res.Status != 200 || res.JSON(t)["totalItems"] != want {
			t.Errorf("list by %q under @request.auth.role = \"admin\": %d %s, want 200 with %v items", who, res.Status, res.Body, want)
		}
	}
	// users has no field role, members has: a rule of users may name it.
	e.signUp("dave@example.com", "password1")
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"listRule":"@request.auth.role = 'admin'"}`); res.Status != 200 {
		t.Errorf("a users rule naming a field of members: %d %s, want 200", res.Status, res.Body)
	}
	for who, want := range map[string]float64{"alice": 1, "bob": 0} {
		res := e.do("GET", "/api/collections/users/records", tokens[who], nil)
		if res.Status != 200 || res.JSON(t)["totalItems"] != want {
			t.Errorf("users list by %s of members: %d %s, want 200 with %v items", who, res.Status, res.Body, want)
		}
	}
}
