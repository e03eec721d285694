package conformance

import (
	"net/http"
	"strings"
)

// The violations of issue 29's hidden fields (hidden.go), committed by
// mutations in front of the real strongbox.

// sendsHidden selects a non-superuser's record create or update of the
// checks' collections that sends the hidden field, and an OAuth2 sign-in
// whose createData names one of the suite's hidden fields.
func sendsHidden(r *http.Request) bool {
	if superuserToken(r) || (r.Method != http.MethodPost && r.Method != http.MethodPatch) {
		return false
	}
	body := bodyJSON(r)
	if strings.HasSuffix(r.URL.Path, "/auth-with-oauth2") {
		cd, _ := body["createData"].(map[string]any)
		for k := range cd {
			if strings.HasPrefix(k, "cf_role_") {
				return true
			}
		}
		return false
	}
	_, sent := body[hiddenField]
	return sent && reRuleRecords.MatchString(r.URL.Path)
}

// superuserRecords selects a superuser's requests to the records routes
// of the checks' collections.
func superuserRecords(r *http.Request) bool {
	return reRuleRecords.MatchString(r.URL.Path) && superuserToken(r)
}

var hiddenMutators = []mutator{
	// What strongbox did before issue 29: anyone's hidden values stored.
	{"hidden-writes-kept", []string{"HIDDEN-001", "HIDDEN-004"}, when(sendsHidden,
		func(x *front, w http.ResponseWriter, r *http.Request) { x.forwardAs(r, x.superuser()).write(w) })},
	{"hidden-unseen-by-superusers", []string{"HIDDEN-002"}, editRecords(superuserRecords, func(rec map[string]any) {
		delete(rec, hiddenField)
	})},
	// Rules reading the body as sent: the hidden value is there, so
	// "@request.body.role:isset = false" refuses.
	{"hidden-rules-raw-body", []string{"HIDDEN-003"}, when(sendsHidden, func(x *front, w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			envelopeAnswer(400, msgCreateFailed).write(w)
			return
		}
		envelopeAnswer(404, msgNotFound).write(w)
	})},
}
