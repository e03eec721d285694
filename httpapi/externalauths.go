package httpapi

import (
	"errors"
	"net/http"
	"slices"

	"strongbox/authn"
)

// The OAuth2 links are served as PocketBase's _externalAuths records,
// which is how a v0.31 SDK lists them (listExternalAuths: the records
// list filtered by recordRef) and unlinks one (unlinkExternalAuth: find it
// by recordRef and provider, then delete it). Their rules are PocketBase's: a record sees and deletes its own
// links (recordRef = @request.auth.id and collectionRef =
// @request.auth.collectionId), superusers all of them; nobody creates or
// changes one through the API.

// isExternalAuths reports whether the records route names _externalAuths.
func isExternalAuths(r *http.Request) bool {
	c := r.PathValue("collection")
	return c == authn.ExternalAuthsName || c == authn.ExternalAuthsCollectionID
}

// ownsLink reports whether the request may see and delete link l.
func ownsLink(r *http.Request, l *authn.ExternalAuth) bool {
	st := stateOf(r)
	return st.isSuperuser() || (st.rec != nil && st.rec.ID == l.RecordID && st.col.ID == l.CollectionID)
}

// externalAuthFields are the filterable fields of the links list.
var externalAuthFields = map[string]listField[*authn.ExternalAuth]{
	"id":            strField(func(l *authn.ExternalAuth) string { return l.ID }),
	"collectionRef": strField(func(l *authn.ExternalAuth) string { return l.CollectionID }),
	"recordRef":     strField(func(l *authn.ExternalAuth) string { return l.RecordID }),
	"provider":      strField(func(l *authn.ExternalAuth) string { return l.Provider }),
	"providerId":    strField(func(l *authn.ExternalAuth) string { return l.ProviderID }),
	"created":       strField(func(l *authn.ExternalAuth) string { return authn.Time{Time: l.Created}.String() }),
	"updated":       strField(func(l *authn.ExternalAuth) string { return authn.Time{Time: l.Updated}.String() }),
}

// handleExternalAuthsList handles GET /api/collections/_externalAuths/records:
// the caller's links (all of them for a superuser), filtered, sorted and
// paged as records are.
func (s *Server) handleExternalAuthsList(w http.ResponseWriter, r *http.Request) error {
	q := query(r)
	pg, err := parsePaging(q.Get("page"), q.Get("perPage"), q.Get("skipTotal"))
	if err != nil {
		return err
	}
	links := slices.DeleteFunc(s.auth.AllExternalAuths(), func(l *authn.ExternalAuth) bool { return !ownsLink(r, l) })
	if links, err = filterAndSort(links, q.Get("filter"), q.Get("sort"), externalAuthFields, s.now); err != nil {
		return err
	}
	p := pageOf(pg, links)
	items := make([]map[string]any, 0, len(links))
	for _, l := range p.Items.([]*authn.ExternalAuth) {
		items = append(items, l.Public())
	}
	p.Items = items
	return writeJSON(w, r, http.StatusOK, p)
}

// externalAuth returns the link of the path's id that the caller owns, or
// the 404 PocketBase answers for one a rule hides.
func (s *Server) externalAuth(r *http.Request) (*authn.ExternalAuth, error) {
	id := r.PathValue("id")
	for _, l := range s.auth.AllExternalAuths() {
		if l.ID == id && ownsLink(r, l) {
			return l, nil
		}
	}
	return nil, errNotFound(nil)
}

// handleExternalAuthView handles GET /api/collections/_externalAuths/records/{id}.
func (s *Server) handleExternalAuthView(w http.ResponseWriter, r *http.Request) error {
	l, err := s.externalAuth(r)
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, l.Public())
}

// handleExternalAuthDelete handles DELETE /api/collections/_externalAuths/records/{id}:
// unlinking a provider from the caller's record.
func (s *Server) handleExternalAuthDelete(w http.ResponseWriter, r *http.Request) error {
	l, err := s.externalAuth(r)
	if err != nil {
		return err
	}
	if err := s.auth.DeleteExternalAuthID(l.ID); errors.Is(err, authn.ErrNotFound) {
		return errNotFound(err)
	} else if err != nil {
		return err
	}
	return noContent(w)
}
