package api

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/authn"
	"strongbox/authn/mail"
	"strongbox/logstore/journal/journaltest"
)

// fakeMail is a mail.Sender that keeps what it is given, and fails with
// err when set.
type fakeMail struct {
	mu   sync.Mutex
	msgs []*mail.Message
	err  error
}

func (f *fakeMail) Send(_ context.Context, m *mail.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, m)
	return f.err
}

// take returns the messages sent since the last take.
func (f *fakeMail) take() []*mail.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.msgs
	f.msgs = nil
	return m
}

// flowEnv is an env with a fake mail sender.
func flowEnv(t *testing.T) (*env, *fakeMail) {
	t.Helper()
	fm := &fakeMail{}
	return newEnvWith(t, Config{Mail: fm}, HTTPConfig{}), fm
}

// flowBaseEnv is flowEnv on a data dir that holds the base collection
// posts (withBaseCollection).
func flowBaseEnv(t *testing.T) (*env, *fakeMail) {
	t.Helper()
	fm := &fakeMail{}
	return newEnvSeeded(t, Config{Mail: fm}, HTTPConfig{}, nil, withBaseCollection("posts")), fm
}

// tokenIn returns the token of the link to route in a mail body.
func tokenIn(t *testing.T, route, body string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(route) + `/([A-Za-z0-9_.-]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s link in %q", route, body)
	}
	return m[1]
}

// oneMail asserts exactly one mail to the address and returns it.
func oneMail(t *testing.T, fm *fakeMail, to string) *mail.Message {
	t.Helper()
	msgs := fm.take()
	if len(msgs) != 1 || len(msgs[0].To) != 1 || msgs[0].To[0].Address != to {
		t.Fatalf("mails = %+v, want one to %s", msgs, to)
	}
	return msgs[0]
}

func noMail(t *testing.T, fm *fakeMail) {
	t.Helper()
	if msgs := fm.take(); len(msgs) > 0 {
		t.Errorf("sent %d mails, want none: %+v", len(msgs), msgs)
	}
}

const (
	bodyValidation  = `"message":"An error occurred while validating the submitted data.","status":400}`
	errRequiredJSON = `{"code":"validation_required","message":"Cannot be blank."}`
	errTokenJSON    = `{"code":"validation_invalid_token","message":"Invalid or expired token."}`

	errInvalidPasswordJSON = `{"code":"validation_invalid_password","message":"Missing or invalid auth record password."}`
)

func TestAccountFlowErrors(t *testing.T) {
	t.Parallel()
	e, fm := flowBaseEnv(t)
	users, _ := e.auth.Collection("users")
	uid := e.signUp("u1@example.com", "password1")
	e.signUp("u2@example.com", "password1")
	u1, _ := e.auth.Record(users, uid)
	userTok := e.login("users", "u1@example.com", "password1")
	if res := e.do("POST", "/api/collections", e.su, `{"name":"members","type":"auth"}`); res.Status != 200 {
		t.Fatalf("create members: %d %s", res.Status, res.Body)
	}
	if res := e.do("POST", "/api/collections", e.su, `{"name":"nopass","type":"auth","passwordAuth":{"enabled":false}}`); res.Status != 200 {
		t.Fatalf("create nopass: %d %s", res.Status, res.Body)
	}
	if res := e.do("POST", "/api/collections/members/records", e.su, `{"email":"m@example.com","password":"password1","passwordConfirm":"password1"}`); res.Status != 200 {
		t.Fatalf("create member: %d %s", res.Status, res.Body)
	}
	members, _ := e.auth.Collection("members")
	m, _ := e.auth.FindByEmail(members, "m@example.com")

	verify, _ := e.auth.NewVerificationToken(users, u1)
	reset, _ := e.auth.NewPasswordResetToken(users, u1)
	change, _ := e.auth.NewEmailChangeToken(users, u1, "new@example.com")
	changeTaken, _ := e.auth.NewEmailChangeToken(users, u1, "u2@example.com")
	memberVerify, _ := e.auth.NewVerificationToken(members, m)
	memberReset, _ := e.auth.NewPasswordResetToken(members, m)
	memberChange, _ := e.auth.NewEmailChangeToken(members, m, "m2@example.com")
	exp := e.clock.Now().Add(time.Hour).Unix()
	oldEmail, _ := authn.Sign(authn.Claims{CollectionID: users.ID, Email: "old@example.com", Exp: &exp, ID: uid, Type: authn.TokenVerification},
		[]byte(u1.TokenKey+users.VerificationToken.Secret))
	// The signature's first character: all six of its bits count, so the
	// token stays canonical base64 and only the signature is wrong (the
	// last character carries padding bits, which strict decoding refuses).
	sig := strings.LastIndexByte(verify, '.') + 1
	tampered := verify[:sig] + map[bool]string{true: "A", false: "B"}[verify[sig] != 'A'] + verify[sig+1:]

	const (
		rv  = "/api/collections/users/request-verification"
		cv  = "/api/collections/users/confirm-verification"
		rpr = "/api/collections/users/request-password-reset"
		cpr = "/api/collections/users/confirm-password-reset"
		rec = "/api/collections/users/request-email-change"
		cec = "/api/collections/users/confirm-email-change"
	)
	long := strings.Repeat("a", 250) + "@example.com"
	tests := []struct {
		name, path, token string
		body              any // nil, a JSON string, or a value to encode
		status            int
		want              string
	}{
		{"rv unknown collection", "/api/collections/nope/request-verification", "", `{"email":"a@example.com"}`, 404, `{"data":{},"message":"Missing or invalid collection context.","status":404}`},
		{"rv base collection", "/api/collections/posts/request-verification", "", `{"email":"a@example.com"}`, 404, `{"data":{},"message":"Missing or invalid auth collection context.","status":404}`},
		{"rv superusers", "/api/collections/_superusers/request-verification", "", `{"email":"root@example.com"}`, 400, `{"data":{},"message":"All superusers are verified by default.","status":400}`},
		{"rv empty body", rv, "", nil, 400, `{"data":{"email":` + errRequiredJSON + `},` + bodyValidation},
		{"rv not an email", rv, "", `{"email":"nope"}`, 400, `{"data":{"email":{"code":"validation_is_email","message":"Must be a valid email address."}},` + bodyValidation},
		{"rv too long", rv, "", map[string]string{"email": long}, 400, `{"data":{"email":{"code":"validation_length_out_of_range","message":"The length must be between 1 and 255.","params":{"max":255,"min":1}}},` + bodyValidation},
		{"rv email not a string", rv, "", `{"email":5}`, 400, `{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`},
		{"rv malformed JSON", rv, "", `{"email":`, 400, `{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`},

		{"cv superusers", "/api/collections/_superusers/confirm-verification", "", `{"token":"x"}`, 400, `{"data":{},"message":"All superusers are verified by default.","status":400}`},
		{"cv empty token", cv, "", `{}`, 400, `{"data":{"token":` + errRequiredJSON + `},` + bodyValidation},
		{"cv garbage token", cv, "", `{"token":"abc"}`, 400, `{"data":{"token":{"code":"validation_invalid_token_claims","message":"Missing email token claim."}},` + bodyValidation},
		{"cv auth token (no email claim)", cv, "", map[string]string{"token": userTok}, 400, `{"data":{"token":{"code":"validation_invalid_token_claims","message":"Missing email token claim."}},` + bodyValidation},
		{"cv reset token", cv, "", map[string]string{"token": reset}, 400, `{"data":{"token":` + errTokenJSON + `},` + bodyValidation},
		{"cv tampered", cv, "", map[string]string{"token": tampered}, 400, `{"data":{"token":` + errTokenJSON + `},` + bodyValidation},
		{"cv other collection", cv, "", map[string]string{"token": memberVerify}, 400, `{"data":{"token":{"code":"validation_token_collection_mismatch","message":"The provided token is for different auth collection."}},` + bodyValidation},
		{"cv email changed", cv, "", map[string]string{"token": oldEmail}, 400, `{"data":{"token":{"code":"validation_token_email_mismatch","message":"The record email doesn't match with the requested token claims."}},` + bodyValidation},

		{"rpr password auth off", "/api/collections/nopass/request-password-reset", "", `{"email":"a@example.com"}`, 400, `{"data":{},"message":"The collection is not configured to allow password authentication.","status":400}`},
		{"rpr empty body", rpr, "", nil, 400, `{"data":{"email":` + errRequiredJSON + `},` + bodyValidation},
		{"rpr not an email", rpr, "", `{"email":"@example.com"}`, 400, `{"data":{"email":{"code":"validation_is_email","message":"Must be a valid email address."}},` + bodyValidation},
		{"rpr unknown collection", "/api/collections/nope/request-password-reset", "", `{"email":"a@example.com"}`, 404, `{"data":{},"message":"Missing or invalid collection context.","status":404}`},

		{"cpr empty body", cpr, "", nil, 400, `{"data":{"password":` + errRequiredJSON + `,"passwordConfirm":` + errRequiredJSON + `,"token":` + errRequiredJSON + `},` + bodyValidation},
		{"cpr short and mismatched", cpr, "", map[string]string{"token": verify, "password": "short", "passwordConfirm": "other"}, 400,
			`{"data":{"password":{"code":"validation_length_out_of_range","message":"The length must be between 8 and 255.","params":{"max":255,"min":8}},"passwordConfirm":{"code":"validation_values_mismatch","message":"Values don't match."},"token":` + errTokenJSON + `},` + bodyValidation},
		{"cpr other collection", cpr, "", map[string]string{"token": memberReset, "password": "password2", "passwordConfirm": "password2"}, 400,
			`{"data":{"token":{"code":"validation_token_collection_mismatch","message":"The provided token is for different auth collection."}},` + bodyValidation},
		{"cpr too long for the field", cpr, "", map[string]string{"token": reset, "password": strings.Repeat("p", 72), "passwordConfirm": strings.Repeat("p", 72)}, 400,
			`{"data":{"password":{"code":"validation_max_text_constraint","message":"Must be less than 71 character(s)."}},"message":"Failed to set new password.","status":400}`},
		{"cpr password not a string", cpr, "", `{"password":1}`, 400, `{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`},
		{"cpr password auth off is not checked", "/api/collections/nopass/confirm-password-reset", "", `{}`, 400,
			`{"data":{"password":` + errRequiredJSON + `,"passwordConfirm":` + errRequiredJSON + `,"token":` + errRequiredJSON + `},` + bodyValidation},

		{"rec unknown collection", "/api/collections/nope/request-email-change", userTok, `{"newEmail":"x@example.com"}`, 404, `{"data":{},"message":"Missing or invalid collection context.","status":404}`},
		{"rec no token", rec, "", `{"newEmail":"x@example.com"}`, 401, `{"data":{},"message":"The request requires valid record authorization token.","status":401}`},
		{"rec other collection's token", rec, e.su, `{"newEmail":"x@example.com"}`, 403, `{"data":{},"message":"The request requires auth record from _superusers collection.","status":403}`},
		{"rec superusers", "/api/collections/_superusers/request-email-change", e.su, `{"newEmail":"x@example.com"}`, 400, `{"data":{},"message":"All superusers can change their emails directly.","status":400}`},
		{"rec empty", rec, userTok, `{}`, 400, `{"data":{"newEmail":` + errRequiredJSON + `},` + bodyValidation},
		{"rec not an email", rec, userTok, `{"newEmail":"x"}`, 400, `{"data":{"newEmail":{"code":"validation_is_email","message":"Must be a valid email address."}},` + bodyValidation},
		{"rec same email", rec, userTok, `{"newEmail":"u1@example.com"}`, 400, `{"data":{"newEmail":{"code":"validation_not_in_invalid","message":"Must not be in list."}},` + bodyValidation},
		{"rec taken", rec, userTok, `{"newEmail":"u2@example.com"}`, 400, `{"data":{"newEmail":{"code":"validation_invalid_new_email","message":"Invalid new email address."}},` + bodyValidation},

		{"cec superusers", "/api/collections/_superusers/confirm-email-change", "", `{}`, 400, `{"data":{},"message":"All superusers can change their emails directly.","status":400}`},
		{"cec empty", cec, "", `{}`, 400, `{"data":{"password":` + errRequiredJSON + `,"token":` + errRequiredJSON + `},` + bodyValidation},
		{"cec no newEmail claim", cec, "", map[string]string{"token": verify, "password": "password1"}, 400,
			`{"data":{"password":{"code":"validation_invalid_password","message":"Missing or invalid auth record password."},"token":{"code":"validation_invalid_token_payload","message":"Invalid token payload - newEmail must be set."}},` + bodyValidation},
		{"cec new email taken", cec, "", map[string]string{"token": changeTaken, "password": "password1"}, 400,
			`{"data":{"password":{"code":"validation_invalid_password","message":"Missing or invalid auth record password."},"token":{"code":"validation_existing_token_email","message":"The new email address is already registered: u2@example.com."}},` + bodyValidation},
		{"cec other collection", cec, "", map[string]string{"token": memberChange, "password": "password1"}, 400,
			`{"data":{"password":{"code":"validation_invalid_password","message":"Missing or invalid auth record password."},"token":{"code":"validation_token_collection_mismatch","message":"The provided token is for different auth collection."}},` + bodyValidation},
		{"cec wrong password", cec, "", map[string]string{"token": change, "password": "password2"}, 400,
			`{"data":{"password":{"code":"validation_invalid_password","message":"Missing or invalid auth record password."}},` + bodyValidation},
		{"cec password too long", cec, "", map[string]string{"token": change, "password": strings.Repeat("p", 101)}, 400,
			`{"data":{"password":{"code":"validation_length_out_of_range","message":"The length must be between 1 and 100.","params":{"max":100,"min":1}}},` + bodyValidation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("POST", tt.path, tt.token, tt.body)
			wantBody(t, res, tt.status, tt.want)
			if ct := res.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
	noMail(t, fm)

	// Bodies in other content types: a form binds, an unknown type is
	// refused (wrapped as a loading error by confirm-password-reset only).
	res := e.doRaw("POST", rv, "", "text/plain", strings.NewReader("email=x"))
	wantError(t, res, 400, msgUnsupportedType)
	res = e.doRaw("POST", cpr, "", "text/plain", strings.NewReader("token=x"))
	wantError(t, res, 400, msgLoadFailed)
	res = e.doRaw("POST", rv, "", "application/x-www-form-urlencoded", strings.NewReader("email=u1%40example.com"))
	wantBody(t, res, 204, "")
	oneMail(t, fm, "u1@example.com")
}

// TestVerificationFlow: the mail, its token, no enumeration, the resend
// throttle and idempotent confirmation.
func TestVerificationFlow(t *testing.T) {
	t.Parallel()
	e, fm := flowEnv(t)
	id := e.signUp("u1@example.com", "password1")
	const rv, cv = "/api/collections/users/request-verification", "/api/collections/users/confirm-verification"

	wantBody(t, e.do("POST", rv, "", `{"email":"nobody@example.com"}`), 204, "")
	noMail(t, fm)
	wantBody(t, e.do("POST", rv, "", `{"email":"U1@example.com"}`), 204, "") // lookups are case-sensitive
	noMail(t, fm)

	wantBody(t, e.do("POST", rv, "", `{"email":"u1@example.com"}`), 204, "")
	m := oneMail(t, fm, "u1@example.com")
	if m.From.Name != "Support" || m.From.Address != "support@example.com" || m.Subject != "Verify your Acme email" {
		t.Errorf("mail from %v, subject %q", m.From, m.Subject)
	}
	if !strings.Contains(m.HTML, `href="http://localhost:8090/_/#/auth/confirm-verification/`) {
		t.Errorf("body %q has no verification link", m.HTML)
	}
	token := tokenIn(t, "confirm-verification", m.HTML)
	if c := claimsOf(t, token); c["type"] != "verification" || c["email"] != "u1@example.com" || c["id"] != id || c["collectionId"] != authn.UsersID {
		t.Errorf("claims = %v", c)
	}

	// Within two minutes no second mail; after them, one.
	e.clock.Add(119 * time.Second)
	wantBody(t, e.do("POST", rv, "", `{"email":"u1@example.com"}`), 204, "")
	noMail(t, fm)
	e.clock.Add(time.Second)
	wantBody(t, e.do("POST", rv, "", `{"email":"u1@example.com"}`), 204, "")
	oneMail(t, fm, "u1@example.com")

	wantBody(t, e.do("POST", cv, "", map[string]string{"token": token}), 204, "")
	users, _ := e.auth.Collection("users")
	if r, _ := e.auth.Record(users, id); !r.Verified {
		t.Error("record not verified")
	}
	// Idempotent, and a verified record gets no more mails.
	wantBody(t, e.do("POST", cv, "", map[string]string{"token": token}), 204, "")
	e.clock.Add(time.Hour)
	wantBody(t, e.do("POST", rv, "", `{"email":"u1@example.com"}`), 204, "")
	noMail(t, fm)
}

// TestVerificationTokenExpires with the collection's duration (3 days):
// the token confirms a second before its lifetime ends, and not once it
// has ended. Each case has its own server and injected clock.
func TestVerificationTokenExpires(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		after    time.Duration
		status   int
		wantBody string
	}{
		{"just before", 259199 * time.Second, 204, ""},
		{"at the end", 259200 * time.Second, 400, `{"data":{"token":` + errTokenJSON + `},` + bodyValidation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, fm := flowEnv(t)
			e.signUp("u1@example.com", "password1")
			e.do("POST", "/api/collections/users/request-verification", "", `{"email":"u1@example.com"}`)
			token := tokenIn(t, "confirm-verification", oneMail(t, fm, "u1@example.com").HTML)
			e.clock.Add(tc.after)
			wantBody(t, e.do("POST", "/api/collections/users/confirm-verification", "", map[string]string{"token": token}), tc.status, tc.wantBody)
		})
	}
}

// TestPasswordResetFlow: the reset sets the password, verifies, and ends
// every token of the record, the reset token included.
func TestPasswordResetFlow(t *testing.T) {
	t.Parallel()
	e, fm := flowEnv(t)
	id := e.signUp("u1@example.com", "password1")
	oldAuth := e.login("users", "u1@example.com", "password1")
	const rpr, cpr = "/api/collections/users/request-password-reset", "/api/collections/users/confirm-password-reset"

	wantBody(t, e.do("POST", rpr, "", `{"email":"nobody@example.com"}`), 204, "")
	noMail(t, fm)
	wantBody(t, e.do("POST", rpr, "", `{"email":"u1@example.com"}`), 204, "")
	m := oneMail(t, fm, "u1@example.com")
	if m.Subject != "Reset your Acme password" {
		t.Errorf("subject %q", m.Subject)
	}
	token := tokenIn(t, "confirm-password-reset", m.HTML)
	if c := claimsOf(t, token); c["type"] != "passwordReset" || c["email"] != "u1@example.com" || c["exp"] != float64(e.clock.Now().Unix()+1800) {
		t.Errorf("claims = %v", c)
	}
	// The throttle counts only sent mails.
	wantBody(t, e.do("POST", rpr, "", `{"email":"u1@example.com"}`), 204, "")
	noMail(t, fm)

	wantBody(t, e.do("POST", cpr, "", map[string]string{"token": token, "password": "new-password", "passwordConfirm": "new-password"}), 204, "")
	e.login("users", "u1@example.com", "new-password")
	users, _ := e.auth.Collection("users")
	if r, _ := e.auth.Record(users, id); !r.Verified {
		t.Error("record not verified by the reset")
	}
	wantError(t, e.do("POST", "/api/collections/users/auth-refresh", oldAuth, nil), 401, msgAuthRequired)
	// The token is used up.
	wantBody(t, e.do("POST", cpr, "", map[string]string{"token": token, "password": "other-password", "passwordConfirm": "other-password"}), 400,
		`{"data":{"token":`+errTokenJSON+`},`+bodyValidation)
}

// TestPasswordResetTokenExpires after the collection's 30 minutes: the
// token confirms a second before, and not once they have passed. Each
// case has its own server and injected clock, since a reset uses the
// token up.
func TestPasswordResetTokenExpires(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		after    time.Duration
		status   int
		wantBody string
	}{
		{"just before", 1799 * time.Second, 204, ""},
		{"at the end", 1800 * time.Second, 400, `{"data":{"token":` + errTokenJSON + `},` + bodyValidation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, fm := flowEnv(t)
			e.signUp("u1@example.com", "password1")
			e.do("POST", "/api/collections/users/request-password-reset", "", `{"email":"u1@example.com"}`)
			token := tokenIn(t, "confirm-password-reset", oneMail(t, fm, "u1@example.com").HTML)
			e.clock.Add(tc.after)
			wantBody(t, e.do("POST", "/api/collections/users/confirm-password-reset", "", map[string]string{"token": token, "password": "new-password", "passwordConfirm": "new-password"}), tc.status, tc.wantBody)
		})
	}
}

// TestEmailChangeFlow: the mail goes to the new address; confirming with
// the password sets the email, verifies, and ends every old token.
func TestEmailChangeFlow(t *testing.T) {
	t.Parallel()
	e, fm := flowEnv(t)
	id := e.signUp("u1@example.com", "password1")
	tok := e.login("users", "u1@example.com", "password1")
	const rec, cec = "/api/collections/users/request-email-change", "/api/collections/users/confirm-email-change"

	wantBody(t, e.do("POST", rec, tok, `{"newEmail":"new@example.com"}`), 204, "")
	m := oneMail(t, fm, "new@example.com")
	if m.Subject != "Confirm your Acme new email address" {
		t.Errorf("subject %q", m.Subject)
	}
	token := tokenIn(t, "confirm-email-change", m.HTML)
	if c := claimsOf(t, token); c["type"] != "emailChange" || c["email"] != "u1@example.com" || c["newEmail"] != "new@example.com" || c["exp"] != float64(e.clock.Now().Unix()+1800) {
		t.Errorf("claims = %v", c)
	}
	wantBody(t, e.do("POST", cec, "", map[string]string{"token": token, "password": "password1"}), 204, "")
	users, _ := e.auth.Collection("users")
	if r, _ := e.auth.Record(users, id); r.Email != "new@example.com" || !r.Verified {
		t.Errorf("record after change: email %q verified %v", r.Email, r.Verified)
	}
	e.login("users", "new@example.com", "password1")
	wantError(t, e.do("POST", "/api/collections/users/auth-refresh", tok, nil), 401, msgAuthRequired)
	// Used up: the new email is now the record's own. With no record from
	// the token, no password matches (as in PocketBase).
	wantBody(t, e.do("POST", cec, "", map[string]string{"token": token, "password": "password1"}), 400,
		`{"data":{"password":`+errInvalidPasswordJSON+`,"token":{"code":"validation_existing_token_email","message":"The new email address is already registered: new@example.com."}},`+bodyValidation)
}

// TestEmailChangeTokenDiesWithPasswordReset: a password reset rotates the
// token key, so a pending email change no longer confirms.
func TestEmailChangeTokenDiesWithPasswordReset(t *testing.T) {
	t.Parallel()
	e, fm := flowEnv(t)
	e.signUp("u1@example.com", "password1")
	tok := e.login("users", "u1@example.com", "password1")
	e.do("POST", "/api/collections/users/request-email-change", tok, `{"newEmail":"new@example.com"}`)
	change := tokenIn(t, "confirm-email-change", oneMail(t, fm, "new@example.com").HTML)
	e.do("POST", "/api/collections/users/request-password-reset", "", `{"email":"u1@example.com"}`)
	reset := tokenIn(t, "confirm-password-reset", oneMail(t, fm, "u1@example.com").HTML)
	wantBody(t, e.do("POST", "/api/collections/users/confirm-password-reset", "", map[string]string{"token": reset, "password": "new-password", "passwordConfirm": "new-password"}), 204, "")
	wantBody(t, e.do("POST", "/api/collections/users/confirm-email-change", "", map[string]string{"token": change, "password": "new-password"}), 400,
		`{"data":{"password":`+errInvalidPasswordJSON+`,"token":`+errTokenJSON+`},`+bodyValidation)
}

// TestEmailChangeSendFailure: the one mail sent before answering reports
// its failure.
func TestEmailChangeSendFailure(t *testing.T) {
	t.Parallel()
	e, fm := flowEnv(t)
	e.signUp("u1@example.com", "password1")
	tok := e.login("users", "u1@example.com", "password1")
	fm.err = errors.New("smtp: refused")
	wantError(t, e.do("POST", "/api/collections/users/request-email-change", tok, `{"newEmail":"new@example.com"}`), 400, "Failed to request email change.")
	// The others answer 204 whatever the transport says.
	wantBody(t, e.do("POST", "/api/collections/users/request-verification", "", `{"email":"u1@example.com"}`), 204, "")
	wantBody(t, e.do("POST", "/api/collections/users/request-password-reset", "", `{"email":"u1@example.com"}`), 204, "")
	fm.take()
	// A reset mail that failed does not hold back the next one.
	fm.err = nil
	wantBody(t, e.do("POST", "/api/collections/users/request-password-reset", "", `{"email":"u1@example.com"}`), 204, "")
	oneMail(t, fm, "u1@example.com")
}

// TestFlowMailTemplate: the collection's template, its placeholders, and
// record values HTML-escaped in the body.
func TestFlowMailTemplate(t *testing.T) {
	t.Parallel()
	e, fm := flowEnv(t)
	res := e.do("PATCH", "/api/collections/users", e.su, `{"verificationTemplate":{"subject":"Hi {RECORD:name} at {APP_NAME}","body":"<p>{RECORD:name} {RECORD:email} {RECORD:verified} {APP_URL} {TOKEN} {RECORD:tokenKey}</p>"}}`)
	if res.Status != 200 {
		t.Fatalf("patch template: %d %s", res.Status, res.Body)
	}
	res = e.do("POST", "/api/collections/users/records", "", map[string]string{"email": "u1@example.com", "password": "password1", "passwordConfirm": "password1", "name": `<b>"Tom" & {TOKEN}</b>`})
	if res.Status != 200 {
		t.Fatalf("sign up: %d %s", res.Status, res.Body)
	}
	e.do("POST", "/api/collections/users/request-verification", "", `{"email":"u1@example.com"}`)
	m := oneMail(t, fm, "u1@example.com")
	body := m.HTML
	if want := `Hi <b>"Tom" & {TOKEN}</b> at Acme`; m.Subject != want {
		t.Errorf("subject = %q, want %q", m.Subject, want)
	}
	// A value cannot add a header line.
	users, _ := e.auth.Collection("users")
	rec, _ := e.auth.FindByEmail(users, "u1@example.com")
	m = e.api.renderFlowMail(users, rec, authn.Template{Subject: "{APP_NAME}\r\nBcc: x@example.com {RECORD:id}"}, "t", "u1@example.com")
	if want := "Acme Bcc: x@example.com " + rec.ID; m.Subject != want {
		t.Errorf("subject = %q, want %q", m.Subject, want)
	}
	parts := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(body, "<p>"), "</p>"))
	want := []string{"&lt;b&gt;&#34;Tom&#34;", "&amp;", "{TOKEN}&lt;/b&gt;", "u1@example.com", "false", "http://localhost:8090"}
	if len(parts) != 8 || strings.Join(parts[:6], " ") != strings.Join(want, " ") || parts[7] != "{RECORD:tokenKey}" {
		t.Fatalf("body = %q", body)
	}
	if c := claimsOf(t, parts[6]); c["type"] != "verification" {
		t.Errorf("token in the body: claims %v", c)
	}
}

// TestFlowRateLimitTags: the routes carry PocketBase's tags.
func TestFlowRateLimitTags(t *testing.T) {
	t.Parallel()
	e, _ := flowEnv(t)
	res := e.do("PATCH", "/api/settings", e.su, `{"rateLimits":{"enabled":true,"rules":[{"label":"users:requestVerification","maxRequests":1,"duration":60},{"label":"*:confirmEmailChange","maxRequests":1,"duration":60}]}}`)
	if res.Status != 200 {
		t.Fatalf("patch settings: %d %s", res.Status, res.Body)
	}
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/api/collections/users/request-verification", 204},
		{"/api/collections/users/request-verification", 429},
		{"/api/collections/users/request-password-reset", 204},
		{"/api/collections/users/confirm-email-change", 400},
		{"/api/collections/users/confirm-email-change", 429},
	} {
		body := `{"email":"a@example.com"}`
		if res := e.do("POST", tt.path, "", body); res.Status != tt.status {
			t.Errorf("POST %s = %d %s, want %d", tt.path, res.Status, res.Body, tt.status)
		}
	}
}

// TestFlowWithoutMailer: with no mail transport the flows answer as usual.
func TestFlowWithoutMailer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.signUp("u1@example.com", "password1")
	tok := e.login("users", "u1@example.com", "password1")
	wantBody(t, e.do("POST", "/api/collections/users/request-verification", "", `{"email":"u1@example.com"}`), 204, "")
	wantBody(t, e.do("POST", "/api/collections/users/request-email-change", tok, `{"newEmail":"new@example.com"}`), 204, "")
}

// TestFlowStorageFull: a confirm the disk refuses answers 507 and changes
// nothing, so the same token works once there is space again.
func TestFlowStorageFull(t *testing.T) {
	t.Parallel()
	fm := &fakeMail{}
	fsys := journaltest.New()
	e := newEnvOn(t, Config{Mail: fm}, HTTPConfig{}, fsys)
	id := e.signUp("u1@example.com", "password1")
	tok := e.login("users", "u1@example.com", "password1")
	users, _ := e.auth.Collection("users")
	e.do("POST", "/api/collections/users/request-verification", "", `{"email":"u1@example.com"}`)
	verify := tokenIn(t, "confirm-verification", oneMail(t, fm, "u1@example.com").HTML)
	e.do("POST", "/api/collections/users/request-password-reset", "", `{"email":"u1@example.com"}`)
	reset := tokenIn(t, "confirm-password-reset", oneMail(t, fm, "u1@example.com").HTML)
	e.do("POST", "/api/collections/users/request-email-change", tok, `{"newEmail":"new@example.com"}`)
	change := tokenIn(t, "confirm-email-change", oneMail(t, fm, "new@example.com").HTML)

	confirms := []struct {
		path string
		body map[string]string
	}{
		{"/api/collections/users/confirm-verification", map[string]string{"token": verify}},
		{"/api/collections/users/confirm-password-reset", map[string]string{"token": reset, "password": "new-password", "passwordConfirm": "new-password"}},
		{"/api/collections/users/confirm-email-change", map[string]string{"token": change, "password": "password1"}},
	}
	fsys.SetFree(0)
	for _, c := range confirms {
		wantError(t, e.do("POST", c.path, "", c.body), 507, msgStorageFull)
	}
	if r, _ := e.auth.Record(users, id); r.Verified || r.Email != "u1@example.com" {
		t.Fatalf("record changed by refused confirms: %+v", r)
	}
	fsys.SetFree(-1)
	for _, c := range confirms[:2] {
		wantBody(t, e.do("POST", c.path, "", c.body), 204, "")
	}
	e.login("users", "u1@example.com", "new-password")
	// The reset rotated the token key: the pending email change is dead.
	wantBody(t, e.do("POST", confirms[2].path, "", map[string]string{"token": change, "password": "new-password"}), 400,
		`{"data":{"password":`+errInvalidPasswordJSON+`,"token":`+errTokenJSON+`},`+bodyValidation)
}
