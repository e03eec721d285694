package api

import (
	"errors"
	"net/http"
	"slices"

	"strongbox/authn"
)

// PocketBase's system base collections _mfas, _otps, _externalAuths and
// _authOrigins are served through the records API as PocketBase v0.31.0
// serves them, from the auth store's MFA sessions, OTPs, OAuth2 links and
// sign-in origins. Their rules are PocketBase's (authn.SystemOwnerRule):
// a signed-in record lists and views the rows that refer to it (a guest
// gets an empty list), superusers all of them; a record deletes its own
// _externalAuths and _authOrigins rows (the v0.31 SDK's
// unlinkExternalAuth does), only superusers delete _mfas and _otps rows;
// only superusers may create or change one (403 for anyone else). Hidden
// fields (the address an OTP went to) are shown to, filtered and sorted by
// superusers only; the OTP's password is always "" and never compared.

// sysRecords is where the rows of one system base collection come from.
type sysRecords struct {
	rows   func(*authn.Store) []map[string]any // every row, as a superuser sees it, oldest first
	delete func(*authn.Store, string) error    // durably; authn.ErrNotFound for an unknown id
}

// sysSources maps the system base collections' ids to their rows.
var sysSources = map[string]sysRecords{
	authn.MFAsCollectionID: {(*authn.Store).MFARecords, (*authn.Store).DeleteMFAID},
	authn.OTPsCollectionID: {(*authn.Store).OTPRecords, (*authn.Store).DeleteOTPID},
	authn.ExternalAuthsCollectionID: {func(s *authn.Store) []map[string]any {
		return publicRows(s.AllExternalAuths())
	}, (*authn.Store).DeleteExternalAuthID},
	authn.AuthOriginsCollectionID: {func(s *authn.Store) []map[string]any {
		return publicRows(s.AllAuthOrigins())
	}, (*authn.Store).DeleteAuthOriginID},
}

// publicRows returns the records of rows.
func publicRows[T interface{ Public() map[string]any }](rows []T) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = r.Public()
	}
	return out
}

// sysCollection returns the system base collection the records route
// names, or nil.
func (s *Server) sysCollection(r *http.Request) *authn.Collection {
	c, ok := s.auth.SystemCollection(r.PathValue("collection"))
	if !ok {
		return nil
	}
	return c
}

// ownsRow reports whether the request passes rule (a system collection's:
// null or authn.SystemOwnerRule) for row.
func ownsRow(r *http.Request, rule *string, row map[string]any) bool {
	st := stateOf(r)
	if st.isSuperuser() {
		return true
	}
	return rule != nil && st.rec != nil && row["recordRef"] == st.rec.ID && row["collectionRef"] == st.col.ID
}

// sysFields returns the fields of c the caller may filter and sort by:
// every field but the OTP's password, and hidden ones for superusers only.
func sysFields(c *authn.Collection, superuser bool) map[string]listField[map[string]any] {
	m := map[string]listField[map[string]any]{}
	for _, f := range c.Fields {
		if f.Type == authn.FieldPassword || (f.Hidden && !superuser) {
			continue
		}
		name := f.Name
		m[name] = strField(func(row map[string]any) string {
			switch v := row[name].(type) {
			case string:
				return v
			case authn.Time:
				return v.String()
			}
			return ""
		})
	}
	return m
}

// shown returns row as the caller sees it: without hidden fields unless a
// superuser asks.
func shown(r *http.Request, c *authn.Collection, row map[string]any) map[string]any {
	if stateOf(r).isSuperuser() {
		return row
	}
	for _, f := range c.Fields {
		if f.Hidden {
			delete(row, f.Name)
		}
	}
	return row
}

// handleSysList handles GET /api/collections/{system collection}/records.
func (s *Server) handleSysList(w http.ResponseWriter, r *http.Request, c *authn.Collection) error {
	q := query(r)
	pg, err := parsePaging(q.Get("page"), q.Get("perPage"), q.Get("skipTotal"))
	if err != nil {
		return err
	}
	rows := slices.DeleteFunc(sysSources[c.ID].rows(s.auth), func(row map[string]any) bool { return !ownsRow(r, c.ListRule, row) })
	if rows, err = filterAndSort(rows, q.Get("filter"), q.Get("sort"), sysFields(c, stateOf(r).isSuperuser()), s.now); err != nil {
		return err
	}
	p := pageOf(pg, rows)
	items := p.Items.([]map[string]any)
	for _, row := range items {
		shown(r, c, row)
	}
	return writeJSON(w, r, http.StatusOK, p)
}

// sysRow returns the row of the path's id that rule lets the caller
// reach, or the 404 PocketBase answers for a row a rule hides.
func (s *Server) sysRow(r *http.Request, c *authn.Collection, rule *string) (map[string]any, error) {
	id := r.PathValue("id")
	for _, row := range sysSources[c.ID].rows(s.auth) {
		if row["id"] == id && ownsRow(r, rule, row) {
			return row, nil
		}
	}
	return nil, errNotFound(nil)
}

// handleSysView handles GET /api/collections/{system collection}/records/{id}.
func (s *Server) handleSysView(w http.ResponseWriter, r *http.Request, c *authn.Collection) error {
	row, err := s.sysRow(r, c, c.ViewRule)
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, shown(r, c, row))
}

// handleSysDelete handles DELETE /api/collections/{system collection}/records/{id}:
// the row is gone for good (a deleted MFA session or OTP no longer signs
// anyone in).
func (s *Server) handleSysDelete(w http.ResponseWriter, r *http.Request, c *authn.Collection) error {
	if c.DeleteRule == nil && !stateOf(r).isSuperuser() {
		return errForbidden(msgSuperusersOnly)
	}
	row, err := s.sysRow(r, c, c.DeleteRule)
	if err != nil {
		return err
	}
	if err := sysSources[c.ID].delete(s.auth, row["id"].(string)); errors.Is(err, authn.ErrNotFound) {
		return errNotFound(err)
	} else if err != nil {
		return err
	}
	return noContent(w)
}

// sysWrite answers a create or update of a system collection's record:
// 403 for anyone but a superuser (their rules are null), as PocketBase
// answers; a superuser's is refused too, since these rows are the auth
// store's own state, which only its flows write.
func sysWrite(r *http.Request) error {
	if !stateOf(r).isSuperuser() {
		return errForbidden(msgSuperusersOnly)
	}
	return errBadRequest("The records of system collections are written by the server's sign-in flows only.", nil)
}
