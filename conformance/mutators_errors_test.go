package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The violations of the error envelope, the headers and the settings
// (errors.go, http.go, settings.go, and the file token of auth_tokens.go),
// committed by mutations in front of the real strongbox.

// everything selects every request.
func everything(*http.Request) bool { return true }

// editErrors rewrites strongbox's error answers (status 400 and over).
func editErrors(match func(*http.Request) bool, fn func(res *answered)) mutation {
	return edit(match, func(_ *http.Request, res *answered) {
		if res.status >= 400 {
			fn(res)
		}
	})
}

// refuseAs answers status with msg where strongbox refused with from.
func refuseAs(match func(*http.Request) bool, from, status int, msg string) mutation {
	return editErrors(match, func(res *answered) {
		if res.status == from {
			*res = *envelopeAnswer(status, msg)
		}
	})
}

// acceptAll answers 204 where strongbox refused with one of statuses.
func acceptAll(match func(*http.Request) bool, statuses ...int) mutation {
	return editErrors(match, func(res *answered) {
		for _, s := range statuses {
			if res.status == s {
				*res = *noContent()
			}
		}
	})
}

// unknownPath selects the paths no route of strongbox serves.
func unknownPath(r *http.Request) bool {
	for _, p := range []string{"/api/collections", "/api/logs", "/api/backups", "/api/settings", "/api/files", "/api/health",
		"/api/oauth2-redirect", "/api/realtime"} {
		if strings.HasPrefix(r.URL.Path, p) {
			return false
		}
	}
	return true
}

var (
	settingsAny    = under("", "/api/settings")
	testEmailRoute = route(http.MethodPost, "/api/settings/test/email")
	testS3Route    = route(http.MethodPost, pathTestS3)
)

var errorsMutators = []mutator{
	{"envelope-text-plain", []string{"ERR-001"}, editErrors(everything, func(res *answered) {
		res.header.Set("Content-Type", "text/plain; charset=utf-8")
	})},
	{"envelope-order", []string{"ERR-501"}, editErrors(everything, func(res *answered) {
		if m := res.object(); m != nil {
			data, _ := json.Marshal(m["data"])
			res.body = fmt.Appendf(nil, `{"status":%v,"message":%q,"data":%s}`, m["status"], m["message"], data)
		}
	})},
	{"unknown-post-file-message", []string{"ERR-002"}, refuseAs(both(unknownPath, under(http.MethodPost, "/")), 404, 404, "File not found.")},
	{"plain-text-404", []string{"ERR-004"}, editErrors(both(unknownPath, under(http.MethodGet, "/")), func(res *answered) {
		if res.status == 404 {
			res.header.Set("Content-Type", "text/plain; charset=utf-8")
			res.body = []byte("404 page not found\n")
		}
	})},
	{"no-security-headers", []string{"HTTP-HEADERS-001"}, edit(everything, func(_ *http.Request, res *answered) {
		for _, h := range securityHeaders {
			res.header.Del(h[0])
		}
	})},
	{"guest-file-token", []string{"AUTH-FILE-002"}, edit(route(http.MethodPost, "/api/files/token"), func(_ *http.Request, res *answered) {
		if res.status == 401 {
			*res = answered{status: 200, header: http.Header{}}
			res.setJSON(map[string]any{"token": ""})
		}
	})},
	{"settings-guest-403", []string{"SETTINGS-001"}, refuseAs(settingsAny, 401, 403, msgNotAllowed)},
	{"settings-for-users", []string{"SETTINGS-002"}, asSuperuser(both(settingsAny, func(r *http.Request) bool { return !testEmailRoute(r) }), 403)},
	{"settings-maxdays-string", []string{"SETTINGS-003"}, editObject(settingsAny, func(_ *http.Request, m map[string]any) {
		if logs, ok := m["logs"].(map[string]any); ok {
			logs["maxDays"] = fmt.Sprint(logs["maxDays"])
		}
	})},
	// A negative maxDays is taken, and the settings shown as they are.
	{"settings-accept-negative", []string{"SETTINGS-004"}, when(settingsPatch, func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		if res.status == 400 && bytes.Contains(res.body, []byte(`"maxDays"`)) {
			get := r.Clone(r.Context())
			get.Method, get.Body, get.GetBody, get.ContentLength = http.MethodGet, nil, nil, 0
			res = x.forward(get)
		}
		res.write(w)
	})},
	{"test-email-for-guests", []string{"SETTINGS-MAIL-001"}, acceptAll(testEmailRoute, 401)},
	{"test-email-for-users", []string{"SETTINGS-MAIL-002"}, acceptAll(testEmailRoute, 403)},
	{"test-email-accepts-blank", []string{"SETTINGS-MAIL-003"}, acceptAll(testEmailRoute, 400)},
	{"s3-secret-shown", []string{"SETTINGS-S3-001"}, editObject(route(http.MethodGet, "/api/settings"), func(_ *http.Request, m map[string]any) {
		if b, ok := m["backups"].(map[string]any); ok {
			if s3, ok := b["s3"].(map[string]any); ok {
				s3["secret"] = "leaked"
			}
		}
	})},
	{"s3-blank-bucket-accepted", []string{"SETTINGS-S3-002"}, acceptAll(route(http.MethodPatch, "/api/settings"), 400)},
	{"s3-test-for-anyone", []string{"SETTINGS-S3-003"}, acceptAll(testS3Route, 401, 403)},
	{"s3-test-accepts-blank", []string{"SETTINGS-S3-004"}, acceptAll(testS3Route, 400)},
}
