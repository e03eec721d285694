package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"
)

// A small in-memory fake of the interface, written from the interface
// document and PocketBase v0.31.0's behaviour, used only to exercise the suite's own
// checks end to end: it is a test double for the violations the real
// strongbox cannot be made to show, not a second implementation. Every
// check it serves passes against it (TestSuiteAgainstFake), and each
// deliberate violation it can commit, named by a string in bugs, makes the
// checks named in violations_test.go fail. It keeps everything in maps
// under one mutex.
//
// It serves neither the logs nor the backups, and limits neither rates
// nor bodies: those
// violations are committed by mutators in front of the real strongbox
// (mutators_test.go), and TestSuiteAgainstFake runs only the requirements
// it serves (fakeServes).
//
// One file per job: this one holds the server, its routing and error
// envelope; fake_auth_test.go tokens and the auth endpoints;
// fake_flows_test.go the account flows; fake_otp_test.go OTP and MFA;
// fake_oauth2_test.go OAuth2 sign-in (against the suite's provider);
// fake_mail_test.go the mail it sends; fake_records_test.go,
// fake_collections_test.go and fake_settings_test.go their APIs (it
// limits no rate: mutators_ratelimits_test.go); fake_fields_test.go the fields
// parameter. It answers hostile clients as
// net/http does (mutators_hostile_test.go).

type fakeCollection struct {
	id, name, typ   string
	system          bool
	passwordEnabled bool
	oauth2Enabled   bool
	oauth2Providers []map[string]any // as PATCHed, clientSecret included (fake_oauth2_test.go)
	oauth2Mapped    map[string]any   // oauth2.mappedFields
	rules           map[string]any   // listRule … deleteRule: nil or a string
	durations       map[string]any   // token config key → seconds, except authToken
	secret          string
	duration        int64 // auth token lifetime in seconds; 0 = static
	records         map[string]*fakeRecord
	deleted         map[string]*fakeRecord // kept only for the deleted-records-authenticate bug
	otp, mfa        map[string]any         // the otp and mfa options, as GET shows them
}

type fakeRecord struct {
	id, email, password, tokenKey string
	created                       string
	emailVisibility               bool
	verified                      bool
}

type fakeServer struct {
	mu          sync.Mutex
	collections []*fakeCollection
	settings    map[string]any  // meta, rateLimits, trustedProxy and logs, as GET /api/settings shows them
	bugs        map[string]bool // deliberate violations, for TestChecksCatchViolations

	otps        map[string]*fakeOTP // OTPs by id (fake_otp_test.go)
	mfas        map[string]*fakeMFA // MFA sessions by id
	otpAttempts map[string]int      // auth-with-otp attempts by record id
	oauthLinks  map[string]string   // collection id/provider/user id at the provider → record id
	// refuseSMTP makes PATCH /api/settings refuse any smtp change, as a
	// server that will not send mail to the suite's sink (not a bug: the
	// mail checks must then skip).
	refuseSMTP bool
	// refuseOAuth2 makes PATCH /api/collections/{c} refuse any oauth2
	// change (not a bug: the OAuth2 checks of users must then skip).
	refuseOAuth2 bool
}

// fakeDefaultSettings are the settings a new fake starts with.
func fakeDefaultSettings() map[string]any {
	return map[string]any{
		"meta": map[string]any{"appName": "Acme", "appURL": "http://localhost:8090",
			"senderName": "Support", "senderAddress": "support@example.com"},
		"smtp": map[string]any{"enabled": false, "port": float64(587), "host": "smtp.example.com", "username": "",
			"authMethod": "", "tls": false, "localName": ""},
		"rateLimits": map[string]any{"enabled": false, "rules": []any{
			map[string]any{"label": "*:auth", "audience": "", "duration": 3.0, "maxRequests": 2.0},
			map[string]any{"label": "*:create", "audience": "", "duration": 5.0, "maxRequests": 20.0},
			map[string]any{"label": "/api/batch", "audience": "", "duration": 1.0, "maxRequests": 3.0},
			map[string]any{"label": "/api/", "audience": "", "duration": 10.0, "maxRequests": 300.0}}},
		"trustedProxy": map[string]any{"headers": []any{}, "useLeftmostIP": false},
		"logs":         map[string]any{"maxDays": float64(5), "minLevel": float64(0), "logIP": true, "logAuthId": false},
		"backups": map[string]any{"cron": "", "cronMaxKeep": float64(3), "s3": map[string]any{"enabled": false, "bucket": "",
			"region": "", "endpoint": "", "accessKey": "", "forcePathStyle": false}},
	}
}

func newFakeServer(suEmail, suPassword string) *fakeServer {
	f := &fakeServer{bugs: map[string]bool{}, settings: fakeDefaultSettings(),
		otps: map[string]*fakeOTP{}, mfas: map[string]*fakeMFA{}, otpAttempts: map[string]int{},
		oauthLinks: map[string]string{}}
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
		durations: map[string]any{"passwordResetToken": 1800.0, "emailChangeToken": 1800.0, "verificationToken": 259200.0, "fileToken": 180.0},
		otp: map[string]any{"enabled": false, "duration": 180.0, "length": 8.0,
			"emailTemplate": map[string]any{"subject": "OTP for {APP_NAME}", "body": "<p>{OTP}</p>"}},
		mfa:          map[string]any{"enabled": false, "duration": 1800.0, "rule": ""},
		oauth2Mapped: map[string]any{"id": "", "name": "", "username": "", "avatarURL": ""}}
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

// fakeOwnMessage replaces every message §7 does not name under the bug
// document-readings: a server free to word those messages as it likes.
const fakeOwnMessage = "A message of this server's own."

// fakeOwnCodes returns data with every validation code §7 does not name
// replaced by one of the fake's own, and the message of the one it names
// in the fake's own words (bug document-readings).
func fakeOwnCodes(data map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range data {
		fe, ok := v.(map[string]any)
		if !ok {
			out[k] = v
			continue
		}
		fe = maps.Clone(fe)
		if fe["code"] == "validation_invalid_mime_type" {
			fe["message"] = "Only application/zip archives, please."
		} else if _, ok := fe["code"].(string); ok {
			fe["code"] = "validation_fake_own"
		}
		out[k] = fe
	}
	return out
}

// bug reports whether the named deliberate violation is turned on. One of
// them, document-readings, is no violation of the document: the fake then
// takes the other choices the document leaves open (the envelope's keys in
// another order, its own words where §7 names no message, stats dates
// without a Z), which only the pocketbase twins of stricterReadings refuse.
func (f *fakeServer) bug(name string) bool { return f.bugs[name] }

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
	f        *fakeServer
}

// dashboard answers GET /_/: a page of one line with the headers of
// DASH-002, and 304 when If-None-Match names its ETag.
func (q *fakeReq) dashboard() error {
	h := q.w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", `"fake-dashboard"`)
	if q.r.Header.Get("If-None-Match") == `"fake-dashboard"` {
		q.w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	_, err := io.WriteString(q.w, "<!doctype html><title>fake</title>\n")
	return err
}

func (q *fakeReq) json(status int, v any) error {
	if m, ok := v.(map[string]any); ok && q.f.bug("document-readings") {
		// §2.6: the record holds id and its fields; collectionId and
		// collectionName are PocketBase's reading.
		if rec, ok := m["record"].(map[string]any); ok && m["token"] != nil {
			rec = maps.Clone(rec)
			delete(rec, "collectionId")
			delete(rec, "collectionName")
			m = maps.Clone(m)
			m["record"] = rec
			v = m
		}
	}
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
	q.w.Write(data)
	return nil
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := &fakeReq{w: w, r: r, f: f}
	for _, h := range securityHeaders {
		w.Header().Set(h[0], h[1])
	}
	q.auth, q.authColl = f.loadAuth(r.Header.Get("Authorization"), "auth")
	if err := f.route(q); err != nil {
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
		msg := fe.msg
		if f.bug("document-readings") && !documentMessages[msg] {
			msg = fakeOwnMessage
		}
		if f.bug("document-readings") {
			data = fakeOwnCodes(data)
		}
		if f.bug("document-readings") {
			fmt.Fprintf(w, `{"status":%d,"message":%q,"data":%s}`, fe.status, msg, mustJSON(data))
		} else {
			fmt.Fprintf(w, `{"data":%s,"message":%q,"status":%d}`, mustJSON(data), msg, fe.status)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var (
	reAuthRoute = regexp.MustCompile(`^/api/collections/([^/]+)/(auth-with-password|auth-with-oauth2|auth-refresh|auth-methods|impersonate/([^/]+))$`)
	reRecords   = regexp.MustCompile(`^/api/collections/([^/]+)/records(?:/([^/]+))?$`)
	reColl      = regexp.MustCompile(`^/api/collections(?:/([^/]+))?$`)
)

func (f *fakeServer) route(q *fakeReq) error {
	r, p := q.r, q.r.URL.Path
	switch {
	case p == "/api/settings" && (r.Method == "GET" || r.Method == "PATCH"):
		return f.handleSettings(q)
	case p == "/api/settings/test/email" && r.Method == "POST":
		return f.handleTestEmail(q)
	case p == pathTestS3 && r.Method == "POST":
		return f.handleTestS3(q)
	case r.Method == "GET" && p == "/api/health":
		return q.json(200, map[string]any{"message": "API is healthy.", "code": 200, "data": map[string]any{}})
	case r.Method == "GET" && p == "/_":
		q.w.Header().Set("Location", "/_/")
		q.w.WriteHeader(http.StatusTemporaryRedirect)
		return nil
	case r.Method == "GET" && p == "/_/":
		return q.dashboard()
	case (p == "/api/logs" || strings.HasPrefix(p, "/api/logs/")) && r.Method == "GET":
		// The refusals of the logs routes, for the checks of errors and
		// headers (ERR-001, HTTP-HEADERS-001): the fake holds no entries.
		switch {
		case q.auth == nil:
			return ferr(401, msgNeedsToken)
		case q.authColl.name != "_superusers":
			return ferr(403, msgNotAllowed)
		}
		return ferr(404, msgNotFound)
	case r.Method == "POST" && p == "/api/files/token":
		if q.auth == nil {
			return ferr(401, msgNeedsToken)
		}
		return q.json(200, map[string]any{"token": f.sign(q.authColl, q.auth, "file", 180, nil)})
	}
	if m := reOTPRoute.FindStringSubmatch(p); m != nil && r.Method == "POST" {
		return f.handleOTP(q, m[1], m[2])
	}
	if m := reFlowRoute.FindStringSubmatch(p); m != nil && r.Method == "POST" {
		return f.handleFlow(q, m[1], m[2])
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

// newFakeHTTPServer serves f on loopback.
func newFakeHTTPServer(f *fakeServer) *httptest.Server { return httptest.NewServer(f) }
