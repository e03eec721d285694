package api

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"strongbox/httpapi/ratelimit"
	"sync"
	"testing"
	"time"

	"strongbox/authn"
	"strongbox/authn/mail"
)

// otpMailbox is a mail.Sender that keeps what it is sent.
type otpMailbox struct {
	mu   sync.Mutex
	msgs []*mail.Message
	sent chan *mail.Message
}

func newOTPMailbox() *otpMailbox { return &otpMailbox{sent: make(chan *mail.Message, 100)} }

func (f *otpMailbox) Send(_ context.Context, m *mail.Message) error {
	f.mu.Lock()
	f.msgs = append(f.msgs, m)
	f.mu.Unlock()
	f.sent <- m
	return nil
}

// next waits (at most 10 s) for the next message.
func (f *otpMailbox) next(t testing.TB) *mail.Message {
	t.Helper()
	select {
	case m := <-f.sent:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no mail sent within 10 s")
		return nil
	}
}

// count returns how many messages were sent.
func (f *otpMailbox) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.msgs)
}

var codeRe = regexp.MustCompile(`<strong>([0-9]+)</strong>`)

// otpEnv is an env with a fake mail sender and OTP (and, with mfa, MFA)
// enabled on users, and one user.
func otpEnv(t *testing.T, mfa bool) (*env, *otpMailbox, string) {
	t.Helper()
	return otpEnvSeeded(t, mfa, nil)
}

// otpEnvSeeded is otpEnv with newEnvSeeded's seed.
func otpEnvSeeded(t *testing.T, mfa bool, seed func(t *testing.T, path string)) (*env, *otpMailbox, string) {
	t.Helper()
	return otpEnvConfig(t, Config{}, mfa, seed)
}

// otpEnvConfig is otpEnvSeeded with cfg (its Mail set to the mailbox).
func otpEnvConfig(t *testing.T, cfg Config, mfa bool, seed func(t *testing.T, path string)) (*env, *otpMailbox, string) {
	t.Helper()
	fm := newOTPMailbox()
	cfg.Mail = fm
	e := newEnvSeeded(t, cfg, HTTPConfig{}, nil, seed)
	body := `{"otp":{"enabled":true}}`
	if mfa {
		body = `{"otp":{"enabled":true},"mfa":{"enabled":true}}`
	}
	if res := e.do("PATCH", "/api/collections/users", e.su, body); res.Status != 200 {
		t.Fatalf("enable OTP: %d %s", res.Status, res.Body)
	}
	id := e.signUp("ann@example.com", "password1")
	return e, fm, id
}

// requestOTP asks for an OTP for email and returns its id and, read from
// the mail, its code.
func (e *env) requestOTP(fm *otpMailbox, col, email string) (id, code string) {
	e.t.Helper()
	res := e.do("POST", "/api/collections/"+col+"/request-otp", "", map[string]string{"email": email})
	if res.Status != 200 {
		e.t.Fatalf("request-otp %s: %d %s", email, res.Status, res.Body)
	}
	id = res.JSON(e.t)["otpId"].(string)
	m := fm.next(e.t)
	sub := codeRe.FindStringSubmatch(m.HTML)
	if sub == nil {
		e.t.Fatalf("no code in the mail %q", m.HTML)
	}
	return id, sub[1]
}

func TestRequestOTP(t *testing.T) {
	t.Parallel()
	e, fm, _ := otpEnvSeeded(t, false, withBaseCollection("posts"))
	tests := []struct {
		name, col, body string
		status          int
		want            string // exact body; "" = {"otpId": …}
	}{
		{"empty body", "users", `{}`, 400, `{"data":{"email":{"code":"validation_required","message":"Cannot be blank."}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"not an email", "users", `{"email":"not-an-email"}`, 400, `{"data":{"email":{"code":"validation_is_email","message":"Must be a valid email address."}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"too long", "users", `{"email":"` + strings.Repeat("a", 250) + `@example.com"}`, 400, `{"data":{"email":{"code":"validation_length_out_of_range","message":"The length must be between 1 and 255.","params":{"max":255,"min":1}}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"email not a string", "users", `{"email":1}`, 400, `{"data":{},"message":"An error occurred while loading the submitted data.","status":400}`},
		{"OTP off", "_superusers", `{"email":"ann@example.com"}`, 403, `{"data":{},"message":"The collection is not configured to allow OTP authentication.","status":403}`},
		{"no collection", "nope", `{"email":"ann@example.com"}`, 404, `{"data":{},"message":"Missing or invalid collection context.","status":404}`},
		{"base collection", "posts", `{"email":"ann@example.com"}`, 404, `{"data":{},"message":"Missing or invalid auth collection context.","status":404}`},
		{"unknown email", "users", `{"email":"nobody@example.com"}`, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do("POST", "/api/collections/"+tt.col+"/request-otp", "", tt.body)
			if tt.want != "" {
				wantBody(t, res, tt.status, tt.want)
				return
			}
			var got map[string]string
			if err := json.Unmarshal(res.Body, &got); err != nil || res.Status != 200 || len(got) != 1 || !authn.ValidID(got["otpId"]) {
				t.Errorf("got %d %s, want 200 {\"otpId\":<15 chars>}", res.Status, res.Body)
			}
		})
	}
	if n := fm.count(); n != 0 {
		t.Errorf("%d mails sent, want none (unknown email)", n)
	}
	// A known email: same shape, and the mail.
	res := e.do("POST", "/api/collections/users/request-otp", "", `{"email":"ann@example.com"}`)
	var got map[string]string
	if err := json.Unmarshal(res.Body, &got); err != nil || res.Status != 200 || len(got) != 1 || !authn.ValidID(got["otpId"]) {
		t.Fatalf("got %d %s, want 200 {\"otpId\":<15 chars>}", res.Status, res.Body)
	}
	m := fm.next(t)
	if len(m.To) != 1 || m.To[0].Address != "ann@example.com" || m.From.Address != "support@example.com" || m.From.Name != "Support" {
		t.Errorf("mail from %v to %v", m.From, m.To)
	}
	if m.Subject != "OTP for Acme" {
		t.Errorf("subject %q, want %q", m.Subject, "OTP for Acme")
	}
	if sub := codeRe.FindStringSubmatch(m.HTML); sub == nil || len(sub[1]) != 8 {
		t.Errorf("mail body %q: want an 8-digit code", m.HTML)
	}
}

// TestOTPMailTemplate: the collection's template, its placeholders
// filled, record values HTML-escaped in the body.
func TestOTPMailTemplate(t *testing.T) {
	t.Parallel()
	e, fm, id := otpEnv(t, false)
	if res := e.do("PATCH", "/api/collections/users/records/"+id, e.su, `{"name":"<Ann & co>\r\nBcc: x@example.com"}`); res.Status != 200 {
		t.Fatalf("set name: %d %s", res.Status, res.Body)
	}
	tmpl := `{"otp":{"length":6,"emailTemplate":{"subject":"{APP_NAME} code {RECORD:name}","body":"<b>{OTP}</b> {OTP_ID} {APP_URL} {RECORD:name} {RECORD:email} {RECORD:id}"}}}`
	if res := e.do("PATCH", "/api/collections/users", e.su, tmpl); res.Status != 200 {
		t.Fatalf("set template: %d %s", res.Status, res.Body)
	}
	res := e.do("POST", "/api/collections/users/request-otp", "", `{"email":"ann@example.com"}`)
	otpID := res.JSON(t)["otpId"].(string)
	m := fm.next(t)
	if m.Subject != "Acme code <Ann & co> Bcc: x@example.com" {
		t.Errorf("subject %q", m.Subject)
	}
	re := regexp.MustCompile(`^<b>([0-9]{6})</b> ` + otpID + ` http://localhost:8090 &lt;Ann &amp; co&gt;\r\nBcc: x@example.com ann@example.com ` + id + `$`)
	if !re.MatchString(m.HTML) {
		t.Errorf("body %q does not match %s", m.HTML, re)
	}
}

func TestAuthWithOTP(t *testing.T) {
	t.Parallel()
	e, fm, id := otpEnv(t, false)
	otpID, code := e.requestOTP(fm, "users", "ann@example.com")
	wrong := "00000000"
	if code == wrong {
		wrong = "11111111"
	}
	tests := []struct {
		name, col, body string
		status          int
		want            string
	}{
		{"empty body", "users", `{}`, 400, `{"data":{"otpId":{"code":"validation_required","message":"Cannot be blank."},"password":{"code":"validation_required","message":"Cannot be blank."}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"code too long", "users", `{"otpId":"x","password":"` + strings.Repeat("1", 72) + `"}`, 400, `{"data":{"password":{"code":"validation_length_out_of_range","message":"The length must be between 1 and 71.","params":{"max":71,"min":1}}},"message":"An error occurred while validating the submitted data.","status":400}`},
		{"OTP off", "_superusers", `{"otpId":"` + otpID + `","password":"` + code + `"}`, 403, `{"data":{},"message":"The collection is not configured to allow OTP authentication.","status":403}`},
		{"unknown id", "users", `{"otpId":"aaaaaaaaaaaaaaa","password":"` + code + `"}`, 400, `{"data":{},"message":"Invalid or expired OTP.","status":400}`},
		{"wrong code", "users", `{"otpId":"` + otpID + `","password":"` + wrong + `"}`, 400, `{"data":{},"message":"Invalid or expired OTP.","status":400}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantBody(t, e.do("POST", "/api/collections/"+tt.col+"/auth-with-otp", "", tt.body), tt.status, tt.want)
		})
	}
	if r, _ := e.auth.Record(mustCollection(t, e, "users"), id); r.Verified {
		t.Fatal("ann verified before any sign-in")
	}
	res := e.do("POST", "/api/collections/users/auth-with-otp", "", map[string]string{"otpId": otpID, "password": code})
	if res.Status != 200 {
		t.Fatalf("right code: %d %s", res.Status, res.Body)
	}
	m := res.JSON(t)
	rec, _ := m["record"].(map[string]any)
	if len(m) != 2 || m["token"] == "" || rec["id"] != id || rec["email"] != "ann@example.com" || rec["verified"] != true {
		t.Errorf("auth result %s: want token and ann's record, verified", res.Body)
	}
	if tok, _ := m["token"].(string); e.do("POST", "/api/collections/users/auth-refresh", tok, nil).Status != 200 {
		t.Errorf("the OTP token does not authenticate")
	}
	// Single use.
	res = e.do("POST", "/api/collections/users/auth-with-otp", "", map[string]string{"otpId": otpID, "password": code})
	wantError(t, res, 400, msgOTPInvalid)

	// Expired: otp.duration (180 s) after its creation.
	otpID, code = e.requestOTP(fm, "users", "ann@example.com")
	e.clock.Add(180 * time.Second)
	res = e.do("POST", "/api/collections/users/auth-with-otp", "", map[string]string{"otpId": otpID, "password": code})
	wantError(t, res, 400, msgOTPInvalid)

	// Deleted with its record.
	bob := e.signUp("bob@example.com", "password1")
	otpID, code = e.requestOTP(fm, "users", "bob@example.com")
	if res := e.do("DELETE", "/api/collections/users/records/"+bob, e.su, nil); res.Status != 204 {
		t.Fatalf("delete bob: %d %s", res.Status, res.Body)
	}
	res = e.do("POST", "/api/collections/users/auth-with-otp", "", map[string]string{"otpId": otpID, "password": code})
	wantError(t, res, 400, msgOTPInvalid)
}

func mustCollection(t *testing.T, e *env, name string) *authn.Collection {
	t.Helper()
	c, ok := e.auth.Collection(name)
	if !ok {
		t.Fatalf("no collection %s", name)
	}
	return c
}

// TestOTPAttemptLimit: 5 codes per 180 s for a record and client; the 6th
// is 429 even with the right code, the record's other OTPs share the
// count, another client is not held, and the window ends.
func TestOTPAttemptLimit(t *testing.T) {
	t.Parallel()
	e, fm, _ := otpEnv(t, false)
	e.trustProxy()
	otpID, code := e.requestOTP(fm, "users", "ann@example.com")
	other, _ := e.requestOTP(fm, "users", "ann@example.com")
	wrong := "00000000"
	if code == wrong {
		wrong = "11111111"
	}
	const ip = "198.51.100.7"
	path := "/api/collections/users/auth-with-otp"
	for i := range 5 {
		id := otpID
		if i%2 == 1 {
			id = other
		}
		res := e.doFrom(ip, "POST", path, "", map[string]string{"otpId": id, "password": wrong})
		wantError(t, res, 400, msgOTPInvalid)
	}
	res := e.doFrom(ip, "POST", path, "", map[string]string{"otpId": otpID, "password": code})
	wantBody(t, res, 429, `{"data":{},"message":"Too many attempts, please try again later with a new OTP.","status":429}`)
	if got := res.Header.Get("Retry-After"); got != "180" {
		t.Errorf("Retry-After = %q, want 180 (the window left)", got)
	}
	// An unknown OTP is refused before the limit: nothing to key it by.
	res = e.doFrom(ip, "POST", path, "", map[string]string{"otpId": "aaaaaaaaaaaaaaa", "password": code})
	wantError(t, res, 400, msgOTPInvalid)
	e.clock.Add(179 * time.Second)
	res = e.doFrom(ip, "POST", path, "", map[string]string{"otpId": otpID, "password": code})
	wantError(t, res, 429, msgOTPTooMany)
	if got := res.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q a second before the window ends, want 1", got)
	}
	// Another client of the same record is not held.
	res = e.doFrom("203.0.113.9", "POST", path, "", map[string]string{"otpId": otpID, "password": code})
	if res.Status != 200 {
		t.Errorf("another client with the right code: %d %s, want 200", res.Status, res.Body)
	}
}

// TestOTPAttemptsAcrossClients: an OTP dies after 5 wrong codes whoever
// sends them: wrong codes from 5 client addresses make the right code
// from a 6th answer 429, a wrong one too, while 4 leave it usable; a fresh
// OTP of the same record then signs in.
func TestOTPAttemptsAcrossClients(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		wrong      int    // wrong codes, each from an address of its own
		last       string // "right" or "wrong": the code sent after them
		wantStatus int
	}{
		{"4 wrong, then the right code", 4, "right", 200},
		{"5 wrong, then the right code", 5, "right", 429},
		{"5 wrong, then a wrong code", 5, "wrong", 429},
	}
	path := "/api/collections/users/auth-with-otp"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, fm, id := otpEnv(t, false)
			e.trustProxy()
			otpID, code := e.requestOTP(fm, "users", "ann@example.com")
			wrong := "00000000"
			if code == wrong {
				wrong = "11111111"
			}
			for i := range tt.wrong {
				res := e.doFrom(fmt.Sprintf("198.51.100.%d", i+1), "POST", path, "", map[string]string{"otpId": otpID, "password": wrong})
				wantError(t, res, 400, msgOTPInvalid)
			}
			last := map[string]string{"right": code, "wrong": wrong}[tt.last]
			res := e.doFrom("203.0.113.1", "POST", path, "", map[string]string{"otpId": otpID, "password": last})
			if tt.wantStatus == 429 {
				wantBody(t, res, 429, `{"data":{},"message":"Too many attempts, please try again later with a new OTP.","status":429}`)
			} else if res.Status != tt.wantStatus {
				t.Fatalf("after %d wrong codes: %d %s, want %d", tt.wrong, res.Status, res.Body, tt.wantStatus)
			}
			fresh, freshCode := e.requestOTP(fm, "users", "ann@example.com")
			res = e.doFrom("203.0.113.2", "POST", path, "", map[string]string{"otpId": fresh, "password": freshCode})
			if res.Status != 200 || res.JSON(t)["record"].(map[string]any)["id"] != id {
				t.Errorf("a fresh OTP: %d %s, want 200 for %s", res.Status, res.Body, id)
			}
		})
	}
}

// TestOTPLiveCap: the 11th request while 10 OTPs live gets the newest id
// again, and no mail. PocketBase's cap lies behind strongbox's per-target
// mail limit, which is lifted here.
func TestOTPLiveCap(t *testing.T) {
	t.Parallel()
	e, fm, _ := otpEnvConfig(t, Config{MailPerTarget: ratelimit.Rule{MaxRequests: 100, Duration: time.Minute}}, false, nil)
	var last string
	for range authn.MaxLiveOTPs {
		last, _ = e.requestOTP(fm, "users", "ann@example.com")
		e.clock.Add(time.Second)
	}
	res := e.do("POST", "/api/collections/users/request-otp", "", `{"email":"ann@example.com"}`)
	if got := res.JSON(t)["otpId"]; res.Status != 200 || got != last {
		t.Errorf("11th request: %d %s, want 200 with the 10th id %s", res.Status, res.Body, last)
	}
	if n := fm.count(); n != authn.MaxLiveOTPs {
		t.Errorf("%d mails, want %d", n, authn.MaxLiveOTPs)
	}
	// Once the oldest expire, new ones are issued again.
	e.clock.Add(175 * time.Second)
	if id, _ := e.requestOTP(fm, "users", "ann@example.com"); id == last {
		t.Errorf("after expiry the id was reused")
	}

	// An unknown address answers alike, or the repeated id would tell
	// that ann exists.
	ask := func() string {
		t.Helper()
		res := e.do("POST", "/api/collections/users/request-otp", "", `{"email":"nobody@example.com"}`)
		if res.Status != 200 {
			t.Fatalf("unknown email: %d %s", res.Status, res.Body)
		}
		return res.JSON(t)["otpId"].(string)
	}
	seen := map[string]bool{}
	for range authn.MaxLiveOTPs {
		last = ask()
		if seen[last] {
			t.Fatalf("unknown email: id %s answered twice under the cap", last)
		}
		seen[last] = true
		e.clock.Add(time.Second)
	}
	if id := ask(); id != last {
		t.Errorf("unknown email, 11th request: %s, want the 10th id %s again", id, last)
	}
	e.clock.Add(175 * time.Second)
	if id := ask(); seen[id] {
		t.Errorf("unknown email after expiry: an old id again")
	}
}

// TestMFA walks the two-factor flows of §5.6 on users with password and
// OTP.
func TestMFA(t *testing.T) {
	t.Parallel()
	e, fm, id := otpEnv(t, true)
	mfaRe := regexp.MustCompile(`^\{"mfaId":"([a-z0-9]{15})"\}$`)
	password := func(mfaID string, inBody bool) *response {
		body := map[string]string{"identity": "ann@example.com", "password": "password1"}
		path := "/api/collections/users/auth-with-password"
		if inBody && mfaID != "" {
			body["mfaId"] = mfaID
		} else if mfaID != "" {
			path += "?mfaId=" + mfaID
		}
		return e.do("POST", path, "", body)
	}
	otp := func(mfaID string) *response {
		otpID, code := e.requestOTP(fm, "users", "ann@example.com")
		path := "/api/collections/users/auth-with-otp"
		if mfaID != "" {
			path += "?mfaId=" + mfaID
		}
		return e.do("POST", path, "", map[string]string{"otpId": otpID, "password": code})
	}
	first := func(res *response) string {
		t.Helper()
		sub := mfaRe.FindStringSubmatch(strings.TrimSpace(string(res.Body)))
		if res.Status != 401 || sub == nil {
			t.Fatalf("first factor: %d %s, want 401 {\"mfaId\":…}", res.Status, res.Body)
		}
		return sub[1]
	}
	success := func(name string, res *response) {
		t.Helper()
		m := res.JSON(t)
		if rec, _ := m["record"].(map[string]any); res.Status != 200 || m["token"] == nil || rec["id"] != id {
			t.Errorf("%s: %d %s, want 200 with ann's token", name, res.Status, res.Body)
		}
	}

	// ?fields= prunes successes only: the challenge keeps its mfaId.
	first(e.do("POST", "/api/collections/users/auth-with-password?fields=token", "", map[string]string{"identity": "ann@example.com", "password": "password1"}))

	mfa := first(password("", false))
	success("password then OTP", otp(mfa))
	wantError(t, otp(mfa), 400, msgMFAInvalid) // single use

	mfa = first(otp(""))
	success("OTP then password (mfaId in the body)", password(mfa, true))

	mfa = first(password("", false))
	wantError(t, password(mfa, false), 400, msgMFASameMethod)
	success("the session survives a same-method try", otp(mfa))

	wantError(t, password("aaaaaaaaaaaaaaa", false), 400, msgMFAInvalid)

	mfa = first(password("", false))
	e.clock.Add(1800 * time.Second)
	wantError(t, otp(mfa), 400, msgMFAInvalid)

	e.signUp("bob@example.com", "password1")
	res := e.do("POST", "/api/collections/users/auth-with-password", "", map[string]string{"identity": "bob@example.com", "password": "password1"})
	wantError(t, otp(first(res)), 400, msgMFAOtherRecord)

	// A wrong password with a valid session is still a wrong password.
	mfa = first(otp(""))
	res = e.do("POST", "/api/collections/users/auth-with-password?mfaId="+mfa, "", map[string]string{"identity": "ann@example.com", "password": "wrong-pass"})
	wantError(t, res, 400, msgAuthFailed)

	// Not applied to refresh or impersonation.
	tok := password(mfa, false).JSON(t)["token"].(string)
	if res := e.do("POST", "/api/collections/users/auth-refresh", tok, nil); res.Status != 200 {
		t.Errorf("refresh on an MFA collection: %d %s", res.Status, res.Body)
	}
	if res := e.do("POST", "/api/collections/users/impersonate/"+id, e.su, nil); res.Status != 200 {
		t.Errorf("impersonate on an MFA collection: %d %s", res.Status, res.Body)
	}
}

// TestSuperusersOTPIsSecondFactor: with OTP on _superusers, an emailed
// code alone never yields a superuser token.
func TestSuperusersOTPIsSecondFactor(t *testing.T) {
	t.Parallel()
	fm := newOTPMailbox()
	e := newEnvWith(t, Config{Mail: fm}, HTTPConfig{})
	if res := e.do("PATCH", "/api/collections/_superusers", e.su, `{"otp":{"enabled":true}}`); res.Status != 200 {
		t.Fatalf("enable OTP: %d %s", res.Status, res.Body)
	}
	otpID, code := e.requestOTP(fm, "_superusers", suEmail)
	res := e.do("POST", "/api/collections/_superusers/auth-with-otp", "", map[string]string{"otpId": otpID, "password": code})
	if res.Status != 401 || strings.Contains(string(res.Body), "token") {
		t.Fatalf("OTP alone on _superusers: %d %s, want the 401 MFA challenge", res.Status, res.Body)
	}
	mfa := res.JSON(t)["mfaId"].(string)
	res = e.do("POST", "/api/collections/_superusers/auth-with-password?mfaId="+mfa, "", map[string]string{"identity": suEmail, "password": suPassword})
	if res.Status != 200 {
		t.Errorf("OTP then password: %d %s", res.Status, res.Body)
	}
}
