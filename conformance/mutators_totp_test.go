package conformance

import (
	"net/http"
	"regexp"
	"sync"
)

// The violations of authenticator-app sign-in (totp.go), committed by
// mutations in front of the real strongbox.

// totpRoute selects one of users' TOTP routes (suffix: "totp/setup",
// "auth-with-totp", …).
func totpRoute(suffix string) func(*http.Request) bool {
	return route(http.MethodPost, "/api/collections/users/"+suffix)
}

var reIssuer = regexp.MustCompile(`&?issuer=[^&]*`)

// acceptReplays answers every auth-with-totp that strongbox refuses as an
// invalid code with the last sign-in it completed: a server that accepts
// a code (or recovery code) twice.
func acceptReplays() mutation {
	var mu sync.Mutex
	var last *answered
	return edit(totpRoute("auth-with-totp"), func(_ *http.Request, res *answered) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case res.status == http.StatusOK:
			last = res
		case refusedWith(res, http.StatusBadRequest, msgTOTPInvalid) && last != nil:
			*res = *last
		}
	})
}

var totpMutators = []mutator{
	{"totp-not-in-auth-methods", []string{"TOTP-001"}, editObject(route(http.MethodGet, "/api/collections/users/auth-methods"), func(_ *http.Request, m map[string]any) {
		delete(m, "totp")
	})},
	{"totp-uri-without-issuer", []string{"TOTP-001"}, editObject(totpRoute("totp/setup"), func(_ *http.Request, m map[string]any) {
		if uri, ok := m["uri"].(string); ok {
			m["uri"] = reIssuer.ReplaceAllString(uri, "")
		}
	})},
	{"totp-nine-recovery-codes", []string{"TOTP-002"}, editObject(totpRoute("totp/confirm"), func(_ *http.Request, m map[string]any) {
		if list, ok := m["recoveryCodes"].([]any); ok && len(list) > 0 {
			m["recoveryCodes"] = list[1:]
		}
	})},
	{"totp-second-factor-skipped", []string{"TOTP-003"}, edit(loginRoute, func(_ *http.Request, res *answered) {
		if m := res.object(); res.status == http.StatusUnauthorized && m["mfaId"] != nil {
			res.status = http.StatusOK
			res.setJSON(map[string]any{"record": map[string]any{}, "token": "skipped"})
		}
	})},
	{"totp-result-without-record", []string{"TOTP-004"}, editObject(totpRoute("auth-with-totp"), func(_ *http.Request, m map[string]any) {
		delete(m, "record")
	})},
	{"totp-replays-accepted", []string{"TOTP-005", "TOTP-006", "TOTP-007"}, acceptReplays()},
	{"totp-no-session-cap", []string{"TOTP-007"}, reword(totpRoute("auth-with-totp"), http.StatusTooManyRequests, msgTOTPTooMany, http.StatusBadRequest, msgTOTPInvalid)},
	{"totp-disable-ignored", []string{"TOTP-008"}, answer(totpRoute("totp/disable"), &answered{status: http.StatusNoContent, header: http.Header{}})},
}
