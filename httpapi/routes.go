package httpapi

import "net/http"

// addRoutes registers the whole API, one line per route, each with its
// limits (see Limits):
//
//	limits      body    read  write  routes
//	json        1 MiB   10 s  30 s   every route not listed below
//	auth        64 KiB  10 s  30 s   auth-with-password, auth-refresh, impersonate, files/token
//
// (Config can lower or raise the body limit and deadlines; the auth body
// limit stays at most 64 KiB.) No route accepts files yet, so none takes
// PocketBase's 32 MiB or streams to disk; backup upload and download and
// server-sent events will need limits of their own with long deadlines.
// Requests no route handles (a CORS preflight, a redirect to a canonical
// path) get the json deadlines.
//
// Memory under hostile bodies. All bodies being read share a budget of
// 32 MiB (DefaultBodyBudget): a body takes its declared length (or the
// route's limit, if chunked) when the handler first reads it, and gives it
// back when the handler returns; one that does not fit is refused at once
// with 503. The bodies being read are therefore at most 32 MiB together
// whatever the number of connections. A JSON body is read into a buffer of
// its declared size and decoded in place, so it is held about twice (its
// bytes and its decoded strings): at most 64 MiB live, which the garbage
// collector (GOGC=100) lets the heap double. Measured with the built
// binary on the records route: 30 concurrent 1 MiB bodies, peak RSS 38 MB;
// three rounds of 200 concurrent ones (a third refused), peak 110 MB and
// 50 MB 20 s later.
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
	m.Handle("GET /api/logs/{id}", r(json, s.handleLogView))

	m.Handle("GET /api/settings", r(json, s.handleSettingsView))
	m.Handle("PATCH /api/settings", r(json, s.handleSettingsUpdate))

	// Everything else, including a known path with the wrong method, is the
	// JSON 404 (never the mux's plain-text 404 or 405).
	m.Handle("/", r(json, func(http.ResponseWriter, *http.Request) error { return errNotFound(nil) }))
}
