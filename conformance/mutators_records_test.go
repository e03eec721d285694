package conformance

import (
	"net/http"
	"regexp"
)

// The violations of sign-up and record access (records.go), committed by
// mutations in front of the real strongbox.

var (
	reRecordRoute = regexp.MustCompile(`^/api/collections/[^/]+/records(/[^/]+)?$`)
	reValidMail   = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
)

func signUpRoute(r *http.Request) bool {
	m := reRecordRoute.FindStringSubmatch(r.URL.Path)
	return r.Method == http.MethodPost && m != nil && m[1] == ""
}

func recordsGet(r *http.Request) bool {
	return r.Method == http.MethodGet && reRecordRoute.MatchString(r.URL.Path)
}

func recordView(r *http.Request) bool {
	m := reRecordRoute.FindStringSubmatch(r.URL.Path)
	return r.Method == http.MethodGet && m != nil && m[1] != ""
}

// editSignUp rewrites the sign-up bodies strongbox gets.
func editSignUp(fn func(body map[string]any)) mutation {
	return rewrite(signUpRoute, func(r *http.Request) {
		if m := bodyJSON(r); m != nil {
			fn(m)
			setBody(r, m)
		}
	})
}

// freshEmail is an address no user has.
func freshEmail() string { return "cf-" + newNonce(12) + "@example.com" }

// hideEmails drops the hidden emails from the records of the answers to
// the requests match selects.
func hideEmails(match func(*http.Request) bool) mutation {
	return editRecords(both(recordsGet, match), func(rec map[string]any) {
		if rec["emailVisibility"] != true {
			delete(rec, "email")
		}
	})
}

var recordsMutators = []mutator{
	{"signup-email-optional", []string{"REC-SIGNUP-001"}, editSignUp(func(b map[string]any) {
		if b["email"] == nil || b["email"] == "" {
			b["email"] = freshEmail()
		}
	})},
	{"lax-password", []string{"REC-SIGNUP-002", "REC-SIGNUP-003"}, editSignUp(func(b map[string]any) {
		if pw, _ := b["password"].(string); len(pw) < 8 || len(pw) > 71 {
			b["password"], b["passwordConfirm"] = "Passw0rd!123x", "Passw0rd!123x"
		}
	})},
	{"no-confirm-check", []string{"REC-SIGNUP-004"}, editSignUp(func(b map[string]any) {
		if b["passwordConfirm"] != nil && b["passwordConfirm"] != "" {
			b["passwordConfirm"] = b["password"]
		}
	})},
	{"lax-email", []string{"REC-SIGNUP-005"}, editSignUp(func(b map[string]any) {
		if e, _ := b["email"].(string); e != "" && !reValidMail.MatchString(e) {
			b["email"] = freshEmail()
		}
	})},
	{"duplicate-emails", []string{"REC-SIGNUP-006"}, when(signUpRoute, func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		if m := res.object(); res.status == 400 && m != nil && errorCode(m, "email") == codeNotUnique {
			b := bodyJSON(r)
			b["email"] = freshEmail()
			setBody(r, b)
			res = x.forward(r)
		}
		res.write(w)
	})},
	{"signup-shows-email", []string{"REC-SIGNUP-007"}, editObject(signUpRoute, func(r *http.Request, rec map[string]any) {
		if _, ok := rec["id"]; ok {
			rec["email"] = bodyJSON(r)["email"]
		}
	})},
	{"ignore-email-visibility", []string{"REC-SIGNUP-008"}, editSignUp(func(b map[string]any) { b["emailVisibility"] = false })},
	// Every error at once: the record's fields are judged with the
	// password's.
	{"signup-all-at-once", []string{"REC-SIGNUP-009"}, edit(signUpRoute, func(r *http.Request, res *answered) {
		m := res.object()
		data, _ := m["data"].(map[string]any)
		if res.status != 400 || data == nil || data["email"] != nil {
			return
		}
		if e, _ := bodyJSON(r)["email"].(string); !reValidMail.MatchString(e) {
			data["email"] = map[string]any{"code": codeIsEmail, "message": "Must be a valid email address."}
			res.setJSON(m)
		}
	})},
	{"superusers-list-open", []string{"REC-ACCESS-001"}, asSuperuser(route(http.MethodGet, "/api/collections/_superusers/records"), 403)},
	{"owner-email-hidden", []string{"REC-ACCESS-002"}, hideEmails(func(r *http.Request) bool { return !superuserToken(r) })},
	{"records-visible", []string{"REC-ACCESS-003"}, asSuperuser(recordView, 404)},
	{"superuser-sees-no-email", []string{"REC-ACCESS-004"}, hideEmails(superuserToken)},
}

// errorCode is the code of data.<field> of an error envelope.
func errorCode(m map[string]any, field string) string {
	data, _ := m["data"].(map[string]any)
	fe, _ := data[field].(map[string]any)
	code, _ := fe["code"].(string)
	return code
}
