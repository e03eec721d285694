package conformance

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// The violations of issue 19's requirements: the API rules (rules.go),
// the auth system collections' records (records_system.go) and the input
// that must not be dropped (nodrop.go), committed by mutations in front
// of the real strongbox.

// reRuleRecords matches the records routes of the collections the checks
// create (cf_…).
var reRuleRecords = regexp.MustCompile(`^/api/collections/cf_[a-z0-9]+/records(/[^/]+)?$`)

// ruleRecords selects the requests to those routes by anyone but a
// superuser.
func ruleRecords(r *http.Request) bool {
	return reRuleRecords.MatchString(r.URL.Path) && !superuserToken(r)
}

// systemRecords selects the records routes of the system collection coll.
func systemRecords(coll string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return strings.HasPrefix(r.URL.Path, "/api/collections/"+coll+"/records")
	}
}

// editRecords rewrites each record of the answers to the requests match
// selects: the items of a list, or the record itself.
func editRecords(match func(*http.Request) bool, fn func(rec map[string]any)) mutation {
	return editObject(match, func(_ *http.Request, m map[string]any) {
		items, ok := m["items"].([]any)
		if !ok {
			fn(m)
		}
		for _, it := range items {
			if rec, ok := it.(map[string]any); ok {
				fn(rec)
			}
		}
	})
}

// dropFileParts rewrites a multipart body without its file parts.
func dropFileParts(r *http.Request) {
	rewind(r)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") || r.ParseMultipartForm(1<<20) != nil {
		rewind(r)
		return
	}
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, vs := range r.MultipartForm.Value {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	mw.Close()
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Body, r.ContentLength, r.GetBody = io.NopCloser(bytes.NewReader(b.Bytes())), int64(b.Len()), nil
	r.Header.Set("Content-Length", fmtInt(b.Len()))
}

var rulesMutators = []mutator{
	{"rules-list-unfiltered", []string{"RULE-LIST-001"}, when(both(ruleRecords, under(http.MethodGet, "")),
		func(x *front, w http.ResponseWriter, r *http.Request) { x.forwardAs(r, x.superuser()).write(w) })},
	{"rules-denial-403", []string{"RULE-VIEW-001", "RULE-UPDATE-001", "RULE-DELETE-001"},
		reword(ruleRecords, 404, msgNotFound, 403, msgNotAllowed)},
	{"rules-create-denial-403", []string{"RULE-CREATE-001"}, reword(ruleRecords, 400, msgCreateFailed, 403, msgOnlySuperusers)},
	{"authrule-as-failed-auth", []string{"RULE-AUTH-001", "RULE-AUTH-002", "RULE-AUTH-003"},
		reword(func(r *http.Request) bool { return authAction.MatchString(r.URL.Path) }, 403, msgAuthRule, 400, msgFailedAuth)},
	{"manage-rule-ignored", []string{"RULE-MANAGE-001"}, when(both(ruleRecords, under(http.MethodPatch, "")),
		func(x *front, w http.ResponseWriter, r *http.Request) {
			if b := bodyJSON(r); b["password"] != nil && b["oldPassword"] == nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				io.WriteString(w, `{"data":{"oldPassword":{"code":"`+codeRequired+`","message":"Cannot be blank."}},"message":"`+
					msgUpdateFailed+`","status":400}`)
				return
			}
			x.pass(w, r)
		})},
	{"rules-headers-dropped", []string{"RULE-HEADER-001"}, rewrite(ruleRecords, func(r *http.Request) { r.Header.Del("X-Cf-Key") })},
	{"rules-query-dropped", []string{"RULE-QUERY-001"}, editQuery(ruleRecords, func(q url.Values) { q.Del("cf") })},
	{"rules-body-ignored", []string{"RULE-BODY-001"}, rewrite(both(ruleRecords, under(http.MethodPost, "")), func(r *http.Request) {
		if b := bodyJSON(r); b != nil {
			b["emailVisibility"] = true
			setBody(r, b)
		}
	})},

	// hidden values (rules_hidden.go)
	{"filters-as-superuser", []string{"RULE-FILTER-001", "RULE-FILTER-002"},
		when(both(ruleRecords, func(r *http.Request) bool { return r.URL.Query().Has("filter") }),
			func(x *front, w http.ResponseWriter, r *http.Request) { x.forwardAs(r, x.superuser()).write(w) })},
	{"sorts-as-superuser", []string{"RULE-SORT-001"},
		when(both(ruleRecords, func(r *http.Request) bool { return r.URL.Query().Has("sort") }),
			func(x *front, w http.ResponseWriter, r *http.Request) { x.forwardAs(r, x.superuser()).write(w) })},
	{"rules-hidden-auth-null-update", []string{"RULE-HIDDEN-001"}, when(both(ruleRecords, under(http.MethodPatch, "")),
		func(x *front, w http.ResponseWriter, r *http.Request) { x.forwardAs(r, x.superuser()).write(w) })},
	{"rules-hidden-auth-null-list", []string{"RULE-HIDDEN-002"}, editObject(both(ruleRecords, under(http.MethodGet, "")),
		func(_ *http.Request, m map[string]any) {
			if _, ok := m["items"]; ok {
				m["items"], m["totalItems"], m["totalPages"] = []any{}, 0, 0
			}
		})},
	{"rules-own-hidden-refused", []string{"RULE-HIDDEN-003"}, answer(
		func(r *http.Request) bool {
			return r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/api/collections/cf_") &&
				strings.Contains(fmt.Sprint(bodyJSON(r)["viewRule"]), "cfbanned")
		},
		&answered{status: 400, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"data":{"viewRule":` +
			`{"code":"validation_invalid_rule","message":"Invalid rule. Raw error: field \"cfbanned\" is hidden."}},` +
			`"message":"Failed to update collection.","status":400}`)})},

	// the auth system collections (records_system.go)
	{"authorigins-without-fingerprint", []string{"SYSREC-001"}, editRecords(systemRecords("_authOrigins"), func(rec map[string]any) {
		delete(rec, "fingerprint")
	})},
	{"authorigins-owner-sees-all", []string{"SYSREC-002"}, asSuperuser(both(systemRecords("_authOrigins"), under(http.MethodGet, "")), 200, 404)},
	{"mfas-without-method", []string{"SYSREC-003"}, editRecords(systemRecords("_mfas"), func(rec map[string]any) { delete(rec, "method") })},
	{"otps-show-hash", []string{"SYSREC-004"}, editRecords(systemRecords("_otps"), func(rec map[string]any) {
		rec["password"] = "$2a$10$cfcfcfcfcfcfcfcfcfcfcuQ1Xq4X0jGkq0pWd3nQeHq2rGd3xW5yW"
	})},

	// input that must not be dropped (nodrop.go)
	{"file-parts-dropped", []string{"NODROP-001", "NODROP-002"}, rewrite(func(r *http.Request) bool {
		return strings.Contains(r.URL.Path, "/records")
	}, dropFileParts)},
	{"bad-query-dropped", []string{"NODROP-003"}, rewrite(func(r *http.Request) bool { return r.URL.RawQuery != "" }, func(r *http.Request) {
		r.URL.RawQuery = r.URL.Query().Encode()
	})},
	{"health-socket-ip", []string{"NODROP-004"}, editObject(route(http.MethodGet, "/api/health"), func(_ *http.Request, m map[string]any) {
		if data, ok := m["data"].(map[string]any); ok {
			data["realIP"] = "127.0.0.1"
		}
	})},
}
