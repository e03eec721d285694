package api

import (
	"encoding/json"
	"maps"
	"net/url"
	"strings"
	"testing"

	"strongbox/authn"
)

// sysFixture is an env with OTP and MFA on for users, and a row of each
// system collection: ann's MFA session, OTP, OAuth2 link and sign-in
// origin, and bob's origin.
type sysFixture struct {
	*env
	fm               *otpMailbox
	ann, bob         string // record ids
	annTok, bobTok   string
	mfa, otp, code   string                      // ann's MFA session, OTP and its code
	rows             map[string][]map[string]any // collection → rows as a superuser sees them
	annRows, bobRows map[string]map[string]any   // collection → their row
}

// dropSignInOrigins deletes the auth origins the fixture's own sign-ins
// recorded (every completed sign-in records one), leaving the seeded
// fp-ann and fp-bob, so that the rows the tests expect are known.
func dropSignInOrigins(t *testing.T, e *env) {
	t.Helper()
	for _, o := range e.auth.AllAuthOrigins() {
		if !strings.HasPrefix(o.Fingerprint, "fp-") {
			if err := e.auth.DeleteAuthOriginID(o.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func newSysFixture(t *testing.T) *sysFixture {
	t.Helper()
	e, fm, ann := otpEnv(t, false)
	f := &sysFixture{env: e, fm: fm, ann: ann}
	f.bob = e.signUp("bob@example.com", "password1")
	users, _ := e.auth.Collection(authn.UsersName)
	rec, _ := e.auth.Record(users, ann)
	body := `{"oauth2":{"enabled":true,"providers":[{"name":"google","clientId":"cid","clientSecret":"csecret"}]}}`
	if res := e.do("PATCH", "/api/collections/users", e.su, body); res.Status != 200 {
		t.Fatalf("enable OAuth2: %d %s", res.Status, res.Body)
	}
	users, _ = e.auth.Collection(authn.UsersName)
	if _, _, err := e.auth.SignInOAuth2(t.Context(), users, authn.OAuth2SignIn{
		Identity: authn.OAuth2Identity{Provider: "google", ID: "g1"}, Authed: rec,
	}); err != nil {
		t.Fatal(err)
	}
	// Signed in before the fixture's origins are saved: each record's
	// first sign-in, so no alert mail comes before the OTP's.
	f.annTok, f.bobTok = e.login("users", "ann@example.com", "password1"), e.login("users", "bob@example.com", "password1")
	for id, fp := range map[string]string{ann: "fp-ann", f.bob: "fp-bob"} {
		if _, _, err := e.auth.SaveAuthOrigin(users, id, fp); err != nil {
			t.Fatal(err)
		}
	}
	dropSignInOrigins(t, e)
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"mfa":{"enabled":true}}`); res.Status != 200 {
		t.Fatalf("enable MFA: %d %s", res.Status, res.Body)
	}
	res := e.do("POST", "/api/collections/users/auth-with-password", "", map[string]string{"identity": "ann@example.com", "password": "password1"})
	if res.Status != 401 {
		t.Fatalf("first factor: %d %s", res.Status, res.Body)
	}
	f.mfa = res.JSON(t)["mfaId"].(string)
	f.otp, f.code = e.requestOTP(fm, "users", "ann@example.com")

	at := "2026-11-22 10:00:00.000Z"
	common := func(col, colID, id, rec string) map[string]any {
		return map[string]any{"id": id, "collectionId": colID, "collectionName": col, "collectionRef": authn.UsersID,
			"recordRef": rec, "created": at, "updated": at}
	}
	with := func(m map[string]any, kv ...string) map[string]any {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	link := e.auth.AllExternalAuths()[0]
	origins := e.auth.AllAuthOrigins()
	var annOrigin, bobOrigin *authn.AuthOrigin
	for _, o := range origins {
		if o.RecordID == ann {
			annOrigin = o
		} else {
			bobOrigin = o
		}
	}
	f.annRows = map[string]map[string]any{
		"_mfas":          with(common("_mfas", authn.MFAsCollectionID, f.mfa, ann), "method", "password"),
		"_otps":          with(common("_otps", authn.OTPsCollectionID, f.otp, ann), "password", "", "sentTo", "ann@example.com"),
		"_externalAuths": with(common("_externalAuths", authn.ExternalAuthsCollectionID, link.ID, ann), "provider", "google", "providerId", "g1"),
		"_authOrigins":   with(common("_authOrigins", authn.AuthOriginsCollectionID, annOrigin.ID, ann), "fingerprint", "fp-ann"),
	}
	f.bobRows = map[string]map[string]any{
		"_authOrigins": with(common("_authOrigins", authn.AuthOriginsCollectionID, bobOrigin.ID, f.bob), "fingerprint", "fp-bob"),
	}
	f.rows = map[string][]map[string]any{}
	for col, row := range f.annRows {
		f.rows[col] = []map[string]any{row}
	}
	f.rows["_authOrigins"] = []map[string]any{f.annRows["_authOrigins"], f.bobRows["_authOrigins"]}
	if annOrigin.ID > bobOrigin.ID { // same instant: by id
		f.rows["_authOrigins"] = []map[string]any{f.bobRows["_authOrigins"], f.annRows["_authOrigins"]}
	}
	return f
}

// ownerView is row as its owner sees it: without the hidden fields.
func ownerView(row map[string]any) map[string]any {
	out := maps.Clone(row)
	if out["collectionName"] == "_otps" {
		delete(out, "password")
		delete(out, "sentTo")
	}
	return out
}

// listBody is the JSON of a first page of rows.
func listBody(rows ...map[string]any) string {
	if rows == nil {
		rows = []map[string]any{}
	}
	pages := 0
	if len(rows) > 0 {
		pages = 1
	}
	b, _ := json.Marshal(map[string]any{"items": rows, "page": 1, "perPage": 30, "totalItems": len(rows), "totalPages": pages})
	return string(b)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const (
	notFound      = `{"data":{},"message":"The requested resource wasn't found.","status":404}`
	suOnly        = `{"data":{},"message":"Only superusers can perform this action.","status":403}`
	sysWriteError = `{"data":{},"message":"The records of system collections are written by the server's sign-in flows only.","status":400}`
	badRequest    = `{"data":{},"message":"Something went wrong while processing your request.","status":400}`
)

// TestSystemRecordsAccess: every system collection, every kind of caller,
// each answer exactly as PocketBase v0.31.0 gives it (checked side by
// side): superusers see every row with its hidden fields, a record its
// own rows without them, a guest an empty list; a record deletes its own
// _externalAuths and _authOrigins rows (404 for another's), only
// superusers delete _mfas and _otps rows (403); nobody but a superuser
// writes one (403), and strongbox refuses a superuser's write too.
func TestSystemRecordsAccess(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	callers := []struct {
		name, token string
	}{{"superuser", f.su}, {"owner", f.annTok}, {"other", f.bobTok}, {"guest", ""}}
	for _, col := range []string{"_mfas", "_otps", "_externalAuths", "_authOrigins"} {
		ann := f.annRows[col]
		path := "/api/collections/" + col + "/records"
		item := path + "/" + ann["id"].(string)
		ownerDeletes := col == "_externalAuths" || col == "_authOrigins"
		for _, c := range callers {
			var list, view, del, write string
			switch c.name {
			case "superuser":
				list, view, write = listBody(f.rows[col]...), jsonOf(ann), sysWriteError
			case "owner":
				list, view, write = listBody(ownerView(ann)), jsonOf(ownerView(ann)), suOnly
			case "other":
				var own []map[string]any
				if b, ok := f.bobRows[col]; ok {
					own = append(own, ownerView(b))
				}
				list, view, write = listBody(own...), notFound, suOnly
			case "guest":
				list, view, write = listBody(), notFound, suOnly
			}
			del = suOnly
			if ownerDeletes || c.name == "superuser" {
				del = notFound
			}
			tests := []struct {
				name, method, path string
				status             int
				want               string
			}{
				{"list", "GET", path, 200, list},
				{"view", "GET", item, status(view), view},
				{"view missing", "GET", path + "/nosuchid0000000", 404, notFound},
				{"delete missing", "DELETE", path + "/nosuchid0000000", status(del), del},
				{"create", "POST", path, status(write), write},
				{"update", "PATCH", item, status(write), write},
			}
			if c.name == "other" || c.name == "guest" {
				d := suOnly
				if ownerDeletes {
					d = notFound
				}
				tests = append(tests, struct {
					name, method, path string
					status             int
					want               string
				}{"delete another's", "DELETE", item, status(d), d})
			}
			for _, tt := range tests {
				var body any
				if tt.method == "POST" || tt.method == "PATCH" {
					body = `{}`
				}
				res := f.do(tt.method, tt.path, c.token, body)
				if res.Status != tt.status || strings.TrimSpace(string(res.Body)) != tt.want {
					t.Errorf("%s %s %s: %d %s\nwant %d %s", col, c.name, tt.name, res.Status, res.Body, tt.status, tt.want)
				}
			}
		}
	}
}

// status is the status of an expected body: its "status", else 200.
func status(body string) int {
	var m struct{ Status int }
	if json.Unmarshal([]byte(body), &m) == nil && m.Status != 0 {
		return m.Status
	}
	return 200
}

// TestSystemRecordsQuery: filter, sort, fields and paging on the system
// collections, hidden fields for superusers only, and never the OTP's
// password, as PocketBase answers them.
func TestSystemRecordsQuery(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	otp, origins := f.annRows["_otps"], f.rows["_authOrigins"]
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return "?" + v.Encode()
	}
	tests := []struct {
		name, col, query, token string
		want                    string
	}{
		{"superuser filters by a hidden field", "_otps", q("filter", "sentTo = 'ann@example.com'"), f.su, listBody(otp)},
		{"owner may not", "_otps", q("filter", "sentTo = 'ann@example.com'"), f.annTok, badRequest},
		{"owner may not sort by it", "_otps", q("sort", "sentTo"), f.annTok, badRequest},
		{"nobody filters by the password", "_otps", q("filter", "password = 'x'"), f.su, badRequest},
		{"unknown field", "_mfas", q("filter", "nope = 'x'"), f.su, badRequest},
		{"fields: hidden ones for superusers", "_otps", q("fields", "id,sentTo,password"), f.su,
			listBody(map[string]any{"id": otp["id"], "sentTo": "ann@example.com", "password": ""})},
		{"fields: not for the owner", "_otps", q("fields", "id,sentTo,password"), f.annTok, listBody(map[string]any{"id": otp["id"]})},
		{"filter and sort", "_authOrigins", q("filter", "fingerprint ~ 'fp-'", "sort", "-fingerprint"), f.su, listBody(f.bobRows["_authOrigins"], f.annRows["_authOrigins"])},
		{"by recordRef", "_authOrigins", q("filter", "recordRef = '"+f.bob+"'"), f.su, listBody(f.bobRows["_authOrigins"])},
		{"skipTotal", "_mfas", q("fields", "method", "skipTotal", "1"), f.su, `{"items":[{"method":"password"}],"page":1,"perPage":30,"totalItems":-1,"totalPages":-1}`},
		{"paging", "_authOrigins", q("perPage", "1", "page", "2"), f.su, jsonOf(map[string]any{"items": origins[1:], "page": 2, "perPage": 1, "totalItems": 2, "totalPages": 2})},
		{"by id", "pbc_2279338944", "", f.annTok, listBody(f.annRows["_mfas"])},
	}
	for _, tt := range tests {
		res := f.do("GET", "/api/collections/"+tt.col+"/records"+tt.query, tt.token, nil)
		if res.Status != status(tt.want) || strings.TrimSpace(string(res.Body)) != tt.want {
			t.Errorf("%s: %d %s\nwant %s", tt.name, res.Status, res.Body, tt.want)
		}
	}
}

// TestSystemRecordsDelete: a deleted row is gone, and a deleted OTP or MFA
// session no longer signs anyone in, as in PocketBase.
func TestSystemRecordsDelete(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	del := func(col, token string, row map[string]any) {
		t.Helper()
		path := "/api/collections/" + col + "/records/" + row["id"].(string)
		if res := f.do("DELETE", path, token, nil); res.Status != 204 {
			t.Fatalf("delete %s: %d %s", path, res.Status, res.Body)
		}
		wantError(t, f.do("GET", path, f.su, nil), 404, "The requested resource wasn't found.")
		wantError(t, f.do("DELETE", path, f.su, nil), 404, "The requested resource wasn't found.")
	}
	del("_authOrigins", f.annTok, f.annRows["_authOrigins"])
	del("_externalAuths", f.annTok, f.annRows["_externalAuths"])
	if res := f.do("GET", "/api/collections/_authOrigins/records", f.su, nil); strings.TrimSpace(string(res.Body)) != listBody(f.bobRows["_authOrigins"]) {
		t.Errorf("origins after ann deleted hers: %s", res.Body)
	}

	del("_otps", f.su, f.annRows["_otps"])
	wantError(t, f.do("POST", "/api/collections/users/auth-with-otp", "", map[string]string{"otpId": f.otp, "password": f.code}),
		400, "Invalid or expired OTP.")

	otp, code := f.requestOTP(f.fm, "users", "ann@example.com")
	del("_mfas", f.su, f.annRows["_mfas"])
	wantError(t, f.do("POST", "/api/collections/users/auth-with-otp", "", map[string]string{"otpId": otp, "password": code, "mfaId": f.mfa}),
		400, "Invalid or expired MFA session.")
}

// TestSystemCollectionsAPI: the collections routes list and show the
// system base collections as PocketBase v0.31.0 does (the definition
// below is its answer, dates aside), and keep them as they are.
func TestSystemCollectionsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.do("GET", "/api/collections?fields=name,type,system", e.su, nil)
	const wantList = `{"items":[{"name":"_mfas","system":true,"type":"base"},{"name":"_otps","system":true,"type":"base"},` +
		`{"name":"_externalAuths","system":true,"type":"base"},{"name":"_authOrigins","system":true,"type":"base"},` +
		`{"name":"_superusers","system":true,"type":"auth"},{"name":"users","system":false,"type":"auth"}],"page":1,"perPage":30,"totalItems":6,"totalPages":1}`
	if strings.TrimSpace(string(res.Body)) != wantList {
		t.Errorf("collections = %s\nwant %s", res.Body, wantList)
	}
	res = e.do("GET", "/api/collections?filter="+url.QueryEscape("type = 'base' && name ~ 'auth'")+"&fields=id", e.su, nil)
	if want := `{"items":[{"id":"pbc_2281828961"},{"id":"pbc_4275539003"}],"page":1,"perPage":30,"totalItems":2,"totalPages":1}`; strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("filtered collections = %s\nwant %s", res.Body, want)
	}
	su := e.getCollection(authn.SuperusersName)
	at := su["created"].(string)
	const mfas = `{"id":"pbc_2279338944","listRule":"@request.auth.id != '' \u0026\u0026 recordRef = @request.auth.id \u0026\u0026 collectionRef = @request.auth.collectionId",` +
		`"viewRule":"@request.auth.id != '' \u0026\u0026 recordRef = @request.auth.id \u0026\u0026 collectionRef = @request.auth.collectionId",` +
		`"createRule":null,"updateRule":null,"deleteRule":null,"name":"_mfas","type":"base","fields":[` +
		`{"autogeneratePattern":"[a-z0-9]{15}","hidden":false,"id":"text3208210256","max":15,"min":15,"name":"id","pattern":"^[a-z0-9]+$","presentable":false,"primaryKey":true,"required":true,"system":true,"type":"text"},` +
		`{"autogeneratePattern":"","hidden":false,"id":"text455797646","max":0,"min":0,"name":"collectionRef","pattern":"","presentable":false,"primaryKey":false,"required":true,"system":true,"type":"text"},` +
		`{"autogeneratePattern":"","hidden":false,"id":"text127846527","max":0,"min":0,"name":"recordRef","pattern":"","presentable":false,"primaryKey":false,"required":true,"system":true,"type":"text"},` +
		`{"autogeneratePattern":"","hidden":false,"id":"text1582905952","max":0,"min":0,"name":"method","pattern":"","presentable":false,"primaryKey":false,"required":true,"system":true,"type":"text"},` +
		`{"hidden":false,"id":"autodate2990389176","name":"created","onCreate":true,"onUpdate":false,"presentable":false,"system":true,"type":"autodate"},` +
		`{"hidden":false,"id":"autodate3332085495","name":"updated","onCreate":true,"onUpdate":true,"presentable":false,"system":true,"type":"autodate"}],` +
		"\"indexes\":[\"CREATE INDEX `idx_mfas_collectionRef_recordRef` ON `_mfas` (collectionRef,recordRef)\"],"
	want := mfas + `"created":"` + at + `","updated":"` + at + `","system":true}`
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"view by name", "GET", "/api/collections/_mfas", "", 200, want},
		{"view by id", "GET", "/api/collections/pbc_2279338944", "", 200, want},
		{"update that changes nothing", "PATCH", "/api/collections/_mfas", `{"name":"_mfas","deleteRule":null}`, 200, want},
		{"rule change", "PATCH", "/api/collections/_mfas", `{"listRule":null}`, 400,
			`{"data":{"listRule":{"code":"validation_collection_system_rule_change","message":"System collection API rule cannot be changed."}},"message":"Failed to update collection.","status":400}`},
		{"rename", "PATCH", "/api/collections/_otps", `{"name":"otps"}`, 400,
			`{"data":{"name":{"code":"validation_collection_system_name_change","message":"System collection name cannot be changed."}},"message":"Failed to update collection.","status":400}`},
		{"delete", "DELETE", "/api/collections/_authOrigins", "", 400, `{"data":{},"message":"System collections cannot be deleted.","status":400}`},
		{"another collection may not take the id", "POST", "/api/collections", `{"id":"pbc_1638494021","name":"x1","type":"auth"}`, 400,
			`{"data":{"id":{"code":"validation_invalid_id","message":"The id is invalid or already exists."}},"message":"Failed to create collection.","status":400}`},
		{"nor the name", "PATCH", "/api/collections/users", `{"name":"_otps"}`, 400,
			`{"data":{"name":{"code":"validation_collection_name_exists","message":"Collection name must be unique (case insensitive)."}},"message":"Failed to update collection.","status":400}`},
	}
	for _, tt := range tests {
		var body any
		if tt.body != "" {
			body = tt.body
		}
		res := e.do(tt.method, tt.path, e.su, body)
		if res.Status != tt.status || strings.TrimSpace(string(res.Body)) != tt.want {
			t.Errorf("%s: %d %s\nwant %d %s", tt.name, res.Status, res.Body, tt.status, tt.want)
		}
	}
	e.signUp("ann@example.com", "password1")
	ann := e.login("users", "ann@example.com", "password1")
	wantError(t, e.do("GET", "/api/collections/_mfas", ann, nil), 403, "The authorized record is not allowed to perform this action.")
}
