package conformance

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// The violations of passkeys (passkeys.go), committed by mutations in
// front of the real strongbox.

var (
	passkeyRegisterOptions = route(http.MethodPost, "/api/collections/users/passkeys/register/options")
	passkeyList            = route(http.MethodGet, "/api/collections/users/passkeys")
	passkeyDelete          = under(http.MethodDelete, "/api/collections/users/passkeys/")
	passkeyOptionsRoute    = route(http.MethodPost, "/api/collections/users/auth-with-passkey/options")
	passkeySignInRoute     = route(http.MethodPost, "/api/collections/users/auth-with-passkey")
)

// forgedSignIn is an auth result a server that accepted a bad sign-in
// would answer.
func forgedSignIn() *answered {
	return &answered{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}},
		body: []byte(`{"record":{"id":"cfforged","collectionName":"users"},"token":"forged"}`)}
}

// signInOrigin returns the origin in the client data of a sign-in.
func signInOrigin(r *http.Request) string {
	m := bodyJSON(r)
	cred, _ := m["credential"].(map[string]any)
	resp, _ := cred["response"].(map[string]any)
	s, _ := resp["clientDataJSON"].(string)
	b, _ := base64.RawURLEncoding.DecodeString(s)
	var cd struct{ Origin string }
	json.Unmarshal(b, &cd)
	return cd.Origin
}

// acceptSignIn answers the forged auth result where strongbox refused a
// sign-in that pred selects with 400 "Invalid passkey.".
func acceptSignIn(pred func(r *http.Request) bool) mutation {
	return edit(passkeySignInRoute, func(r *http.Request, res *answered) {
		if refusedWith(res, 400, msgPasskeyInvalid) && pred(r) {
			*res = *forgedSignIn()
		}
	})
}

// replayAccepted answers a sign-in sent again with the answer of its
// first, successful sending: a server that does not use challenges up.
func replayAccepted() mutation {
	var mu sync.Mutex
	seen := map[string]*answered{}
	return when(passkeySignInRoute, func(x *front, w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(bodyJSON(r))
		mu.Lock()
		old := seen[string(b)]
		mu.Unlock()
		if old != nil {
			old.write(w)
			return
		}
		res := x.forward(r)
		if res.status == http.StatusOK {
			mu.Lock()
			seen[string(b)] = res
			mu.Unlock()
		}
		res.write(w)
	})
}

var passkeyMutators = []mutator{
	{"passkey-options-without-rp", []string{"PSK-001"}, editObject(passkeyRegisterOptions, func(_ *http.Request, m map[string]any) {
		if pk, ok := m["publicKey"].(map[string]any); ok {
			delete(pk, "rp")
		}
	})},
	{"passkey-list-empty", []string{"PSK-002"}, edit(passkeyList, func(_ *http.Request, res *answered) {
		if res.status == http.StatusOK {
			res.setJSON([]any{})
		}
	})},
	{"passkey-sign-in-refused", []string{"PSK-003"}, answer(passkeySignInRoute, envelopeAnswer(400, msgPasskeyInvalid))},
	{"passkey-challenge-replayable", []string{"PSK-004"}, replayAccepted()},
	{"passkey-signature-unchecked", []string{"PSK-005"}, acceptSignIn(func(r *http.Request) bool { return signInOrigin(r) != passkeyEvilOrigin })},
	{"passkey-origin-unchecked", []string{"PSK-006"}, acceptSignIn(func(r *http.Request) bool { return signInOrigin(r) == passkeyEvilOrigin })},
	{"passkey-delete-ignored", []string{"PSK-007"}, answer(passkeyDelete, &answered{status: http.StatusNoContent, header: http.Header{}})},
	{"passkey-options-enumerate", []string{"PSK-008"}, editObject(passkeyOptionsRoute, func(r *http.Request, m map[string]any) {
		if id, _ := bodyJSON(r)["identity"].(string); strings.HasPrefix(id, passkeyNobody) {
			if pk, ok := m["publicKey"].(map[string]any); ok {
				pk["allowCredentials"] = []any{}
			}
		}
	})},
}
