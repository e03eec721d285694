package api

import (
	"errors"
	"net/http"

	"strongbox/httpapi/dashboard"
)

// handleDashboard handles GET (and HEAD) /_/{path...}: the dashboard's
// files (package dashboard), index.html for /_/ itself; a
// name that is no file of it is the JSON 404, with the dashboard's headers
// (its Content-Security-Policy among them) like every answer under /_/.
// As PocketBase v0.31.0 does for its dashboard, a file served is not
// request-logged (a failure still is), so that opening the dashboard does
// not fill the logs it shows.
func (s *Server) handleDashboard(w http.ResponseWriter, r *http.Request) error {
	err := dashboard.Serve(w, r, r.PathValue("path"))
	if errors.Is(err, dashboard.ErrNotFound) {
		return errNotFound(err)
	}
	stateOf(r).quiet = true
	return err
}

// handleDashboardRoot handles GET /_: a redirect to /_/ (307, query kept), as
// PocketBase v0.31.0's router does for the root of its dashboard, so that
// the app's relative URLs resolve under /_/.
func (s *Server) handleDashboardRoot(w http.ResponseWriter, r *http.Request) error {
	loc := "/_/"
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	dashboard.SetHeaders(w.Header())
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusTemporaryRedirect)
	return nil
}
