package conformance

import (
	"fmt"
	"math/rand/v2"
	"regexp"
)

// The fake's OTP (request-otp, auth-with-otp) and MFA gate: codes mailed
// through fake_mail_test.go, kept in maps, attempts counted per record.

var reOTPRoute = regexp.MustCompile(`^/api/collections/([^/]+)/(request-otp|auth-with-otp)$`)

type fakeOTP struct {
	coll *fakeCollection
	rec  *fakeRecord
	code string
}

type fakeMFA struct {
	coll   *fakeCollection
	rec    *fakeRecord
	method string
}

func (f *fakeServer) handleOTP(q *fakeReq, collName, action string) error {
	c := f.collection(collName)
	if c == nil {
		return ferr(404, msgNoCollection)
	}
	if c.typ != "auth" {
		return ferr(404, msgNoAuthColl)
	}
	if on, _ := c.otp["enabled"].(bool); !on && !f.bug("otp-always-enabled") {
		return ferr(403, msgOTPOff)
	}
	body, err := readBody(q.r)
	if err != nil {
		return err
	}
	str := func(k string) string { s, _ := body[k].(string); return s }
	if action == "request-otp" {
		email := str("email")
		if email == "" {
			return &fakeErr{status: 400, msg: msgValidation, data: map[string]any{
				"email": map[string]any{"code": codeRequired, "message": "Cannot be blank."}}}
		}
		id := fakeID()
		rec := f.recordByEmail(c, email)
		if rec == nil {
			if f.bug("otp-unknown-email-404") {
				return ferr(404, msgNotFound)
			}
			if f.bug("otp-mail-unknown") {
				f.sendMail(email, "OTP for Acme", "<p>No account, but here is a code: 12345678</p>")
			}
			return q.json(200, map[string]any{"otpId": id})
		}
		code := fmt.Sprintf("%08d", rand.IntN(100000000))
		f.otps[id] = &fakeOTP{coll: c, rec: rec, code: code}
		html := "<p>Your one-time password is: <strong>" + code + "</strong></p>"
		if f.bug("otp-mail-without-code") {
			html = "<p>Your one-time password is in the app.</p>"
		}
		f.sendMail(rec.email, "OTP for Acme", html)
		return q.json(200, map[string]any{"otpId": id})
	}
	o := f.otps[str("otpId")]
	if o == nil || o.coll != c {
		return ferr(400, msgOTPInvalid)
	}
	limit := otpAttempts
	if f.bug("document-readings") { // §5 names no number of attempts
		limit = 3
	}
	if f.otpAttempts[o.rec.id]++; f.otpAttempts[o.rec.id] > limit && !f.bug("no-otp-attempt-limit") {
		return ferr(429, msgOTPTooMany)
	}
	if o.code != str("password") {
		if f.bug("otp-wrong-code-message") {
			return ferr(400, msgFailedAuth)
		}
		if f.bug("otp-wrong-code-data") {
			return &fakeErr{status: 400, msg: msgOTPInvalid, data: map[string]any{"password": map[string]any{
				"code": "validation_invalid_otp", "message": "Invalid OTP."}}}
		}
		return ferr(400, msgOTPInvalid)
	}
	if !f.bug("otp-reusable") {
		delete(f.otps, str("otpId"))
	}
	if done, err := f.mfaGate(q, c, o.rec, "otp"); done {
		return err
	}
	yes := true
	out := map[string]any{"record": recordJSON(c, o.rec), "token": f.sign(c, o.rec, "auth", c.duration, &yes)}
	if f.bug("otp-result-without-record") {
		delete(out, "record")
	}
	return q.json(200, out)
}

// mfaGate applies MFA to a sign-in of rec by method: on an MFA collection
// a first factor gets 401 {"mfaId"}, a second one has its mfaId checked.
// done is true when the gate has answered (err then is the answer).
func (f *fakeServer) mfaGate(q *fakeReq, c *fakeCollection, rec *fakeRecord, method string) (done bool, err error) {
	if on, _ := c.mfa["enabled"].(bool); !on {
		return false, nil
	}
	// mfa.rule: MFA applies only to the records it matches.
	if rule, _ := c.mfa["rule"].(string); rule != "" && !f.bug("mfa-rule-ignored") {
		if m := reFakeMFARule.FindStringSubmatch(rule); m == nil || m[1] != rec.email {
			return false, nil
		}
	}
	mfaID := q.r.URL.Query().Get("mfaId")
	if mfaID == "" || f.bug("mfa-second-factor-challenged") {
		id := fakeID()
		f.mfas[id] = &fakeMFA{coll: c, rec: rec, method: method}
		if f.bug("mfa-challenge-envelope") {
			return true, &fakeErr{status: 401, msg: "MFA required.", data: map[string]any{"mfaId": id}}
		}
		if f.bug("document-readings") { // §5.6: the body contains mfaId, beside what else it likes
			return true, q.json(401, map[string]any{"status": 401, "message": "A second factor is required.",
				"data": map[string]any{}, "mfaId": id})
		}
		return true, q.json(401, map[string]any{"mfaId": id})
	}
	s := f.mfas[mfaID]
	switch {
	case (s == nil || s.coll != c) && f.bug("mfa-bogus-message"):
		return true, ferr(400, msgFailedAuth)
	case s == nil || s.coll != c:
		return true, ferr(400, msgMFAInvalid)
	case s.rec != rec && !f.bug("mfa-any-record"):
		return true, ferr(400, msgMFAOther)
	case s.method == method && !f.bug("mfa-same-method-ok"):
		return true, ferr(400, msgMFASame)
	}
	delete(f.mfas, mfaID)
	return false, nil
}
