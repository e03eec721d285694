package api

import (
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"strongbox/authn/totp"
)

// totpEnv is an env with totp on for users (and more options, extra)
// and one user, ann, signed in: it returns the env, ann's id and token.
func totpEnv(t *testing.T, extra string) (*env, string, string) {
	t.Helper()
	e := newEnv(t)
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"totp":{"enabled":true}`+extra+`}`); res.Status != 200 {
		t.Fatalf("enable TOTP: %d %s", res.Status, res.Body)
	}
	id := e.signUp("ann@example.com", "password1")
	return e, id, e.login("users", "ann@example.com", "password1")
}

// enrolTOTP sets up and confirms TOTP for the record of token in col and
// returns its key and recovery codes; the clock then moves a step on.
func (e *env) enrolTOTP(col, token string) ([]byte, []string) {
	e.t.Helper()
	res := e.do("POST", "/api/collections/"+col+"/totp/setup", token, nil)
	if res.Status != 200 {
		e.t.Fatalf("totp/setup: %d %s", res.Status, res.Body)
	}
	m := res.JSON(e.t)
	key, err := totp.DecodeSecret(m["secret"].(string))
	if err != nil {
		e.t.Fatal(err)
	}
	res = e.do("POST", "/api/collections/"+col+"/totp/confirm", token, map[string]string{"code": totp.Code(key, e.clock.Now())})
	if res.Status != 200 {
		e.t.Fatalf("totp/confirm: %d %s", res.Status, res.Body)
	}
	var codes []string
	for _, c := range res.JSON(e.t)["recoveryCodes"].([]any) {
		codes = append(codes, c.(string))
	}
	e.clock.Add(totp.Period)
	return key, codes
}

// mfaFirst signs in by password and returns the mfaId of the 401.
func (e *env) mfaFirst(col, email, password string) string {
	e.t.Helper()
	res := e.do("POST", "/api/collections/"+col+"/auth-with-password", "", map[string]string{"identity": email, "password": password})
	if res.Status != 401 {
		e.t.Fatalf("first factor: %d %s, want 401 {mfaId}", res.Status, res.Body)
	}
	m := res.JSON(e.t)
	if len(m) != 1 || m["mfaId"] == nil {
		e.t.Fatalf("first factor body %s, want exactly {mfaId}", res.Body)
	}
	return m["mfaId"].(string)
}

func (e *env) authWithTOTP(col, mfaID, code string) *response {
	e.t.Helper()
	return e.do("POST", "/api/collections/"+col+"/auth-with-totp?mfaId="+url.QueryEscape(mfaID), "", map[string]string{"code": code})
}

// TestTOTPFlow: setup answers the secret and its URI once, confirm the
// recovery codes, auth-methods says totp, a password asks for the second
// factor although mfa is off, auth-with-totp completes it with the §2.6
// result, and a code is refused a second time.
func TestTOTPFlow(t *testing.T) {
	t.Parallel()
	e, id, token := totpEnv(t, "")
	if res := e.do("PATCH", "/api/settings", e.su, `{"meta":{"appName":"Acme Co"}}`); res.Status != 200 {
		t.Fatalf("settings: %d %s", res.Status, res.Body)
	}
	if m := e.do("GET", "/api/collections/users/auth-methods", "", nil).JSON(t); m["totp"].(map[string]any)["enabled"] != true {
		t.Errorf("auth-methods totp = %v, want enabled", m["totp"])
	}
	res := e.do("POST", "/api/collections/users/totp/setup", token, nil)
	m := res.JSON(t)
	secret, _ := m["secret"].(string)
	key, err := totp.DecodeSecret(secret)
	if res.Status != 200 || err != nil || len(m) != 2 {
		t.Fatalf("setup: %d %s", res.Status, res.Body)
	}
	if want := "otpauth://totp/Acme%20Co:ann@example.com?secret=" + secret + "&issuer=Acme%20Co"; m["uri"] != want {
		t.Errorf("uri = %v, want %s", m["uri"], want)
	}
	wantError(t, e.do("POST", "/api/collections/users/totp/confirm", token, `{"code":"12345"}`), 400, msgTOTPInvalid)
	res = e.do("POST", "/api/collections/users/totp/confirm", token, map[string]string{"code": totp.Code(key, e.clock.Now())})
	if res.Status != 200 || len(res.JSON(t)["recoveryCodes"].([]any)) != 10 {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	if st := e.do("GET", "/api/collections/users/totp", token, nil); strings.TrimSpace(string(st.Body)) != `{"enabled":true,"pending":false,"recoveryCodes":10}` {
		t.Errorf("status: %d %s", st.Status, st.Body)
	}
	for _, r := range []*response{
		e.do("GET", "/api/collections/users/totp", e.su, nil),
		e.do("GET", "/api/collections/users/totp", token, nil),
		e.do("GET", "/api/collections/users/records/"+id, token, nil),
	} {
		if strings.Contains(string(r.Body), secret) {
			t.Errorf("an answer after setup holds the secret: %s", r.Body)
		}
	}
	wantError(t, e.do("POST", "/api/collections/users/totp/setup", token, nil), 400, msgTOTPEnabled)

	mfa := e.mfaFirst("users", "ann@example.com", "password1")
	code := totp.Code(key, e.clock.Now().Add(totp.Period))
	res = e.authWithTOTP("users", mfa, code)
	if res.Status != 200 {
		t.Fatalf("auth-with-totp: %d %s", res.Status, res.Body)
	}
	got := res.JSON(t)
	if got["token"] == "" || got["record"].(map[string]any)["id"] != id {
		t.Errorf("auth-with-totp result %s", res.Body)
	}
	// The token works; the code and the session are spent.
	if r := e.do("POST", "/api/collections/users/auth-refresh", got["token"].(string), nil); r.Status != 200 {
		t.Errorf("auth-refresh with the new token: %d %s", r.Status, r.Body)
	}
	wantError(t, e.authWithTOTP("users", mfa, code), 400, msgMFAInvalid)
	mfa = e.mfaFirst("users", "ann@example.com", "password1")
	wantError(t, e.authWithTOTP("users", mfa, code), 400, msgTOTPInvalid)
}

// TestTOTPErrors: the refusals of auth-with-totp and the totp routes.
func TestTOTPErrors(t *testing.T) {
	t.Parallel()
	e, _, token := totpEnv(t, "")
	key, _ := e.enrolTOTP("users", token)
	mfa := e.mfaFirst("users", "ann@example.com", "password1")
	code := totp.Code(key, e.clock.Now())
	tests := []struct {
		name, path, token, body string
		status                  int
		want                    string
	}{
		{"no mfaId", "/api/collections/users/auth-with-totp", "", `{"code":"` + code + `"}`, 400, `{"data":{"mfaId":{"code":"validation_required","message":"Cannot be blank."}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"no code", "/api/collections/users/auth-with-totp?mfaId=" + mfa, "", `{}`, 400, `{"data":{"code":{"code":"validation_required","message":"Cannot be blank."}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"code not a string", "/api/collections/users/auth-with-totp?mfaId=" + mfa, "", `{"code":123456}`, 400, `{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`},
		{"code too long", "/api/collections/users/auth-with-totp?mfaId=" + mfa, "", `{"code":"` + strings.Repeat("1", 72) + `"}`, 400, `{"data":{"code":{"code":"validation_length_out_of_range","message":"The length must be between 1 and 71.","params":{"max":71,"min":1}}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"unknown mfaId", "/api/collections/users/auth-with-totp?mfaId=nosuchmfa000000", "", `{"code":"` + code + `"}`, 400, `{"data":{},"message":"Invalid or expired MFA session.","status":400}`},
		{"totp off", "/api/collections/_superusers/auth-with-totp?mfaId=" + mfa, "", `{"code":"` + code + `"}`, 403, `{"data":{},"message":"The collection is not configured to allow TOTP authentication.","status":403}`},
		{"no collection", "/api/collections/nope/auth-with-totp?mfaId=" + mfa, "", `{"code":"` + code + `"}`, 404, `{"data":{},"message":"Missing or invalid collection context.","status":404}`},
		{"setup as a guest", "/api/collections/users/totp/setup", "", ``, 401, `{"data":{},"message":"The request requires valid record authorization token.","status":401}`},
		{"setup in another collection", "/api/collections/_superusers/totp/setup", token, ``, 403, `{"data":{},"message":"The request requires auth record from users collection.","status":403}`},
		{"confirm without a code", "/api/collections/users/totp/confirm", token, `{}`, 400, `{"data":{"code":{"code":"validation_required","message":"Cannot be blank."}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"confirm when confirmed", "/api/collections/users/totp/confirm", token, `{"code":"123456"}`, 400, `{"data":{},"message":"TOTP is already enabled for this account.","status":400}`},
		{"disable without a code", "/api/collections/users/totp/disable", token, `{}`, 400, `{"data":{"code":{"code":"validation_required","message":"Cannot be blank."}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"disable another's as a user", "/api/collections/users/totp/disable", token, `{"recordId":"someoneelse0000"}`, 403, `{"data":{},"message":"Only superusers can perform this action.","status":403}`},
		{"a superuser disables a missing record's", "/api/collections/users/totp/disable", e.su, `{"recordId":"someoneelse0000"}`, 404, `{"data":{},"message":"The requested resource wasn't found.","status":404}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			res := e.do("POST", tt.path, tt.token, body)
			if res.Status != tt.status || strings.TrimSpace(string(res.Body)) != tt.want {
				t.Errorf("got %d %s\nwant %d %s", res.Status, res.Body, tt.status, tt.want)
			}
		})
	}
	// The session of a users record, in _superusers: another record's.
	if res := e.do("PATCH", "/api/collections/_superusers", e.su, `{"totp":{"enabled":true}}`); res.Status != 200 {
		t.Fatalf("enable TOTP on _superusers: %d %s", res.Status, res.Body)
	}
	wantError(t, e.authWithTOTP("_superusers", mfa, code), 400, msgMFAOtherRecord)
	e.clock.Add(31 * time.Minute)
	wantError(t, e.authWithTOTP("users", mfa, totp.Code(key, e.clock.Now())), 400, msgMFAInvalid)
}

// TestTOTPAttempts: a session takes 5 wrong codes, then 429 even for the
// right one; the record 10, then 429 with Retry-After from any session.
func TestTOTPAttempts(t *testing.T) {
	t.Parallel()
	e, _, token := totpEnv(t, "")
	key, _ := e.enrolTOTP("users", token)
	wrong := "000000"
	if totp.Code(key, e.clock.Now()) == wrong {
		wrong = "000001"
	}
	for round := range 2 {
		mfa := e.mfaFirst("users", "ann@example.com", "password1")
		for i := range 5 {
			if res := e.authWithTOTP("users", mfa, wrong); res.Status != 400 {
				t.Fatalf("round %d, wrong code %d: %d %s", round, i+1, res.Status, res.Body)
			}
		}
		wantError(t, e.authWithTOTP("users", mfa, totp.Code(key, e.clock.Now())), 429, msgTOTPTooMany)
	}
	mfa := e.mfaFirst("users", "ann@example.com", "password1")
	res := e.authWithTOTP("users", mfa, totp.Code(key, e.clock.Now()))
	wantError(t, res, 429, msgTOTPTooMany)
	if res.Header.Get("Retry-After") != "3600" {
		t.Errorf("Retry-After = %q, want 3600", res.Header.Get("Retry-After"))
	}
	e.clock.Add(time.Hour)
	mfa = e.mfaFirst("users", "ann@example.com", "password1")
	if res := e.authWithTOTP("users", mfa, totp.Code(key, e.clock.Now())); res.Status != 200 {
		t.Errorf("after an hour: %d %s", res.Status, res.Body)
	}
}

// TestTOTPRecoveryAndDisable: a recovery code signs in once; disable takes
// a code or a recovery code; a superuser clears a record's without one; a
// password change keeps TOTP.
func TestTOTPRecoveryAndDisable(t *testing.T) {
	t.Parallel()
	e, id, token := totpEnv(t, "")
	key, codes := e.enrolTOTP("users", token)
	mfa := e.mfaFirst("users", "ann@example.com", "password1")
	if res := e.authWithTOTP("users", mfa, codes[0]); res.Status != 200 {
		t.Fatalf("recovery code: %d %s", res.Status, res.Body)
	}
	mfa = e.mfaFirst("users", "ann@example.com", "password1")
	wantError(t, e.authWithTOTP("users", mfa, codes[0]), 400, msgTOTPInvalid)
	// A password change keeps it.
	res := e.do("PATCH", "/api/collections/users/records/"+id, token, map[string]string{"oldPassword": "password1", "password": "password2", "passwordConfirm": "password2"})
	if res.Status != 200 {
		t.Fatalf("password change: %d %s", res.Status, res.Body)
	}
	e.mfaFirst("users", "ann@example.com", "password2")
	mfa = e.mfaFirst("users", "ann@example.com", "password2")
	res = e.authWithTOTP("users", mfa, totp.Code(key, e.clock.Now()))
	token = res.JSON(t)["token"].(string)
	wantError(t, e.do("POST", "/api/collections/users/totp/disable", token, `{"code":"`+codes[0]+`"}`), 400, msgTOTPInvalid)
	if res := e.do("POST", "/api/collections/users/totp/disable", token, `{"code":"`+codes[1]+`"}`); res.Status != 204 {
		t.Fatalf("disable with a recovery code: %d %s", res.Status, res.Body)
	}
	if got := e.login("users", "ann@example.com", "password2"); got == "" {
		t.Fatal("no token after disable")
	}
	e.enrolTOTP("users", token)
	e.mfaFirst("users", "ann@example.com", "password2")
	if res := e.do("POST", "/api/collections/users/totp/disable", e.su, `{"recordId":"`+id+`"}`); res.Status != 204 {
		t.Fatalf("a superuser's disable: %d %s", res.Status, res.Body)
	}
	e.login("users", "ann@example.com", "password2")
	wantError(t, e.do("POST", "/api/collections/users/totp/disable", e.su, `{"recordId":"`+id+`"}`), 400, msgTOTPNotEnabled)
}

// TestTOTPWithMFA: with the collection's MFA (password and OTP), a
// record with TOTP completes only with it, and other records as before.
func TestTOTPWithMFA(t *testing.T) {
	t.Parallel()
	e, fm, _ := otpEnv(t, true)
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"totp":{"enabled":true}}`); res.Status != 200 {
		t.Fatalf("enable TOTP: %d %s", res.Status, res.Body)
	}
	mfa := e.mfaFirst("users", "ann@example.com", "password1")
	otpID, code := e.requestOTP(fm, "users", "ann@example.com")
	res := e.do("POST", "/api/collections/users/auth-with-otp?mfaId="+mfa, "", map[string]string{"otpId": otpID, "password": code})
	token := res.JSON(t)["token"].(string)
	key, _ := e.enrolTOTP("users", token)
	mfa = e.mfaFirst("users", "ann@example.com", "password1")
	otpID, code = e.requestOTP(fm, "users", "ann@example.com")
	wantError(t, e.do("POST", "/api/collections/users/auth-with-otp?mfaId="+mfa, "", map[string]string{"otpId": otpID, "password": code}), 400, msgMFASameMethod)
	if res := e.authWithTOTP("users", mfa, totp.Code(key, e.clock.Now())); res.Status != 200 {
		t.Errorf("TOTP after the refused OTP: %d %s", res.Status, res.Body)
	}
}

// TestTOTPOathtool: codes that Debian's oathtool (STRONGBOX_OATHTOOL)
// computes from the secret setup answers are accepted, at the server's
// clock.
func TestTOTPOathtool(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("STRONGBOX_OATHTOOL")
	if bin == "" {
		t.Skip("STRONGBOX_OATHTOOL is unset (Debian package oathtool: STRONGBOX_OATHTOOL=/usr/bin/oathtool)")
	}
	e, _, token := totpEnv(t, "")
	oath := func(secret string) string {
		t.Helper()
		out, err := exec.Command(bin, "--totp", "-b", "-N", "@"+strconv.FormatInt(e.clock.Now().Unix(), 10), secret).Output()
		if err != nil {
			t.Fatalf("oathtool: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	secret := e.do("POST", "/api/collections/users/totp/setup", token, nil).JSON(t)["secret"].(string)
	if res := e.do("POST", "/api/collections/users/totp/confirm", token, map[string]string{"code": oath(secret)}); res.Status != 200 {
		t.Fatalf("confirm with oathtool's code: %d %s", res.Status, res.Body)
	}
	e.clock.Add(totp.Period)
	mfa := e.mfaFirst("users", "ann@example.com", "password1")
	if res := e.authWithTOTP("users", mfa, oath(secret)); res.Status != 200 {
		t.Errorf("auth-with-totp with oathtool's code: %d %s", res.Status, res.Body)
	}
}
