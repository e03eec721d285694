package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxQueryParams is the most pairs a query string may have: net/url's
// limit (its defaultMaxParams), past which url.ParseQuery returns no
// values at all.
const maxQueryParams = 10000

// queryError is a query string that parseQuery refuses.
type queryError struct{ msg string }

func (e *queryError) Error() string { return e.msg }

// parseQuery parses a raw query string into the values url.ParseQuery
// returns for it, but fails on the first pair url.ParseQuery would refuse
// (and leave out of its values, while keeping the others): one with a raw
// ';', or with a '%' not followed by two hex digits; and on more pairs
// than maxQueryParams. The error names the pair's parameter when its name
// is readable, never its value, which may be a secret (a token).
func parseQuery(raw string) (url.Values, error) {
	if strings.Count(raw, "&")+1 > maxQueryParams {
		return nil, &queryError{"Invalid query string: more than " + strconv.Itoa(maxQueryParams) + " parameters."}
	}
	q := url.Values{}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		name, value, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(name)
		if err != nil || strings.Contains(name, ";") {
			return nil, &queryError{"Invalid query string: a parameter name " + pairProblem(name) + "."}
		}
		v, err := url.QueryUnescape(value)
		if err != nil || strings.Contains(value, ";") {
			return nil, &queryError{"Invalid query string: the value of '" + paramName(key) + "' " + pairProblem(value) + "."}
		}
		q[key] = append(q[key], v)
	}
	return q, nil
}

// pairProblem says what is wrong with s, a parameter's name or value that
// url.QueryUnescape refuses or that holds a ';'.
func pairProblem(s string) string {
	if strings.Contains(s, ";") {
		return "contains a raw ';' (send it as %3B)"
	}
	return "has an invalid '%' escape (send '%' as %25)"
}

// paramName is a parameter's name as an error message shows it: valid
// UTF-8, at most 64 bytes.
func paramName(key string) string { return truncate(logText(key), 64) }

// checkQuery parses the query string of every request with parseQuery,
// once, for the handlers to read (query): a pair Go's parser refuses is a
// 400 naming the problem, not a parameter silently left out (a filter
// dropped would list everything). It runs inside withState, so the
// refused request is logged like any other.
func (s *Server) checkQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseQuery(r.URL.RawQuery)
		if err != nil {
			s.renderError(w, r, errBadRequest(err.Error(), nil))
			return
		}
		stateOf(r).query = q
		next.ServeHTTP(w, r)
	})
}

// query returns the request's query parameters as checkQuery parsed
// them. Handlers read the query through it only, never through
// r.URL.Query(), which drops the pairs it cannot parse.
func query(r *http.Request) url.Values {
	if st := stateOf(r); st != nil && st.query != nil {
		return st.query
	}
	// A handler called without the middleware (a test): parse it the
	// same way; a refused query has no values.
	q, _ := parseQuery(r.URL.RawQuery)
	return q
}
