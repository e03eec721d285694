package api

import "net/http"

// addRoutes registers the whole API, one line per route, each with its
// limits (see Limits):
//
//	limits      body    read  write  routes
//	json        1 MiB   10 s  30 s   every route not listed below
//	auth        64 KiB  10 s  30 s   auth-with-password, auth-refresh, impersonate, files/token,
//	                                 request-otp, auth-with-otp, auth-with-oauth2, auth-with-totp, totp/*, passkeys/*, auth-with-passkey*,
//	                                 request-/confirm-verification, -password-reset, -email-change,
//	                                 GET|POST /api/oauth2-redirect
//	backup      1 MiB   10 s  1 h    POST /api/backups (create), GET /api/backups/{key} (download),
//	                                 POST /api/backups/{key}/restore (verifies the whole archive first)
//	upload      stream  1 h   1 h    POST /api/backups/upload
//
// (Config can lower or raise the body limit and deadlines; the auth body
// limit stays at most 64 KiB; the backup deadlines are BackupTimeout.) No
// route reads PocketBase's 32 MiB into memory: the upload streams its body
// to disk (Limits.Stream), charged 64 KiB of the budget, at most
// Backups.MaxUpload bytes.
// Requests no route handles (a CORS preflight, a redirect to a canonical
// path) get the json deadlines.
//
// Memory under hostile bodies. All bodies being read and decoded share a
// budget of 32 MiB (DefaultBodyBudget), of which one client address (an
// IPv6 one by its /64) may hold a quarter. A body is charged as its bytes
// arrive, after each read, and given back when the handler returns: a body
// declared and not sent holds nothing, a stalled one only what it sent.
// Bytes that do not fit are refused with 503, and the connection closed.
// Decoding is charged too, before it happens: a JSON body may have at most
// 10,000 values and 64 levels (checkJSONShape; past them the 400 loading
// error), and is charged 128 bytes per value; a form 128 bytes per '&' or,
// multipart, per line. The bound:
//
//	live memory of request bodies ≤ 2.1 × 32 MiB + 512 B per connection reading one
//
// since what a body holds, its buffer (which doubles from 512 bytes as
// bytes arrive, up to the declared length) and its decoded value, is at
// most 2.1 times its charge. TestDecodedBodyMemory measures it for the
// worst shapes the check allows: a 1 MiB string, 2.08 × (the buffer and
// the decoded copy); 5,000 objects of one key padded to 1 MiB, 1.68 ×
// (such a map costs ~360 bytes); 10,000 values in 15 to 60 KB, 0.14 to
// 1.36 ×. A read that does not fit overshoots by its own
// bytes, within that buffer. So about 70 MiB live with 4096 connections,
// which the garbage collector (GOGC=100) lets the heap double: request
// bodies cannot take the process much past 150 MiB. Not counted: the
// copies a handler makes of what it decoded (the collection routes,
// superusers only, re-encode the definition once).
// Measured with the built binary (go test -tags loadfault): see the
// package doc's "Limits" section (doc.go).
// Headers are bounded apart: at most 4096 connections (listen.go) each
// holding at most MaxHeaderBytes + 4 KiB = 36 KiB while they are read,
// 144 MiB in the worst case.
func (s *Server) addRoutes() {
	m, json, auth := s.mux, s.jsonLimits, s.authLimits
	r := s.route

	m.Handle("GET /api/health", r(json, s.handleHealth))

	m.Handle("GET /api/collections/{collection}/auth-methods", r(json, s.handleAuthMethods))
	m.Handle("POST /api/collections/{collection}/auth-with-password", r(auth, s.handleAuthWithPassword))
	m.Handle("POST /api/collections/{collection}/auth-refresh", r(auth, s.handleAuthRefresh))
	m.Handle("POST /api/collections/{collection}/impersonate/{id}", r(auth, s.handleImpersonate))
	m.Handle("POST /api/files/token", r(auth, s.handleFileToken))
	m.Handle("POST /api/collections/{collection}/request-otp", r(auth, s.handleRequestOTP))
	m.Handle("POST /api/collections/{collection}/auth-with-otp", r(auth, s.handleAuthWithOTP))
	m.Handle("POST /api/collections/{collection}/auth-with-oauth2", r(auth, s.handleAuthWithOAuth2))
	m.Handle("POST /api/collections/{collection}/auth-with-totp", r(auth, s.handleAuthWithTOTP))
	m.Handle("GET /api/collections/{collection}/totp", r(auth, s.handleTOTPStatus))
	m.Handle("POST /api/collections/{collection}/totp/setup", r(auth, s.handleTOTPSetup))
	m.Handle("POST /api/collections/{collection}/totp/confirm", r(auth, s.handleTOTPConfirm))
	m.Handle("POST /api/collections/{collection}/totp/disable", r(auth, s.handleTOTPDisable))
	// Passkeys (passkey.go; strongbox's, not PocketBase's).
	m.Handle("POST /api/collections/{collection}/passkeys/register/options", r(auth, s.handlePasskeyRegisterOptions))
	m.Handle("POST /api/collections/{collection}/passkeys/register", r(auth, s.handlePasskeyRegister))
	m.Handle("GET /api/collections/{collection}/passkeys", r(auth, s.handlePasskeysList))
	m.Handle("DELETE /api/collections/{collection}/passkeys/{id}", r(auth, s.handlePasskeyDelete))
	m.Handle("POST /api/collections/{collection}/auth-with-passkey/options", r(auth, s.handleAuthWithPasskeyOptions))
	m.Handle("POST /api/collections/{collection}/auth-with-passkey", r(auth, s.handleAuthWithPasskey))

	m.Handle("POST /api/collections/{collection}/request-verification", r(auth, s.handleRequestVerification))
	m.Handle("POST /api/collections/{collection}/confirm-verification", r(auth, s.handleConfirmVerification))
	m.Handle("POST /api/collections/{collection}/request-password-reset", r(auth, s.handleRequestPasswordReset))
	m.Handle("POST /api/collections/{collection}/confirm-password-reset", r(auth, s.handleConfirmPasswordReset))
	m.Handle("POST /api/collections/{collection}/request-email-change", r(auth, s.handleRequestEmailChange))
	m.Handle("POST /api/collections/{collection}/confirm-email-change", r(auth, s.handleConfirmEmailChange))

	m.Handle("GET /api/collections", r(json, s.handleCollectionsList))
	m.Handle("POST /api/collections", r(json, s.handleCollectionCreate))
	m.Handle("GET /api/collections/{collection}", r(json, s.handleCollectionView))
	m.Handle("PATCH /api/collections/{collection}", r(json, s.handleCollectionUpdate))
	m.Handle("DELETE /api/collections/{collection}", r(json, s.handleCollectionDelete))

	m.Handle("GET /api/collections/{collection}/records", r(json, s.handleRecordsList))
	m.Handle("POST /api/collections/{collection}/records", r(json, s.handleRecordCreate))
	m.Handle("GET /api/collections/{collection}/records/{id}", r(json, s.handleRecordView))
	m.Handle("PATCH /api/collections/{collection}/records/{id}", r(json, s.handleRecordUpdate))
	m.Handle("DELETE /api/collections/{collection}/records/{id}", r(json, s.handleRecordDelete))

	m.Handle("GET /api/logs", r(json, s.handleLogsList))
	m.Handle("GET /api/logs/stats", r(json, s.handleLogsStats))
	m.Handle("GET /api/logs/export", r(json, s.handleLogExport))
	m.Handle("GET /api/logs/{id}", r(json, s.handleLogView))

	m.Handle("GET /api/backups", r(json, s.handleBackupsList))
	m.Handle("GET /api/backups/stream", r(json, s.handleBackupStream))
	m.Handle("POST /api/backups", r(backupLimits(json), s.handleBackupCreate))
	m.Handle("POST /api/backups/upload", r(uploadLimits(), s.handleBackupUpload))
	m.Handle("GET /api/backups/check", r(json, s.handleBackupCheckState))
	m.Handle("POST /api/backups/check", r(json, s.handleBackupCheckRun))
	m.Handle("GET /api/backups/{key}", r(backupLimits(json), s.handleBackupDownload))
	m.Handle("DELETE /api/backups/{key}", r(json, s.handleBackupDelete))
	m.Handle("POST /api/backups/{key}/restore", r(backupLimits(json), s.handleBackupRestore))

	// The SDK's all-in-one OAuth2 flow (realtime.go, oauth2_redirect.go).
	// A stream has the json limits, its write deadline restarted at each
	// event, and ends after RealtimeIdle without one.
	m.Handle("GET /api/realtime", r(json, s.handleRealtimeConnect))
	m.Handle("POST /api/realtime", r(json, s.handleRealtimeSubscribe))
	m.Handle("GET /api/oauth2-redirect", r(auth, s.handleOAuth2Redirect))
	m.Handle("POST /api/oauth2-redirect", r(auth, s.handleOAuth2Redirect))
	m.Handle("GET /api/"+oauth2SuccessLocation, r(json, s.handleOAuth2Page(oauth2SuccessLocation)))
	m.Handle("GET /api/"+oauth2FailureLocation, r(json, s.handleOAuth2Page(oauth2FailureLocation)))

	m.Handle("GET /api/settings", r(json, s.handleSettingsView))
	m.Handle("PATCH /api/settings", r(json, s.handleSettingsUpdate))
	m.Handle("POST /api/settings/test/email", r(json, s.handleSettingsTestEmail))
	m.Handle("POST /api/settings/test/s3", r(json, s.handleSettingsTestS3))

	// The dashboard (dashboard.go): files only, the JSON API above is all
	// it talks to. A GET route answers HEAD too.
	m.Handle("GET /_", r(json, s.handleDashboardRoot))
	m.Handle("GET /_/{path...}", r(json, s.handleDashboard))

	// Everything else, including a known path with the wrong method, is the
	// JSON 404 (never the mux's plain-text 404 or 405).
	m.Handle("/", r(json, func(http.ResponseWriter, *http.Request) error { return errNotFound(nil) }))
}
