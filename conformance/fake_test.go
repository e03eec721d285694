package conformance

// A small in-memory fake of the interface, written from the interface
// document and the reference notes, used only to exercise the suite's own
// checks end to end (TestSuiteAgainstFake). It is not a model for the real
// server: it keeps everything in maps under one mutex and implements just
// enough of the filter language for the checks.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

type fakeCollection struct {
	id, name, typ   string
	system          bool
	passwordEnabled bool
	oauth2Enabled   bool
	rules           map[string]any // listRule … deleteRule: nil or a string
	durations       map[string]any // token config key → seconds, except authToken
	secret          string
	duration        int64 // auth token lifetime in seconds; 0 = static
	records         map[string]*fakeRecord
}

type fakeRecord struct {
	id, email, password, tokenKey string
	created                       string
	emailVisibility               bool
}

type fakeLog struct {
	id      string
	created string
	level   int
	message string
	data    map[string]any
}

type fakeServer struct {
	mu          sync.Mutex
	collections []*fakeCollection
	logs        []*fakeLog
	settings    map[string]any  // meta, rateLimits, trustedProxy and logs, as GET /api/settings shows them
	limits      fakeLimits      // rate limiter and login throttle state
	bugs        map[string]bool // deliberate violations, for TestChecksCatchViolations
}

// fakeDefaultSettings are the settings a new fake starts with.
func fakeDefaultSettings() map[string]any {
	return map[string]any{
		"meta":         map[string]any{"appName": "Acme", "appURL": "http://localhost:8090"},
		"rateLimits":   fakeDefaultRateLimits(),
		"trustedProxy": map[string]any{"headers": []any{}, "useLeftmostIP": false},
		"logs":         map[string]any{"maxDays": float64(5), "minLevel": float64(0), "logIP": true, "logAuthId": false},
	}
}

func newFakeServer(suEmail, suPassword string) *fakeServer {
	f := &fakeServer{bugs: map[string]bool{}, settings: fakeDefaultSettings()}
	su := f.addCollection("pbc_3142635823", "_superusers", "auth")
	su.duration, su.system = 86400, true
	f.addCollection("_pb_users_auth_", "users", "auth") // static password tokens (§5.9)
	su.records[fakeID()] = &fakeRecord{email: suEmail, password: suPassword, tokenKey: fakeID() + fakeID(), created: fakeNow()}
	for id, r := range su.records {
		r.id = id
	}
	return f
}

func (f *fakeServer) addCollection(id, name, typ string) *fakeCollection {
	c := &fakeCollection{id: id, name: name, typ: typ, passwordEnabled: true, secret: fakeID() + fakeID(),
		duration: 604800, records: map[string]*fakeRecord{},
		rules:     map[string]any{"listRule": nil, "viewRule": nil, "createRule": nil, "updateRule": nil, "deleteRule": nil},
		durations: map[string]any{"passwordResetToken": 1800.0, "emailChangeToken": 1800.0, "verificationToken": 259200.0, "fileToken": 180.0}}
	if name == "users" {
		c.duration = 0
	}
	f.collections = append(f.collections, c)
	return c
}

func (f *fakeServer) collection(idOrName string) *fakeCollection {
	for _, c := range f.collections {
		if c.id == idOrName || strings.EqualFold(c.name, idOrName) {
			return c
		}
	}
	return nil
}

func fakeID() string { return newNonce(15) }

func fakeNow() string { return time.Now().UTC().Format("2006-01-02 15:04:05.000Z") }

// ---- HTTP plumbing ---------------------------------------------------------

type fakeErr struct {
	status int
	msg    string
	data   map[string]any
}

func (e *fakeErr) Error() string { return e.msg }

func ferr(status int, msg string) *fakeErr { return &fakeErr{status: status, msg: msg} }

type fakeReq struct {
	w        http.ResponseWriter
	r        *http.Request
	auth     *fakeRecord
	authColl *fakeCollection
	status   int
}

func (q *fakeReq) json(status int, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if fields := q.r.URL.Query().Get("fields"); fields != "" {
		var generic any
		_ = json.Unmarshal(data, &generic)
		data, _ = json.Marshal(pickFields(generic, fields))
	}
	q.w.Header().Set("Content-Type", "application/json")
	q.w.WriteHeader(status)
	q.status = status
	q.w.Write(data)
	return nil
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	q := &fakeReq{w: w, r: r}
	if !f.bugs["no-security-headers"] {
		for _, h := range securityHeaders {
			w.Header().Set(h[0], h[1])
		}
	}
	q.auth, q.authColl = f.loadAuth(r.Header.Get("Authorization"), "auth")
	err := f.rateLimited(q)
	if err == nil {
		err = f.route(q)
	}
	if err != nil {
		var fe *fakeErr
		if !errors.As(err, &fe) {
			fe = ferr(500, "Something went wrong while processing your request.")
		}
		data := fe.data
		if data == nil {
			data = map[string]any{}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(fe.status)
		q.status = fe.status
		if f.bugs["envelope-order"] {
			fmt.Fprintf(w, `{"status":%d,"message":%q,"data":%s}`, fe.status, fe.msg, mustJSON(data))
		} else {
			fmt.Fprintf(w, `{"data":%s,"message":%q,"status":%d}`, mustJSON(data), fe.msg, fe.status)
		}
	}
	if strings.HasPrefix(r.URL.Path, "/api/logs") && q.status < 400 && !f.bugs["log-log-reads"] {
		return
	}
	if f.settings["logs"].(map[string]any)["maxDays"] == float64(0) {
		return // request logging is off
	}
	uri, referer := r.RequestURI, r.Referer()
	if !f.bugs["log-token"] {
		uri = fakeRedact(r, f.bugs["log-secret-names"])
	}
	if u, err := url.Parse(referer); err == nil && u.User != nil && !f.bugs["log-secret-names"] {
		u.User = url.User("REDACTED")
		referer = u.String()
	}
	authName := ""
	if q.authColl != nil {
		authName = q.authColl.name
	}
	level := 0
	if q.status >= 400 && !f.bugs["errors-level-0"] {
		level = 8
	}
	f.logs = append(f.logs, &fakeLog{id: fakeID(), created: fakeNow(), level: level,
		message: r.Method + " " + uri,
		data: map[string]any{
			"auth": authName, "execTime": float64(time.Since(start).Microseconds()) / 1000, "method": r.Method,
			"referer": referer, "remoteIP": "127.0.0.1", "status": float64(q.status), "type": "request",
			"url": uri, "userAgent": r.UserAgent(), "userIP": "127.0.0.1",
		}})
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

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var (
	reAuthRoute = regexp.MustCompile(`^/api/collections/([^/]+)/(auth-with-password|auth-refresh|auth-methods|impersonate/([^/]+))$`)
	reRecords   = regexp.MustCompile(`^/api/collections/([^/]+)/records(?:/([^/]+))?$`)
	reColl      = regexp.MustCompile(`^/api/collections(?:/([^/]+))?$`)
)

func (f *fakeServer) route(q *fakeReq) error {
	r, p := q.r, q.r.URL.Path
	if r.ContentLength > bodyLimit && !f.bugs["no-body-limit"] {
		return ferr(413, msgTooLarge)
	}
	switch {
	case p == "/api/settings" && (r.Method == "GET" || r.Method == "PATCH"):
		return f.handleSettings(q)
	case r.Method == "GET" && p == "/api/health":
		return q.json(200, map[string]any{"message": "API is healthy.", "code": 200, "data": map[string]any{}})
	case r.Method == "POST" && p == "/api/files/token":
		if q.auth == nil {
			return ferr(401, msgNeedsToken)
		}
		return q.json(200, map[string]any{"token": f.sign(q.authColl, q.auth, "file", 180, nil)})
	case p == "/api/logs" || strings.HasPrefix(p, "/api/logs/"):
		if r.Method != "GET" {
			if f.bugs["405"] {
				return ferr(405, "Method Not Allowed.")
			}
			return ferr(404, msgNotFound)
		}
		return f.handleLogs(q)
	}
	if m := reAuthRoute.FindStringSubmatch(p); m != nil {
		return f.handleAuth(q, m[1], m[2], m[3])
	}
	if m := reRecords.FindStringSubmatch(p); m != nil {
		return f.handleRecords(q, m[1], m[2])
	}
	if m := reColl.FindStringSubmatch(p); m != nil {
		return f.handleCollections(q, m[1])
	}
	if r.Method == "GET" {
		return ferr(404, "File not found.")
	}
	return ferr(404, msgNotFound)
}

func readBody(r *http.Request) (map[string]any, error) {
	out := map[string]any{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		for k := range r.PostForm {
			out[k] = r.PostForm.Get(k)
		}
		return out, nil
	}
	if r.ContentLength == 0 {
		return out, nil
	}
	if err := json.NewDecoder(r.Body).Decode(&out); err != nil {
		return nil, ferr(400, "An error occurred while loading the submitted data.")
	}
	return out, nil
}

// ---- tokens ----------------------------------------------------------------

func (f *fakeServer) sign(c *fakeCollection, rec *fakeRecord, typ string, lifetime int64, refreshable *bool) string {
	claims := map[string]any{"id": rec.id, "collectionId": c.id, "type": typ}
	if lifetime == 0 && f.bugs["users-exp"] {
		lifetime = 604800
	}
	if lifetime > 0 {
		claims["exp"] = time.Now().Unix() + lifetime
	}
	if refreshable != nil {
		claims["refreshable"] = *refreshable
	}
	signing := b64JSON(map[string]any{"alg": "HS256", "typ": "JWT"}) + "." + b64JSON(claims)
	mac := hmac.New(sha256.New, []byte(rec.tokenKey+c.secret+typ))
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (f *fakeServer) loadAuth(header, typ string) (*fakeRecord, *fakeCollection) {
	tok := strings.TrimPrefix(header, "Bearer ")
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, nil
	}
	h, claims, err := splitJWT(tok)
	if err != nil || h["alg"] != "HS256" || (claims["type"] != typ && !f.bugs["any-token-type"]) {
		return nil, nil
	}
	cid, _ := claims["collectionId"].(string)
	id, _ := claims["id"].(string)
	c := f.collection(cid)
	if c == nil || c.records[id] == nil {
		return nil, nil
	}
	rec := c.records[id]
	keyType := typ
	if f.bugs["any-token-type"] {
		keyType, _ = claims["type"].(string) // the classic confusion: trust the token's own type
	}
	mac := hmac.New(sha256.New, []byte(rec.tokenKey+c.secret+keyType))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if (err != nil || !hmac.Equal(sig, mac.Sum(nil))) && !f.bugs["no-signature-check"] {
		return nil, nil
	}
	if exp, ok := claims["exp"].(float64); ok && int64(exp) < time.Now().Unix() && !f.bugs["ignore-exp"] {
		return nil, nil
	}
	return rec, c
}

func recordJSON(c *fakeCollection, rec *fakeRecord) map[string]any {
	return map[string]any{"id": rec.id, "email": rec.email, "collectionId": c.id, "collectionName": c.name,
		"created": rec.created, "updated": rec.created, "emailVisibility": false, "verified": false}
}

// ---- auth endpoints ----------------------------------------------------------

func (f *fakeServer) handleAuth(q *fakeReq, collName, action, target string) error {
	r := q.r
	c := f.collection(collName)
	if strings.HasPrefix(action, "impersonate/") {
		if r.Method != "POST" {
			return ferr(404, msgNotFound)
		}
		if q.auth == nil {
			return ferr(401, msgNeedsToken)
		}
		if q.authColl.name != "_superusers" {
			return ferr(403, msgNotAllowed)
		}
		if c == nil || c.typ != "auth" {
			return ferr(404, msgNoAuthColl)
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		dur := c.duration
		if d, ok := body["duration"].(float64); ok {
			if d < 0 {
				return &fakeErr{status: 400, msg: msgValidation, data: map[string]any{"duration": map[string]any{
					"code": codeMinGreaterThan, "message": "Must be no less than 0."}}}
			}
			if d > 0 {
				dur = int64(d)
			}
		}
		if dur == 0 {
			dur = 604800
		}
		rec := c.records[target]
		if rec == nil {
			return ferr(404, msgNotFound)
		}
		no := false
		return q.json(200, map[string]any{"record": recordJSON(c, rec), "token": f.sign(c, rec, "auth", dur, &no)})
	}
	if c == nil {
		return ferr(404, msgNoCollection)
	}
	if c.typ != "auth" {
		return ferr(404, msgNoAuthColl)
	}
	switch {
	case action == "auth-methods" && r.Method == "GET":
		fields := []string{}
		if c.passwordEnabled {
			fields = []string{"email"}
		}
		return q.json(200, map[string]any{
			"password": map[string]any{"identityFields": fields, "enabled": c.passwordEnabled},
			"oauth2":   map[string]any{"providers": []any{}, "enabled": false},
			"mfa":      map[string]any{"enabled": false, "duration": 0},
			"otp":      map[string]any{"enabled": false, "duration": 0},
		})
	case action == "auth-with-password" && r.Method == "POST":
		if !c.passwordEnabled {
			return ferr(403, msgPasswordOff)
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		identity, _ := body["identity"].(string)
		password, _ := body["password"].(string)
		if identity == "" || password == "" {
			data := map[string]any{}
			for k, v := range map[string]string{"identity": identity, "password": password} {
				if v == "" {
					data[k] = map[string]any{"code": codeRequired, "message": "Cannot be blank."}
				}
			}
			return &fakeErr{status: 400, msg: msgValidation, data: data}
		}
		throttleKey, err := f.loginThrottled(q, c, identity)
		if err != nil {
			return err
		}
		for _, rec := range c.records {
			if rec.email == identity && rec.password == password {
				f.loginDone(throttleKey, true)
				yes := true
				return q.json(200, map[string]any{"record": recordJSON(c, rec), "token": f.sign(c, rec, "auth", c.duration, &yes)})
			}
		}
		f.loginDone(throttleKey, false)
		return ferr(400, msgFailedAuth)
	case action == "auth-refresh" && r.Method == "POST":
		if q.auth == nil {
			return ferr(401, msgNeedsToken)
		}
		if q.authColl != c {
			return ferr(403, "The request requires auth record from "+q.authColl.name+" collection.")
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		_, claims, _ := splitJWT(tok)
		if claims["refreshable"] == true || f.bugs["always-refresh"] {
			yes := true
			tok = f.sign(c, q.auth, "auth", c.duration, &yes)
		}
		return q.json(200, map[string]any{"record": recordJSON(c, q.auth), "token": tok})
	}
	return ferr(404, msgNotFound)
}

func (f *fakeServer) handleRecords(q *fakeReq, collName, id string) error {
	r := q.r
	c := f.collection(collName)
	if c == nil || c.typ != "auth" {
		return ferr(404, msgNotFound)
	}
	isSU := q.authColl != nil && q.authColl.name == "_superusers"
	// users has the rules of PocketBase's default users collection (owner
	// only, public create); every other auth collection is superusers only.
	ownerRules := c.name == "users"
	public := func(rec *fakeRecord) map[string]any {
		out := recordJSON(c, rec)
		out["emailVisibility"] = rec.emailVisibility
		if !rec.emailVisibility && !isSU && q.auth != rec {
			delete(out, "email")
		}
		return out
	}
	switch {
	case r.Method == "GET" && id == "":
		if !ownerRules && !isSU {
			return ferr(403, msgOnlySuperusers)
		}
		items := []any{}
		for _, rec := range c.records {
			if isSU || q.auth == rec {
				items = append(items, public(rec))
			}
		}
		return q.json(200, map[string]any{"items": items, "page": 1, "perPage": 30,
			"totalItems": len(items), "totalPages": 1})
	case r.Method == "GET" && id != "":
		if !ownerRules && !isSU {
			return ferr(403, msgOnlySuperusers)
		}
		rec := c.records[id]
		if rec == nil || (!isSU && q.auth != rec && !f.bugs["records-visible"]) {
			return ferr(404, msgNotFound)
		}
		return q.json(200, public(rec))
	case r.Method == "POST" && id == "":
		if !ownerRules && !isSU {
			return ferr(403, msgOnlySuperusers)
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		if data := f.signUpErrors(c, body); len(data) > 0 {
			return &fakeErr{status: 400, msg: msgCreateFailed, data: data}
		}
		email, _ := body["email"].(string)
		pw, _ := body["password"].(string)
		vis, _ := body["emailVisibility"].(bool)
		rec := &fakeRecord{id: fakeID(), email: email, password: pw, tokenKey: fakeID(), created: fakeNow(), emailVisibility: vis}
		c.records[rec.id] = rec
		return q.json(200, public(rec))
	case r.Method == "PATCH" && id != "":
		if !isSU {
			return ferr(403, msgNotAllowed)
		}
		rec := c.records[id]
		if rec == nil {
			return ferr(404, msgNotFound)
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		if v, ok := body["id"]; ok && v != id {
			if !f.bugs["pk-change"] {
				return &fakeErr{status: 400, msg: "Failed to update record.", data: map[string]any{
					"id": map[string]any{"code": codePKChange, "message": "The record primary key cannot be changed."}}}
			}
			newID, _ := v.(string)
			delete(c.records, id)
			rec.id = newID
			c.records[newID] = rec
		}
		if pw, _ := body["password"].(string); pw != "" && body["passwordConfirm"] == pw {
			rec.password = pw
			if !f.bugs["no-key-rotation"] {
				rec.tokenKey = fakeID()
			}
		}
		return q.json(200, recordJSON(c, rec))
	case r.Method == "DELETE" && id != "":
		if !isSU {
			return ferr(403, msgNotAllowed)
		}
		if c.records[id] == nil {
			return ferr(404, msgNotFound)
		}
		delete(c.records, id)
		q.w.WriteHeader(204)
		q.status = 204
		return nil
	}
	return ferr(404, msgNotFound)
}

var reFakeEmail = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)

// signUpErrors validates a sign-up body as PocketBase does: the form's
// password fields first, then the record's fields.
func (f *fakeServer) signUpErrors(c *fakeCollection, body map[string]any) map[string]any {
	fe := func(code, msg string) map[string]any { return map[string]any{"code": code, "message": msg} }
	data := map[string]any{}
	email, _ := body["email"].(string)
	pw, _ := body["password"].(string)
	confirm, _ := body["passwordConfirm"].(string)
	if pw == "" {
		data["password"] = fe(codeRequired, "Cannot be blank.")
	}
	if confirm == "" {
		data["passwordConfirm"] = fe(codeRequired, "Cannot be blank.")
	} else if confirm != pw {
		data["passwordConfirm"] = fe(codeMismatch, "Values don't match.")
	}
	if len(data) > 0 {
		return data
	}
	switch {
	case len(pw) < 8 && !f.bugs["lax-password"]:
		data["password"] = fe(codeMinText, "Must be at least 8 character(s).")
	case len(pw) > 71 && !f.bugs["lax-password"]:
		data["password"] = fe(codeMaxText, "Must be less than 71 character(s).")
	}
	switch {
	case email == "":
		data["email"] = fe(codeRequired, "Cannot be blank.")
	case !reFakeEmail.MatchString(email):
		data["email"] = fe(codeIsEmail, "Must be a valid email address.")
	default:
		for _, rec := range c.records {
			if rec.email == email {
				data["email"] = fe(codeNotUnique, "Value must be unique.")
			}
		}
	}
	return data
}

func (f *fakeServer) handleCollections(q *fakeReq, name string) error {
	r := q.r
	if q.auth == nil {
		return ferr(401, msgNeedsToken)
	}
	if q.authColl.name != "_superusers" {
		if f.bugs["collections-message"] {
			return ferr(403, msgOnlySuperusers)
		}
		return ferr(403, msgNotAllowed)
	}
	view := func(c *fakeCollection) map[string]any {
		m := map[string]any{"id": c.id, "name": c.name, "type": c.typ, "system": c.system}
		for k, v := range c.rules {
			m[k] = v
		}
		if c.typ == "auth" {
			m["oauth2"] = map[string]any{"enabled": c.oauth2Enabled}
			m["passwordAuth"] = map[string]any{"enabled": c.passwordEnabled}
			m["authToken"] = map[string]any{"duration": float64(c.duration)}
			for k, v := range c.durations {
				m[k] = map[string]any{"duration": v}
			}
		}
		return m
	}
	switch {
	case r.Method == "GET" && name == "":
		items := []any{}
		for _, c := range f.collections {
			items = append(items, view(c))
		}
		return q.json(200, map[string]any{"items": items, "page": 1, "perPage": 1000,
			"totalItems": len(items), "totalPages": 1})
	case r.Method == "GET" && name != "":
		c := f.collection(name)
		if c == nil {
			return ferr(404, msgNotFound)
		}
		return q.json(200, view(c))
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	switch {
	case r.Method == "POST" && name == "":
		n, _ := body["name"].(string)
		typ, _ := body["type"].(string)
		if n == "" || f.collection(n) != nil {
			return ferr(400, msgValidation)
		}
		c := f.addCollection("pbc_"+newNonce(10), n, typ)
		return q.json(200, view(c))
	case r.Method == "PATCH" && name != "":
		c := f.collection(name)
		if c == nil {
			return ferr(404, msgNotFound)
		}
		if data := f.patchCollection(c, body); len(data) > 0 {
			return &fakeErr{status: 400, msg: "Failed to update collection.", data: data}
		}
		return q.json(200, view(c))
	case r.Method == "DELETE" && name != "":
		for i, c := range f.collections {
			if c.name == name || c.id == name {
				f.collections = append(f.collections[:i], f.collections[i+1:]...)
				q.w.WriteHeader(204)
				q.status = 204
				return nil
			}
		}
		return ferr(404, msgNotFound)
	}
	return ferr(404, msgNotFound)
}

// patchCollection applies body to c as PocketBase's collection validator
// does for the options the fake has, or returns the validation errors (and
// changes nothing). Like PocketBase, it turns OAuth2 off and password auth
// on again for _superusers instead of refusing them.
func (f *fakeServer) patchCollection(c *fakeCollection, body map[string]any) map[string]any {
	fe := func(code string) map[string]any { return map[string]any{"code": code, "message": "Invalid value."} }
	data := map[string]any{}
	for k := range c.rules {
		if v, ok := body[k]; ok && v != c.rules[k] && c.system && !f.bugs["system-rules-open"] {
			data[k] = fe(codeSystemRule)
		}
	}
	if v, ok := body["name"].(string); ok && v != c.name && c.system {
		data["name"] = fe(codeSystemName)
	}
	if v, ok := body["type"].(string); ok && v != c.typ {
		data["type"] = fe(codeTypeChange)
	}
	durations := map[string]float64{}
	for _, k := range tokenConfigKeys {
		tc, _ := body[k].(map[string]any)
		d, ok := tc["duration"].(float64)
		if !ok {
			continue
		}
		switch {
		case d == 0 && f.bugs["superusers-static"]:
		case d == 0:
			data[k] = map[string]any{"duration": fe(codeRequired)}
		case d < 10:
			data[k] = map[string]any{"duration": fe(codeMinGreaterThan)}
		case d > maxTokenDuration:
			data[k] = map[string]any{"duration": fe(codeMaxLessEqual)}
		}
		durations[k] = d
	}
	if len(data) > 0 {
		return data
	}
	for k := range c.rules {
		if v, ok := body[k]; ok {
			c.rules[k] = v
		}
	}
	if v, ok := body["name"].(string); ok {
		c.name = v
	}
	for k, d := range durations {
		if k == "authToken" {
			c.duration = int64(d)
		} else {
			c.durations[k] = d
		}
	}
	if o, ok := body["oauth2"].(map[string]any); ok {
		if en, ok := o["enabled"].(bool); ok {
			c.oauth2Enabled = en && !c.system
		}
	}
	if pa, ok := body["passwordAuth"].(map[string]any); ok {
		if en, ok := pa["enabled"].(bool); ok {
			c.passwordEnabled = en || c.system
		}
	}
	return nil
}

// ---- settings ------------------------------------------------------------------

func (f *fakeServer) handleSettings(q *fakeReq) error {
	if q.auth == nil {
		return ferr(401, msgNeedsToken)
	}
	if q.authColl.name != "_superusers" {
		return ferr(403, msgNotAllowed)
	}
	if q.r.Method == "PATCH" {
		body, err := readBody(q.r)
		if err != nil {
			return err
		}
		if rl, ok := body["rateLimits"].(map[string]any); ok {
			if err := f.patchRateLimits(rl); err != nil {
				return err
			}
		}
		if tp, ok := body["trustedProxy"].(map[string]any); ok {
			f.settings["trustedProxy"] = tp
		}
		if logs, ok := body["logs"].(map[string]any); ok {
			if d, ok := logs["maxDays"].(float64); ok && d < 0 && !f.bugs["settings-accept-negative"] {
				return &fakeErr{status: 400, msg: msgSettingsSave, data: map[string]any{"logs": map[string]any{
					"maxDays": map[string]any{"code": codeMinGreaterThan, "message": "Must be no less than 0.",
						"params": map[string]any{"threshold": 0}}}}}
			}
			cur := f.settings["logs"].(map[string]any)
			for k, v := range logs {
				cur[k] = v
			}
		}
	}
	var out map[string]any
	_ = json.Unmarshal([]byte(mustJSON(f.settings)), &out) // a copy
	return q.json(200, out)
}

// ---- logs ----------------------------------------------------------------------

func (f *fakeServer) handleLogs(q *fakeReq) error {
	if q.auth == nil {
		return ferr(401, msgNeedsToken)
	}
	if q.authColl.name != "_superusers" && !f.bugs["users-read-logs"] {
		return ferr(403, msgNotAllowed)
	}
	p, qs := q.r.URL.Path, q.r.URL.Query()
	rows := make([]map[string]any, len(f.logs))
	for i, l := range f.logs {
		rows[i] = map[string]any{"id": l.id, "created": l.created, "data": l.data, "message": l.message,
			"level": float64(l.level), "rowid": float64(i + 1)}
	}
	pub := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "rowid" {
				out[k] = v
			}
		}
		return out
	}
	filter := func(allowRowid bool) ([]map[string]any, error) {
		src := qs.Get("filter")
		if src == "" {
			return rows, nil
		}
		ex, err := parseFakeFilter(src, allowRowid, f.bugs["any-of-negated"])
		if err != nil {
			if f.bugs["reference-filter-message"] {
				return nil, ferr(400, msgGenericBad)
			}
			return nil, ferr(400, msgInvalidFilter)
		}
		var out []map[string]any
		for _, row := range rows {
			if ex(row) {
				out = append(out, row)
			}
		}
		return out, nil
	}
	switch {
	case p == "/api/logs":
		page, perPage := 1, 30
		for _, pp := range []struct {
			key string
			dst *int
			def int
		}{{"page", &page, 1}, {"perPage", &perPage, 30}} {
			if v := qs.Get(pp.key); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil {
					return ferr(400, msgGenericBad)
				}
				if n < 1 {
					n = pp.def
				}
				*pp.dst = n
			}
		}
		if !f.bugs["no-perpage-cap"] {
			perPage = min(perPage, 1000)
		}
		matched, err := filter(false)
		if err != nil {
			return err
		}
		if s := qs.Get("sort"); s != "" {
			if f.bugs["ignore-descending"] {
				s = strings.ReplaceAll(s, "-", "")
			}
			if err := fakeSort(matched, s); err != nil {
				return ferr(400, msgGenericBad)
			}
		}
		total := len(matched)
		items := []map[string]any{}
		for i := (page - 1) * perPage; i < total && i < page*perPage; i++ {
			items = append(items, pub(matched[i]))
		}
		ti, tp := float64(total), math.Ceil(float64(total)/float64(perPage))
		if qs.Get("skipTotal") == "1" {
			ti, tp = -1, -1
		}
		return q.json(200, map[string]any{"items": items, "page": page, "perPage": perPage, "totalItems": ti, "totalPages": tp})
	case p == "/api/logs/stats":
		matched, err := filter(true)
		if err != nil {
			return err
		}
		counts := map[string]int{}
		for _, row := range matched {
			counts[row["created"].(string)[:13]+":00:00.000Z"]++
		}
		out := []map[string]any{}
		for _, d := range sortedKeys(counts) {
			out = append(out, map[string]any{"date": d, "total": counts[d]})
		}
		if f.bugs["stats-without-z"] {
			for _, o := range out {
				o["date"] = strings.TrimSuffix(o["date"].(string), "Z")
			}
		}
		return q.json(200, out)
	default:
		id := strings.TrimPrefix(p, "/api/logs/")
		for _, row := range rows {
			if row["id"] == id {
				return q.json(200, pub(row))
			}
		}
		return ferr(404, msgNotFound)
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fakeField(row map[string]any, name string) (any, error) {
	switch {
	case name == "id" || name == "created" || name == "message" || name == "level" || name == "rowid":
		return row[name], nil
	case strings.HasPrefix(name, "data."):
		var cur any = row["data"]
		for _, p := range strings.Split(strings.TrimPrefix(name, "data."), ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, nil
			}
			cur = m[p]
		}
		return cur, nil
	}
	return nil, fmt.Errorf("unknown field %q", name)
}

func fakeSort(rows []map[string]any, spec string) error {
	type key struct {
		field string
		desc  bool
	}
	var keys []key
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		k := key{field: strings.TrimPrefix(strings.TrimPrefix(p, "-"), "+"), desc: strings.HasPrefix(p, "-")}
		if k.field == "@random" {
			mrand.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
			return nil
		}
		if _, err := fakeField(map[string]any{}, k.field); err != nil || k.field == "rowid" {
			return fmt.Errorf("invalid sort field %q", k.field)
		}
		keys = append(keys, k)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		for _, k := range keys {
			a, _ := fakeField(rows[i], k.field)
			b, _ := fakeField(rows[j], k.field)
			c := fakeCompare(a, b)
			if c != 0 {
				return (c < 0) != k.desc
			}
		}
		return false
	})
	return nil
}

// fakeCompare orders nil < numbers < strings.
func fakeCompare(a, b any) int {
	rank := func(v any) int {
		switch v.(type) {
		case nil:
			return 0
		case float64:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	}
	return 0
}

// ---- a minimal filter language -------------------------------------------------

type fakeTok struct {
	kind string // id, str, num, op, join, lp, rp
	val  string
}

func lexFakeFilter(s string) ([]fakeTok, error) {
	var toks []fakeTok
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			i++
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case ch == '(' || ch == ')':
			toks = append(toks, fakeTok{kind: map[byte]string{'(': "lp", ')': "rp"}[ch]})
			i++
		case ch == '"' || ch == '\'':
			j := i + 1
			var b strings.Builder
			for ; j < len(s) && s[j] != ch; j++ {
				if s[j] == '\\' && j+1 < len(s) && s[j+1] == ch {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, errors.New("unterminated string")
			}
			toks = append(toks, fakeTok{kind: "str", val: b.String()})
			i = j + 1
		case strings.ContainsRune("=!<>~?", rune(ch)):
			j := i
			for j < len(s) && strings.ContainsRune("=!<>~?", rune(s[j])) {
				j++
			}
			op := s[i:j]
			switch strings.TrimPrefix(op, "?") {
			case "=", "!=", ">", ">=", "<", "<=", "~", "!~":
			default:
				return nil, fmt.Errorf("invalid operator %q", op)
			}
			toks = append(toks, fakeTok{kind: "op", val: op})
			i = j
		case ch == '&' || ch == '|':
			j := i
			for j < len(s) && (s[j] == '&' || s[j] == '|') {
				j++
			}
			if s[i:j] != "&&" && s[i:j] != "||" {
				return nil, fmt.Errorf("invalid join %q", s[i:j])
			}
			toks = append(toks, fakeTok{kind: "join", val: s[i:j]})
			i = j
		case ch == '-' || (ch >= '0' && ch <= '9'):
			j := i + 1
			for j < len(s) && (s[j] == '.' || (s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			if _, err := strconv.ParseFloat(s[i:j], 64); err != nil {
				return nil, err
			}
			toks = append(toks, fakeTok{kind: "num", val: s[i:j]})
			i = j
		case unicode.IsLetter(rune(ch)) || ch == '_' || ch == '@':
			j := i + 1
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || s[j] == '_' || s[j] == '.') {
				j++
			}
			toks = append(toks, fakeTok{kind: "id", val: s[i:j]})
			i = j
		default:
			return nil, fmt.Errorf("unexpected %q", ch)
		}
	}
	return toks, nil
}

type fakePred func(row map[string]any) bool

type fakeParser struct {
	toks         []fakeTok
	pos          int
	allowRowid   bool
	anyOfNegated bool
}

func parseFakeFilter(s string, allowRowid, anyOfNegated bool) (fakePred, error) {
	toks, err := lexFakeFilter(s)
	if err != nil {
		return nil, err
	}
	p := &fakeParser{toks: toks, allowRowid: allowRowid, anyOfNegated: anyOfNegated}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos != len(toks) {
		return nil, errors.New("trailing tokens")
	}
	return e, nil
}

func (p *fakeParser) peek() *fakeTok {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func (p *fakeParser) or() (fakePred, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t != nil && t.kind == "join" && t.val == "||"; t = p.peek() {
		p.pos++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l0 := l
		l = func(row map[string]any) bool { return l0(row) || r(row) }
	}
	return l, nil
}

func (p *fakeParser) and() (fakePred, error) {
	l, err := p.primary()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t != nil && t.kind == "join" && t.val == "&&"; t = p.peek() {
		p.pos++
		r, err := p.primary()
		if err != nil {
			return nil, err
		}
		l0 := l
		l = func(row map[string]any) bool { return l0(row) && r(row) }
	}
	return l, nil
}

func (p *fakeParser) primary() (fakePred, error) {
	t := p.peek()
	if t == nil {
		return nil, errors.New("incomplete expression")
	}
	if t.kind == "lp" {
		p.pos++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if t := p.peek(); t == nil || t.kind != "rp" {
			return nil, errors.New("missing )")
		}
		p.pos++
		return e, nil
	}
	left, err := p.operand()
	if err != nil {
		return nil, err
	}
	op := p.peek()
	if op == nil || op.kind != "op" {
		return nil, errors.New("expected operator")
	}
	p.pos++
	right, err := p.operand()
	if err != nil {
		return nil, err
	}
	o := strings.TrimPrefix(op.val, "?")
	if p.anyOfNegated && o != op.val {
		return func(row map[string]any) bool { return !fakeCmp(left(row), o, right(row)) }, nil
	}
	return func(row map[string]any) bool { return fakeCmp(left(row), o, right(row)) }, nil
}

func (p *fakeParser) operand() (func(map[string]any) any, error) {
	t := p.peek()
	if t == nil {
		return nil, errors.New("missing operand")
	}
	p.pos++
	switch t.kind {
	case "str":
		v := t.val
		return func(map[string]any) any { return v }, nil
	case "num":
		n, _ := strconv.ParseFloat(t.val, 64)
		return func(map[string]any) any { return n }, nil
	case "id":
		name := t.val
		if strings.EqualFold(name, "null") {
			return func(map[string]any) any { return nil }, nil
		}
		if name == "rowid" && !p.allowRowid {
			return nil, errors.New("rowid not allowed")
		}
		if _, err := fakeField(map[string]any{}, name); err != nil {
			return nil, err
		}
		return func(row map[string]any) any { v, _ := fakeField(row, name); return v }, nil
	}
	return nil, fmt.Errorf("unexpected %s", t.kind)
}

func fakeCmp(a any, op string, b any) bool {
	switch op {
	case "=":
		return a == b
	case "!=":
		return a != b
	case "~", "!~":
		if a == nil {
			return false
		}
		pat := fmt.Sprint(b)
		if !strings.Contains(pat, "%") {
			pat = "%" + pat + "%"
		}
		re := "(?is)^" + strings.ReplaceAll(regexp.QuoteMeta(pat), "%", ".*") + "$"
		m := regexp.MustCompile(re).MatchString(fmt.Sprint(a))
		return m == (op == "~")
	}
	if a == nil || b == nil {
		return false
	}
	c := fakeCompare(a, b)
	switch op {
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	}
	return false
}

// ---- fields ----------------------------------------------------------------------

func pickFields(v any, spec string) any {
	type fieldSpec struct {
		path []string
		mod  string
	}
	var specs []fieldSpec
	depth, start := 0, 0
	for i := 0; i <= len(spec); i++ {
		if i < len(spec) && spec[i] == '(' {
			depth++
		} else if i < len(spec) && spec[i] == ')' {
			depth--
		} else if i == len(spec) || (spec[i] == ',' && depth == 0) {
			tok := strings.TrimSpace(spec[start:i])
			start = i + 1
			if tok == "" {
				continue
			}
			path, mod, _ := strings.Cut(tok, ":")
			specs = append(specs, fieldSpec{path: strings.Split(path, "."), mod: mod})
		}
	}
	var prune func(v any, specs []fieldSpec) any
	prune = func(v any, specs []fieldSpec) any {
		switch x := v.(type) {
		case []any:
			for i := range x {
				x[i] = prune(x[i], specs)
			}
			return x
		case map[string]any:
			out := map[string]any{}
			for _, s := range specs {
				val, ok := x[s.path[0]]
				if !ok {
					continue
				}
				if len(s.path) > 1 {
					sub := prune(val, []fieldSpec{{path: s.path[1:], mod: s.mod}})
					if prev, ok := out[s.path[0]].(map[string]any); ok {
						for k, v := range sub.(map[string]any) {
							prev[k] = v
						}
					} else {
						out[s.path[0]] = sub
					}
					continue
				}
				if str, ok := val.(string); ok && strings.HasPrefix(s.mod, "excerpt(") {
					args := strings.Split(strings.TrimSuffix(strings.TrimPrefix(s.mod, "excerpt("), ")"), ",")
					n, _ := strconv.Atoi(strings.TrimSpace(args[0]))
					val = excerpt(str, n, len(args) > 1 && strings.TrimSpace(args[1]) == "true" && !fakeBugNoEllipsis)
				}
				out[s.path[0]] = val
			}
			return out
		}
		return v
	}
	if m, ok := v.(map[string]any); ok {
		if items, ok := m["items"]; ok {
			m["items"] = prune(items, specs)
			return m
		}
	}
	return prune(v, specs)
}

// fakeBugNoEllipsis is a package-level switch because pickFields has no
// server at hand; only TestChecksCatchViolations sets it.
var fakeBugNoEllipsis bool
