package api

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// addHiddenField adds a hidden text field name to collection col.
func (e *env) addHiddenField(col, name string) {
	e.t.Helper()
	res := e.do("GET", "/api/collections/"+col, e.su, nil)
	if res.Status != 200 {
		e.t.Fatalf("get %s: %d %s", col, res.Status, res.Body)
	}
	var c struct {
		Fields []any `json:"fields"`
	}
	if err := json.Unmarshal(res.Body, &c); err != nil {
		e.t.Fatal(err)
	}
	c.Fields = append(c.Fields, map[string]any{"name": name, "type": "text", "hidden": true})
	if res := e.do("PATCH", "/api/collections/"+col, e.su, map[string]any{"fields": c.Fields}); res.Status != 200 {
		e.t.Fatalf("add hidden field %s to %s: %d %s", name, col, res.Status, res.Body)
	}
}

// storedField returns field name of record id of col as a superuser
// sees it, nil when the answer has no such key.
func (e *env) storedField(col, id, name string) any {
	e.t.Helper()
	res := e.do("GET", "/api/collections/"+col+"/records/"+id, e.su, nil)
	if res.Status != 200 {
		e.t.Fatalf("superuser view %s/%s: %d %s", col, id, res.Status, res.Body)
	}
	return res.JSON(e.t)[name]
}

// TestHiddenFieldWrites: a hidden field's value is stored from a
// superuser's create or update only; anyone else's is dropped without an
// error (PocketBase v0.31.0's recordDataFromRequest), and the rules read
// the body without it.
func TestHiddenFieldWrites(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, who, method, body string
		rule                    string // updateRule or createRule, "" for the default
		wantName, wantRole      any
	}{
		{"guest sign-up", "guest", "POST", `{"role":"admin","name":"G"}`, "", "G", ""},
		{"self-update", "owner", "PATCH", `{"role":"admin","name":"G"}`, "", "G", ""},
		{"self-update of the hidden field only", "owner", "PATCH", `{"role":"admin"}`, "", "", ""},
		{"superuser create", "su", "POST", `{"role":"admin","name":"G"}`, "", "G", "admin"},
		{"superuser update", "su", "PATCH", `{"role":"admin","name":"G"}`, "", "G", "admin"},
		{"createRule reads the body without it", "guest", "POST", `{"role":"admin"}`,
			`{"createRule":"@request.body.role:isset = false"}`, "", ""},
		{"updateRule reads the body without it", "owner", "PATCH", `{"role":"admin"}`,
			`{"updateRule":"id = @request.auth.id && @request.body.role:isset = false"}`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.addHiddenField("users", "role")
			if tt.rule != "" {
				if res := e.do("PATCH", "/api/collections/users", e.su, tt.rule); res.Status != 200 {
					t.Fatalf("set rule %s: %d %s", tt.rule, res.Status, res.Body)
				}
			}
			token := map[string]string{"su": e.su}[tt.who]
			path := "/api/collections/users/records"
			body := map[string]any{}
			if err := json.Unmarshal([]byte(tt.body), &body); err != nil {
				t.Fatal(err)
			}
			if tt.method == "POST" {
				body["email"], body["password"], body["passwordConfirm"] = "new@example.com", "password1", "password1"
			} else {
				id := e.signUp("ann@example.com", "password1")
				path += "/" + id
				if tt.who == "owner" {
					token = e.login("users", "ann@example.com", "password1")
				}
			}
			res := e.do(tt.method, path, token, body)
			if res.Status != 200 {
				t.Fatalf("%s %s %s = %d %s, want 200", tt.method, path, tt.body, res.Status, res.Body)
			}
			answer := res.JSON(t)
			if role, shown := answer["role"]; shown != (tt.who == "su") || (shown && role != tt.wantRole) {
				t.Errorf("answer %s: role shown %v (%v), want shown only to a superuser", res.Body, shown, role)
			}
			id := answer["id"].(string)
			if got := e.storedField("users", id, "role"); got != tt.wantRole {
				t.Errorf("stored role = %#v, want %#v", got, tt.wantRole)
			}
			if got := e.storedField("users", id, "name"); got != tt.wantName {
				t.Errorf("stored name = %#v, want %#v", got, tt.wantName)
			}
		})
	}
}

// TestHiddenFieldReads: superusers see a record's hidden fields in every
// record answer and may select them with fields; the record itself sees
// them nowhere; an auth answer shows them only for a superuser's own
// record, as PocketBase v0.31.0 answers.
func TestHiddenFieldReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addHiddenField("users", "role")
	e.addHiddenField("_superusers", "note")
	id := e.signUp("ann@example.com", "password1")
	if res := e.do("PATCH", "/api/collections/users/records/"+id, e.su, `{"role":"admin"}`); res.Status != 200 {
		t.Fatalf("set role: %d %s", res.Status, res.Body)
	}
	res := e.do("GET", "/api/collections/_superusers/records?filter=email='"+suEmail+"'", e.su, nil)
	items, _ := res.JSON(t)["items"].([]any)
	if res.Status != 200 || len(items) != 1 {
		t.Fatalf("find the superuser: %d %s", res.Status, res.Body)
	}
	suID := items[0].(map[string]any)["id"].(string)
	if res := e.do("PATCH", "/api/collections/_superusers/records/"+suID, e.su, `{"note":"n1"}`); res.Status != 200 {
		t.Fatalf("set note: %d %s", res.Status, res.Body)
	}
	ann := e.login("users", "ann@example.com", "password1")
	rec := "/api/collections/users/records/" + id
	role := func(m map[string]any) any { return m["role"] }
	record := func(m map[string]any) map[string]any { r, _ := m["record"].(map[string]any); return r }
	for _, tt := range []struct {
		name, method, path, token string
		pick                      func(map[string]any) any
		want                      any
	}{
		{"superuser view", "GET", rec, e.su, role, "admin"},
		{"superuser view, fields", "GET", rec + "?fields=id,role", e.su, func(m map[string]any) any { return m },
			map[string]any{"id": id, "role": "admin"}},
		{"superuser list", "GET", "/api/collections/users/records?fields=role", e.su,
			func(m map[string]any) any { return m["items"] }, []any{map[string]any{"role": "admin"}}},
		{"superuser update answer", "PATCH", rec, e.su, role, "admin"},
		{"own view", "GET", rec, ann, role, nil},
		{"own view, fields", "GET", rec + "?fields=id,role", ann, func(m map[string]any) any { return m },
			map[string]any{"id": id}},
		{"own list", "GET", "/api/collections/users/records?fields=id,role", ann,
			func(m map[string]any) any { return m["items"] }, []any{map[string]any{"id": id}}},
		{"own update answer", "PATCH", rec, ann, role, nil},
		{"own auth-refresh", "POST", "/api/collections/users/auth-refresh", ann,
			func(m map[string]any) any { return role(record(m)) }, nil},
		{"superuser's impersonation of a user", "POST", "/api/collections/users/impersonate/" + id, e.su,
			func(m map[string]any) any { return role(record(m)) }, nil},
		{"superuser's auth-refresh", "POST", "/api/collections/_superusers/auth-refresh", e.su,
			func(m map[string]any) any { return record(m)["note"] }, "n1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.method != "GET" {
				body = "{}"
			}
			res := e.do(tt.method, tt.path, tt.token, body)
			if res.Status != 200 {
				t.Fatalf("%s %s = %d %s", tt.method, tt.path, res.Status, res.Body)
			}
			if diff := cmp.Diff(tt.want, tt.pick(res.JSON(t))); diff != "" {
				t.Errorf("%s %s: %s\n(-want +got):\n%s", tt.method, tt.path, res.Body, diff)
			}
		})
	}
	logins := []struct {
		col, email, password, field string
		want                        any
	}{
		{"users", "ann@example.com", "password1", "role", nil},
		{"_superusers", suEmail, suPassword, "note", "n1"},
	}
	for _, l := range logins {
		res := e.do("POST", "/api/collections/"+l.col+"/auth-with-password", "", map[string]string{"identity": l.email, "password": l.password})
		if got := record(res.JSON(t))[l.field]; res.Status != 200 || got != l.want {
			t.Errorf("%s auth-with-password = %d %s, want %s %v", l.col, res.Status, res.Body, l.field, l.want)
		}
	}
}

// TestHiddenFieldOAuth2CreateData: an OAuth2 sign-up stores createData's
// hidden fields only for a superuser's request; the createRule reads
// createData without them.
func TestHiddenFieldOAuth2CreateData(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, who, rules string
		wantRole         any
	}{
		{"guest", "guest", "", ""},
		{"guest, createRule on the body", "guest", `,"createRule":"@request.body.role:isset = false"`, ""},
		{"superuser", "su", "", "admin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, fx := oauth2Env(t, tt.rules)
			e.addHiddenField("users", "role")
			fx.users["new"] = googleUser("g1", "ann@example.com", true)
			token := map[string]string{"su": e.su}[tt.who]
			res := e.oauth2Login(token, "new", `,"createData":{"role":"admin","name":"Ann"}`)
			if res.Status != 200 {
				t.Fatalf("sign-up = %d %s", res.Status, res.Body)
			}
			rec, _ := res.JSON(t)["record"].(map[string]any)
			if _, shown := rec["role"]; shown {
				t.Errorf("auth answer %s shows the hidden role", res.Body)
			}
			id, _ := rec["id"].(string)
			if got := e.storedField("users", id, "role"); got != tt.wantRole {
				t.Errorf("stored role = %#v, want %#v", got, tt.wantRole)
			}
			if got := e.storedField("users", id, "name"); got != "Ann" {
				t.Errorf("stored name = %#v, want \"Ann\"", got)
			}
		})
	}
}
