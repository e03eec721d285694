package conformance

import (
	"regexp"
	"strings"
)

// The fake's account flows: the answers a client sees, and the mails with
// their tokens (signed as the auth tokens are, with a type of their own),
// sent to the smtp settings' server when they are enabled
// (fake_mail_test.go).

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
		if q.authColl != c {
			return ferr(403, "The request requires auth record from "+q.authColl.name+" collection.")
		}
	}
	if c.system && strings.HasSuffix(action, "-verification") {
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
		return &fakeErr{status: 400, msg: msgValidation, data: map[string]any{"token": map[string]any{"code": code, "message": "Invalid token."}}}
	}
	link := func(route, tok string) string {
		return "<p><a href=\"http://localhost:8090/_/#/auth/" + route + "/" + tok + "\">Confirm</a></p>"
	}
	switch action {
	case "request-verification", "request-password-reset":
		email := str("email")
		if email == "" {
			return required("email")
		}
		rec := f.recordByEmail(c, email)
		route, typ, lifetime := "confirm-verification", "verification", int64(259200)
		if action == "request-password-reset" {
			route, typ, lifetime = "confirm-password-reset", "passwordReset", 1800
		}
		switch {
		case rec != nil && !(typ == "verification" && rec.verified):
			tok := f.signWith(c, rec, typ, lifetime, nil, map[string]any{"email": rec.email})
			f.sendMail(rec.email, "Your Acme account", link(route, tok))
		case rec == nil && email != "" && f.bug("mail-unknown-email"):
			f.sendMail(email, "Your Acme account", "<p>No account here.</p>")
		}
	case "request-email-change":
		if err := required("newEmail"); err != nil {
			return err
		}
		tok := f.signWith(c, q.auth, "emailChange", 1800, nil, map[string]any{"email": q.auth.email, "newEmail": str("newEmail")})
		f.sendMail(str("newEmail"), "Confirm your Acme new email address", link("confirm-email-change", tok))
	case "confirm-verification":
		if err := required("token"); err != nil {
			return err
		}
		if _, claims, err := splitJWT(str("token")); err != nil || claims["email"] == nil {
			return tokenErr("validation_invalid_token_claims")
		}
		rec, rc := f.loadAuth(str("token"), "verification")
		if rec == nil || rc != c {
			return tokenErr("validation_invalid_token")
		}
		rec.verified = rec.verified || !f.bug("verification-not-applied")
	case "confirm-password-reset":
		if err := required("token", "password", "passwordConfirm"); err != nil {
			return err
		}
		rec, rc := f.loadAuth(str("token"), "passwordReset")
		if rec == nil || rc != c {
			return tokenErr("validation_invalid_token")
		}
		rec.password = str("password")
		if !f.bug("reset-keeps-token-key") {
			rec.tokenKey = fakeID() + fakeID()
		}
	case "confirm-email-change":
		if err := required("token", "password"); err != nil {
			return err
		}
		_, claims, err := splitJWT(str("token"))
		newEmail, _ := claims["newEmail"].(string)
		if err != nil || newEmail == "" {
			return tokenErr("validation_invalid_token_payload")
		}
		rec, rc := f.loadAuth(str("token"), "emailChange")
		if rec == nil || rc != c {
			return tokenErr("validation_invalid_token")
		}
		if str("password") != rec.password {
			return &fakeErr{status: 400, msg: msgValidation, data: map[string]any{"password": map[string]any{
				"code": "validation_invalid_password", "message": "Missing or invalid auth record password."}}}
		}
		if !f.bug("email-change-not-applied") {
			rec.email, rec.verified = newEmail, true
		}
		rec.tokenKey = fakeID() + fakeID()
	}
	q.w.WriteHeader(204)
	return nil
}

func (f *fakeServer) recordByEmail(c *fakeCollection, email string) *fakeRecord {
	for _, r := range c.records {
		if r.email == email {
			return r
		}
	}
	return nil
}
