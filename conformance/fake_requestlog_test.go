package conformance

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The fake's request log: which requests are logged, and how (§2.2), with
// the secrets issues 4 and 8 say never to keep.

// logRequest appends the entry of a request answered with q.status, as the
// server's request-logging middleware would, unless the request is a
// successful read of the logs or request logging is off.
func (f *fakeServer) logRequest(q *fakeReq, start time.Time) {
	r := q.r
	if strings.HasPrefix(r.URL.Path, "/api/logs") && q.status < 400 && !f.bug("log-log-reads") {
		return
	}
	if f.settings["logs"].(map[string]any)["maxDays"] == float64(0) {
		return // request logging is off
	}
	uri, referer := r.RequestURI, r.Referer()
	if !f.bug("log-token") {
		uri = fakeRedact(r, f.bug("log-secret-names"))
	}
	if u, err := url.Parse(referer); err == nil && u.User != nil && !f.bug("log-secret-names") {
		u.User = url.User("REDACTED")
		referer = u.String()
	}
	authName := ""
	if q.authColl != nil {
		authName = q.authColl.name
		if f.bug("log-auth-id") {
			authName = q.auth.id
		}
	}
	level := 0
	if q.status >= 400 && !f.bug("errors-level-0") {
		level = 8
	}
	id := fakeID()
	if f.bug("document-readings") { // §2.2: an identifier, of any form
		id = "log-" + id
	}
	f.logs = append(f.logs, &fakeLog{id: id, created: fakeNow(), level: level,
		message: r.Method + " " + uri,
		data: map[string]any{
			"auth": authName, "execTime": float64(time.Since(start).Microseconds()) / 1000, "method": r.Method,
			"referer": referer, "remoteIP": "127.0.0.1", "status": float64(q.status), "type": "request",
			"url": uri, "userAgent": r.UserAgent(), "userIP": "127.0.0.1",
		}})
	if f.bug("entry-without-useragent") {
		delete(f.logs[len(f.logs)-1].data, "userAgent")
	}
}

// fakeRedact returns the request URI with the values of secret query
// parameters replaced, as issues 4 and 8 ask (the fake never logs
// Authorization): every name that contains token, password or secret, or is
// code, in any case and spelling; only token when onlyToken is set.
func fakeRedact(r *http.Request, onlyToken bool) string {
	path, rawQuery, ok := strings.Cut(r.RequestURI, "?")
	if !ok {
		return r.RequestURI
	}
	parts := strings.Split(rawQuery, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		name, _ := url.QueryUnescape(k)
		name = strings.Map(func(r rune) rune {
			if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
				return r
			}
			return -1
		}, strings.ToLower(name))
		secret := name == "token"
		if !onlyToken {
			secret = name == "code" || strings.Contains(name, "token") || strings.Contains(name, "password") || strings.Contains(name, "secret")
		}
		if secret {
			parts[i] = k + "=REDACTED"
		}
	}
	return path + "?" + strings.Join(parts, "&")
}
