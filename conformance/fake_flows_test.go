package conformance

import (
	"regexp"
	"strings"
)

// The fake's account flows: what a client sees without a mailbox. It sends
// no mail and its confirms accept no token (it issues none).

var reFlowRoute = regexp.MustCompile(`^/api/collections/([^/]+)/((?:request|confirm)-(?:verification|password-reset|email-change))$`)

func (f *fakeServer) handleFlow(q *fakeReq, collName, action string) error {
	c := f.collection(collName)
	if c == nil {
		return ferr(404, msgNoCollection)
	}
	if c.typ != "auth" {
		return ferr(404, msgNoAuthColl)
	}
	if action == "request-email-change" {
		if q.auth == nil {
			return ferr(401, msgNeedsToken)
		}
		if q.authColl != c && !f.bug("email-change-any-auth") {
			return ferr(403, "The request requires auth record from "+q.authColl.name+" collection.")
		}
	}
	if c.system && strings.HasSuffix(action, "-verification") && !f.bug("superusers-verification-204") {
		return ferr(400, msgSuperusersVerified)
	}
	body, err := readBody(q.r)
	if err != nil {
		return err
	}
	str := func(k string) string { s, _ := body[k].(string); return s }
	required := func(keys ...string) error {
		data := map[string]any{}
		for _, k := range keys {
			if str(k) == "" {
				data[k] = map[string]any{"code": codeRequired, "message": "Cannot be blank."}
			}
		}
		if len(data) > 0 {
			return &fakeErr{status: 400, msg: msgValidation, data: data}
		}
		return nil
	}
	tokenErr := func(code string) error {
		if f.bug("confirm-any-token") {
			q.w.WriteHeader(204)
			q.status = 204
			return nil
		}
		return &fakeErr{status: 400, msg: msgValidation, data: map[string]any{"token": map[string]any{"code": code, "message": "Invalid token."}}}
	}
	switch action {
	case "request-verification", "request-password-reset":
		if str("email") == "" && !f.bug("blank-email-204") {
			return required("email")
		}
		if f.bug("unknown-email-404") && !f.hasEmail(c, str("email")) {
			return ferr(404, msgNotFound)
		}
	case "request-email-change":
		if err := required("newEmail"); err != nil {
			return err
		}
	case "confirm-verification":
		if err := required("token"); err != nil {
			return err
		}
		return tokenErr("validation_invalid_token_claims")
	case "confirm-password-reset":
		if err := required("token", "password", "passwordConfirm"); err != nil {
			return err
		}
		return tokenErr("validation_invalid_token")
	case "confirm-email-change":
		if err := required("token", "password"); err != nil {
			return err
		}
		return tokenErr("validation_invalid_token_payload")
	}
	q.w.WriteHeader(204)
	q.status = 204
	return nil
}

func (f *fakeServer) hasEmail(c *fakeCollection, email string) bool {
	for _, r := range c.records {
		if r.email == email {
			return true
		}
	}
	return false
}
