package httpapi

import "net/http"

// addRoutes registers the whole API, one line per route.
func (s *Server) addRoutes() {
	m, h := s.mux, s.handle

	m.Handle("GET /api/health", h(s.handleHealth))

	m.Handle("GET /api/collections/{collection}/auth-methods", h(s.handleAuthMethods))
	m.Handle("POST /api/collections/{collection}/auth-with-password", h(s.handleAuthWithPassword))
	m.Handle("POST /api/collections/{collection}/auth-refresh", h(s.handleAuthRefresh))
	m.Handle("POST /api/collections/{collection}/impersonate/{id}", h(s.handleImpersonate))
	m.Handle("POST /api/files/token", h(s.handleFileToken))

	m.Handle("GET /api/collections", h(s.handleCollectionsList))
	m.Handle("POST /api/collections", h(s.handleCollectionCreate))
	m.Handle("GET /api/collections/{collection}", h(s.handleCollectionView))
	m.Handle("PATCH /api/collections/{collection}", h(s.handleCollectionUpdate))
	m.Handle("DELETE /api/collections/{collection}", h(s.handleCollectionDelete))

	m.Handle("GET /api/collections/{collection}/records", h(s.handleRecordsList))
	m.Handle("POST /api/collections/{collection}/records", h(s.handleRecordCreate))
	m.Handle("GET /api/collections/{collection}/records/{id}", h(s.handleRecordView))
	m.Handle("PATCH /api/collections/{collection}/records/{id}", h(s.handleRecordUpdate))
	m.Handle("DELETE /api/collections/{collection}/records/{id}", h(s.handleRecordDelete))

	m.Handle("GET /api/logs", h(s.handleLogsList))
	m.Handle("GET /api/logs/stats", h(s.handleLogsStats))
	m.Handle("GET /api/logs/{id}", h(s.handleLogView))

	m.Handle("GET /api/settings", h(s.handleSettingsView))
	m.Handle("PATCH /api/settings", h(s.handleSettingsUpdate))

	// Everything else, including a known path with the wrong method, is the
	// JSON 404 (never the mux's plain-text 404 or 405).
	m.Handle("/", h(func(http.ResponseWriter, *http.Request) error { return errNotFound(nil) }))
}
