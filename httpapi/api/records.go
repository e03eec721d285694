package api

import (
	"errors"
	"net"
	"net/http"
	"strconv"

	"strongbox/authn"
)

// recordsCollection finds the collection of a records route.
func (s *Server) recordsCollection(r *http.Request) (*authn.Collection, error) {
	c, ok := s.auth.Collection(r.PathValue("collection"))
	if !ok {
		return nil, newError(http.StatusNotFound, msgMissingCollection, nil)
	}
	if !c.IsAuth() {
		return nil, newError(http.StatusNotFound, "Records of base collections are not stored by this server.", nil)
	}
	return c, nil
}

// handleRecordsList handles GET /api/collections/{collection}/records.
func (s *Server) handleRecordsList(w http.ResponseWriter, r *http.Request) error {
	if sc := s.sysCollection(r); sc != nil {
		return s.handleSysList(w, r, sc)
	}
	c, err := s.recordsCollection(r)
	if err != nil {
		return err
	}
	if c.ListRule == nil && !stateOf(r).isSuperuser() {
		return errForbidden(msgSuperusersOnly)
	}
	q := query(r)
	pg, err := parsePaging(q.Get("page"), q.Get("perPage"), q.Get("skipTotal"))
	if err != nil {
		return err
	}
	recs, req := s.auth.Records(c), ruleRequest(r, nil, authn.ContextDefault)
	if !stateOf(r).isSuperuser() {
		recs = s.auth.FilterByRule(c, authn.RuleList, recs, req)
	}
	if recs, err = filterAndSort(recs, q.Get("filter"), q.Get("sort"), recordFields(c, stateOf(r).isSuperuser()), s.now); err != nil {
		return err
	}
	p := pageOf(pg, recs)
	items := make([]map[string]any, 0, len(recs))
	for _, rec := range p.Items.([]*authn.Record) {
		items = append(items, rec.Public(c, s.showEmail(r, c, rec, req), stateOf(r).isSuperuser()))
	}
	p.Items = items
	return writeJSON(w, r, http.StatusOK, p)
}

// paging holds normalised list parameters.
type paging struct {
	page, perPage int
	skipTotal     bool
}

// parsePaging applies PocketBase's rules: non-integers are a 400, page
// below 1 becomes 1, perPage below 1 becomes 30 and above 1000 becomes 1000.
func parsePaging(pageStr, perPageStr, skipStr string) (paging, error) {
	p := paging{page: 1, perPage: 30}
	if pageStr != "" {
		n, err := strconv.Atoi(pageStr)
		if err != nil {
			return p, errBadRequest(msgBadRequest, err)
		}
		p.page = max(n, 1)
	}
	if perPageStr != "" {
		n, err := strconv.Atoi(perPageStr)
		if err != nil {
			return p, errBadRequest(msgBadRequest, err)
		}
		switch {
		case n < 1:
			p.perPage = 30
		case n > 1000:
			p.perPage = 1000
		default:
			p.perPage = n
		}
	}
	if skipStr != "" {
		b, err := strconv.ParseBool(skipStr)
		if err != nil {
			return p, errBadRequest(msgBadRequest, err)
		}
		p.skipTotal = b
	}
	return p, nil
}

// pageOf returns the page of items p selects.
func pageOf[T any](p paging, items []T) *page {
	out := &page{Page: p.page, PerPage: p.perPage, Items: []T{}}
	// Compare in pages, not items: (page-1)*perPage overflows for a huge page.
	if p.page-1 < (len(items)+p.perPage-1)/p.perPage {
		start := (p.page - 1) * p.perPage
		out.Items = items[start:min(start+p.perPage, len(items))]
	}
	if p.skipTotal {
		out.TotalItems, out.TotalPages = -1, -1
	} else {
		out.TotalItems = len(items)
		out.TotalPages = (len(items) + p.perPage - 1) / p.perPage
	}
	return out
}

// handleRecordView handles GET /api/collections/{collection}/records/{id}.
func (s *Server) handleRecordView(w http.ResponseWriter, r *http.Request) error {
	if sc := s.sysCollection(r); sc != nil {
		return s.handleSysView(w, r, sc)
	}
	c, err := s.recordsCollection(r)
	if err != nil {
		return err
	}
	rec, ok := s.auth.Record(c, r.PathValue("id"))
	if c.ViewRule == nil && !stateOf(r).isSuperuser() {
		return errForbidden(msgSuperusersOnly)
	}
	if !ok {
		return errNotFound(nil)
	}
	req := ruleRequest(r, nil, authn.ContextDefault)
	if err := s.ruleAllows(r, c, authn.RuleView, rec, req); err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, rec.Public(c, s.showEmail(r, c, rec, req), stateOf(r).isSuperuser()))
}

// handleRecordCreate handles POST /api/collections/{collection}/records:
// sign-up on collections whose createRule is "" (users), superusers only
// elsewhere.
func (s *Server) handleRecordCreate(w http.ResponseWriter, r *http.Request) error {
	if s.sysCollection(r) != nil {
		return sysWrite(r)
	}
	c, err := s.recordsCollection(r)
	if err != nil {
		return err
	}
	if c.CreateRule == nil && !stateOf(r).isSuperuser() {
		return errForbidden(msgSuperusersOnly)
	}
	b, err := bind(r)
	if err != nil {
		return err
	}
	if err := b.refuseUnstored(msgCreateFailed); err != nil {
		return err
	}
	in := recordInput(r, c, b)
	req := ruleRequest(r, in.Values, authn.ContextDefault)
	draft := s.auth.DraftRecord(c, in.Values)
	if err := s.ruleAllows(r, c, authn.RuleCreate, draft, req); err != nil {
		return errBadRequest(msgCreateFailed, err)
	}
	in.Manager = s.manages(r, c, draft, req)
	rec, err := s.auth.CreateRecord(r.Context(), c, in)
	if data := validationData(err); data != nil {
		return errValidation(msgCreateFailed, data)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, rec.Public(c, s.showEmail(r, c, rec, req), in.Superuser))
}

// recordValues returns the values of a record body. A form body is merged
// with the URL's query values (see bind); a query-only key that is no field
// of the collection is a parameter of the route (such as expand or fields),
// not a value the client asked to store, so it is left out rather than
// refused as an unknown field.
func recordValues(r *http.Request, c *authn.Collection, b *body) map[string]any {
	if !b.form {
		return b.vals
	}
	for k := range query(r) {
		if _, inBody := r.PostForm[k]; !inBody && c.Field(k) == nil {
			delete(b.vals, k)
		}
	}
	return b.vals
}

// recordInput is the record body b of a create or update of c as the
// store takes it from the caller (authn.RecordInput.Accepted: without
// hidden fields unless a superuser sent it), which is also the body the
// rules read, as in PocketBase. Manager is left to the caller, which
// decides it with the rules.
func recordInput(r *http.Request, c *authn.Collection, b *body) authn.RecordInput {
	in := authn.RecordInput{Values: recordValues(r, c, b), Superuser: stateOf(r).isSuperuser()}
	in.Values = in.Accepted(c)
	return in
}

// handleRecordUpdate handles PATCH /api/collections/{collection}/records/{id}.
func (s *Server) handleRecordUpdate(w http.ResponseWriter, r *http.Request) error {
	if s.sysCollection(r) != nil {
		return sysWrite(r)
	}
	c, err := s.recordsCollection(r)
	if err != nil {
		return err
	}
	if c.UpdateRule == nil && !stateOf(r).isSuperuser() {
		return errForbidden(msgSuperusersOnly)
	}
	rec, ok := s.auth.Record(c, r.PathValue("id"))
	if !ok {
		return errNotFound(nil)
	}
	b, err := bind(r)
	if err != nil {
		return err
	}
	if err := b.refuseUnstored("Failed to update record."); err != nil {
		return err
	}
	in := recordInput(r, c, b)
	req := ruleRequest(r, in.Values, authn.ContextDefault)
	if err := s.ruleAllows(r, c, authn.RuleUpdate, rec, req); err != nil {
		return err
	}
	in.Manager = s.manages(r, c, rec, req)
	rec, err = s.auth.UpdateRecord(r.Context(), c, rec.ID, in)
	if data := validationData(err); data != nil {
		return errValidation("Failed to update record.", data)
	}
	if errors.Is(err, authn.ErrNotFound) {
		return errNotFound(err)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, rec.Public(c, s.showEmail(r, c, rec, req), in.Superuser))
}

// handleRecordDelete handles DELETE /api/collections/{collection}/records/{id}.
func (s *Server) handleRecordDelete(w http.ResponseWriter, r *http.Request) error {
	if sc := s.sysCollection(r); sc != nil {
		return s.handleSysDelete(w, r, sc)
	}
	c, err := s.recordsCollection(r)
	if err != nil {
		return err
	}
	if c.DeleteRule == nil && !stateOf(r).isSuperuser() {
		return errForbidden(msgSuperusersOnly)
	}
	rec, ok := s.auth.Record(c, r.PathValue("id"))
	if !ok {
		return errNotFound(nil)
	}
	if err := s.ruleAllows(r, c, authn.RuleDelete, rec, ruleRequest(r, nil, authn.ContextDefault)); err != nil {
		return err
	}
	switch err := s.auth.DeleteRecord(c, rec.ID); {
	case errors.Is(err, authn.ErrLastSuperuser):
		return errBadRequest("You can't delete the only existing superuser.", err)
	case errors.Is(err, authn.ErrNotFound):
		return errNotFound(err)
	case err != nil:
		return err
	}
	return noContent(w)
}

// remoteIP returns the address of the connection's peer, without the port.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
