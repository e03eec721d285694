package conformance

import (
	"net/http"
	"regexp"
	"strings"
)

// The violations of the account flows and of the guarantees of system
// collections (account_flows.go, collections_system.go), committed by
// mutations in front of the real strongbox.

var reFlow = regexp.MustCompile(`^/api/collections/([^/]+)/(request|confirm)-(verification|password-reset|email-change)$`)

// flow selects the POSTs of the flow actions whose names have prefix.
func flow(prefix string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		m := reFlow.FindStringSubmatch(r.URL.Path)
		return r.Method == http.MethodPost && m != nil && strings.HasPrefix(m[2]+"-"+m[3], prefix)
	}
}

// acceptIf answers 204 where strongbox refused the requests match selects
// with status and an envelope pred holds for.
func acceptIf(match func(*http.Request) bool, status int, pred func(env map[string]any) bool) mutation {
	return edit(match, func(_ *http.Request, res *answered) {
		if m := res.object(); res.status == status && m != nil && pred(m) {
			*res = *noContent()
		}
	})
}

// collectionPatch selects the PATCHes of a collection.
func collectionPatch(r *http.Request) bool { return r.Method == http.MethodPatch && collectionsAPI(r) }

// acceptPatch takes the PATCH of a collection that strongbox refused for
// a field refused selects, as if it had applied it: 200 with the
// collection as GET shows it and the patched keys as sent.
func acceptPatch(refused func(data map[string]any) bool) mutation {
	return when(collectionPatch, func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		m := res.object()
		data, _ := m["data"].(map[string]any)
		if res.status != 400 || !refused(data) {
			res.write(w)
			return
		}
		body := bodyJSON(r)
		get := r.Clone(r.Context())
		get.Method, get.Body, get.GetBody, get.ContentLength = http.MethodGet, nil, nil, 0
		res = x.forward(get)
		if c := res.object(); c != nil {
			for k, v := range body {
				c[k] = v
			}
			res.setJSON(c)
		}
		res.write(w)
	})
}

// durationCode is the code of data.<key>.duration.
func durationCode(data map[string]any, key string) string {
	tc, _ := data[key].(map[string]any)
	return errorCode(map[string]any{"data": tc}, "duration")
}

var flowsMutators = []mutator{
	{"unknown-email-404", []string{"FLOW-001"}, edit(flow("request-"), func(_ *http.Request, res *answered) {
		if res.status == 204 {
			*res = *envelopeAnswer(404, msgNotFound)
		}
	})},
	{"blank-email-204", []string{"FLOW-002"}, acceptIf(flow("request-"), 400, func(m map[string]any) bool {
		return errorCode(m, "email") == codeRequired
	})},
	{"superusers-verification-204", []string{"FLOW-003"}, acceptIf(flow("request-verification"), 400, func(m map[string]any) bool {
		return m["message"] == msgSuperusersVerified
	})},
	{"email-change-any-auth", []string{"FLOW-004"}, acceptIf(flow("request-email-change"), 403, func(map[string]any) bool { return true })},
	{"confirm-any-token", []string{"FLOW-005"}, acceptIf(flow("confirm-"), 400, func(m map[string]any) bool {
		return errorCode(m, "token") != ""
	})},
	{"system-rules-open", []string{"COLL-SYS-001", "COLL-SYS-002"}, acceptPatch(func(data map[string]any) bool {
		for k := range data {
			if strings.HasSuffix(k, "Rule") {
				return true
			}
		}
		return false
	})},
	{"system-rename", []string{"COLL-SYS-003"}, acceptPatch(func(data map[string]any) bool { return data["name"] != nil })},
	{"superusers-static", []string{"COLL-SYS-004"}, acceptPatch(func(data map[string]any) bool {
		return durationCode(data, "authToken") == codeRequired
	})},
	{"durations-min-unchecked", []string{"COLL-SYS-005"}, acceptPatch(func(data map[string]any) bool {
		for _, k := range tokenConfigKeys {
			if k != "authToken" && durationCode(data, k) == codeMinGreaterThan {
				return true
			}
		}
		return false
	})},
}
