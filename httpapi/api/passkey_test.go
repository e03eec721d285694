package api

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"strongbox/authn/webauthn"
	"strongbox/authn/webauthntest"
)

const passkeyAppURL = "http://localhost:8090"

var apiRP = webauthn.RelyingParty{ID: "localhost", Origin: passkeyAppURL}

// passkeyEnv is an env whose users collection (with body's options)
// allows passkeys, with meta.appURL set, and one user signed in.
func passkeyEnv(t *testing.T, body string) (e *env, token, id string) {
	t.Helper()
	e = newEnv(t)
	if res := e.do("PATCH", "/api/settings", e.su, `{"meta":{"appURL":"`+passkeyAppURL+`"}}`); res.Status != 200 {
		t.Fatalf("set appURL: %d %s", res.Status, res.Body)
	}
	if res := e.do("PATCH", "/api/collections/users", e.su, body); res.Status != 200 {
		t.Fatalf("enable passkeys: %d %s", res.Status, res.Body)
	}
	id = e.signUp("ann@example.com", "password123")
	return e, e.login("users", "ann@example.com", "password123"), id
}

type optionsAnswer struct {
	ChallengeID string          `json:"challengeId"`
	PublicKey   json.RawMessage `json:"publicKey"`
}

func passkeyOptions(t *testing.T, res *response) (string, map[string]any, []byte) {
	t.Helper()
	if res.Status != 200 {
		t.Fatalf("options: %d %s", res.Status, res.Body)
	}
	var o optionsAnswer
	if err := json.Unmarshal(res.Body, &o); err != nil || o.ChallengeID == "" {
		t.Fatalf("options %s: %v", res.Body, err)
	}
	var pk map[string]any
	json.Unmarshal(o.PublicKey, &pk)
	ch, err := base64.RawURLEncoding.DecodeString(pk["challenge"].(string))
	if err != nil || len(ch) != 32 {
		t.Fatalf("challenge %v: want 32 bytes of unpadded base64url", pk["challenge"])
	}
	return o.ChallengeID, pk, ch
}

// registerAPI registers a new passkey of alg for the token's record.
func registerAPI(t *testing.T, e *env, token string, alg int) *webauthntest.Authenticator {
	t.Helper()
	a, err := webauthntest.New(alg, apiRP)
	if err != nil {
		t.Fatal(err)
	}
	id, pk, ch := passkeyOptions(t, e.do("POST", "/api/collections/users/passkeys/register/options", token, nil))
	user := pk["user"].(map[string]any)
	handle, _ := base64.RawURLEncoding.DecodeString(user["id"].(string))
	res := e.do("POST", "/api/collections/users/passkeys/register", token,
		`{"challengeId":"`+id+`","name":"my key","credential":`+string(a.Register(ch, handle))+`}`)
	if res.Status != 200 {
		t.Fatalf("register: %d %s", res.Status, res.Body)
	}
	m := res.JSON(t)
	if m["name"] != "my key" || m["id"] == "" || m["created"] == "" || len(m) != 3 {
		t.Fatalf("register = %s, want {id, name, created}", res.Body)
	}
	return a
}

func signInBody(id string, cred []byte) string {
	return `{"challengeId":"` + id + `","credential":` + string(cred) + `}`
}

func TestPasskeyRoutes(t *testing.T) {
	e, token, recID := passkeyEnv(t, `{"passkey":{"enabled":true}}`)
	if m := e.do("GET", "/api/collections/users/auth-methods", "", nil).JSON(t); m["passkey"].(map[string]any)["enabled"] != true {
		t.Fatalf("auth-methods passkey = %v, want enabled", m["passkey"])
	}
	for _, alg := range []int{webauthn.AlgES256, webauthn.AlgEdDSA} {
		a := registerAPI(t, e, token, alg)
		// Usernameless sign-in, then the same answer again (replay).
		id, pk, ch := passkeyOptions(t, e.do("POST", "/api/collections/users/auth-with-passkey/options", "", `{}`))
		if pk["rpId"] != "localhost" || len(pk["allowCredentials"].([]any)) != 0 || pk["userVerification"] != "preferred" {
			t.Fatalf("request options = %v", pk)
		}
		body := signInBody(id, a.Assert(ch))
		res := e.do("POST", "/api/collections/users/auth-with-passkey", "", body)
		if res.Status != 200 {
			t.Fatalf("auth-with-passkey: %d %s", res.Status, res.Body)
		}
		m := res.JSON(t)
		if m["record"].(map[string]any)["id"] != recID || m["token"] == "" {
			t.Fatalf("auth-with-passkey = %s", res.Body)
		}
		if r := e.do("POST", "/api/collections/users/auth-refresh", m["token"].(string), nil); r.Status != 200 {
			t.Fatalf("auth-refresh with the passkey's token: %d %s", r.Status, r.Body)
		}
		wantError(t, e.do("POST", "/api/collections/users/auth-with-passkey", "", body), 400, msgPasskeyChallenge)
	}
	a := registerAPI(t, e, token, webauthn.AlgES256)
	// One sign-in, so that the stored counter is not 0 (0 twice means no
	// counter).
	id, _, ch := passkeyOptions(t, e.do("POST", "/api/collections/users/auth-with-passkey/options", "", `{}`))
	if res := e.do("POST", "/api/collections/users/auth-with-passkey", "", signInBody(id, a.Assert(ch))); res.Status != 200 {
		t.Fatalf("auth-with-passkey: %d %s", res.Status, res.Body)
	}
	refusals := []struct {
		name  string
		spoil func()
	}{
		{"tampered signature", func() { a.TamperSignature = true }},
		{"wrong origin", func() { a.Origin = "http://localhost:9999" }},
		{"wrong rpId hash", func() { a.RPID = "example.com" }},
		{"counter not increasing", func() { a.Counter, a.CounterStep = 1, 0 }}, // the stored counter is 1
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			saved := *a
			defer func() { *a = saved }()
			tt.spoil()
			id, _, ch := passkeyOptions(t, e.do("POST", "/api/collections/users/auth-with-passkey/options", "", `{"identity":"ann@example.com"}`))
			wantError(t, e.do("POST", "/api/collections/users/auth-with-passkey", "", signInBody(id, a.Assert(ch))), 400, msgPasskeyInvalid)
		})
	}
	// The list, then a deletion.
	res := e.do("GET", "/api/collections/users/passkeys", token, nil)
	var list []passkeyView
	if err := json.Unmarshal(res.Body, &list); err != nil || res.Status != 200 || len(list) != 3 {
		t.Fatalf("list: %d %s", res.Status, res.Body)
	}
	if res := e.do("GET", "/api/collections/users/passkeys", "", nil); res.Status != 401 {
		t.Fatalf("list without a token: %d %s", res.Status, res.Body)
	}
	if res := e.do("DELETE", "/api/collections/users/passkeys/"+list[0].ID, token, nil); res.Status != 204 {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	wantError(t, e.do("DELETE", "/api/collections/users/passkeys/"+list[0].ID, token, nil), 404, msgNotFound)
}

func TestPasskeyRouteErrors(t *testing.T) {
	e, token, _ := passkeyEnv(t, `{"passkey":{"enabled":false}}`)
	wantError(t, e.do("POST", "/api/collections/users/auth-with-passkey/options", "", `{}`), 403, msgPasskeyOff)
	wantError(t, e.do("POST", "/api/collections/users/passkeys/register/options", token, nil), 403, msgPasskeyOff)
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"passkey":{"enabled":true}}`); res.Status != 200 {
		t.Fatal(res.Status)
	}
	wantError(t, e.do("POST", "/api/collections/users/passkeys/register/options", "", nil), 401, msgAuthRequired)
	res := e.do("POST", "/api/collections/users/auth-with-passkey", "", `{}`)
	if res.Status != 400 || !strings.Contains(string(res.Body), `"challengeId":{"code":"validation_required"`) || !strings.Contains(string(res.Body), `"credential":{"code":"validation_required"`) {
		t.Fatalf("empty sign-in: %d %s", res.Status, res.Body)
	}
	res = e.do("POST", "/api/collections/users/auth-with-passkey", "", `{"challengeId":"x","credential":{"id":"AQ","rawId":"AQ","type":"public-key","response":{}}}`)
	if res.Status != 400 || !strings.Contains(string(res.Body), `"credential":{"code":"validation_invalid_value"`) {
		t.Fatalf("bad credential: %d %s", res.Status, res.Body)
	}
	a, _ := webauthntest.New(webauthn.AlgES256, apiRP)
	wantError(t, e.do("POST", "/api/collections/users/auth-with-passkey", "", signInBody("nosuch", a.Assert(make([]byte, 32)))), 400, msgPasskeyChallenge)
	// An IP address as the app URL: a 400 naming the setting.
	if res := e.do("PATCH", "/api/settings", e.su, `{"meta":{"appURL":"http://127.0.0.1:8090"}}`); res.Status != 200 {
		t.Fatal(res.Status)
	}
	wantError(t, e.do("POST", "/api/collections/users/auth-with-passkey/options", "", `{}`), 400, msgPasskeyAppURL)
	if !strings.Contains(msgPasskeyAppURL, "meta.appURL") {
		t.Error("the message does not name the setting")
	}
}

// With MFA on, a passkey is one method: it answers 401 {"mfaId"}, and a
// password completes the sign-in.
func TestPasskeyMFARoute(t *testing.T) {
	e, token, recID := passkeyEnv(t, `{"passkey":{"enabled":true}}`)
	a := registerAPI(t, e, token, webauthn.AlgES256)
	if res := e.do("PATCH", "/api/collections/users", e.su, `{"mfa":{"enabled":true}}`); res.Status != 200 {
		t.Fatalf("enable MFA: %d %s", res.Status, res.Body)
	}
	id, _, ch := passkeyOptions(t, e.do("POST", "/api/collections/users/auth-with-passkey/options", "", `{}`))
	res := e.do("POST", "/api/collections/users/auth-with-passkey", "", signInBody(id, a.Assert(ch)))
	m := res.JSON(t)
	if res.Status != 401 || len(m) != 1 || m["mfaId"] == "" {
		t.Fatalf("passkey with MFA: %d %s, want 401 {mfaId}", res.Status, res.Body)
	}
	mfaID := m["mfaId"].(string)
	// A second passkey sign-in is the same method.
	id, _, ch = passkeyOptions(t, e.do("POST", "/api/collections/users/auth-with-passkey/options", "", `{}`))
	wantError(t, e.do("POST", "/api/collections/users/auth-with-passkey?mfaId="+mfaID, "", signInBody(id, a.Assert(ch))), 400, msgMFASameMethod)
	res = e.do("POST", "/api/collections/users/auth-with-password?mfaId="+mfaID, "", `{"identity":"ann@example.com","password":"password123"}`)
	if res.Status != 200 || res.JSON(t)["record"].(map[string]any)["id"] != recID {
		t.Fatalf("password after passkey: %d %s", res.Status, res.Body)
	}
}
