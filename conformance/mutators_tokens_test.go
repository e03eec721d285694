package conformance

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// The violations of tokens, impersonation and auth-methods
// (auth_tokens.go, auth_methods.go) that need no token of the fake's own
// making, committed by mutations in front of the real strongbox.

var (
	reRefresh     = regexp.MustCompile(`^/api/collections/([^/]+)/auth-refresh$`)
	reImpersonate = regexp.MustCompile(`^/api/collections/[^/]+/impersonate/[^/]+$`)
	reMethods     = regexp.MustCompile(`^/api/collections/([^/]+)/auth-methods$`)
)

func refreshRoute(r *http.Request) bool     { return reRefresh.MatchString(r.URL.Path) }
func impersonateRoute(r *http.Request) bool { return reImpersonate.MatchString(r.URL.Path) }
func methodsRoute(r *http.Request) bool     { return reMethods.MatchString(r.URL.Path) }

// editHeader rewrites the Authorization header of every request.
func editHeader(fn func(auth string) string) mutation {
	return rewrite(everything, func(r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			r.Header.Set("Authorization", fn(a))
		}
	})
}

// editImpersonation rewrites the bodies of impersonate requests.
func editImpersonation(fn func(body map[string]any)) mutation {
	return rewrite(impersonateRoute, func(r *http.Request) {
		if m := bodyJSON(r); m != nil {
			fn(m)
			setBody(r, m)
		}
	})
}

// editMethods rewrites the descriptors auth-methods answers.
func editMethods(fn func(r *http.Request, m map[string]any)) mutation {
	return editObject(methodsRoute, fn)
}

var tokensMutators = []mutator{
	{"refresh-empty-token", []string{"AUTH-REFRESH-001"}, editObject(refreshRoute, func(_ *http.Request, m map[string]any) {
		if _, ok := m["token"]; ok {
			m["token"] = ""
		}
	})},
	// "Bearer <token>" is not understood.
	{"no-bearer", []string{"AUTH-REFRESH-002"}, editHeader(func(a string) string {
		if strings.HasPrefix(a, "Bearer ") {
			return "Bearer"
		}
		return a
	})},
	{"guest-refresh-400", []string{"AUTH-REFRESH-003"}, refuseAs(both(refreshRoute, guest), 401, 400, msgFailedAuth)},
	{"bad-token-400", []string{"AUTH-REFRESH-004"}, refuseAs(both(refreshRoute, func(r *http.Request) bool { return !guest(r) }),
		401, 400, msgGenericBad)},
	// The message names the collection of the path, not the token's.
	{"refresh-cross-collection", []string{"AUTH-REFRESH-005"}, edit(refreshRoute, func(r *http.Request, res *answered) {
		if res.status == 403 {
			*res = *envelopeAnswer(403, "The request requires auth record from "+reRefresh.FindStringSubmatch(r.URL.Path)[1]+" collection.")
		}
	})},
	// Any scheme is taken as "Bearer".
	{"any-scheme", []string{"AUTH-REFRESH-009"}, editHeader(func(a string) string {
		if _, tok, ok := strings.Cut(a, " "); ok {
			return tok
		}
		return a
	})},
	// The scheme is matched in any case.
	{"bearer-any-case", []string{"AUTH-REFRESH-509"}, editHeader(func(a string) string {
		if tok, ok := strings.CutPrefix(a, "bearer "); ok {
			return "Bearer " + tok
		}
		return a
	})},
	{"impersonate-guest-403", []string{"AUTH-IMP-005"}, refuseAs(impersonateRoute, 401, 403, msgNotAllowed)},
	{"users-impersonateRoute", []string{"AUTH-IMP-004"}, asSuperuser(impersonateRoute, 403)},
	{"impersonate-collection-message", []string{"AUTH-IMP-007"}, reword(impersonateRoute, 404, msgNoAuthColl, 404, msgNoCollection)},
	{"impersonate-unknown-message", []string{"AUTH-IMP-006"}, reword(impersonateRoute, 404, msgNotFound, 404, msgNoAuthColl)},
	{"impersonate-negative-ok", []string{"AUTH-IMP-003"}, editImpersonation(func(b map[string]any) {
		if d, _ := b["duration"].(float64); d < 0 {
			b["duration"] = 0
		}
	})},
	{"impersonate-ignore-duration", []string{"AUTH-IMP-002"}, editImpersonation(func(b map[string]any) { delete(b, "duration") })},
	// The file token is the auth token it was asked with.
	{"file-token-type-auth", []string{"AUTH-FILE-001"}, editObject(route(http.MethodPost, "/api/files/token"),
		func(r *http.Request, m map[string]any) {
			if _, ok := m["token"]; ok {
				m["token"] = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			}
		})},
	{"methods-no-mfa", []string{"AUTH-METHODS-001", "AUTH-METHODS-002"}, editMethods(func(_ *http.Request, m map[string]any) {
		delete(m, "mfa")
	})},
	{"superusers-oauth2-listed", []string{"AUTH-METHODS-002"}, editMethods(func(r *http.Request, m map[string]any) {
		if o, ok := m["oauth2"].(map[string]any); ok && reMethods.FindStringSubmatch(r.URL.Path)[1] == "_superusers" {
			o["enabled"] = true
		}
	})},
	// The collection's passwordAuth option is not consulted.
	{"methods-ignore-options", []string{"AUTH-METHODS-005"}, editMethods(func(_ *http.Request, m map[string]any) {
		if p, ok := m["password"].(map[string]any); ok {
			p["enabled"], p["identityFields"] = true, []string{"email"}
		}
	})},
	{"methods-ignore-fields", []string{"AUTH-METHODS-006"}, editQuery(methodsRoute, func(q url.Values) { q.Del("fields") })},
}
