package api

import (
	"net/http"
	"strings"
	"unicode"

	"strongbox/authn"
)

// API rules: a collection's rules are filters over a record and the
// request (authn.Store.RuleAllows), which superusers bypass. As PocketBase
// v0.31.0 answers them: a null rule is 403 for anyone else (each handler
// checks it first); a list shows the records its rule lets through; a
// view, update or delete the rule refuses is 404; a create it refuses is
// 400 "Failed to create record.".

// ruleRequest is what a rule reads of r: its method, first query and
// header values, the caller, and body, the submitted fields (nil when the
// route reads none), in context (authn.ContextDefault …).
func ruleRequest(r *http.Request, body map[string]any, context string) *authn.Request {
	st := stateOf(r)
	q := &authn.Request{Method: r.Method, Context: context, Body: body,
		Query: map[string]string{}, Headers: map[string]string{}}
	for k, v := range query(r) {
		if len(v) > 0 {
			q.Query[k] = v[0]
		}
	}
	for k, v := range r.Header {
		if len(v) > 0 {
			q.Headers[headerKey(k)] = v[0]
		}
	}
	if st != nil && st.rec != nil {
		q.Auth, q.AuthCollection = st.rec, st.col
	}
	return q
}

// ruleAllows reports whether the request req passes rule kind of c for
// rec, and the 404 to answer when it does not; superusers always pass.
func (s *Server) ruleAllows(r *http.Request, c *authn.Collection, kind authn.RuleKind, rec *authn.Record, req *authn.Request) error {
	if stateOf(r).isSuperuser() || s.auth.RuleAllows(c, kind, rec, req) {
		return nil
	}
	return errNotFound(nil)
}

// manages reports whether the caller has manager access to rec of c:
// a superuser, or a signed-in record that c's manageRule matches for rec.
// A manager may set email, password and verified without the old
// password, and sees the email whatever emailVisibility says.
func (s *Server) manages(r *http.Request, c *authn.Collection, rec *authn.Record, req *authn.Request) bool {
	st := stateOf(r)
	if st.isSuperuser() {
		return true
	}
	return st.rec != nil && s.auth.RuleAllows(c, authn.RuleManage, rec, req)
}

// showEmail reports whether the caller may see rec's email regardless of
// its emailVisibility: superusers, the record itself, and the records
// the caller manages.
func (s *Server) showEmail(r *http.Request, c *authn.Collection, rec *authn.Record, req *authn.Request) bool {
	st := stateOf(r)
	if st.isSuperuser() || (st.rec != nil && st.rec.ID == rec.ID) {
		return true
	}
	return c.ManageRule != nil && s.manages(r, c, rec, req)
}

// headerKey returns the name a request header has in a rule, as PocketBase
// derives it: the words of the name (runs of letters and digits, a new
// word also at a capital after a small letter), lowercased and joined by
// "_": "X-Api-Key" is x_api_key.
func headerKey(name string) string {
	var b strings.Builder
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		prevUpper := true
		for _, r := range w {
			if unicode.IsUpper(r) && !prevUpper {
				b.WriteByte('_')
			}
			prevUpper = unicode.IsUpper(r)
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
