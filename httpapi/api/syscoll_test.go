package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"strongbox/authn"
)

// getCollection returns the collection as GET reports it.
func (e *env) getCollection(id string) map[string]any {
	e.t.Helper()
	res := e.do("GET", "/api/collections/"+id, e.su, nil)
	if res.Status != 200 {
		e.t.Fatalf("GET collection %s: %d %s", id, res.Status, res.Body)
	}
	return res.JSON(e.t)
}

// option is one leaf of a collection's JSON: its path and value.
type option struct {
	path  []string
	value any
}

// options lists every leaf of v (objects and lists are walked into; an
// empty list is a leaf).
func options(path []string, v any) []option {
	switch x := v.(type) {
	case map[string]any:
		var out []option
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, options(append(slices.Clone(path), k), x[k])...)
		}
		return out
	case []any:
		out := []option{{path, v}} // the list as a whole
		for i, el := range x {
			if _, isObj := el.(map[string]any); isObj {
				out = append(out, options(append(slices.Clone(path), strconv.Itoa(i)), el)...)
			}
		}
		return out
	}
	return []option{{path, v}}
}

// changes returns the values an option is changed to in the walk: each
// differs from the current value.
func changes(o option) []any {
	last := o.path[len(o.path)-1]
	var out []any
	switch v := o.value.(type) {
	case bool:
		out = []any{!v}
	case float64:
		if last == "duration" {
			out = []any{0.0, -1.0, 5.0, v + 60, float64(authn.MaxTokenDuration + 1)}
		} else {
			out = []any{v + 1}
		}
	case string:
		switch {
		case strings.HasSuffix(last, "Rule") || last == "rule":
			out = []any{nil, "", authn.OwnerRule}
		case last == "created" || last == "updated":
			out = []any{"2020-01-02 03:04:05.000Z"}
		case last == "type" && len(o.path) == 1:
			out = []any{"base", "view"}
		default:
			out = []any{v + "_x"}
		}
	case nil:
		out = []any{"", authn.OwnerRule}
	case []any:
		out = []any{[]any{}}
		switch last {
		case "identityFields":
			out = append(out, []any{"email", "nosuchfield"})
		case "providers":
			out = append(out, []any{map[string]any{"name": "google", "clientId": "cid", "clientSecret": "csecret"}})
		case "indexes":
			out = append(out, append(slices.Clone(v), "CREATE INDEX `idx_x` ON `x` (`email`)"))
		case "fields":
			out = append(out, append(slices.Clone(v), map[string]any{"name": "nickname", "type": "text"}))
		}
	}
	return slices.DeleteFunc(out, func(x any) bool { return reflect.DeepEqual(x, o.value) })
}

// withPath returns a deep copy of doc with the value at path set to v.
func withPath(doc any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	switch x := doc.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, el := range x {
			m[k] = el
		}
		m[path[0]] = withPath(x[path[0]], path[1:], v)
		return m
	case []any:
		l := slices.Clone(x)
		i, _ := strconv.Atoi(path[0])
		l[i] = withPath(x[i], path[1:], v)
		return l
	}
	panic(fmt.Sprintf("withPath: %v is not a container", doc))
}

func atPath(doc any, path []string) (any, bool) {
	for _, p := range path {
		switch x := doc.(type) {
		case map[string]any:
			v, ok := x[p]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(x) {
				return nil, false
			}
			doc = x[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

// reported reports whether got shows every key of sent with its value
// (secrets, never reported, excepted).
func reported(sent, got any) bool {
	switch s := sent.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range s {
			if k == "clientSecret" || k == "secret" {
				continue
			}
			if !reported(v, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(s) {
			return false
		}
		for i := range s {
			if !reported(s[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(sent, got)
}

// TestCollectionOptionsNeverDropped walks every option of every system
// collection, of users and of a new auth collection (every leaf of the
// collection's JSON, list elements included, and each token secret, which
// is never reported), changes it, and requires the change to be either
// applied (the next GET reports it) or refused with a 400 whose data holds
// a code for that key. An applied change is put back before the next.
func TestCollectionOptionsNeverDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.do("POST", "/api/collections", e.su, `{"name":"members","type":"auth"}`)
	if res.Status != 200 {
		t.Fatalf("create members: %d %s", res.Status, res.Body)
	}
	members := res.JSON(t)["id"].(string)
	var system []string
	for _, c := range e.auth.Collections() {
		if c.System {
			system = append(system, c.ID)
		}
	}
	if !slices.Contains(system, authn.SuperusersID) {
		t.Fatalf("system collections %v do not include _superusers", system)
	}
	for _, id := range append(system, authn.UsersID, members) {
		before := e.getCollection(id)
		var applied, refused int
		for _, o := range options(nil, before) {
			for _, v := range changes(o) {
				top := o.path[0]
				body := map[string]any{top: withPath(before[top], o.path[1:], v)}
				name := fmt.Sprintf("%s %s=%s", before["name"], strings.Join(o.path, "."), mustMarshal(t, v))
				if ok := checkChange(t, e, id, name, body, o.path); ok {
					applied++
					// Put the option back. On _superusers, enabling OTP
					// also enabled MFA, which goes back with it.
					restore := map[string]any{top: before[top]}
					if id == authn.SuperusersID && top == "otp" {
						restore["mfa"] = before["mfa"]
					}
					if res := e.do("PATCH", "/api/collections/"+id, e.su, restore); res.Status != 200 {
						t.Fatalf("%s: restore: %d %s", name, res.Status, res.Body)
					}
				} else {
					refused++
				}
			}
		}
		for _, typ := range authn.TokenTypes {
			key := string(typ) + "Token"
			for _, secret := range []string{"", "short", strings.Repeat("s", 256)} {
				name := fmt.Sprintf("%s %s.secret=%q", before["name"], key, secret)
				res := e.do("PATCH", "/api/collections/"+id, e.su, map[string]any{key: map[string]any{"secret": secret}})
				wantCode(t, name, res, []string{key, "secret"})
			}
		}
		t.Logf("%s: %d changes applied, %d refused", before["name"], applied, refused)
		if after := e.getCollection(id); !reflect.DeepEqual(withPath(after, []string{"updated"}, nil), withPath(before, []string{"updated"}, nil)) {
			t.Errorf("%s changed after the walk:\n%s\nwas\n%s", before["name"], mustMarshal(t, after), mustMarshal(t, before))
		}
	}
}

// checkChange sends body and reports whether the change at path was
// applied; a change neither applied nor refused with a code fails t.
func checkChange(t *testing.T, e *env, id, name string, body map[string]any, path []string) bool {
	t.Helper()
	res := e.do("PATCH", "/api/collections/"+id, e.su, body)
	switch res.Status {
	case 200:
		after := e.getCollection(id)
		sent, _ := atPath(body, path)
		got, ok := atPath(after, path)
		if !ok || !reported(sent, got) {
			// The path can move when a list changes length; the whole
			// top-level value must then be reported as sent.
			if !reported(body[path[0]], after[path[0]]) {
				t.Errorf("%s: 200 but the next GET reports %s", name, mustMarshal(t, got))
			}
		}
		return true
	case 400:
		wantCode(t, name, res, path[:1])
		return false
	}
	t.Errorf("%s: %d %s, want 200 (applied) or 400 with a code", name, res.Status, res.Body)
	return false
}

// wantCode requires a 400 whose data holds a validation code at path (or
// below it).
func wantCode(t *testing.T, name string, res *response, path []string) {
	t.Helper()
	if res.Status != 400 {
		t.Errorf("%s: %d %s, want 400 with a code under %s", name, res.Status, res.Body, strings.Join(path, "."))
		return
	}
	data, _ := res.JSON(t)["data"].(map[string]any)
	v, ok := atPath(data, path)
	if !ok || !strings.Contains(mustMarshal(t, v), `"code":"validation_`) {
		t.Errorf("%s: 400 %s, want a code under data.%s", name, res.Body, strings.Join(path, "."))
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCollectionChangesRefused: the changes PocketBase refuses, or
// strongbox cannot apply, answer 400 with the code under the key, and
// nothing changes.
func TestCollectionChangesRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	maxPlus := authn.MaxTokenDuration + 1
	tests := []struct {
		name, col, body string
		path            []string
		code            string
	}{
		{"superusers createRule", "_superusers", `{"createRule":""}`, []string{"createRule"}, "validation_collection_system_rule_change"},
		{"superusers listRule", "_superusers", `{"listRule":""}`, []string{"listRule"}, "validation_collection_system_rule_change"},
		{"superusers viewRule", "_superusers", `{"viewRule":"id = @request.auth.id"}`, []string{"viewRule"}, "validation_collection_system_rule_change"},
		{"superusers updateRule", "_superusers", `{"updateRule":""}`, []string{"updateRule"}, "validation_collection_system_rule_change"},
		{"superusers deleteRule", "_superusers", `{"deleteRule":""}`, []string{"deleteRule"}, "validation_collection_system_rule_change"},
		{"superusers authRule", "_superusers", `{"authRule":null}`, []string{"authRule"}, "validation_collection_system_rule_change"},
		{"superusers manageRule", "_superusers", `{"manageRule":"id = @request.auth.id"}`, []string{"manageRule"}, "validation_collection_system_rule_change"},
		{"superusers name", "_superusers", `{"name":"admins"}`, []string{"name"}, "validation_collection_system_name_change"},
		{"superusers type", "_superusers", `{"type":"base"}`, []string{"type"}, "validation_collection_type_change"},
		{"superusers system flag", "_superusers", `{"system":false}`, []string{"system"}, "validation_collection_system_flag_change"},
		{"superusers id", "_superusers", `{"id":"pbc_1"}`, []string{"id"}, "validation_values_mismatch"},
		{"superusers oauth2", "_superusers", `{"oauth2":{"enabled":true}}`, []string{"oauth2", "enabled"}, "validation_superusers_oauth2"},
		{"superusers providers", "_superusers", `{"oauth2":{"providers":[{"name":"google","clientId":"a","clientSecret":"b"}]}}`, []string{"oauth2", "providers"}, "validation_superusers_oauth2"},
		{"superusers password auth", "_superusers", `{"passwordAuth":{"enabled":false}}`, []string{"passwordAuth", "enabled"}, "validation_superusers_password_auth"},
		{"superusers otp without mfa", "_superusers", `{"otp":{"enabled":true},"mfa":{"enabled":false}}`, []string{"mfa", "enabled"}, "validation_superusers_otp_mfa"},
		{"superusers mfa with one method", "_superusers", `{"mfa":{"enabled":true}}`, []string{"mfa", "enabled"}, "validation_mfa_not_enough_auths"},
		{"superusers authToken 0", "_superusers", `{"authToken":{"duration":0}}`, []string{"authToken", "duration"}, "validation_required"},
		{"superusers authToken 9", "_superusers", `{"authToken":{"duration":9}}`, []string{"authToken", "duration"}, "validation_min_greater_equal_than_required"},
		{"superusers authToken max+1", "_superusers", fmt.Sprintf(`{"authToken":{"duration":%d}}`, maxPlus), []string{"authToken", "duration"}, "validation_max_less_equal_than_required"},
		{"superusers secret", "_superusers", `{"authToken":{"secret":"short"}}`, []string{"authToken", "secret"}, "validation_length_out_of_range"},
		{"superusers created", "_superusers", `{"created":"2020-01-01 00:00:00.000Z"}`, []string{"created"}, "validation_read_only"},
		{"superusers delete system field", "_superusers", `{"fields":[]}`, []string{"fields"}, "validation_system_field_change"},
		{"superusers indexes", "_superusers", `{"indexes":[]}`, []string{"indexes"}, "validation_unsupported_value"},
		{"superusers unknown key", "_superusers", `{"bogus":1}`, []string{"bogus"}, "validation_unknown_field"},
		{"superusers nested unknown key", "_superusers", `{"oauth2":{"enabeld":true}}`, []string{"oauth2", "enabeld"}, "validation_unknown_field"},
		{"superusers null object", "_superusers", `{"mfa":null}`, []string{"mfa"}, "validation_unsupported_value"},
		{"users passwordResetToken 0", "users", `{"passwordResetToken":{"duration":0}}`, []string{"passwordResetToken", "duration"}, "validation_required"},
		{"users fileToken 5", "users", `{"fileToken":{"duration":5}}`, []string{"fileToken", "duration"}, "validation_min_greater_equal_than_required"},
		{"users authToken negative", "users", `{"authToken":{"duration":-1}}`, []string{"authToken", "duration"}, "validation_min_greater_equal_than_required"},
		{"users type", "users", `{"type":"base"}`, []string{"type"}, "validation_collection_type_change"},
		{"users system flag", "users", `{"system":true}`, []string{"system"}, "validation_collection_system_flag_change"},
		{"users drop system fields", "users", `{"fields":[{"name":"id","type":"text"}]}`, []string{"fields"}, "validation_system_field_change"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.getCollection(tt.col)
			res := e.do("PATCH", "/api/collections/"+tt.col, e.su, tt.body)
			data, _ := res.JSON(t)["data"].(map[string]any)
			got, _ := atPath(data, append(slices.Clone(tt.path), "code"))
			if res.Status != 400 || got != tt.code {
				t.Errorf("PATCH %s %s = %d %s, want 400 with %s under %s", tt.col, tt.body, res.Status, res.Body, tt.code, strings.Join(tt.path, "."))
			}
			if after := e.getCollection(tt.col); !reflect.DeepEqual(after, before) {
				t.Errorf("PATCH %s %s was refused but changed the collection", tt.col, tt.body)
			}
		})
	}
	res := e.do("POST", "/api/collections", e.su, `{"name":"members","type":"auth","fields":[{"name":"collectionName","type":"text"}]}`)
	if got, _ := atPath(res.JSON(t), []string{"data", "fields", "0", "name", "code"}); res.Status != 400 || got != "validation_reserved_field_name" {
		t.Errorf("create with a reserved field name = %d %s, want 400 validation_reserved_field_name", res.Status, res.Body)
	}
	// The one exception of §5.9: the users authToken may be 0 (static).
	for _, body := range []string{`{"authToken":{"duration":3600}}`, `{"authToken":{"duration":0}}`} {
		if res := e.do("PATCH", "/api/collections/users", e.su, body); res.Status != 200 {
			t.Errorf("PATCH users %s = %d %s, want 200", body, res.Status, res.Body)
		}
	}
	// Sending a collection back as GET reports it changes nothing and is
	// accepted.
	for _, col := range []string{"_superusers", "users"} {
		before := e.getCollection(col)
		if res := e.do("PATCH", "/api/collections/"+col, e.su, before); res.Status != 200 {
			t.Errorf("PATCH %s with its own GET = %d %s, want 200", col, res.Status, res.Body)
		}
	}
}

// TestSuperusersAttacksRefused is the regression test of the two attacks
// issue 8 found: opening _superusers to guests through its createRule, and
// superuser tokens without exp.
func TestSuperusersAttacksRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.do("PATCH", "/api/collections/_superusers", e.su, `{"createRule":""}`)
	if res.Status != 400 {
		t.Fatalf("PATCH _superusers createRule \"\": %d %s, want 400", res.Status, res.Body)
	}
	res = e.do("POST", "/api/collections/_superusers/records", "", `{"email":"evil@example.com","password":"password1","passwordConfirm":"password1"}`)
	wantError(t, res, 403, msgSuperusersOnly)
	if _, ok := e.auth.FindByEmail(e.auth.Superusers(), "evil@example.com"); ok {
		t.Errorf("a guest created a superuser")
	}
	res = e.do("GET", "/api/collections/_superusers/records", "", nil)
	wantError(t, res, 403, msgSuperusersOnly)

	res = e.do("PATCH", "/api/collections/_superusers", e.su, `{"authToken":{"duration":0}}`)
	if res.Status != 400 {
		t.Fatalf("PATCH _superusers authToken 0: %d %s, want 400", res.Status, res.Body)
	}
	for _, tok := range []string{
		e.login("_superusers", suEmail, suPassword),
		e.do("POST", "/api/collections/_superusers/auth-refresh", e.su, nil).JSON(t)["token"].(string),
	} {
		exp, ok := claimsOf(t, tok)["exp"].(float64)
		if want := e.clock.Now().Add(24 * time.Hour).Unix(); !ok || int64(exp) != want {
			t.Errorf("superuser token exp = %v, want %d", exp, want)
		}
	}
}

// TestRecordChangesNeverDropped: a record PATCH applies every key or
// refuses it with a code.
func TestRecordChangesNeverDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.signUp("u@example.com", "password1")
	user := e.login("users", "u@example.com", "password1")
	rec := e.do("GET", "/api/collections/users/records/"+id, user, nil).JSON(t)
	su, _ := e.auth.FindByEmail(e.auth.Superusers(), suEmail)
	tests := []struct {
		name, path, token, body, field, code string
	}{
		{"id", "users/records/" + id, user, `{"id":"aaaaaaaaaaaaaaa"}`, "id", "validation_pk_change"},
		{"id as superuser", "users/records/" + id, e.su, `{"id":"aaaaaaaaaaaaaaa"}`, "id", "validation_pk_change"},
		{"created", "users/records/" + id, e.su, `{"created":"2020-01-01 00:00:00.000Z"}`, "created", "validation_read_only"},
		{"updated", "users/records/" + id, e.su, `{"updated":"2020-01-01 00:00:00.000Z"}`, "updated", "validation_read_only"},
		{"collectionId", "users/records/" + id, e.su, `{"collectionId":"pbc_1"}`, "collectionId", "validation_read_only"},
		{"collectionName", "users/records/" + id, e.su, `{"collectionName":"members"}`, "collectionName", "validation_read_only"},
		{"tokenKey", "users/records/" + id, e.su, `{"tokenKey":"0123456789012345678901234567890123456789"}`, "tokenKey", "validation_read_only"},
		{"unknown key", "users/records/" + id, user, `{"nickname":"x"}`, "nickname", "validation_unknown_field"},
		{"confirmation alone", "users/records/" + id, user, `{"passwordConfirm":"password2"}`, "password", "validation_required"},
		{"old password alone", "users/records/" + id, user, `{"oldPassword":"password1"}`, "password", "validation_required"},
		{"avatar", "users/records/" + id, user, `{"avatar":"x.png"}`, "avatar", "validation_file_unsupported"},
		{"superuser unverified", "_superusers/records/" + su.ID, e.su, `{"verified":false}`, "verified", "validation_superusers_verified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("PATCH", "/api/collections/"+tt.path, tt.token, tt.body)
			data, _ := res.JSON(t)["data"].(map[string]any)
			got, _ := atPath(data, []string{tt.field, "code"})
			if res.Status != 400 || got != tt.code {
				t.Errorf("PATCH %s %s = %d %s, want 400 with %s under %s", tt.path, tt.body, res.Status, res.Body, tt.code, tt.field)
			}
		})
	}
	// The record as GET reports it may be sent back unchanged.
	if res := e.do("PATCH", "/api/collections/users/records/"+id, user, rec); res.Status != 200 {
		t.Errorf("PATCH a record with its own GET = %d %s, want 200", res.Status, res.Body)
	}
	// Query parameters of a form request are not record values.
	res := e.doRaw("PATCH", "/api/collections/users/records/"+id+"?expand=x&fields=id,name", user,
		"application/x-www-form-urlencoded", strings.NewReader("name=Ann"))
	if res.Status != 200 || res.JSON(t)["name"] != "Ann" {
		t.Errorf("form PATCH with query parameters = %d %s, want 200 with name Ann", res.Status, res.Body)
	}
}

// TestCollectionCreateNeverDrops: a create applies each key it is sent or
// refuses it with a code, as an update does.
func TestCollectionCreateNeverDrops(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name, body string
		path       []string // "" code: applied, the answer reports the value at path
		code       string
	}{
		{"own id", `{"name":"a1","type":"auth","id":"my_id_1"}`, []string{"id"}, ""},
		{"system flag", `{"name":"a2","type":"auth","system":true}`, []string{"system"}, ""},
		{"bad id", `{"name":"a3","type":"auth","id":"a b"}`, []string{"id"}, "validation_match_invalid"},
		{"created", `{"name":"a4","type":"auth","created":"2020-01-01 00:00:00.000Z"}`, []string{"created"}, "validation_read_only"},
		{"unknown key", `{"name":"a5","type":"auth","bogus":true}`, []string{"bogus"}, "validation_unknown_field"},
		{"indexes", `{"name":"a6","type":"auth","indexes":[]}`, []string{"indexes"}, "validation_unsupported_value"},
		{"token duration", `{"name":"a7","type":"auth","fileToken":{"duration":0}}`, []string{"fileToken", "duration"}, "validation_required"},
		{"changed built-in field", `{"name":"a8","type":"auth","fields":[{"name":"email","type":"email","system":true,"required":false}]}`, []string{"fields", "0"}, "validation_builtin_field_change"},
		{"unsupported field option", `{"name":"a9","type":"auth","fields":[{"name":"site","type":"url","onlyDomains":["example.com"]}]}`, []string{"fields", "0", "onlyDomains"}, "validation_unsupported_value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("POST", "/api/collections", e.su, tt.body)
			var sent map[string]any
			if err := json.Unmarshal([]byte(tt.body), &sent); err != nil {
				t.Fatal(err)
			}
			if tt.code == "" {
				want, _ := atPath(sent, tt.path)
				got, _ := atPath(res.JSON(t), tt.path)
				if res.Status != 200 || !reflect.DeepEqual(got, want) {
					t.Errorf("POST %s = %d %s, want 200 reporting %v", tt.body, res.Status, res.Body, want)
				}
				return
			}
			got, _ := atPath(res.JSON(t), append([]string{"data"}, append(slices.Clone(tt.path), "code")...))
			if res.Status != 400 || got != tt.code {
				t.Errorf("POST %s = %d %s, want 400 with %s under %s", tt.body, res.Status, res.Body, tt.code, strings.Join(tt.path, "."))
			}
			if _, ok := e.auth.Collection(sent["name"].(string)); ok {
				t.Errorf("POST %s was refused but created the collection", tt.body)
			}
		})
	}
}

// TestCollectionBodyDecoding: a collection body must be one JSON object,
// and its numbers reach the store as sent, so that an integer option sent
// as 1.0 or 1e3 is refused as a loading error, not rounded; nothing is
// created or changed either way.
func TestCollectionBodyDecoding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	users, _ := e.auth.Collection("users")
	before, _ := json.Marshal(users)
	for _, body := range []string{
		``,
		`null`,
		`[]`,
		`"x"`,
		`{"name":"d1","type":"base"`,
		`{"name":"d2","type":"base"} {}`,
		`{"name":"d3","type":"base"} x`,
		`{"name":"d4","type":"auth","otp":{"length":6.0}}`,
		`{"name":"d5","type":"auth","mfa":{"duration":1e3}}`,
		`{"name":"d6","type":"auth","authToken":{"duration":1e400}}`,
		`{"name":7,"type":"base"}`,
	} {
		res := e.do("POST", "/api/collections", e.su, body)
		wantError(t, res, 400, msgLoadFailed)
		res = e.do("PATCH", "/api/collections/users", e.su, body)
		wantError(t, res, 400, msgLoadFailed)
	}
	for _, name := range []string{"d1", "d2", "d3", "d4", "d5", "d6"} {
		if _, ok := e.auth.Collection(name); ok {
			t.Errorf("collection %s was created", name)
		}
	}
	users, _ = e.auth.Collection("users")
	if after, _ := json.Marshal(users); string(after) != string(before) {
		t.Errorf("a refused PATCH changed users:\n%s\nwant\n%s", after, before)
	}
	res := e.do("POST", "/api/collections", e.su, `{"name":"d7","type":"auth","mfa":{"duration":1000},"otp":{"length":6}}`)
	if res.Status != 200 {
		t.Fatalf("POST with integer options = %d %s, want 200", res.Status, res.Body)
	}
	if c, _ := e.auth.Collection("d7"); c.MFA.Duration != 1000 || c.OTP.Length != 6 {
		t.Errorf("options stored as mfa.duration %d, otp.length %d, want 1000 and 6", c.MFA.Duration, c.OTP.Length)
	}
}
