package conformance

import (
	"net/http"
	"regexp"
	"strings"
)

// The violations of password login and the collections API
// (auth_password.go, collections.go), committed by mutations in front of
// the real strongbox.

// collectionsAPI selects the routes of the collections API itself (not
// the records or auth actions under a collection).
func collectionsAPI(r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/collections")
	return ok && (rest == "" || strings.Count(rest, "/") == 1)
}

// authAction selects the auth actions and auth-methods of a collection.
var authAction = regexp.MustCompile(`^/api/collections/[^/]+/(auth-|impersonate/)`)

// reCollectionID matches the collection ids of strongbox, as opposed to
// the names the suite uses.
var reCollectionID = regexp.MustCompile(`^/api/collections/(pbc_[0-9a-z]+|_pb_users_auth_)(/|$)`)

// editLogin rewrites strongbox's answers to password logins.
func editLogin(fn func(r *http.Request, res *answered)) mutation { return edit(loginRoute, fn) }

// editLoginRecord rewrites the record of successful password logins.
func editLoginRecord(fn func(r *http.Request, rec map[string]any)) mutation {
	return editObject(loginRoute, func(r *http.Request, m map[string]any) {
		if rec, ok := m["record"].(map[string]any); ok {
			fn(r, rec)
		}
	})
}

// refusedWith reports whether res refuses with status and msg.
func refusedWith(res *answered, status int, msg string) bool {
	m := res.object()
	return res.status == status && m != nil && m["message"] == msg
}

// reword answers status and msg where strongbox refused the requests
// match selects with fromStatus and fromMsg.
func reword(match func(*http.Request) bool, fromStatus int, fromMsg string, status int, msg string) mutation {
	return edit(match, func(_ *http.Request, res *answered) {
		if refusedWith(res, fromStatus, fromMsg) {
			*res = *envelopeAnswer(status, msg)
		}
	})
}

// setType rewrites the type of the collections created.
func setType(typ string) mutation {
	return rewrite(route(http.MethodPost, "/api/collections"), func(r *http.Request) {
		if m := bodyJSON(r); m != nil {
			m["type"] = typ
			setBody(r, m)
		}
	})
}

var authMutators = []mutator{
	{"superuser-record-without-email", []string{"AUTH-PW-001"}, editLoginRecord(func(r *http.Request, rec map[string]any) {
		if strings.Contains(r.URL.Path, "/_superusers/") {
			delete(rec, "email")
		}
	})},
	{"login-shows-token-key", []string{"AUTH-PW-002"}, editLoginRecord(func(_ *http.Request, rec map[string]any) {
		rec["tokenKey"] = "cf-token-key-shown"
	})},
	{"wrong-password-says-why", []string{"AUTH-PW-003"}, editLogin(func(_ *http.Request, res *answered) {
		if refusedWith(res, 400, msgFailedAuth) {
			res.body = []byte(`{"data":{"password":{"code":"validation_invalid_password","message":"Invalid password."}},` +
				`"message":"` + msgFailedAuth + `","status":400}`)
		}
	})},
	{"unknown-identity-404", []string{"AUTH-PW-004"}, reword(loginRoute, 400, msgFailedAuth, 404, msgNotFound)},
	{"blank-login-as-failed-auth", []string{"AUTH-PW-005"}, reword(loginRoute, 400, msgValidation, 400, msgFailedAuth)},
	{"no-collection-message", []string{"AUTH-PW-006", "AUTH-REFRESH-007", "AUTH-METHODS-003"},
		reword(func(r *http.Request) bool { return authAction.MatchString(r.URL.Path) }, 404, msgNoCollection, 404, msgNoAuthColl)},
	{"base-collection-message", []string{"AUTH-PW-007", "AUTH-METHODS-004"},
		reword(func(r *http.Request) bool { return authAction.MatchString(r.URL.Path) }, 404, msgNoAuthColl, 404, msgNoCollection)},
	{"json-only", []string{"AUTH-PW-009"}, rewrite(loginRoute, func(r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			r.Header.Set("Content-Type", "application/json")
			setBody(r, map[string]any{})
		}
	})},
	{"collection-by-name-only", []string{"AUTH-PW-010", "COLL-CRUD-003"}, func(x *front, w http.ResponseWriter, r *http.Request) {
		switch {
		case !reCollectionID.MatchString(r.URL.Path):
			x.pass(w, r)
		case authAction.MatchString(r.URL.Path):
			envelopeAnswer(404, msgNoCollection).write(w)
		default:
			envelopeAnswer(404, msgNotFound).write(w)
		}
	}},
	{"collections-guest-403", []string{"COLL-AUTH-001"}, refuseAs(collectionsAPI, 401, 403, msgNotAllowed)},
	{"collections-message", []string{"COLL-AUTH-002"}, refuseAs(collectionsAPI, 403, 403, msgOnlySuperusers)},
	{"create-ignores-type", []string{"COLL-CRUD-001"}, setType("base")},
	{"create-base-as-auth", []string{"COLL-CRUD-002", "COLL-BASE-001"}, setType("auth")},
	{"list-hides-system", []string{"COLL-CRUD-004"}, editObject(route(http.MethodGet, "/api/collections"), func(_ *http.Request, m map[string]any) {
		items, _ := m["items"].([]any)
		var kept []any
		for _, it := range items {
			if c, _ := it.(map[string]any); c["system"] != true {
				kept = append(kept, it)
			}
		}
		m["items"], m["totalItems"] = kept, len(kept)
	})},
	// A server that tells devices apart by the client address alone: every
	// sign-in reaches strongbox with one User-Agent, so none is new.
	{"auth-alert-device-ignored", []string{"AUTH-ALERT-001"}, rewrite(loginRoute, func(r *http.Request) {
		r.Header.Set("User-Agent", "one-device")
	})},
}
